"""The training step of a real Ultralytics fit under detfeed's routes,
interleaved by epoch in one process: one trainer, one model, one GPU state,
and one detfeed loader per route, each with the same settings, so every
route hands over the same bytes and the fit is the fit of any one of them.

    python3 bench/route_steps.py DATA_DIR --routes worker,device,recipe \\
        --epochs 16 --batch 8 --out steps.json

Epoch e takes its batches from route (e + offset) mod k: steady-state steps
of every route alternate within minutes of each other, so the drift between
separate fits (seen at 10-20%) does not enter the comparison. Each step is
timed from one on_train_batch_start to the next (so it includes the loader's
next()), with the trainer thread's CPU time (time.thread_time), the whole
process's CPU time (its threads: the trainer, detfeed's workers, torch's),
the time inside the loader's next(), and the GPU's time between the steps'
start events on the trainer's stream. The first epoch (CUDA and cuDNN set-up)
and each epoch's first step (its workers start) are left out of the medians.

With --profile N, N steps of each route's first measured epoch run under
the PyTorch profiler (CPU and CUDA activity; left out of the medians): its
synchronizations, launches and GPU busy time per step, per route.

With --trainer-cpus A --worker-cpus B the trainer's thread (and the threads
it starts later: PyTorch's autograd thread) runs on cores A and detfeed's
worker threads (the threads that appear while the training loaders open)
on cores B: whether the workers slow the trainer's thread by sharing its
cores. Their first epoch is then started when they open, so that their
threads exist.

The loaders do not start their next epoch ahead (an idle route would
otherwise make batches while another route's epoch runs). With --val each
epoch ends with a validation through detfeed's validation loader, as in the
complete fits of bench/fit_pairs.sh; without it, only the last.
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_util import parse_cpus  # noqa: E402
from steps_summary import ratio_line  # noqa: E402
from train_ultralytics import (dataset_yaml, offline_patches, profile_summary,  # noqa: E402
                               state_hash)


def quiet_loader_class(base):
    class QuietLoader(base):
        """A Loader that starts each epoch at its first batch only."""

        def _end_epoch(self, epoch):
            if not self._epoch_set:
                self.epoch = epoch + 1
    return QuietLoader


def interleaved_class(base):
    class Interleaved(base):
        """Epoch e from loaders[(e + offset) % k]; the rest is the first loader's."""

        def __init__(self, loaders, names, offset, on_route):
            self.__dict__.update(_loaders=loaders, _names=names, _offset=offset,
                                 _on_route=on_route, epoch=0, _handle=None)

        def __getattr__(self, name):
            return getattr(self.__dict__["_loaders"][0], name)

        def __len__(self):
            return len(self._loaders[0])

        def set_epoch(self, epoch):
            self.epoch = int(epoch)

        def reset(self):
            pass

        def __iter__(self):
            k = (self.epoch + self._offset) % len(self._loaders)
            sub = self._loaders[k]
            sub.set_epoch(self.epoch)
            self._on_route(self.epoch, self._names[k])
            it = iter(sub)
            epoch = self.epoch

            def timed():
                while True:
                    t = time.perf_counter()
                    try:
                        b = next(it)
                    except StopIteration:
                        break
                    self._on_route(epoch, self._names[k], time.perf_counter() - t)
                    yield b
                self.epoch = epoch + 1
            return timed()

        def close(self):
            for sub in self._loaders:
                sub.close()
    return Interleaved


def summarise(steps, routes):
    """Per route: medians of each per-step figure (ms) over the measured steps."""
    out = {}
    for r in routes:
        rows = [s for s in steps if s["route"] == r and s["measured"]]
        out[r] = {"steps": len(rows)}
        for key in ("wall_ms", "thread_cpu_ms", "process_cpu_ms", "next_ms", "gpu_ms"):
            vals = [s[key] for s in rows if s.get(key) is not None]
            out[r][key] = statistics.median(vals) if vals else None
    return out


def paired(steps, a, b):
    """Ratios of route b's median step to route a's, epoch by neighbouring
    epoch (each b epoch against the nearest a epoch before it)."""
    per = {}
    for s in steps:
        if s["measured"]:
            per.setdefault((s["epoch"], s["route"]), []).append(s["wall_ms"])
    med = {k: statistics.median(v) for k, v in per.items()}
    ratios = []
    for (e, r), m in sorted(med.items()):
        if r != b:
            continue
        prev = [med[(e2, r2)] for (e2, r2) in med if r2 == a and e2 < e]
        if prev:
            ratios.append(m / prev[-1])
    return ratios


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("data", help="a folder with the dataset and its YAML")
    ap.add_argument("--routes", default="worker,device,recipe")
    ap.add_argument("--offset", type=int, default=0, help="route of epoch 0")
    ap.add_argument("--model", default="yolo26n.yaml")
    ap.add_argument("--epochs", type=int, default=16)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--imgsz", type=int, default=640)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--close-mosaic", type=int, default=0)
    ap.add_argument("--val", action="store_true",
                    help="validate after every epoch (through detfeed's validation loader), "
                         "as complete fits do; the steps timed are the training steps alone")
    ap.add_argument("--project", default="/tmp/detfeed-runs")
    ap.add_argument("--name", default="steps")
    ap.add_argument("--profile", type=int, default=0,
                    help="profile this many steps of each route's first measured epoch")
    ap.add_argument("--trainer-cpus", help="cores of the trainer's thread, e.g. 0-1")
    ap.add_argument("--worker-cpus", help="cores of detfeed's training workers, e.g. 2-3")
    ap.add_argument("--device", default="0", help="Ultralytics' device (cpu: a smoke test)")
    ap.add_argument("--out", help="JSON result file")
    a = ap.parse_args()
    cuda = a.device != "cpu"
    if a.trainer_cpus:  # this thread, and the threads it starts from now on
        os.sched_setaffinity(0, parse_cpus(a.trainer_cpus))
    routes = a.routes.split(",")
    offline_patches()
    import detfeed
    import detfeed.ultralytics as du
    from ultralytics import YOLO

    quiet = quiet_loader_class(detfeed.Loader)
    interleaved = interleaved_class(detfeed.Loader)
    steps, marks, notes, profiles = [], {}, {}, {}

    def on_route(epoch, route, next_s=None):
        marks["route"], marks["epoch"] = route, epoch
        if next_s is not None:
            marks["next_s"] = next_s

    base = du.trainer(color=routes[0], val="detfeed")

    class Trainer(base):
        def __new__(cls, *args, **kw):
            tr = base.__new__(base, *args, **kw)
            inner = tr.get_dataloader

            def get_dataloader(dataset_path, batch_size=16, rank=0, mode="train"):
                if mode != "train":
                    return inner(dataset_path, batch_size, rank, mode)
                loaders = []
                before = set(os.listdir("/proc/self/task"))
                saved = du.Loader
                du.Loader = quiet
                try:
                    for r in routes:
                        loader, _ = du.build_loader(tr.args, tr.data, dataset_path, batch_size,
                                                    tr.device, {"color": r, "dtype": "float32"})
                        notes[r] = {"color": loader.color, "device": loader.device,
                                    "note": loader.route_note}
                        if a.worker_cpus:  # its workers start with its first epoch
                            loader._check(detfeed.loader.lib.detfeed_loader_start(
                                loader._live().ptr, loader.epoch), "start")
                            loader._started = loader.epoch
                        loaders.append(loader)
                finally:
                    du.Loader = saved
                if a.worker_cpus:
                    workers = set(os.listdir("/proc/self/task")) - before
                    for tid in workers:
                        os.sched_setaffinity(int(tid), parse_cpus(a.worker_cpus))
                    notes["worker_threads"] = len(workers)
                return interleaved(loaders, routes, a.offset, on_route)
            tr.get_dataloader = get_dataloader
            return tr

    def profiling(tr, i):
        """Starts or stops the profiler at step i of a route's first measured
        epoch; whether step i is profiled."""
        route, p = marks["route"], marks.get("profiler")
        first = (tr.epoch > 0 and route not in profiles
                 and len(tr.train_loader) > 2 + a.profile)  # the window fits in the epoch
        if p is not None and i == 2 + a.profile:
            if cuda:
                torch.cuda.synchronize()
            p.__exit__(None, None, None)
            profiles[route] = profile_summary(p, a.profile, None)
            profiles[route]["epoch"] = tr.epoch
            marks["profiler"] = None
            return False
        if a.profile and first and p is None and i == 2:
            acts = [torch.profiler.ProfilerActivity.CPU]
            if cuda:
                acts.append(torch.profiler.ProfilerActivity.CUDA)
            marks["profiler"] = torch.profiler.profile(activities=acts)
            marks["profiler"].__enter__()
        return marks.get("profiler") is not None

    def on_batch_start(tr):
        prev = marks.get("prev")
        i = prev["i"] + 1 if prev is not None and prev["epoch"] == tr.epoch else 0
        profiled = profiling(tr, i)
        now = (time.perf_counter(), time.thread_time(), time.process_time())
        ev = torch.cuda.Event(enable_timing=True) if cuda else None
        if cuda:
            ev.record()
        if prev is not None and prev["epoch"] == tr.epoch:
            steps.append({"epoch": prev["epoch"], "route": prev["route"], "i": prev["i"],
                          "wall_ms": (now[0] - prev["t"][0]) * 1e3,
                          "thread_cpu_ms": (now[1] - prev["t"][1]) * 1e3,
                          "process_cpu_ms": (now[2] - prev["t"][2]) * 1e3,
                          "next_ms": marks.get("next_s", 0.0) * 1e3,
                          "ev": (prev["ev"], ev),
                          "measured": prev["epoch"] > 0 and prev["i"] > 0
                          and not prev["profiled"]})
        marks["prev"] = {"epoch": tr.epoch, "route": marks["route"], "i": i, "t": now,
                         "ev": ev, "profiled": profiled}

    def on_epoch_end(tr):
        marks["prev"] = None
        if marks.get("profiler") is not None:  # an epoch shorter than the window
            marks["profiler"].__exit__(None, None, None)
            marks["profiler"] = None
        if cuda:
            torch.cuda.synchronize()
        for s in steps:
            if "ev" in s:
                e0, e1 = s.pop("ev")
                s["gpu_ms"] = e0.elapsed_time(e1) if cuda else None

    kw = dict(data=dataset_yaml(a.data, os.path.join(a.project, a.name) + "-data"),
              epochs=a.epochs, imgsz=a.imgsz, batch=a.batch, workers=a.workers,
              close_mosaic=a.close_mosaic, seed=0, deterministic=True, cache="ram",
              plots=False, val=a.val, project=a.project, name=a.name, exist_ok=True,
              verbose=False, device=a.device, trainer=Trainer)
    model = YOLO(a.model)
    model.add_callback("on_train_batch_start", on_batch_start)
    model.add_callback("on_train_epoch_end", on_epoch_end)
    t0 = time.perf_counter()
    model.train(**kw)
    wall = time.perf_counter() - t0
    tr = model.trainer
    res = {"routes": routes, "offset": a.offset, "loaders": notes, "model": a.model,
           "epochs": a.epochs, "batch": a.batch, "imgsz": a.imgsz, "workers": a.workers,
           "close_mosaic": a.close_mosaic, "val": a.val, "wall_s": wall,
           "trainer_cpus": a.trainer_cpus, "worker_cpus": a.worker_cpus,
           "cpus": sorted(os.sched_getaffinity(0)), "summary": summarise(steps, routes),
           "paired_wall_ratio": {"%s/%s" % (r, routes[0]): paired(steps, routes[0], r)
                                 for r in routes[1:]},
           "profile": profiles, "hash_model": state_hash(tr.model.state_dict()),
           "detfeed": detfeed.__version__, "torch": torch.__version__,
           "gpu": torch.cuda.get_device_name(0) if cuda else None, "steps": steps}
    print("routes interleaved by epoch: %s, batch %d, imgsz %d, %d epochs, cpus %s" % (
        ",".join(routes), a.batch, a.imgsz, a.epochs, res["cpus"]))
    print("%-8s %6s %9s %9s %9s %8s %8s" % ("route", "steps", "wall ms", "thread ms",
                                           "proc ms", "next ms", "gpu ms"))
    for r, s in res["summary"].items():
        print("%-8s %6d %9.2f %9.2f %9.2f %8.3f %8.2f" % (
            r, s["steps"], s["wall_ms"] or 0, s["thread_cpu_ms"] or 0,
            s["process_cpu_ms"] or 0, s["next_ms"] or 0, s["gpu_ms"] or 0))
    for k, v in res["paired_wall_ratio"].items():
        if v:
            print("%s: median step ratio %.3f over %d epochs (%.3f-%.3f)" % (
                k, statistics.median(v), len(v), min(v), max(v)))
            print("%s: %s" % (k, ratio_line(v)))
    for r, p in profiles.items():
        calls = " ".join("%s %.1f (%.2f ms)" % (k.replace("cuda", ""), v["count_per_step"],
                                                v["cpu_ms_per_step"])
                         for k, v in p["calls"].items())
        print("profile %s, epoch %d, per step: GPU busy %.2f ms; %s" % (
            r, p["epoch"], p["gpu_busy_ms_per_step"], calls))
    if a.out:
        with open(a.out, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
