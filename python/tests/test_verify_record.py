"""Loader(verify_record=...): the verdicts of the check that opening makes
(every image decoded once) are kept beside the labels and reused by the
next open, which decodes nothing and gives the same batches; "none" keeps
nothing; a path object or a string with a '/' names the file; other values
are refused; verify_stats() reports it, and the Ultralytics trainer's log
line says it.

Needs the shared data (DETFEED_TEST_DATA, default ../shared/data beside the
repository); the dataset is copied into a temporary folder first.
"""
import os
import re
import shutil

import pytest

import detfeed
from batch_digest import digest

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.environ.get("DETFEED_TEST_DATA", os.path.join(os.path.dirname(TOP), "shared", "data"))

KW = dict(imgsz=256, batch=4, epochs=2, close_mosaic=1, seed=5, mixup=0.2, dtype="uint8",
          tensors="numpy", workers=2, cache="none")


def copy_coco8(tmp_path):
    src = os.path.join(DATA, "coco8")
    if not os.path.isdir(src):
        pytest.skip("no shared data at %s" % DATA)
    dst = tmp_path / "coco8"
    shutil.copytree(src, dst)
    for dirpath, dirnames, filenames in os.walk(dst):  # shared copies may be read-only
        os.chmod(dirpath, 0o755)
        for f in filenames:
            os.chmod(os.path.join(dirpath, f), 0o644)
    yaml = next(dst.glob("*.yaml"))  # the copy's own folder: Ultralytics would take its
    yaml.write_text(re.sub(r"(?m)^path:.*$", "", yaml.read_text()))  # path under datasets_dir
    return str(dst / "coco8.yaml")


def test_reused(tmp_path):
    yaml = copy_coco8(tmp_path)
    record = tmp_path / "coco8" / "labels" / "train.detfeed-verified"
    with detfeed.Loader(yaml, **KW) as first:
        v = first.verify_stats()
        assert v["record"] == "written" and v["path"] == str(record), v
        assert v["decoded"] == v["images"] == len(first.dataset) and v["reused"] == 0
        ref = digest(first)
    assert record.exists()
    with detfeed.Loader(yaml, **KW) as second:
        v = second.verify_stats()
        assert v["record"] == "reused" and v["decoded"] == 0, v
        assert v["reused"] == v["images"] and "reused" in v["note"]
        assert digest(second) == ref
    # one image touched: only that one is decoded again
    img = sorted((tmp_path / "coco8" / "images" / "train").iterdir())[0]
    os.utime(img, (1e9, 1e9))
    with detfeed.Loader(yaml, **KW) as third:
        v = third.verify_stats()
        assert v["record"] == "written" and v["decoded"] == 1, v
        assert digest(third) == ref


def test_none_and_paths(tmp_path, monkeypatch):
    yaml = copy_coco8(tmp_path)
    record = tmp_path / "coco8" / "labels" / "train.detfeed-verified"
    with detfeed.Loader(yaml, verify_record="none", **KW) as loader:
        v = loader.verify_stats()
        assert v["record"] == "none" and v["path"] is None and v["decoded"] == v["images"]
    assert not record.exists() and not os.path.exists(str(record) + ".lock")
    path = tmp_path / "mine.rec"
    with detfeed.Loader(yaml, verify_record=path, **KW) as loader:
        assert loader.verify_stats()["path"] == str(path)
    assert path.exists() and not record.exists()
    monkeypatch.chdir(tmp_path)
    with detfeed.Loader(yaml, verify_record="./mine.rec", **KW) as loader:
        v = loader.verify_stats()
        assert v["record"] == "reused" and v["decoded"] == 0, v


def test_arguments(tmp_path):
    yaml = copy_coco8(tmp_path)
    for bad in ("off", "", "Auto", "mine.rec"):
        with pytest.raises(ValueError, match="auto, none or a file path"):
            detfeed.Loader(yaml, verify_record=bad, **KW)
    with pytest.raises(ValueError, match="verify_record must be"):
        detfeed.Loader(yaml, verify_record=3, **KW)


def test_trainer_log(tmp_path):
    pytest.importorskip("ultralytics")
    from detfeed import ultralytics as du
    yaml = copy_coco8(tmp_path)
    du.trainer(verify_record="none")  # a Loader option the trainer passes on
    for _ in range(2):
        with detfeed.Loader(yaml, **KW) as loader:
            text = du._verify_summary(loader.verify_stats())
    assert "0 decoded" in text and text.endswith("reused"), text
    assert "train.detfeed-verified" in text
    with detfeed.Loader(yaml, verify_record="none", **KW) as loader:
        text = du._verify_summary(loader.verify_stats())
    assert "nothing recorded" in text, text


def test_no_lock_file_stays_beside_the_labels(tmp_path):
    """The verification record and the disk cache are written under a lock
    file beside the labels, which is removed when released: after a loader
    that wrote both (and one that reused them), only they are there."""
    yaml = copy_coco8(tmp_path)
    labels = tmp_path / "coco8" / "labels"
    for _ in range(2):
        with detfeed.Loader(yaml, **dict(KW, cache="disk")) as loader:
            next(iter(loader))
    names = sorted(p.name for p in labels.iterdir() if p.is_file())
    assert not [n for n in names if n.endswith(".lock")], names
    assert "train.detfeed-verified" in names and any(".detfeed-256.cache" in n for n in names)
