"""Segment batches with more than 255 instances in an image: masks are int32,
as Ultralytics gives them (np.int32 past 255 segments, and collate_fn's
torch.cat promotes the batch), else uint8.

The images are coco8-seg's (DETFEED_TEST_DATA, default ../shared/data beside
the repository), copied with generated labels: one of 300 small polygons,
three of 40.
"""
import math
import os
import random
import shutil

import numpy as np
import pytest

import detfeed

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.environ.get("DETFEED_TEST_DATA", os.path.join(os.path.dirname(TOP), "shared", "data"))


def grid(rnd, cols, rows):
    """A star-shaped polygon in each cell of a cols x rows grid (normalized)."""
    lines = []
    for j in range(rows):
        for i in range(cols):
            m = rnd.randint(5, 8)
            pts = []
            for p in range(m):
                a = 2 * math.pi * (p + rnd.uniform(0, 0.8)) / m
                r = rnd.uniform(0.2, 0.45)
                pts += [(i + 0.5 + r * math.cos(a)) / cols, (j + 0.5 + r * math.sin(a)) / rows]
            lines.append("%d %s" % ((i + j) % 3, " ".join("%.6f" % v for v in pts)))
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def dense(tmp_path_factory):
    src = os.path.join(DATA, "coco8-seg", "images", "train")
    if not os.path.isdir(src):
        pytest.skip("no shared data at %s" % DATA)
    root = tmp_path_factory.mktemp("dense")
    os.makedirs(root / "images")
    os.makedirs(root / "labels")
    rnd = random.Random(3)
    for k, name in enumerate(sorted(os.listdir(src))[:4]):
        shutil.copy(os.path.join(src, name), root / "images" / name)
        stem = os.path.splitext(name)[0]
        with open(root / "labels" / (stem + ".txt"), "w") as f:
            f.write(grid(rnd, 20, 15) if k == 0 else grid(rnd, 8, 5))
    return str(root / "images")


def per_image(batch):
    idx = np.asarray(batch["batch_idx"]).astype(int)
    return np.bincount(idx, minlength=len(batch["im_file"]))


def check(batch, tensors):
    masks = batch["masks"]
    if tensors == "torch":
        import torch
        assert isinstance(masks, torch.Tensor)
        dtype = {torch.uint8: "uint8", torch.int32: "int32"}[masks.dtype]
        masks = masks.numpy()
    else:
        dtype = str(masks.dtype)
    counts = per_image(batch)
    wide = counts.max() > 255
    assert dtype == ("int32" if wide else "uint8")
    for i, n in enumerate(counts):  # instance k of image i is painted k + 1
        assert 0 <= masks[i].min() and masks[i].max() <= n
    return wide, int(masks.max())


@pytest.mark.parametrize("tensors", ["numpy", "torch"])
def test_validation_masks_are_int32_in_the_dense_images_batch(dense, tensors):
    if tensors == "torch":
        pytest.importorskip("torch")
    with detfeed.Loader(dense, imgsz=320, batch=2, augment=False, tensors=tensors) as loader:
        seen = [check(b, tensors) for b in loader]
    assert sorted(w for w, _ in seen) == [False, True]
    assert max(top for w, top in seen if w) > 255  # values an 8-bit mask cannot hold


def test_training_masks_follow_the_batch(dense):
    with detfeed.Loader(dense, imgsz=320, batch=2, workers=2, seed=1, epochs=3,
                        tensors="numpy") as loader:
        seen = []
        for e in range(3):
            loader.set_epoch(e)
            seen += [check(b, "numpy")[0] for b in loader]
    assert any(seen)
