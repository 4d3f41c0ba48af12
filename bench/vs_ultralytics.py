"""detfeed's loader against Ultralytics' own (build_yolo_dataset +
build_dataloader) on a large dataset, in one run, each mode in a process of
its own: images/s over whole epochs (or the first --batches of each) after a
warm-up, and the peak RSS of the process and its children (Ultralytics'
workers), sampled every 0.2 s, per epoch.

    python3 bench/vs_ultralytics.py DATA_DIR --images 20000 --workers 2 \\
        --epochs 2 --out results.json [--modes MODE,...] [--distinct]

DATA_DIR: a YOLO dataset folder (images/, labels/; e.g. coco128). Its
images are copied once into a work folder and listed --images times over
(an image list, as both loaders read it), so that nothing is written into
DATA_DIR (Ultralytics writes its label cache and .npy files beside the data).
With --distinct the work folder gets --images distinct JPEGs instead: copy k
of an image has its pixels shifted by a small offset and is encoded at its
own quality, so every entry decodes to different pixels (labels unchanged),
and no cache holds an image twice.
Modes: ultralytics-none (cache=False), ultralytics-disk (cache='disk'),
detfeed-none (no cache, uniform partners), detfeed-window (no cache,
partners from a window of min(batch x 8, 1000) samples, as Ultralytics'
buffer), detfeed-ram-small (a RAM budget of --small-mib), detfeed-disk
(the disk cache: the first epoch writes it), detfeed-ram (everything
cached). Needs ultralytics, psutil and detfeed importable.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import threading
import time

MODES = ("ultralytics-none", "ultralytics-disk", "detfeed-none", "detfeed-window",
         "detfeed-ram-small", "detfeed-disk", "detfeed-ram")


def image_files(root):
    return sorted(os.path.join(dp, f) for dp, _, fs in os.walk(root)
                  for f in fs if f.lower().endswith((".jpg", ".jpeg", ".png")))


def make_variants(job):
    """Copies first..first+count-1 of one source image (see --distinct)."""
    import cv2
    import numpy as np
    src, label, out_img, out_lab, first, count = job
    im = cv2.imread(src)
    for k in range(first, first + count):
        name = "%s_%05d" % (os.path.splitext(os.path.basename(src))[0], k)
        offset = np.int16(k % 23 - 11 or 12)
        px = np.clip(im.astype(np.int16) + offset, 0, 255).astype(np.uint8)
        cv2.imwrite(os.path.join(out_img, name + ".jpg"), px,
                    [cv2.IMWRITE_JPEG_QUALITY, 80 + k % 16])
        if label:
            shutil.copyfile(label, os.path.join(out_lab, name + ".txt"))


def distinct_images(src, ds, count):
    """`count` distinct JPEGs (and their labels) made from src's images."""
    from multiprocessing import Pool
    out_img, out_lab = os.path.join(ds, "images", "train"), os.path.join(ds, "labels", "train")
    if len(image_files(out_img)) != count:
        shutil.rmtree(ds, ignore_errors=True)
        os.makedirs(out_img), os.makedirs(out_lab)
        images = image_files(os.path.join(src, "images"))
        jobs = []
        for j, im in enumerate(images):
            rel = os.path.relpath(im, os.path.join(src, "images"))
            label = os.path.join(src, "labels", os.path.splitext(rel)[0] + ".txt")
            n = len(range(j, count, len(images)))
            for first in range(0, n, 16):
                jobs.append((im, label if os.path.exists(label) else None, out_img,
                             out_lab, first, min(16, n - first)))
        with Pool(os.cpu_count()) as pool:
            pool.map(make_variants, jobs)
    return image_files(out_img)


def prepare(src, work, count, distinct):
    """The work folder's copy of the dataset and a list of `count` entries."""
    ds = os.path.join(work, "distinct" if distinct else "data")
    if distinct:
        images = distinct_images(src, ds, count)
    else:
        if not os.path.isdir(ds):
            for sub in ("images", "labels"):
                shutil.copytree(os.path.join(src, sub), os.path.join(ds, sub))
        images = image_files(os.path.join(ds, "images"))
    listing = os.path.join(work, "train-distinct.txt" if distinct else "train.txt")
    with open(listing, "w") as f:
        for i in range(count):
            f.write(images[i % len(images)] + "\n")
    yaml = os.path.join(work, "data-distinct.yaml" if distinct else "data.yaml")
    with open(yaml, "w") as f:
        f.write("path: %s\ntrain: %s\nval: %s\nnames:\n" % (work, listing, listing))
        f.write("".join("  %d: c%d\n" % (k, k) for k in range(80)))
    return yaml, listing


class RssSampler:
    """Peak resident memory of this process and its children."""

    def __init__(self):
        import psutil
        self.proc, self.peak, self.stop = psutil.Process(), (0, 0), False
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def current(self):
        """(RSS, private memory): private is RssAnon + RssShmem, the pages that
        are the processes' own, not the page cache's file pages they map."""
        total = own = 0
        for p in [self.proc] + self.proc.children(recursive=True):
            try:
                total += p.memory_info().rss
                with open("/proc/%d/status" % p.pid) as f:
                    kb = dict(ln.split(":", 1) for ln in f if ln.startswith("Rss"))
                own += (int(kb["RssAnon"].split()[0]) + int(kb["RssShmem"].split()[0])) << 10
            except Exception:  # a worker that just ended
                pass
        return total, own

    def run(self):
        while not self.stop:
            now = self.current()
            self.peak = (max(self.peak[0], now[0]), max(self.peak[1], now[1]))
            time.sleep(0.2)

    def take(self):
        peak, self.peak = self.peak, self.current()
        return peak


def batches(loader, limit):
    n = 0
    for k, b in enumerate(loader):
        n += len(b["im_file"])
        if limit and k + 1 >= limit:
            break
    return n


def hyp_of(args):
    """--hyp k=v,... as keywords: numbers where they parse, else text."""
    out = {}
    for item in filter(None, args.hyp.split(",")):
        k, v = item.split("=", 1)
        try:
            out[k] = float(v)
        except ValueError:
            out[k] = v
    return out


def run_ultralytics(args, yaml, cache):
    from ultralytics.cfg import get_cfg
    from ultralytics.data import build_dataloader, build_yolo_dataset
    from ultralytics.data.utils import check_det_dataset
    cfg = get_cfg(overrides=dict(imgsz=args.imgsz, cache=cache, workers=args.workers,
                                 task=args.task, **hyp_of(args)))
    data = check_det_dataset(yaml)
    ds = build_yolo_dataset(cfg, data["train"], args.batch, data, mode="train")
    return build_dataloader(ds, args.batch, args.workers, shuffle=True), ds


def run_detfeed(args, yaml, mode):
    import detfeed
    kw = dict(imgsz=args.imgsz, batch=args.batch, workers=args.workers, tensors="numpy",
              epochs=max(args.epochs, 2) + 10, close_mosaic=0, dtype=args.dtype,
              **hyp_of(args))
    if mode == "detfeed-none":
        kw["cache"] = "none"
    elif mode == "detfeed-window":
        kw.update(cache="none", partner_window=min(args.batch * 8, 1000))
    elif mode == "detfeed-ram-small":
        kw.update(cache=args.small_mib << 20, partner_window=min(args.batch * 8, 1000))
    elif mode == "detfeed-disk":
        kw.update(cache="disk", partner_window=min(args.batch * 8, 1000))
    else:
        kw["cache"] = "ram"
    return detfeed.Loader(yaml, **kw)


def one_mode(args, yaml, mode):
    rss = RssSampler()
    t0 = time.perf_counter()
    if mode.startswith("ultralytics"):
        loader, _ = run_ultralytics(args, yaml, "disk" if mode.endswith("disk") else False)
    else:
        loader = run_detfeed(args, yaml, mode)
    out = {"mode": mode, "open_s": round(time.perf_counter() - t0, 2), "epochs": []}
    if args.warmup:
        batches(loader, args.warmup)
    for epoch in range(args.epochs):
        if hasattr(loader, "set_epoch"):
            loader.set_epoch(epoch + 1)
        t = time.perf_counter()
        n = batches(loader, args.batches)
        dt = time.perf_counter() - t
        peak = rss.take()
        out["epochs"].append({"images": n, "s": round(dt, 2), "images_per_s": round(n / dt, 1),
                              "peak_rss_mib": round(peak[0] / 2**20, 1),
                              "peak_private_mib": round(peak[1] / 2**20, 1)})
        print(json.dumps({"mode": mode, "epoch": epoch, **out["epochs"][-1]}), flush=True)
    rss.stop = True
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("data")
    ap.add_argument("--images", type=int, default=20000)
    ap.add_argument("--distinct", action="store_true",
                    help="--images distinct images rather than a list repeating DATA_DIR's")
    ap.add_argument("--imgsz", type=int, default=640)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--batches", type=int, default=0, help="per epoch (0: whole epochs)")
    ap.add_argument("--warmup", type=int, default=5, help="batches before timing")
    ap.add_argument("--small-mib", type=int, default=256)
    ap.add_argument("--hyp", default="", help="hyperparameters for both, k=v,... "
                    "(e.g. cutmix=0.5 or copy_paste=0.5,copy_paste_mode=mixup)")
    ap.add_argument("--task", default="detect", help="Ultralytics' task (segment: masks)")
    ap.add_argument("--dtype", default="uint8",
                    help="detfeed's batch dtype (uint8: what Ultralytics' loader gives)")
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--work", default="/tmp/detfeed-vs-ultralytics")
    ap.add_argument("--out")
    ap.add_argument("--mode", help=argparse.SUPPRESS)  # one mode, in a child process
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    yaml, _ = prepare(args.data, args.work, args.images, args.distinct)
    if args.mode:
        print("RESULT " + json.dumps(one_mode(args, yaml, args.mode)), flush=True)
        return
    results = []
    for mode in args.modes.split(","):
        if mode not in MODES:
            raise SystemExit("unknown mode %r (modes: %s)" % (mode, ", ".join(MODES)))
        cmd = [sys.executable, __file__] + sys.argv[1:] + ["--mode", mode]
        run = subprocess.run(cmd, capture_output=True, text=True)
        lines = [ln for ln in run.stdout.splitlines() if ln.startswith("RESULT ")]
        res = json.loads(lines[-1][7:]) if lines else {"mode": mode,
                                                       "error": run.stderr[-2000:]}
        results.append(res)
        print(json.dumps(res), flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"args": vars(args), "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
