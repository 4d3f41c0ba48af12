"""The Python binding is memory-safe whatever the caller does: K x 2 pose
datasets.

Runs under Debian's python3 (NumPy, no PyTorch) as well as with PyTorch, and
against the ASan+UBSan build of the library (scripts/test.sh), where a
use-after-free or overflow is a report rather than luck.
"""
import os

import numpy as np

import detfeed
from test_loader import data

# -- 1. pose with kpt_shape [K, 2] -------------------------------------------

def make_k2(tmp_path):
    """coco8-pose with the visibility columns dropped, kpt_shape [17, 2]."""
    src = os.path.dirname(data("pose"))
    for split in ("train", "val"):
        os.makedirs(tmp_path / "images" / split)
        os.makedirs(tmp_path / "labels" / split)
        for name in sorted(os.listdir(os.path.join(src, "images", split))):
            os.symlink(os.path.join(src, "images", split, name),
                       tmp_path / "images" / split / name)
            stem = os.path.splitext(name)[0] + ".txt"
            out = []
            with open(os.path.join(src, "labels", split, stem)) as f:
                for line in f:
                    v = line.split()
                    if not v:
                        continue
                    kpt = [v[5 + 3 * k: 7 + 3 * k] for k in range(17)]
                    out.append(" ".join(v[:5] + [x for xy in kpt for x in xy]))
            with open(tmp_path / "labels" / split / stem, "w") as f:
                f.write("\n".join(out) + "\n")
    yaml = tmp_path / "k2.yaml"
    yaml.write_text("path: %s\ntrain: images/train\nval: images/val\n"
                    "kpt_shape: [17, 2]\n"
                    "flip_idx: [0, 2, 1, 4, 3, 6, 5, 8, 7, 10, 9, 12, 11, 14, 13, 16, 15]\n"
                    "names:\n  0: person\n" % tmp_path)
    return str(yaml)


def ultralytics_visibility(xy):
    """What Ultralytics appends to K x 2 keypoints: 0 where x or y < 0, else 1."""
    return np.where((xy[..., 0] < 0) | (xy[..., 1] < 0), 0.0, 1.0).astype(np.float32)


def test_pose_k2_carries_k3_arrays_like_ultralytics(tmp_path):
    k2_yaml = make_k2(tmp_path)
    opts = dict(imgsz=128, batch=2, workers=2, seed=11, epochs=2, close_mosaic=1,
                tensors="numpy")
    with detfeed.Loader(data("pose"), **opts) as k3, detfeed.Loader(k2_yaml, **opts) as k2:
        assert k3.dataset.kpt_shape == (17, 3) and k2.dataset.kpt_shape == (17, 2)
        n_inst = 0
        for a, b in zip(k3.dataset.labels, k2.dataset.labels):
            assert b["keypoints"].shape == a["keypoints"].shape == (len(a["cls"]), 17, 3)
            assert np.array_equal(a["keypoints"][..., :2], b["keypoints"][..., :2])
            assert np.array_equal(b["keypoints"][..., 2],
                                  ultralytics_visibility(b["keypoints"]))
            assert np.array_equal(a["bboxes"], b["bboxes"])
            n_inst += len(a["cls"])
        assert n_inst > 0
        batches = 0
        for epoch in range(2):
            k3.set_epoch(epoch)
            k2.set_epoch(epoch)
            for x, y in zip(k3, k2):
                assert np.array_equal(x["img"], y["img"])
                assert np.array_equal(x["bboxes"], y["bboxes"])
                n = len(x["cls"])
                assert x["keypoints"].shape == y["keypoints"].shape == (n, 17, 3)
                assert np.array_equal(x["keypoints"][..., :2], y["keypoints"][..., :2])
                assert set(np.unique(y["keypoints"][..., 2])) <= {0.0, 1.0}
                batches += 1
        assert batches == 4
