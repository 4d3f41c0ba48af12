"""The training loader alone, detfeed's routes against Ultralytics' own, in
one run: images/s and CPU time per image to float32 batches on the device
a trainer uses (CUDA where there is one, else the CPU).

    python3 bench/loader_alone.py DATA [--imgsz 640] [--batch 16] [--workers 4] \\
        [--epochs 4] [--repeats 3] [--cpus 0-3] [--seed 0] \\
        [--modes ultralytics,detfeed-worker,detfeed-device,detfeed-recipe] [--out FILE]

DATA: a dataset YAML, or a dataset folder (its one YAML, else its images/
folder). Its root is copied into a temporary folder first and both loaders
read the copy, so that nothing is written beside the data (Ultralytics'
label cache, detfeed's verification record).

Every mode runs in a process of its own (so its CPU time is its own),
pinned to --cpus before anything is imported; the processes it starts
(Ultralytics' DataLoader workers) inherit that. The order of the modes
alternates from one repeat to the next.
- ultralytics: build_yolo_dataset (default cfg, cache="ram", mode "train":
  augment on, rect off) and build_dataloader with --workers, as the
  trainer makes them; each batch as the trainer's preprocess_batch takes
  it: img.to(device, non_blocking=True).float() / 255, and the boxes moved.
- detfeed-worker, detfeed-device, detfeed-recipe: detfeed.Loader with
  color="worker", "device" or "recipe", device="cuda" (or "cpu"), float32,
  value_scale="reciprocal", cache="ram", close_mosaic=0; set_epoch(e) per
  epoch; each batch's img and boxes moved to the device (the image is there
  already, scaled). The colour and device actually in effect are recorded
  (without a GPU the routes fall back to the workers and host memory), with
  the samples the CUDA kernel made and the device memory the loader holds
  (Loader.device_made, Loader.device_bytes).
Epoch 0 is a warm-up; epochs 1..E are measured, each ended by a CUDA
synchronize. Per mode: images/s of each epoch (and their median), the CPU
time of the process and all its children over the measured epochs
(getrusage SELF + CHILDREN, plus /proc/PID/stat of children still alive,
e.g. Ultralytics' persistent workers) per image, and the peak RSS: the
sum over the process and its children (pages they share, as the RAM
cache Ultralytics' forked workers inherit, count once per process),
sampled every 0.5 s, and the process's own peak (ru_maxrss).

--out FILE gets JSON lines: the first the arguments, versions and machine,
then one per (repeat, mode). stdout ends with a table per mode: medians
over the repeats of images/s and CPU ms per image, and the images/s ratio
to ultralytics paired per repeat (median, min-max). Exits 1 when a mode
failed.
"""
import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_util import machine_info, median, parse_cpus  # noqa: E402

MODES = ("ultralytics", "detfeed-worker", "detfeed-device", "detfeed-recipe")
TICK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")


# -- the dataset's copy ---------------------------------------------------------
def dataset_yaml(data):
    """(yaml dict, its folder) of DATA: a YAML, or a folder's one YAML, or a
    folder of images/ and labels/ (a YAML made for it, classes unnamed)."""
    import yaml
    if os.path.isdir(data):
        found = [f for f in os.listdir(data) if f.endswith((".yaml", ".yml"))]
        if len(found) != 1:
            return {"path": ".", "train": "images", "val": "images",
                    "names": {k: "c%d" % k for k in range(1000)}}, data
        data = os.path.join(data, found[0])
    with open(data) as f:
        return yaml.safe_load(f), os.path.dirname(os.path.abspath(data))


def prepare(data, tmp):
    """The YAML of a copy of DATA's root under tmp."""
    meta, here = dataset_yaml(data)
    train = meta["train"]
    path = str(meta.get("path") or ".")
    roots = [path] if os.path.isabs(path) else [os.path.join(here, path), here]
    root = next((r for r in roots if os.path.exists(os.path.join(r, train))), None)
    if root is None:
        raise SystemExit("no %s under %s" % (train, " or ".join(roots)))
    copy = os.path.join(tmp, "data")
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns("*.cache", "*.npy"))
    names = meta["names"]
    names = dict(enumerate(names)) if isinstance(names, list) else names
    out = os.path.join(tmp, "data.yaml")
    with open(out, "w") as f:  # block style: the subset of YAML detfeed reads
        for key, value in (("path", copy), ("train", train), ("val", train)):
            f.write("%s: %s\n" % (key, json.dumps(value)))
        f.write("names:\n" + "".join("  %d: %s\n" % (int(k), json.dumps(str(v)))
                                      for k, v in sorted(names.items(), key=lambda kv: int(kv[0]))))
    return out


# -- measuring a process ----------------------------------------------------------
def proc_stats(pid):
    """(parent pid, CPU seconds, RSS bytes) of a process from /proc, or None."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:  # gone
        return None
    # after the name: state ppid ... utime(12) stime(13) ... rss(22)
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / TICK, int(fields[21]) * PAGE


def descendants():
    """The pids of this process's live descendants."""
    parent = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            st = proc_stats(int(name))
            if st:
                parent[int(name)] = st[0]
    out, todo = [], [os.getpid()]
    while todo:
        p = todo.pop()
        kids = [c for c, pp in parent.items() if pp == p]
        out += kids
        todo += kids
    return out


def cpu_seconds():
    """CPU time (user + system) of this process and all its descendants:
    those reaped (RUSAGE_CHILDREN) and those alive (/proc)."""
    t = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        r = resource.getrusage(who)
        t += r.ru_utime + r.ru_stime
    for pid in descendants():
        st = proc_stats(pid)
        t += st[1] if st else 0.0
    return t


class RssPeak:
    """The peak RSS of this process and its live descendants (rescanned every
    5 s), sampled every 0.5 s by a thread."""

    def __init__(self):
        self.peak, self.done = 0, threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        pids, k = [], 0
        while not self.done.wait(0.5):
            if k % 10 == 0:
                pids = [os.getpid()] + descendants()
            k += 1
            self.peak = max(self.peak, sum(st[2] for st in map(proc_stats, pids) if st))

    def stop(self):
        self.done.set()
        self.thread.join()
        return self.peak


# -- one mode, in its own process --------------------------------------------------------
def open_ultralytics(args, yaml_path, device):
    """Ultralytics' training loader as DetectionTrainer builds it."""
    import yaml
    from ultralytics.cfg import get_cfg
    from ultralytics.data.build import build_dataloader, build_yolo_dataset
    from ultralytics.utils import DEFAULT_CFG
    from ultralytics.utils.torch_utils import init_seeds
    init_seeds(args.seed)
    with open(yaml_path) as f:
        meta = yaml.safe_load(f)
    names = {int(k): v for k, v in meta["names"].items()}
    data = {"path": meta["path"], "names": names, "nc": len(names), "channels": 3,
            "yaml_file": yaml_path, "train": os.path.join(meta["path"], meta["train"]),
            "val": os.path.join(meta["path"], meta["val"])}  # check_det_dataset's, offline
    cfg = get_cfg(DEFAULT_CFG, {"imgsz": args.imgsz, "batch": args.batch, "cache": "ram",
                                "workers": args.workers, "data": yaml_path, "seed": args.seed})
    ds = build_yolo_dataset(cfg, data["train"], args.batch, data, mode="train")
    return build_dataloader(ds, args.batch, args.workers, shuffle=True, rank=-1, device=device)


def open_detfeed(args, yaml_path, mode, device):
    import detfeed
    # epochs: one more than those iterated, so that the workers start the
    # next epoch at the end of the last measured one, as Ultralytics'
    # persistent workers go on prefetching: both measure the steady state.
    return detfeed.Loader(yaml_path, imgsz=args.imgsz, batch=args.batch, workers=args.workers,
                          device=device, color=mode.split("-", 1)[1], dtype="float32",
                          value_scale="reciprocal", cache="ram", seed=args.seed,
                          epochs=args.epochs + 2, close_mosaic=0)


def one_epoch(torch, loader, device, scale):
    """Iterates one epoch as a trainer takes its batches; images seen."""
    n = 0
    for b in loader:
        img = b["img"].to(device, non_blocking=True)
        if scale:
            img = img.float() / 255
        b["bboxes"].to(device, non_blocking=True)
        n += img.shape[0]
    if device == "cuda":
        torch.cuda.synchronize()
    return n


def run_mode(args):
    rss = RssPeak()
    import torch
    device = "cuda" if torch.cuda.is_available() else "cpu"
    out = {"mode": args.mode, "cpus": sorted(os.sched_getaffinity(0)), "device": device,
           "workers": args.workers, "torch_threads": torch.get_num_threads()}
    t0 = time.perf_counter()
    if args.mode == "ultralytics":
        loader, made = open_ultralytics(args, args.yaml, device), None
        out.update(color="worker", loader_device="cpu", route_note=None)
    else:
        loader = open_detfeed(args, args.yaml, args.mode, device)
        made = lambda: loader.device_made  # noqa: E731
        out.update(color=loader.color, loader_device=loader.device, route_note=loader.route_note)
    out["open_s"] = round(time.perf_counter() - t0, 2)
    epochs = []
    for e in range(args.epochs + 1):
        if e == 1:
            cpu0, made0 = cpu_seconds(), made() if made else None
        if hasattr(loader, "set_epoch"):
            loader.set_epoch(e)
        t = time.perf_counter()
        n = one_epoch(torch, loader, device, args.mode == "ultralytics")
        dt = time.perf_counter() - t
        epochs.append({"epoch": e, "images": n, "s": round(dt, 3),
                       "images_per_s": round(n / dt, 1)})
    cpu = cpu_seconds() - cpu0
    images = sum(ep["images"] for ep in epochs[1:])
    out.update(epochs=epochs, images=images, cpu_s=round(cpu, 3),
               images_per_s=round(median([ep["images_per_s"] for ep in epochs[1:]]), 1),
               cpu_ms_per_image=round(cpu * 1e3 / images, 3),
               peak_rss_mib=round(rss.stop() / 2**20, 1),
               peak_rss_self_mib=round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10,
                                       1),
               device_made=None if made is None else {"measured": made() - made0, "total": made()},
               device_bytes=loader.device_bytes if made else None)
    if hasattr(loader, "close"):
        loader.close()
    return out


def versions():
    """The versions a result is read with (in a child: importing them costs nothing here)."""
    import cv2
    import numpy
    import torch
    import ultralytics
    import detfeed
    from detfeed import _lib
    gpu, driver = "no GPU", None
    if torch.cuda.is_available():
        gpu = torch.cuda.get_device_name(0)
        try:
            driver = subprocess.run(["nvidia-smi", "--query-gpu=driver_version",
                                     "--format=csv,noheader"], capture_output=True,
                                    text=True).stdout.split("\n")[0].strip()
        except OSError:
            pass
    return {"torch": torch.__version__, "cuda": torch.version.cuda, "ultralytics":
            ultralytics.__version__, "opencv": cv2.__version__, "numpy": numpy.__version__,
            "detfeed": detfeed.__version__, "libdetfeed": _lib.load().path, "gpu": gpu,
            "driver": driver, "detfeed_cuda_devices": detfeed.cuda_device_count()}


def child(args):
    """--mode: pin, then run one mode (or read the versions); RESULT line on stdout."""
    os.sched_setaffinity(0, parse_cpus(args.cpus))
    res = versions() if args.mode == "versions" else run_mode(args)
    print("RESULT " + json.dumps(res), flush=True)


# -- the run -----------------------------------------------------------------------
def spawn(argv, mode, yaml_path):
    """One child; its RESULT, or {"error": its output's tail}."""
    cmd = [sys.executable, os.path.abspath(__file__)] + argv + ["--mode", mode, "--yaml", yaml_path]
    run = subprocess.run(cmd, capture_output=True, text=True)
    lines = [ln for ln in run.stdout.splitlines() if ln.startswith("RESULT ")]
    if run.returncode == 0 and lines:
        return json.loads(lines[-1][7:])
    return {"error": "exit %d: %s" % (run.returncode, (run.stdout + run.stderr)[-3000:])}


def summary(rows, modes):
    """The table: per mode the medians over the repeats, and the images/s
    ratio to ultralytics paired per repeat."""
    ok = [r for r in rows if "error" not in r]
    base = {r["repeat"]: r["images_per_s"] for r in ok if r["mode"] == "ultralytics"}
    print("%-16s %-14s %10s %10s %22s %9s" % ("mode", "in effect", "images/s", "CPU ms/im",
                                              "x ultralytics (min-max)", "RSS MiB"))
    table = {}
    for mode in modes:
        rs = [r for r in ok if r["mode"] == mode]
        if not rs:
            print("%-16s failed" % mode)
            continue
        ips = median([r["images_per_s"] for r in rs])
        cpu = median([r["cpu_ms_per_image"] for r in rs])
        ratios = [r["images_per_s"] / base[r["repeat"]] for r in rs if r["repeat"] in base]
        ratio = "%.2f (%.2f-%.2f)" % (median(ratios), min(ratios), max(ratios)) if ratios else "-"
        effect = "%s/%s" % (rs[0]["color"], rs[0]["loader_device"])
        print("%-16s %-14s %10.1f %10.2f %22s %9.0f" % (mode, effect, ips, cpu, ratio,
                                                          median([r["peak_rss_mib"] for r in rs])))
        table[mode] = (cpu, median(ratios) if ratios else None, rs)
    for mode, (cpu, ratio, rs) in table.items():
        if rs[0]["route_note"]:
            print("%s: %s" % (mode, rs[0]["route_note"]))
        if mode == "detfeed-recipe" and rs[0]["device_made"] is not None:
            print("%s: the CUDA kernel made %d of the %d samples measured" % (
                mode, sum(r["device_made"]["measured"] for r in rs),
                sum(r["images"] for r in rs)))
    if "detfeed-recipe" in table:
        cpu, ratio, rs = table["detfeed-recipe"]
        if rs[0]["color"] != "recipe":
            print("issue 17's loader targets: no verdict, the recipe route did not run here "
                  "(colour %s, batches on %s)" % (rs[0]["color"], rs[0]["loader_device"]))
            return
        print("issue 17's loader targets (detfeed-recipe): CPU %.2f ms/image (<= 0.5: %s); "
              "%s x ultralytics' images/s (>= 8: %s)" % (
                  cpu, "met" if cpu <= 0.5 else "NOT met", "-" if ratio is None else
                  "%.2f" % ratio, "met" if ratio is not None and ratio >= 8 else "NOT met"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("data", help="a dataset YAML or folder (e.g. coco128)")
    ap.add_argument("--imgsz", type=int, default=640)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--epochs", type=int, default=4, help="measured, after one warm-up epoch")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--cpus", default="0-3", help="the CPUs every mode's process runs on")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--out", help="JSON lines file")
    ap.add_argument("--mode", help=argparse.SUPPRESS)  # in a child: the one mode it runs
    ap.add_argument("--yaml", help=argparse.SUPPRESS)  # in a child: the copy's YAML
    args = ap.parse_args()
    if args.mode:
        return child(args)
    if not os.path.exists(args.data):
        raise SystemExit("no dataset at %s" % args.data)
    modes = args.modes.split(",")
    bad = [m for m in modes if m not in MODES]
    if bad or args.epochs < 1 or args.repeats < 1:
        raise SystemExit("modes are %s; --epochs and --repeats at least 1" % ", ".join(MODES))
    argv = sys.argv[1:]
    tmp = tempfile.mkdtemp(prefix="detfeed-loader-alone-")
    out = open(args.out, "w") if args.out else None
    try:
        yaml_path = prepare(args.data, tmp)
        head = spawn(argv, "versions", yaml_path)
        head = {"args": vars(args), "machine": machine_info(head)}
        print(json.dumps(head), flush=True)
        if out:
            out.write(json.dumps(head) + "\n")
        rows = []
        for rep in range(args.repeats):
            for pos, mode in enumerate(modes if rep % 2 == 0 else modes[::-1]):
                res = dict({"repeat": rep, "position": pos, "mode": mode},
                           **spawn(argv, mode, yaml_path))
                rows.append(res)
                print(json.dumps({k: v for k, v in res.items() if k != "epochs"}), flush=True)
                if out:
                    out.write(json.dumps(res) + "\n")
                    out.flush()
        summary(rows, modes)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if out:
            out.close()
    return 1 if any("error" in r for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
