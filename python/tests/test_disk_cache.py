"""Loader(cache="disk"): the same batches as cache="ram" and cache="none",
while the file is built (first epoch) and once it is reused; the file's
place, the report in cache_stats(), the messages for bad arguments, and the
Ultralytics trainer's mapping of cache='disk'.

Needs the shared data (DETFEED_TEST_DATA, default ../shared/data beside the
repository); the datasets are copied into a temporary folder first.
"""
import os
import re
import shutil
import types

import pytest

import detfeed
from batch_digest import digest

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.environ.get("DETFEED_TEST_DATA", os.path.join(os.path.dirname(TOP), "shared", "data"))


def copy_set(tmp_path, name):
    src = os.path.join(DATA, name)
    if not os.path.isdir(src):
        pytest.skip("no shared data at %s" % DATA)
    dst = tmp_path / name
    shutil.copytree(src, dst)
    for dirpath, dirnames, filenames in os.walk(dst):  # shared copies may be read-only
        os.chmod(dirpath, 0o755)
        for f in filenames:
            os.chmod(os.path.join(dirpath, f), 0o644)
    yaml = next(dst.glob("*.yaml"))  # the copy's own folder: Ultralytics would take its
    yaml.write_text(re.sub(r"(?m)^path:.*$", "", yaml.read_text()))  # path under datasets_dir
    return str(dst / (name + ".yaml"))


KW = dict(imgsz=320, batch=4, epochs=2, close_mosaic=1, seed=3, mixup=0.2, dtype="uint8",
          tensors="numpy")


@pytest.mark.parametrize("workers", [1, 4])
def test_disk_equals_ram(tmp_path, workers):
    yaml = copy_set(tmp_path, "coco8")
    with detfeed.Loader(yaml, cache="ram", workers=workers, **KW) as ram:
        ref = digest(ram)
        assert ram.cache_stats()["disk"] is None
    with detfeed.Loader(yaml, cache="none", workers=workers, **KW) as none:
        assert digest(none) == ref
    path = tmp_path / "c.cache"
    with detfeed.Loader(yaml, cache="disk", cache_path=path, workers=workers, **KW) as first:
        d = first.cache_stats()["disk"]
        # committed by a thread of its own once every image is in: writing
        # until then (the open may outlast it, as the C test allows)
        assert d["state"] in ("writing", "built") and d["path"] == str(path), d
        assert digest(first) == ref
        d = first.cache_stats()["disk"]
        assert d["written"] == d["expected"] == 4
    assert path.exists() and not (tmp_path / "c.cache.part").exists()
    with detfeed.Loader(yaml, cache="disk", cache_path=str(path), workers=workers,
                        **KW) as second:
        d = second.cache_stats()["disk"]
        assert d["state"] == "reused" and d["images"] == 4, d
        assert digest(second) == ref
        d = second.cache_stats()["disk"]
        assert d["decoded"] == 0 and d["hits"] >= 4 and d["written"] == 0


def test_default_place_and_stale(tmp_path):
    yaml = copy_set(tmp_path, "coco8")
    with detfeed.Loader(yaml, cache="disk", **KW) as loader:
        digest(loader, 1)
        path = loader.cache_stats()["disk"]["path"]
    assert path == str(tmp_path / "coco8" / "labels" / "train.detfeed-320.cache")
    assert os.path.exists(path)
    # a changed image: the note names it (the file is rebuilt)
    img = sorted((tmp_path / "coco8" / "images" / "train").iterdir())[0]
    os.utime(img, (1e9, 1e9))
    with detfeed.Loader(yaml, cache="disk", **KW) as loader:
        d = loader.cache_stats()["disk"]
        assert d["state"] in ("writing", "built"), d
        assert img.name in d["note"] and "changed" in d["note"], d
    # another imgsz has its own file by default; the same file at another
    # imgsz is rebuilt, and the note says why (the header's imgsz is checked
    # before the images)
    with detfeed.Loader(yaml, cache="disk", cache_path=path, **dict(KW, imgsz=256)) as loader:
        d = loader.cache_stats()["disk"]
        assert d["state"] == "writing"
        assert "imgsz 320 in the file, 256 asked" in d["note"]


def test_arguments(tmp_path):
    yaml = copy_set(tmp_path, "coco8")
    with pytest.raises(ValueError, match="cache must be"):
        detfeed.Loader(yaml, cache="dsk", **KW)
    with pytest.raises(ValueError, match="cache_path must be a file path"):
        detfeed.Loader(yaml, cache="disk", cache_path=3, **KW)
    with pytest.raises(detfeed.DetfeedError, match="nonexistent-folder"):
        detfeed.Loader(yaml, cache="disk", cache_path="/nonexistent-folder/x.cache", **KW)


def test_trainer_maps_disk():
    from detfeed import ultralytics as du
    args = types.SimpleNamespace(cache="disk", task="detect", rect=False, time=None,
                                 bgr=0, cutmix=0, copy_paste=0, scale=0.5)
    du.check_train_arguments(args)  # no longer refused
    assert du._cache(args) == "disk"
    assert du._cache(types.SimpleNamespace(cache=True)) == "ram"
    assert du._cache(types.SimpleNamespace(cache=False)) == "none"
