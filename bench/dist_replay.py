"""One detfeed loader per rank under torch.distributed (start with torchrun):
each rank takes its shard from the process group, receives its batches
(CUDA, device colour route, when --device cuda), and the ranks compare notes:
the shards must be disjoint and cover each epoch, and the bytes each rank
received must have the digest `detfeed replay --rank R --world-size W` prints
for that shard in a single process. Images/s per rank are reported.

    torchrun --nproc_per_node N bench/dist_replay.py DATA --cli build/detfeed \\
        [--backend nccl --device cuda] [--out result.json]
"""
import argparse
import hashlib
import json
import os
import subprocess
import time

import numpy as np
import torch
import torch.distributed as dist

import detfeed


def run_epoch(loader, epoch, cuda, h):
    """Adds the epoch to the digest `detfeed replay` computes (h); returns
    the files and images/s."""
    loader.set_epoch(epoch)
    files, n = [], 0
    t0 = time.perf_counter()
    for b in loader:
        img = b["img"]
        if cuda:
            img = img.cpu()
        h.update(img.contiguous().numpy().tobytes())
        if len(b["cls"]):
            for k in ("cls", "bboxes", "batch_idx"):
                h.update(np.asarray(b[k], np.float32).tobytes())
        files += b["im_file"]
        n += img.shape[0]
    return files, n / (time.perf_counter() - t0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("data")
    ap.add_argument("--cli", required=True, help="the detfeed tool, for the single-process digest")
    ap.add_argument("--backend", default="gloo")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--imgsz", type=int, default=640)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--out")
    a = ap.parse_args()
    dist.init_process_group(a.backend)
    rank, world = dist.get_rank(), dist.get_world_size()
    local = int(os.environ.get("LOCAL_RANK", 0))
    cuda = a.device == "cuda"
    if cuda:
        torch.cuda.set_device(local)
    kw = dict(imgsz=a.imgsz, batch=a.batch, workers=a.workers, seed=0, epochs=a.epochs,
              close_mosaic=1, dtype="float32")
    with detfeed.Loader(a.data, device="cuda:%d" % local if cuda else "cpu",
                        color="device" if cuda else "worker", **kw) as loader:
        assert (loader.rank, loader.world_size) == (rank, world)
        h = hashlib.sha256()  # like replay's: every epoch's batches in order
        mine = {"rank": rank, "route": "%s/%s" % (loader.color, loader.device),
                "epochs": [run_epoch(loader, e, cuda, h) for e in range(a.epochs)],
                "sha256": h.hexdigest()}
    ref = subprocess.run([a.cli, "replay", a.data, "--json", "--rank", str(rank), "--world-size",
                          str(world), "--epochs", str(a.epochs), "--batch", str(a.batch),
                          "--imgsz", str(a.imgsz), "--close-mosaic", "1"],
                         capture_output=True, text=True, check=True).stdout
    mine["replay_sha256"] = json.loads(ref.strip().splitlines()[-1])["sha256"]
    everyone = [None] * world
    dist.all_gather_object(everyone, mine)
    if rank == 0:
        n = len(detfeed.Loader(a.data, imgsz=64, batch=1).dataset)
        report = {"world_size": world, "backend": a.backend, "device": a.device,
                  "dataset_images": n, "ranks": []}
        ok = True
        for e in range(a.epochs):
            files = [set(r["epochs"][e][0]) for r in everyone]
            union = set().union(*files)
            disjoint = sum(len(f) for f in files) == len(union)
            ok &= disjoint and len(union) == n
            report.setdefault("epochs", []).append({"disjoint": disjoint,
                                                    "covered": len(union), "of": n})
        for r in everyone:
            same = r["sha256"] == r["replay_sha256"]
            ok &= same
            report["ranks"].append({"rank": r["rank"], "route": r["route"],
                                    "images": len(r["epochs"][0][0]),
                                    "images_per_s": [x[1] for x in r["epochs"]],
                                    "sha256": r["sha256"], "replay_sha256": r["replay_sha256"],
                                    "equal_to_single_process_replay": same})
        report["ok"] = ok
        print(json.dumps(report, indent=1))
        if a.out:
            json.dump(report, open(a.out, "w"), indent=1)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
