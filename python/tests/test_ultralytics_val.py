"""Validation through detfeed in the Ultralytics trainer, on the CPU:
detfeed's validation loader gives the batches of Ultralytics' own (its
trainer's get_dataloader(mode="val")), key by key and byte for byte, and a
fit validated through either ends with the same metrics. The loaders and
fits run in a process of their own (ultralytics_fits.py); these tests read
its record."""
import os

import pytest

from fits_process import data_or_skip, run_fits

DATA = data_or_skip()
COCO128 = os.path.isdir(os.path.join(DATA, "coco128"))

TASKS = ("detect", "segment", "pose")
COMPARISONS = ["val_batches_%s" % t for t in TASKS] + [
    "val_batches_default", "val_batches_detect_on_pose_data"] + (
    ["val_batches_coco128"] if COCO128 else [])
FALLBACKS = ["val_batches_detect_on_segment_data", "val_batches_stride_64"]
FITS = ["val_%s_%s" % (t, v) for t in TASKS for v in ("detfeed", "ultralytics")]


@pytest.fixture(scope="module")
def record(tmp_path_factory):
    return run_fits(DATA, tmp_path_factory.mktemp("val"),
                    COMPARISONS + FALLBACKS + FITS, timeout=900)


# The keys Ultralytics' validators and their loss read, per task.
KEYS = {"detect": {"img", "cls", "bboxes", "batch_idx", "ori_shape", "ratio_pad", "im_file"},
        "segment": {"masks"}, "pose": {"keypoints"}}


@pytest.mark.parametrize("name", COMPARISONS)
def test_validation_batches_equal_ultralytics(record, name):
    rec = record[name]
    assert rec["type"] == "ValidationLoader"
    assert rec["diffs"] == [], "\n".join(rec["diffs"][:20])
    assert rec["batches"] >= 1
    task = {"segment": "segment", "pose": "pose"}.get(name.rsplit("_", 1)[1], "detect")
    assert KEYS["detect"] | KEYS.get(task, set()) <= set(rec["keys"])
    if task == "segment":
        assert "sem_masks" in rec["keys"]  # Ultralytics' Format has it too
    if task == "detect":
        assert "masks" not in rec["keys"] and "keypoints" not in rec["keys"]


def test_comparisons_cover_several_batches_and_shapes(record):
    # More than one batch, rectangles that are not squares, and (coco128)
    # many images of equal aspect ratio, whose order is NumPy argsort's.
    two = record["val_batches_detect"]
    assert two["batches"] == 2
    shapes = {tuple(s) for name in COMPARISONS for s in record[name]["shapes"]}
    assert any(s[2] != s[3] for s in shapes), shapes
    if COCO128:
        assert record["val_batches_coco128"]["batches"] == 8


@pytest.mark.parametrize("name", FALLBACKS)
def test_ultralytics_loader_where_detfeed_cannot_give_its_batches(record, name):
    # A detect model on segment data (detfeed orders the instances by mask
    # area) and a model of stride 64 (detfeed's rectangles are multiples of
    # 32) validate through Ultralytics' loader.
    assert record[name]["type"] == "InfiniteDataLoader"


@pytest.mark.parametrize("task", TASKS)
def test_fits_validated_either_way_end_with_equal_metrics(record, task):
    ours, theirs = record["val_%s_detfeed" % task], record["val_%s_ultralytics" % task]
    for fit in (ours, theirs):
        assert "error" not in fit, fit.get("error")
    assert ours["val_loader"]["type"] == "ValidationLoader"
    assert theirs["val_loader"]["type"] != "ValidationLoader"
    for key in ("batch_size", "batches", "images"):
        assert ours["val_loader"][key] == theirs["val_loader"][key], key
    assert ours["val_loader"]["batch_size"] == 4  # batch 4 validates with batch 8 (4 images)
    # two epochs validated, then the final validation of best.pt
    assert len(ours["metrics"]) == len(theirs["metrics"]) == 3
    assert ours["metrics"] == theirs["metrics"]
    # The validation losses (from every key of the batches) make the
    # comparison bite: the untrained model's mAP is 0.
    for m in ours["metrics"][:2]:
        assert m["val/box_loss"] > 0 and m["val/cls_loss"] > 0, m


def test_trainer_val_option():
    import detfeed.ultralytics as du
    with pytest.raises(ValueError, match="val must be"):
        du.trainer(val="torch")
    du.trainer(val="ultralytics")
