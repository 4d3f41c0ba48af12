"""One complete Ultralytics training run (training, validation, checkpoints)
with its own loader or detfeed's, timed, with hashes of what it produced.

    python3 bench/train_ultralytics.py DATA_DIR --loader detfeed --color device \\
        --epochs 6 --batch 8 --out run.json

DATA_DIR holds a dataset YAML (coco128.yaml); a copy of it with an absolute
`path` is written beside the run, so Ultralytics reads the data in place.
The model is built from its YAML (--model, default yolov8n.yaml: no weights
are downloaded). Offline machines: Ultralytics' AMP check wants to download
weights, so it is replaced by "AMP on" (what it answers on a working GPU);
its results.csv reader needs polars, absent there, and only feeds the
checkpoint's results summary, so it is replaced by an empty one.

The JSON result: wall time of the whole fit, training steps, images/s of
the training phases, peak allocated CUDA memory, the per-step losses, and
sha256 hashes of the final model, optimizer and EMA state, of the loss
history (equal hashes: equal training), and of what the model was fed (per
training batch, exact integer sums of the float32 image bits and of the
label arrays, taken on the GPU: equal hashes, equal inputs), the data wait
(time from the end of one training step to the start of the next: the
loader's next and the progress bar), each training step's time and data
wait (step_s, step_wait_s: from the previous step's end, or its epoch's
start, to its end and to its batch in hand) and, with --profile N, a PyTorch
profile (CPU and CUDA activity) of N training steps from step 20: the
trainer thread's synchronizations (count and time), the GPU's busy time
and the top operators, written beside --out as PROFILE.txt and in the JSON.
"""
import argparse
import datetime
import hashlib
import io
import json
import os
import re
import sys
import time

import numpy as np
import torch


def dataset_yaml(data_dir, run_dir):
    names = [f for f in os.listdir(data_dir) if f.endswith(".yaml")]
    if len(names) != 1:
        raise SystemExit("%s: expected one dataset YAML" % data_dir)
    text = open(os.path.join(data_dir, names[0])).read()
    text = re.sub(r"^path:.*$", "path: " + os.path.abspath(data_dir), text, flags=re.M)
    text = re.sub(r"^download:.*", "", text, flags=re.M | re.S)
    os.makedirs(run_dir, exist_ok=True)
    out = os.path.join(run_dir, names[0])
    with open(out, "w") as f:
        f.write(text)
    return out


def cpu_seconds():
    """CPU time (user + system) of this process's threads and of its live
    children (Ultralytics' dataloader workers), from /proc."""
    tick = os.sysconf("SC_CLK_TCK")
    total = time.process_time()
    me = str(os.getpid())
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or pid == me:
            continue
        try:
            fields = open("/proc/%s/stat" % pid).read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == me:  # ppid
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


def state_hash(obj):
    """sha256 of a state dict's tensors (bytes, shapes, dtypes) and values."""
    h = hashlib.sha256()

    def walk(x):
        if isinstance(x, torch.Tensor):
            t = x.detach().cpu().contiguous()
            h.update(str((t.dtype, tuple(t.shape))).encode())
            h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b"")
        elif isinstance(x, dict):
            for k in sorted(x, key=str):
                h.update(str(k).encode())
                walk(x[k])
        elif isinstance(x, (list, tuple)):
            for v in x:
                walk(v)
        else:
            h.update(repr(x).encode())

    walk(obj)
    return h.hexdigest()


SYNC_CALLS = ("cudaStreamSynchronize", "cudaEventSynchronize", "cudaDeviceSynchronize",
              "cudaMemcpy", "cudaMemcpyAsync", "cudaStreamWaitEvent", "cudaLaunchKernel")


def profile_summary(prof, steps, path):
    """Synchronizations and launches on the CPU side, GPU busy time, per step."""
    avg = {e.key: e for e in prof.key_averages()}
    out = {"steps": steps, "calls": {}}
    for name in SYNC_CALLS:
        e = avg.get(name)
        if e is not None:
            out["calls"][name] = {"count_per_step": e.count / steps,
                                  "cpu_ms_per_step": e.cpu_time_total / 1e3 / steps}
    spans = sorted((ev.time_range.start, ev.time_range.end) for ev in prof.events()
                   if ev.device_type.name == "CUDA" and ev.time_range.end > ev.time_range.start)
    busy, end = 0, None
    for a, b in spans:  # the union of the device's intervals
        if end is None or a > end:
            busy += b - a
            end = b
        elif b > end:
            busy += b - end
            end = b
    out["gpu_busy_ms_per_step"] = busy / 1e3 / steps
    if path:
        with open(path, "w") as f:
            f.write(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=40))
    return out


def digest_stats(metrics):
    """Hashes what a validator hands its metrics per image (matches, scores
    and classes of the predictions, the labels' classes): equal digests mean
    the metrics were computed from the same predictions, also where a short
    fit's mAP is 0."""
    seen = {"images": 0, "predictions": 0, "hash": hashlib.sha256()}
    inner = metrics.update_stats

    def update_stats(stat):
        for k in ("tp", "conf", "pred_cls", "target_cls", "target_img"):
            if k in stat:
                x = np.ascontiguousarray(np.asarray(stat[k]))
                seen["hash"].update(k.encode() + str(x.dtype).encode() + x.tobytes())
        seen["images"] += 1
        seen["predictions"] += len(stat.get("conf", ()))
        inner(stat)
    metrics.update_stats = update_stats
    return seen


def hold_batches(loader, n):
    """The trainer's floor (--loader floor): the first epoch of `loader` (a
    detfeed.Loader) takes its first n batches (0: all of them) and keeps a
    copy of each, where the loader put it (on the GPU for the device
    routes); from then on every step is fed those copies again, in turn, as
    many steps an epoch as the loader has batches. The loader's epoch stays
    open and its workers idle once its ring is full, so after the held
    batches the steps cost the loader nothing: the training phase is what
    the trainer alone takes, the least any loader can reach. With n = 1
    (the default) the trainer trains on one batch, so the loss's label
    assignment does the same work every step; with n = 0 it sees every
    batch of the first epoch, as a real fit's steps do (memory: a whole
    epoch of batches). The model does not learn what the other arms' does,
    so its hashes and metrics are not theirs."""
    base, held = type(loader), []

    class Floor(base):
        def __iter__(self):
            epoch = None if held else base.__iter__(self)  # the first epoch takes them
            for i in range(len(self)):
                if epoch is not None and (n == 0 or i < n):
                    held.append({k: v.clone() if isinstance(v, torch.Tensor) else v
                                 for k, v in next(epoch).items()})
                yield dict(held[i % len(held)])

    loader.__class__ = Floor


def revalidate(tr, weights, conf=None):
    """The metrics of `weights` from the trainer's validator, as its final
    validation makes them, over a new detfeed validation loader and over
    Ultralytics' own (the trainer's get_dataloader with val="ultralytics"):
    the same model and validator, only the batches' source differs; with
    the digest of what the validator handed its metrics (digest_stats). conf:
    the validators' confidence threshold (None: the trainer's). NMS runs
    without its wall-time limit in both."""
    path = tr.data.get("val") or tr.data.get("test")
    batch = tr.batch_size if tr.args.task == "obb" else tr.batch_size * 2  # as the trainer
    kept, keep_val = tr.test_loader, tr._detfeed_val
    out = {}
    # NMS stops at a wall-time limit (a warning, and the later images of the
    # batch keep no prediction): lifted here, so that both runs keep all.
    from ultralytics.utils import nms
    nms_kept = nms.non_max_suppression
    nms.non_max_suppression = lambda *x, **k: nms_kept(*x, **{**k, "max_time_img": 1e9})
    try:
        for source in ("detfeed", "ultralytics"):
            tr._detfeed_val = source
            tr.test_loader = tr.get_dataloader(path, batch, -1, "val")
            t = time.perf_counter()
            v = tr.get_validator()
            if conf is not None:
                v.args.conf = conf
            seen = digest_stats(v.metrics)
            metrics = v(model=weights)
            out[source] = {k: float(x) for k, x in metrics.items()}
            out[source + "_s"] = time.perf_counter() - t
            out[source + "_stats"] = {"images": seen["images"], "predictions": seen["predictions"],
                                      "sha256": seen["hash"].hexdigest()}
            if hasattr(tr.test_loader, "close"):
                tr.test_loader.close()
    finally:
        tr.test_loader, tr._detfeed_val = kept, keep_val
        nms.non_max_suppression = nms_kept
    a, b = out["detfeed"], out["ultralytics"]
    out["equal"] = a == b and out["detfeed_stats"] == out["ultralytics_stats"]
    out["max_abs_diff"] = max((abs(a[k] - b[k]) for k in a if k in b), default=None)
    return out


def offline_patches():
    import ultralytics.engine.trainer as tr
    tr.check_amp = lambda model: True
    tr.BaseTrainer.read_results_csv = lambda self: {}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("data", help="a folder with the dataset and its YAML")
    ap.add_argument("--loader", choices=["ultralytics", "detfeed", "floor"], default="detfeed",
                    help="Ultralytics' loader, detfeed's, or the trainer's floor: detfeed's "
                         "with every step fed its first batch (--floor-batches) again (no "
                         "loader work after them; a measurement of the trainer alone, not a "
                         "training)")
    ap.add_argument("--floor-batches", type=int, default=1,
                    help="--loader floor: how many of the first epoch's batches are held and "
                         "fed again in turn (default 1; 0: the whole first epoch, so that the "
                         "loss sees every batch's labels)")
    ap.add_argument("--color", choices=["worker", "device", "recipe"], default="device")
    ap.add_argument("--model", default="yolov8n.yaml")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--imgsz", type=int, default=640)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", default="0", help="Ultralytics' device (default 0: GPU 0)")
    ap.add_argument("--val", type=int, default=1, help="validate every epoch (1) or at the end (0)")
    ap.add_argument("--project", default="/tmp/detfeed-runs")
    ap.add_argument("--name", default="run")
    ap.add_argument("--out", help="JSON result file")
    ap.add_argument("--close-mosaic", type=int, default=10,
                    help="Ultralytics' close_mosaic (its default 10)")
    ap.add_argument("--val-loader", choices=["detfeed", "ultralytics"], default="detfeed",
                    help="detfeed arms: validation batches through detfeed (default) or "
                         "Ultralytics' own loader")
    ap.add_argument("--label", default="", help="a word on this arm, kept in the JSON")
    ap.add_argument("--profile", type=int, default=0,
                    help="profile this many training steps from step 20 (0: none)")
    ap.add_argument("--revalidate", action="store_true",
                    help="detfeed arms: after the fit (outside its times), validate the final "
                         "model again with the trainer's validator over a new detfeed "
                         "validation loader and over Ultralytics' own loader")
    ap.add_argument("--revalidate-conf", type=float,
                    help="the validators' confidence threshold for --revalidate (default: the "
                         "trainer's, 0.001; 0 keeps every prediction up to max_det, so that a "
                         "short fit's model still has predictions to compare)")
    a = ap.parse_args()
    if a.floor_batches < 0:
        ap.error("--floor-batches: 0 (the whole first epoch) or more")
    if a.floor_batches != 1 and a.loader != "floor":
        ap.error("--floor-batches is for --loader floor")
    offline_patches()
    from ultralytics import YOLO
    run_dir = os.path.join(a.project, a.name)
    data = dataset_yaml(a.data, run_dir + "-data")
    steps, losses, phases = [0], [], {"train_s": 0.0, "images": 0}
    cuda = a.device != "cpu"
    marks = {"wait": 0.0, "end": None}
    # Where the fit's time goes: start-up (to the first epoch), training
    # phases (with the CPU time spent in them), validation, checkpoints.
    # Per epoch too (the first epoch and validation carry the trainer's
    # one-time CUDA set-up), with the CPU time of each validation.
    # Each validation's data wait (the time in its loader's next, the first
    # batch's included) and the validator's own per-image milliseconds
    # (preprocess, inference, loss, postprocess) say whether its time is the
    # loader's or the model's.
    spans = {"startup_s": None, "val_s": 0.0, "save_s": 0.0, "train_cpu_s": 0.0,
             "val_cpu_s": 0.0, "train_epochs_s": [], "val_epochs_s": [],
             "val_wait_s": [], "val_speed_ms": [], "step_s": [], "step_wait_s": []}
    prof = {"p": None, "summary": None}

    def on_batch_start(tr):
        now = time.perf_counter()
        if marks["end"] is not None:
            marks["wait"] += now - marks["end"]
        # This step's data wait: from the last step's end (the epoch's start
        # for its first step) to this step's batch in hand.
        spans["step_wait_s"].append(now - marks["step"])
        if a.profile and steps[0] == 20:
            prof["p"] = torch.profiler.profile(activities=[
                torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA])
            prof["p"].__enter__()

    def on_epoch_start(tr):
        marks["t"] = marks["step"] = time.perf_counter()
        marks["cpu"] = cpu_seconds()
        if spans["startup_s"] is None:
            spans["startup_s"] = marks["t"] - t0
        if a.loader != "ultralytics":
            import detfeed
            assert isinstance(tr.train_loader, detfeed.Loader), type(tr.train_loader)
            if a.loader == "floor" and tr.epoch == 0:
                hold_batches(tr.train_loader, a.floor_batches)

    def on_batch_end(tr):
        steps[0] += 1
        marks["end"] = time.perf_counter()
        if prof["p"] is not None and steps[0] == 20 + a.profile:
            if cuda:
                torch.cuda.synchronize()
            prof["p"].__exit__(None, None, None)
            table = a.out[:-5] + "-profile.txt" if a.out and a.out.endswith(".json") else None
            prof["summary"] = profile_summary(prof["p"], a.profile, table)
            prof["p"] = None
            marks["end"] = time.perf_counter()
        losses.append([float(x) for x in tr.loss_items.values()] if isinstance(tr.loss_items, dict)
                      else [float(x) for x in tr.loss_items])
        # The step's time, its wait and its GPU work (float() waits for the
        # loss) included; a profiled span's last step has the profile's too.
        now = time.perf_counter()
        spans["step_s"].append(now - marks["step"])
        marks["step"] = now

    def on_epoch_end(tr):
        marks["end"] = None  # validation and checkpoints are not the data wait
        if cuda:
            torch.cuda.synchronize()
        spans["train_epochs_s"].append(time.perf_counter() - marks["t"])
        phases["train_s"] += spans["train_epochs_s"][-1]
        spans["train_cpu_s"] += cpu_seconds() - marks["cpu"]
        phases["images"] += len(tr.train_loader.dataset)
        marks["tail"] = time.perf_counter()

    def on_val_start(v):
        if marks.get("revalidating"):
            return
        marks["val"] = marks["val_batch_end"] = time.perf_counter()
        marks["val_cpu"] = cpu_seconds()
        spans["val_wait_s"].append(0.0)

    def on_val_batch_start(v):
        if not marks.get("revalidating"):
            spans["val_wait_s"][-1] += time.perf_counter() - marks["val_batch_end"]

    def on_val_batch_end(v):
        marks["val_batch_end"] = time.perf_counter()

    def on_val_end(v):
        if marks.get("revalidating"):
            return
        marks["val_end"] = time.perf_counter()
        spans["val_epochs_s"].append(marks["val_end"] - marks["val"])
        spans["val_s"] += spans["val_epochs_s"][-1]
        spans["val_cpu_s"] += cpu_seconds() - marks["val_cpu"]
        spans["val_speed_ms"].append({k: float(x) for k, x in v.speed.items()})

    def on_model_save(tr):  # saved after the epoch's validation
        spans["save_s"] += time.perf_counter() - max(marks.get("val_end", 0.0),
                                                     marks.get("tail", 0.0))

    fed = []

    def record_inputs(tr):
        """Wraps the trainer's preprocess_batch (an instance attribute, so that
        it holds whatever class the trainer factory made)."""
        inner = tr.preprocess_batch

        def preprocess_batch(batch):
            batch = inner(batch)
            fed.append(torch.stack([
                batch["img"].float().view(torch.int32).sum(dtype=torch.int64),
                batch["cls"].float().view(torch.int32).sum(dtype=torch.int64),
                batch["bboxes"].float().view(torch.int32).sum(dtype=torch.int64),
                batch["batch_idx"].float().view(torch.int32).sum(dtype=torch.int64)]))
            return batch
        tr.preprocess_batch = preprocess_batch

    kw = dict(data=data, epochs=a.epochs, imgsz=a.imgsz, batch=a.batch, workers=a.workers,
              close_mosaic=a.close_mosaic,
              seed=a.seed, deterministic=True, cache="ram", plots=False, val=bool(a.val),
              project=a.project, name=a.name, exist_ok=True, verbose=False, device=a.device)
    if a.loader != "ultralytics":
        import detfeed.ultralytics
        kw["trainer"] = detfeed.ultralytics.trainer(color=a.color, val=a.val_loader)
    else:
        from ultralytics.models.yolo.detect import DetectionTrainer
        kw["trainer"] = DetectionTrainer
    model = YOLO(a.model)
    model.add_callback("on_pretrain_routine_start", record_inputs)
    model.add_callback("on_train_epoch_start", on_epoch_start)
    model.add_callback("on_train_batch_start", on_batch_start)
    model.add_callback("on_train_batch_end", on_batch_end)
    model.add_callback("on_train_epoch_end", on_epoch_end)
    model.add_callback("on_val_start", on_val_start)
    model.add_callback("on_val_batch_start", on_val_batch_start)
    model.add_callback("on_val_batch_end", on_val_batch_end)
    model.add_callback("on_val_end", on_val_end)
    model.add_callback("on_model_save", on_model_save)
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    # The fit's span in the machine's local time, as nvidia-smi's trace
    # stamps its samples (fits_summary.py keeps the samples inside it).
    local = lambda: datetime.datetime.now().strftime("%Y/%m/%d %H:%M:%S.%f")  # noqa: E731
    span = [local()]
    t0 = time.perf_counter()
    model.train(**kw)
    wall = time.perf_counter() - t0
    span.append(local())
    tr = model.trainer
    last = torch.load(os.path.join(str(tr.save_dir), "weights", "last.pt"), weights_only=False)
    res = {
        "loader": a.loader, "color": a.color if a.loader != "ultralytics" else None,
        "label": a.label, "close_mosaic": a.close_mosaic,
        "floor_batches": a.floor_batches if a.loader == "floor" else None,
        "val_loader": a.val_loader if a.loader != "ultralytics" else "ultralytics",
        "model": a.model, "epochs": a.epochs, "batch": a.batch, "imgsz": a.imgsz,
        "workers": a.workers, "wall_s": wall, "steps": steps[0], "train_s": phases["train_s"],
        "data_wait_s": marks["wait"], "profile": prof["summary"], **spans,
        "fit_local_time": span,
        "train_images_per_s": phases["images"] / phases["train_s"] if phases["train_s"] else None,
        "peak_cuda_allocated_mib": torch.cuda.max_memory_allocated() / 2**20 if cuda else None,
        "final_loss": losses[-1] if losses else None,
        "hash_model": state_hash(tr.model.state_dict()),
        "hash_optimizer": state_hash(tr.optimizer.state_dict()),
        "hash_ema": state_hash(tr.ema.ema.state_dict()),
        "hash_losses": hashlib.sha256(json.dumps(losses).encode()).hexdigest(),
        "hash_inputs": hashlib.sha256(torch.stack(fed).cpu().numpy().tobytes()).hexdigest()
        if fed else None,
        "batches_fed": len(fed),
        "batches_distinct": len({tuple(x.tolist()) for x in fed}),
        "hash_last_pt_model": state_hash(last["model"].state_dict()) if last.get("model") else None,
        "metrics": {k: float(v) for k, v in (tr.metrics or {}).items()},
        "torch": torch.__version__, "gpu": torch.cuda.get_device_name(0) if cuda else None,
    }
    if a.revalidate and a.loader == "detfeed":
        marks["revalidating"] = True
        res["revalidation"] = revalidate(tr, os.path.join(str(tr.save_dir), "weights", "best.pt"),
                                         a.revalidate_conf)
    print(json.dumps(res, indent=1))
    if a.out:
        with open(a.out, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
