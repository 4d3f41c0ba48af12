"""Real Ultralytics fits through detfeed.ultralytics.trainer() on the CPU:
every task, and one fit per train argument that shapes the training data,
each checked on the batches the model received, against what Ultralytics'
own dataset holds for the same arguments, or refused with a message naming
the argument. The fits run in one process of their own
(ultralytics_fits.py); these tests read its record."""

import os

import pytest

from fits_process import data_or_skip, run_fits

DATA = data_or_skip()


@pytest.fixture(scope="module")
def fits(tmp_path_factory):
    return run_fits(DATA, tmp_path_factory.mktemp("fits"))


def trained(fit):
    assert "error" not in fit, fit.get("error")
    assert fit["batches"], "no training batch"
    return fit["batches"]


@pytest.mark.parametrize("task", ["detect", "segment", "pose"])
def test_each_task_trains_with_its_own_batches(fits, task):
    batches = trained(fits[task])
    for b in batches:
        assert b["shape"] == [4, 3, 64, 64] and b["dtype"] == "torch.float32"
        assert b["equals_ultralytics_floats"]
        assert ("masks" in b) == (task == "segment")
        assert ("keypoints" in b) == (task == "pose")
        if task == "pose":
            assert b["keypoints"][1:] == [17, 3]
        if task == "segment":
            assert b["masks"] == [4, 16, 16]
            assert b["masks_dtype"] == ("torch.int32" if b["most_instances"] > 255
                                        else "torch.uint8")
    assert fits[task]["loader"]["type"] == "Loader"
    assert fits[task]["dataset_files"] == fits[task]["ultralytics"]["files"]
    assert fits[task]["dataset_cls"] == fits[task]["ultralytics"]["cls"]


def test_bgr_trains_on_the_same_batches_some_images_bgr(fits):
    # Format's gate has its own draw: each image is the one of the fit
    # without bgr, its planes in the same or the reversed order.
    ref, got = trained(fits["detect"]), trained(fits["bgr"])
    assert [b["im_file"] for b in got] == [b["im_file"] for b in ref]
    orders = []
    for a, b in zip(got, ref):
        assert a["equals_ultralytics_floats"]
        for x, y in zip(a["plane_sums"], b["plane_sums"]):
            assert x in (y, y[::-1]), (x, y)
            orders.append(x == y[::-1] and x != y)
    assert any(orders) and not all(orders)


def test_cutmix_trains_and_changes_images_of_the_fit_without_it(fits):
    ref, got = trained(fits["cutmix_reference"]), trained(fits["cutmix"])
    assert [b["im_file"] for b in got] == [b["im_file"] for b in ref]
    assert all(b["equals_ultralytics_floats"] for b in got)
    pairs = [(x, y) for a, b in zip(got, ref) for x, y in zip(a["plane_sums"], b["plane_sums"])]
    assert any(x != y for x, y in pairs)  # pasted areas


@pytest.mark.parametrize("mode", ["flip", "mixup"])
def test_copy_paste_trains_and_pastes_objects_into_the_fit_without_it(fits, mode):
    ref = trained(fits["copy_paste_reference"])
    got = trained(fits["copy_paste" if mode == "flip" else "copy_paste_mixup"])
    assert [b["im_file"] for b in got] == [b["im_file"] for b in ref]
    assert all(b["equals_ultralytics_floats"] for b in got)
    assert any(b["plane_sums"] != r["plane_sums"] for b, r in zip(got, ref))
    assert sum(b["instances"] for b in got) > sum(b["instances"] for b in ref)


def test_rect_trains_on_ultralytics_rect_shapes_in_its_order(fits):
    fit = fits["rect"]
    batches = trained(fit)
    shapes = fit["ultralytics"]["batch_shapes"]
    assert shapes and any(h != w for h, w in shapes)  # the test needs a rectangle
    per_epoch = len(shapes)
    for i, b in enumerate(batches):
        assert b["shape"][2:] == shapes[i % per_epoch]
        assert b["equals_ultralytics_floats"]
    # no shuffle: every epoch in the same (aspect-ratio) order
    assert [b["im_file"] for b in batches[:per_epoch]] == \
        [b["im_file"] for b in batches[per_epoch:2 * per_epoch]]


def test_yolo26_segment_trains_with_sem_masks(fits):
    # Its semantic loss reads sem_masks, which the trainer adds as
    # Ultralytics' Format makes them.
    for b in trained(fits["segment_yolo26"]):
        assert "sem_masks" in b["keys"]
    assert fits["segment_yolo26"]["metrics"]


def test_an_image_of_300_polygons_trains_with_int32_masks(fits):
    batches = trained(fits["segment_dense"])
    for b in batches:  # Ultralytics' types: np.int32 past 255 instances, torch.cat promotes
        assert b["masks_dtype"] == ("torch.int32" if b["most_instances"] > 255
                                    else "torch.uint8")
    assert any(b["most_instances"] > 255 for b in batches)
    fit = fits["segment_dense"]
    assert fit["dataset_files"] == fit["ultralytics"]["files"]  # none skipped
    assert fit["dataset_instances"] == fit["ultralytics"]["instances"]


def test_a_detection_model_on_segment_data_gets_no_masks(fits):
    for b in trained(fits["detect_on_segment_data"]):
        assert "masks" not in b


def test_a_detection_model_on_pose_data_gets_the_boxes_only(fits):
    # Ultralytics keeps the boxes of pose labels for a box task.
    fit = fits["detect_on_pose_data"]
    for b in trained(fit):
        assert "keypoints" not in b["keys"]
    assert fit["dataset_files"] == fit["ultralytics"]["files"]
    assert fit["dataset_instances"] == fit["ultralytics"]["instances"] > 0


def test_the_plotted_batches_are_the_batches_trained_on(fits):
    cv2 = pytest.importorskip("cv2")
    fit = fits["detect"]
    trained(fit)
    assert len(fit["plots"]) == 3
    for plotted, redrawn in fit["plots"]:
        a, b = cv2.imread(plotted), cv2.imread(redrawn)
        assert a is not None and b is not None and a.shape == b.shape
        diff = abs(a.astype(int) - b.astype(int))
        assert diff.max() == 0, "%s: mean pixel difference %.2f" % (plotted, diff.mean())


def test_single_cls_makes_every_class_zero(fits):
    fit = fits["single_cls"]
    for b in trained(fit):
        assert b["cls"] == [0.0]
    assert fit["dataset_cls"] == fit["ultralytics"]["cls"] == [0]
    assert fit["dataset_instances"] == fit["ultralytics"]["instances"]


def test_classes_keeps_only_those_classes(fits):
    fit = fits["classes"]
    seen = set()
    for b in trained(fit):
        seen.update(b["cls"])
    assert seen and seen <= {22.0, 45.0}
    assert fit["dataset_cls"] == fit["ultralytics"]["cls"] == [22, 45]
    assert fit["dataset_instances"] == fit["ultralytics"]["instances"]


def test_fraction_takes_ultralytics_images(fits):
    fit = fits["fraction"]
    files = set()
    for b in trained(fit):
        files.update(b["im_file"])
        assert len(b["im_file"]) == 2
    assert fit["loader"]["images"] == 2
    assert sorted(files) == fit["dataset_files"] == fit["ultralytics"]["files"]


@pytest.mark.parametrize("name,cached", [("cache_false", False), ("cache_ram", True)])
def test_cache_modes(fits, name, cached):
    fit = fits[name]
    trained(fit)
    cache = fit["loader"]["cache"]
    assert (cache["images"] == 4) == cached and (cache["budget"] > 0) == cached


def test_cache_disk_writes_then_reads_the_disk_cache(fits):
    fit = fits["cache_disk"]
    trained(fit)
    disk = fit["loader"]["cache"]["disk"]
    assert disk and disk["state"] == "built" and disk["written"] == disk["expected"] == 4
    assert disk["path"].endswith(".cache") and "datasets" in disk["path"]
    again = fits["cache_disk_again"]
    trained(again)
    disk2 = again["loader"]["cache"]["disk"]
    assert disk2["state"] == "reused" and disk2["decoded"] == 0 and disk2["path"] == disk["path"]


def test_workers_on_the_cpu_is_one_thread(fits):
    # Ultralytics trains on the CPU with workers=0 (in the main process):
    # detfeed's one thread, not every core.
    fit = fits["workers"]
    trained(fit)
    assert fit["loader"]["workers"] == 1


def test_multi_scale_resizes_the_batches_as_ultralytics(fits):
    sizes = set()
    for b in trained(fits["multi_scale"]):
        assert b["equals_ultralytics_floats"]
        sizes.add(b["shape"][2])
        assert b["shape"][2] % 32 == 0 and b["shape"][2] == b["shape"][3]
    assert sizes != {64}, "multi_scale never changed the size"


@pytest.mark.parametrize("name,words", [
    ("mask_ratio", "mask_ratio=2"),
    ("overlap_mask", "overlap_mask=False"), ("obb", "task='obb'")])
def test_unsupported_arguments_are_refused_before_training(fits, name, words):
    fit = fits[name]
    assert "error" in fit and words in fit["error"], fit.get("error")
    assert not fit["batches"]


@pytest.mark.parametrize("name,words", [
    ("augmentations", "augmentations (custom Albumentations"),
    ("channels_1", "channels: 1: detfeed makes 3-channel"),
    ("segment_on_detect_data", "a segment model needs a segment dataset"),
    ("heic_image", "1 images of formats detfeed does not decode (000000000009.heic)")])
def test_data_detfeed_would_train_otherwise_is_refused(fits, name, words):
    """What Ultralytics would train on and detfeed cannot give (custom
    Albumentations, 1-channel batches, HEIC images) or what Ultralytics' own
    dataset refuses (a segment model on boxes) stops train() before the
    first batch, naming the user's data (not a file written for the loader)."""
    fit = fits[name]
    assert "error" in fit and words in fit["error"], fit.get("error")
    assert "detfeed-data-" not in fit["error"], fit["error"]
    assert not fit["batches"]


def test_a_dataset_of_every_format_trains_on_ultralytics_images(fits):
    """JPEG, PNG (gray), BMP, MPO, TIFF (8- and 16-bit), WebP (lossy, alpha),
    JPEG 2000 and DNG (TIFF bytes) in one training split: every image
    decoded, the files and labels Ultralytics' own dataset holds."""
    fit = fits["formats"]
    batches = trained(fit)
    assert all(b["equals_ultralytics_floats"] for b in batches)
    files = fit["dataset_files"]
    assert files == fit["ultralytics"]["files"]
    assert fit["dataset_cls"] == fit["ultralytics"]["cls"]
    suffixes = {f.rsplit(".", 1)[1] for f in files}
    assert {"jpg", "png", "bmp", "mpo", "webp", "jp2", "dng"} <= suffixes, suffixes
    assert {f for b in batches for f in b["im_file"]} == set(files)


def test_close_mosaic_0_or_less_never_closes_mosaic(fits):
    """Ultralytics closes mosaic at epoch epochs - close_mosaic: never for 0
    or -1; the batches of both are the same (mosaic all along)."""
    neg, zero = trained(fits["close_mosaic_negative"]), trained(fits["close_mosaic_zero"])
    key = lambda bs: [(b["im_file"], b["instances"], b["cls"]) for b in bs]  # noqa: E731
    assert len(neg) == 2 and key(neg) == key(zero)


def test_integer_arguments_given_as_bools_train_as_ultralytics_takes_them(fits):
    """close_mosaic=True and seed=True are 1 in Ultralytics; the trainer
    gives the loader 1 (its Loader refuses a bool where a number is asked)."""
    key = lambda bs: [(b["im_file"], b["instances"], b["cls"]) for b in bs]  # noqa: E731
    as_bools = trained(fits["int_arguments_as_bools"])
    as_ints = trained(fits["int_arguments_as_ints"])
    assert len(as_bools) == 2 and key(as_bools) == key(as_ints)


def test_labels_carry_the_image_shape_as_ultralytics(fits):
    fit = fits["detect"]
    assert fit["dataset_shapes"] == fit["ultralytics"]["shapes"]


def test_trainer_options_that_are_train_arguments_are_refused():
    import detfeed.ultralytics as du
    with pytest.raises(TypeError, match="cache.*train arguments"):
        du.trainer(cache="ram")
    with pytest.raises(ValueError, match="float32"):
        du.trainer(dtype="float16")
    with pytest.raises(ValueError, match="color"):
        du.trainer(color="gpu")


def test_an_installed_albumentations_is_warned_of(monkeypatch):
    """Ultralytics' loader applies albumentations' p=0.01 transforms where
    the package is installed; detfeed does not, and its trainer says so."""
    import importlib.util
    import detfeed.ultralytics as du
    from ultralytics.utils import LOGGER
    said = []
    monkeypatch.setattr(LOGGER, "warning", lambda msg, *a, **k: said.append(str(msg)))
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: object() if name == "albumentations" else real(name, *a))
    du.warn_albumentations()
    assert said and "albumentations is installed" in said[0] and "ToGray" in said[0]
    said.clear()
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "albumentations" else real(name, *a))
    du.warn_albumentations()
    assert not said


def test_dataset_problems_are_logged_once_and_settings_as_information(monkeypatch):
    """The trainer logs each problem of its data once, though training and
    validation may read the same files (coco128 validates on its training
    images), as a warning; what a setting of the user's did (fraction) is
    information."""
    import detfeed
    import detfeed.ultralytics as du
    from ultralytics.utils import LOGGER
    root = os.path.join(DATA, "coco128")
    if not os.path.isdir(root):
        pytest.skip("no coco128 in %s" % DATA)
    warned, told = [], []
    monkeypatch.setattr(LOGGER, "warning", lambda msg, *a, **k: warned.append(str(msg)))
    monkeypatch.setattr(LOGGER, "info", lambda msg, *a, **k: told.append(str(msg)))
    with detfeed.Loader(root, imgsz=64, batch=2, workers=1, fraction="0.5",
                        verify_record="none") as loader:
        kinds = loader.dataset.problem_kinds()
        assert len(kinds) == len(loader.dataset.problems()) and "setting" in kinds
        seen = set()
        du.log_loader(loader, {}, seen=seen)
        du.log_loader(loader, {}, mode="val", seen=seen)
    orphans = [w for w in warned if "label file without an image" in w]
    assert len(orphans) == 2, warned  # 000000000656.txt and 000000000659.txt, once each
    assert any("fraction: the first 64 of 128" in t for t in told), told
    assert not any("fraction" in w for w in warned), warned


def test_closing_mosaic_is_logged_as_ultralytics_logs_it(monkeypatch):
    """Ultralytics logs "Closing dataloader mosaic" when its dataset has
    close_mosaic; detfeed's trainer logs the same line at that epoch (its
    loader turns mosaic off in those epochs by itself)."""
    import detfeed.ultralytics as du
    from ultralytics.utils import LOGGER
    told = []
    monkeypatch.setattr(LOGGER, "info", lambda msg, *a, **k: told.append(str(msg)))
    cls = du._task_class("detect")
    trainer = cls.__new__(cls)  # its one method called: no model, no data
    trainer.train_loader = du.Loader.__new__(du.Loader)
    trainer._close_dataloader_mosaic()
    assert told == ["Closing dataloader mosaic"]


def test_an_error_in_the_written_yaml_names_the_users_line(tmp_path):
    """The trainer opens its loader on a YAML it writes from what Ultralytics
    resolved; an error naming a line of it names the user's YAML and the
    line there with the same key (none where the user's has no such key)."""
    import types
    import detfeed.ultralytics as du
    source = tmp_path / "detfeed-data-x.yaml"
    source.write_text('path: "/d"\ntrain: ["/d/images/train"]\nnames:\n  0: "a"\n')
    user = tmp_path / "mine.yaml"
    user.write_text("# my data\n\npath: /d\nnames:\n  0: a\n\ntrain: images/train\n")
    args = types.SimpleNamespace(data=str(user))
    said = du._user_message("%s:2: folder does not exist; %s:4: bad name" % (source, source),
                            str(source), args)
    assert said == "%s:7: folder does not exist; %s:4: bad name" % (user, user), said
    user.write_text("path: /d\n")
    assert du._user_message("%s:2: x" % source, str(source), args) == "%s: x" % user
