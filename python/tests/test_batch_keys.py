"""A Loader's batch is Ultralytics' batch: for each task, training (with and
without rect) and validation, the keys its collate_fn gives, img as uint8 by
default, and the values Ultralytics derives from an image's shape
(ratio_pad, rect_shape) equal to those of Ultralytics' own dataset for the
same image. The pixels, labels, masks and sem_masks are compared byte for
byte with forced draws by the conformance suite (tests/conformance)."""
import os

import numpy as np
import pytest

import detfeed

pytest.importorskip("torch")
pytest.importorskip("ultralytics")

DATA = os.environ.get("DETFEED_TEST_DATA", os.path.join(os.path.dirname(__file__), "..", "..",
                                                        "..", "shared", "data"))
SETS = {"detect": "coco8", "segment": "coco8-seg", "pose": "coco8-pose"}


def yaml_of(task, tmp_path):
    """The shared dataset's YAML with its path made absolute (offline:
    Ultralytics would download a relative one it does not find)."""
    import yaml
    name = SETS[task]
    src = os.path.join(DATA, name, name + ".yaml")
    if not os.path.exists(src):
        pytest.skip("no shared data at %s" % DATA)
    with open(src) as f:
        y = yaml.safe_load(f)
    y["path"] = os.path.abspath(os.path.join(DATA, name))
    out = tmp_path / (name + ".yaml")
    out.write_text(yaml.safe_dump(y))
    return str(out)


def ultralytics_batch(path, task, mode, rect, imgsz, n):
    """Ultralytics' collate_fn over its dataset's first n samples, and all
    its samples by file."""
    from ultralytics.cfg import get_cfg
    from ultralytics.data import build_yolo_dataset
    from ultralytics.data.utils import check_det_dataset
    data = check_det_dataset(path)
    cfg = get_cfg(overrides={"task": task, "imgsz": imgsz, "rect": rect})
    ds = build_yolo_dataset(cfg, data["train" if mode == "train" else "val"], n, data,
                            mode=mode, rect=rect or mode == "val", stride=32)
    samples = [ds[i] for i in range(len(ds))]
    return ds.collate_fn(samples[:n]), {s["im_file"]: s for s in samples}


@pytest.mark.parametrize("task", sorted(SETS))
@pytest.mark.parametrize("mode", ["train", "rect", "val"])
def test_batch_is_collate_fn(task, mode, tmp_path):
    path = yaml_of(task, tmp_path)
    imgsz, n = 64, 2
    ref, by_file = ultralytics_batch(path, task, "val" if mode == "val" else "train",
                                     mode == "rect", imgsz, n)
    with detfeed.Loader(path, imgsz=imgsz, batch=n, workers=1, augment=mode != "val",
                        rect=mode == "rect") as loader:
        batch = next(iter(loader))
    assert set(batch) == set(ref), (sorted(batch), sorted(ref))
    assert batch["img"].dtype == ref["img"].dtype  # uint8 by default, as Ultralytics
    for k, v in batch.items():
        assert type(v) is type(ref[k]), k
        if hasattr(v, "dtype"):
            assert v.dtype == ref[k].dtype, k
    assert set(batch["im_file"]) <= set(by_file)
    for i, f in enumerate(batch["im_file"]):
        assert batch["ratio_pad"][i] == by_file[f]["ratio_pad"], f
        if mode == "rect":
            assert isinstance(batch["rect_shape"][i], np.ndarray)
            assert batch["rect_shape"][i].dtype == by_file[f]["rect_shape"].dtype
            assert batch["rect_shape"][i].tolist() == by_file[f]["rect_shape"].tolist(), f
    if task == "segment":
        sem = batch["sem_masks"]
        assert sem.shape == batch["masks"].shape and sem.dtype == ref["sem_masks"].dtype
