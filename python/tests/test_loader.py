"""The Python binding against the C tool and its own contract.

Needs the shared data (DETFEED_TEST_DATA, default ../shared/data beside the
repository) and the `detfeed` tool (DETFEED_CLI, default build/detfeed).
"""
import hashlib
import json
import os
import subprocess

import numpy as np
import pytest

import detfeed
from batch_digest import update_labels

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.environ.get("DETFEED_TEST_DATA", os.path.join(os.path.dirname(TOP), "shared", "data"))
CLI = os.environ.get("DETFEED_CLI", os.path.join(TOP, "build", "detfeed"))
SETS = {"detect": "coco8/coco8.yaml", "pose": "coco8-pose/coco8-pose.yaml",
        "segment": "coco8-seg/coco8-seg.yaml"}
NP_DTYPES = {"uint8": np.uint8, "float32": np.float32, "float16": np.float16,
             "bfloat16": np.uint16}


def data(task):
    path = os.path.join(DATA, SETS[task])
    if not os.path.exists(path):
        pytest.skip("no shared data at %s" % DATA)
    return path


def cli_digest(path, stack=None, **kw):
    """`detfeed replay ... --sha256 --json` with the same settings, and the
    reference stack a Loader found (`stack`, its .stack)."""
    if not os.path.exists(CLI):
        pytest.skip("no detfeed tool at %s" % CLI)
    args = [CLI, "replay", path, "--json"]
    kw.setdefault("dtype", "u8")  # the Loader's default: Ultralytics' uint8 batches
    if stack:
        args += ["--set", ",".join("%s=%s" % kv for kv in sorted(stack.items()))]
    for k, v in kw.items():
        args += ["--" + k.replace("_", "-"), str(v)]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def py_digest(loader, epochs, tensors="numpy"):
    """The digest `detfeed replay` prints: per batch the images, then the
    labels and masks as batch_digest.update_labels hashes them, in order."""
    h, images = hashlib.sha256(), 0
    for e in range(epochs):
        loader.set_epoch(e)
        for b in loader:
            img = b["img"]
            if tensors == "torch":
                import torch
                img = (img.view(torch.uint16) if img.dtype == torch.bfloat16 else img).numpy()
            h.update(np.ascontiguousarray(img).tobytes())
            update_labels(h, b)
            images += img.shape[0]
    return h.hexdigest(), images


@pytest.mark.parametrize("task", ["detect", "pose", "segment"])
@pytest.mark.parametrize("dtype", ["uint8", "float32", "bfloat16"])
def test_same_bytes_as_the_tool(task, dtype):
    path = data(task)
    with detfeed.Loader(path, imgsz=320, batch=3, workers=2, seed=5, epochs=2, close_mosaic=1,
                        dtype=dtype, tensors="numpy") as loader:
        first = next(iter(loader))
        assert first["img"].shape == (3, 3, 320, 320)
        assert first["img"].dtype == NP_DTYPES[dtype]
        assert first["cls"].dtype == np.float32 and first["cls"].shape[1] == 1
        assert first["bboxes"].shape == (len(first["cls"]), 4)
        assert first["batch_idx"].shape == (len(first["cls"]),)
        assert len(first["im_file"]) == len(first["ori_shape"]) == 3
        assert all(r == (320, 320) for r in first["resized_shape"])
        if task == "pose":
            assert first["keypoints"].shape == (len(first["cls"]), 17, 3)
        if task == "segment":
            assert first["masks"].shape == (3, 80, 80) and first["masks"].dtype == np.uint8
            assert first["masks"].max() <= len(first["cls"])
        else:
            assert "masks" not in first
        digest, images = py_digest(loader, 2)
        stack = loader.stack
    ref = cli_digest(path, stack, imgsz=320, batch=3, workers=1, seed=5, epochs=2, close_mosaic=1,
                     dtype={"uint8": "u8", "float32": "f32", "bfloat16": "bf16"}[dtype])
    assert images == ref["images"]
    assert digest == ref["sha256"]


def test_validation_batches_match_the_tool():
    path = data("detect")
    with detfeed.Loader(path, imgsz=320, batch=2, augment=False, tensors="numpy") as loader:
        assert loader.color == "worker"
        digest, images = py_digest(loader, 1)
        stack = loader.stack
    ref = cli_digest(path, stack, imgsz=320, batch=2, augment=0, split="val")
    assert (digest, images) == (ref["sha256"], ref["images"])


def test_validation_takes_numpys_order():
    """Ultralytics orders validation images by NumPy's (unstable) argsort of
    h / w; on coco128 that order is not the stable one detfeed's C library
    keeps by itself, and the package hands NumPy's over."""
    path = os.path.join(DATA, "coco128", "coco128.yaml")
    if not os.path.exists(path):
        pytest.skip("no coco128")
    with detfeed.Loader(path, imgsz=320, batch=16, augment=False, split="train",
                        tensors="numpy") as loader:
        files = [f for b in loader for f in b["im_file"]]
        shapes = {}
        for b in loader:
            shapes.update(zip(b["im_file"], b["ori_shape"]))
        every = loader.dataset.im_files
    hw = np.array([shapes[f] for f in every], np.int64)
    ar = hw[:, 0] / hw[:, 1]
    assert files == [every[i] for i in ar.argsort()]
    assert files != [every[i] for i in ar.argsort(kind="stable")]


def test_epochs_count_up_and_repeat_exactly():
    path = data("detect")
    with detfeed.Loader(path, imgsz=256, batch=2, seed=1, tensors="numpy") as loader:
        assert len(loader) == 2 and len(loader.dataset) == 4
        a = [b["img"].copy() for b in loader]  # epoch 0
        b = [x["img"].copy() for x in loader]  # epoch 1
        assert loader.epoch == 2
        loader.set_epoch(0)
        c = [x["img"].copy() for x in loader]
        assert all(np.array_equal(x, y) for x, y in zip(a, c))
        assert not all(np.array_equal(x, y) for x, y in zip(a, b))


def test_images_are_the_loaders_buffer_not_a_copy():
    path = data("detect")
    with detfeed.Loader(path, imgsz=256, batch=2, prefetch=2, tensors="numpy") as loader:
        batches = list(loader)
        ptrs = {b["img"].__array_interface__["data"][0] for b in batches}
        assert len(ptrs) <= 2  # the two slots of the ring, reused
        assert all(not b["img"].flags.owndata for b in batches)


def test_a_name_that_is_no_file_needs_ultralytics(monkeypatch):
    """coco8.yaml, not a file here: Ultralytics' packaged YAMLs are asked
    (tests/oracle/test_resolve_oracle.py); without Ultralytics it says so."""
    import importlib.util
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "ultralytics" else real(name, *a))
    with pytest.raises(FileNotFoundError, match="Ultralytics.*is not installed"):
        detfeed.Loader("coco8.yaml")
    with pytest.raises(detfeed.DetfeedError, match="nowhere-at-all.yaml"):  # absolute
        detfeed.Loader("/nowhere-at-all.yaml")


def test_a_yaml_root_is_ultralytics_and_said(tmp_path):
    """The shared coco8.yaml (`path: coco8`) resolves under datasets_dir
    (tests/conftest.py's settings, or the keyword), and says so."""
    path = data("detect")
    with detfeed.Loader(path, imgsz=64, batch=2, workers=1, cache="none") as loader:
        assert loader.dataset.root == os.path.realpath(os.path.dirname(path))
        assert loader.dataset.root_rule.startswith("path: coco8 under datasets_dir ")
    os.symlink(os.path.dirname(path), tmp_path / "coco8")
    with detfeed.Loader(path, imgsz=64, batch=2, workers=1, cache="none",
                        datasets_dir=str(tmp_path)) as loader:
        assert loader.dataset.root_rule == (
            "path: coco8 under datasets_dir %s (the datasets_dir setting)" % tmp_path)
    with pytest.raises(detfeed.DetfeedError, match="which does not exist"):
        detfeed.Loader(path, datasets_dir=str(tmp_path / "none"))


def test_errors_carry_the_library_message():
    with pytest.raises(detfeed.DetfeedError, match="nowhere.yaml") as e:
        detfeed.Loader("/nowhere.yaml")
    assert e.value.status < 0
    path = data("detect")
    with pytest.raises(TypeError, match="hsv_q"):
        detfeed.Loader(path, hsv_q=0.1)
    with pytest.raises(ValueError, match="hsv_h"):
        detfeed.Loader(path, hsv_h=-1)
    with pytest.raises(ValueError, match="imgsz"):
        detfeed.Loader(path, imgsz=100)
    with pytest.raises(ValueError):
        detfeed.Loader(path, dtype="int7")
    with pytest.raises(ValueError):
        detfeed.Loader(path, device="tpu")
    for device in (True, False, -1):  # bools are ints in Python: True was CUDA device 1
        with pytest.raises(ValueError, match="device must be"):
            detfeed.Loader(path, device=device)
    with pytest.raises(ValueError):
        detfeed.Loader(path, rank=2, world_size=2)
    # A bool is a count's mistake (True was a batch of 1), a flag's or a
    # probability's value.
    for kw in (dict(batch=True), dict(imgsz=[True]), dict(seed=np.bool_(True)),
               dict(close_mosaic=False), dict(prefetch=True), dict(workers=True),
               dict(classes=[True]), dict(max_width=True), dict(nc=True)):
        with pytest.raises(ValueError, match="%s must be an integer" % next(iter(kw))):
            detfeed.Loader(path, **kw)
    with detfeed.Loader(path, imgsz=64, batch=2, mosaic=False, fliplr=True,
                        single_cls=np.bool_(True), drop_last=True) as loader:
        recipe = detfeed._lib.library().recipe(loader._handle.ptr, 0, 0)
        assert (recipe["mosaic"], recipe["fliplr"], loader.drop_last) == (False, True, True)
        with pytest.raises(ValueError, match="epoch must be an integer"):
            loader.set_epoch(True)
    loader = detfeed.Loader(path, imgsz=64, batch=2)
    loader.close()
    with pytest.raises(detfeed.DetfeedError, match="closed"):
        next(iter(loader))


def test_a_bad_image_is_a_counted_skip(tmp_path):
    src = os.path.join(DATA, "coco8")
    if not os.path.exists(src):
        pytest.skip("no shared data")
    import shutil
    for d in ("images", "labels"):
        shutil.copytree(os.path.join(src, d, "train"), tmp_path / d)
    victim = sorted(os.listdir(tmp_path / "images"))[1]
    with detfeed.Loader(str(tmp_path), imgsz=128, batch=2, mosaic=0, cache="none",
                        tensors="numpy") as loader:
        assert sum(b["img"].shape[0] for b in loader) == 4  # epoch 0: every image sound
        with open(tmp_path / "images" / victim, "r+b") as f:  # damaged after indexing
            f.truncate(100)
        # The next epoch the workers start is after the damage (the constructor
        # starts epoch 0 and the end of an epoch starts the next one, so their
        # workers may read the image before it).
        loader.set_epoch(5)
        seen = sum(b["img"].shape[0] for b in loader)
        assert seen == 4
        n, first = loader.skipped
        assert n >= 1 and victim in first
    with pytest.raises(detfeed.DetfeedError, match=victim):
        with detfeed.Loader(str(tmp_path), imgsz=128, batch=2, mosaic=0, policy="fail") as loader:
            list(loader)


def test_nc_checks_the_class_ids_of_a_folder(tmp_path):
    src = os.path.join(DATA, "coco8")
    if not os.path.exists(src):
        pytest.skip("no shared data")
    import shutil
    for d in ("images", "labels"):
        shutil.copytree(os.path.join(src, d, "train"), tmp_path / d)
    ids = set()
    for name in os.listdir(tmp_path / "labels"):
        with open(tmp_path / "labels" / name) as f:
            ids |= {int(line.split()[0]) for line in f if line.strip()}
    top = max(ids)  # a folder gives no class count: nc sets it
    kw = dict(imgsz=128, batch=2, mosaic=0, cache="none", tensors="numpy")
    with detfeed.Loader(str(tmp_path), nc=top + 1, **kw) as loader:
        assert loader.dataset.stats()["corrupt"] == 0
    with detfeed.Loader(str(tmp_path), nc=top, **kw) as loader:
        stats = loader.dataset.stats()
        assert stats["corrupt"] >= 1 and stats["link_loops"] == 0
        assert any("not below the %d classes" % top in p for p in loader.dataset.problems())
    with pytest.raises(ValueError, match="nc"):
        detfeed.Loader(str(tmp_path), nc=-1, **kw)


@pytest.mark.parametrize("color", ["device", "recipe"])
def test_cuda_request_without_a_device_falls_back_with_a_warning(color):
    if detfeed.cuda_device_count() > 0:
        pytest.skip("a CUDA device is present")
    path = data("detect")
    with pytest.warns(UserWarning, match="detfeed"):
        loader = detfeed.Loader(path, imgsz=128, batch=2, device="cuda", color=color,
                                tensors="numpy")
    assert loader.device == "cpu" and loader.color == "worker" and loader.route_note
    ref = detfeed.Loader(path, imgsz=128, batch=2, tensors="numpy")
    assert py_digest(loader, 1) == py_digest(ref, 1)
    # host batches: no device memory, no sample made by the kernel
    assert loader.device_bytes == 0 and loader.device_made == 0


def test_pin_memory_keeps_the_bytes_and_says_why_not_pinned():
    path = data("detect")
    with pytest.raises(ValueError, match="pin_memory must be True or False"):
        detfeed.Loader(path, pin_memory="yes")
    digests = []
    for pin in (True, False):
        with detfeed.Loader(path, imgsz=128, batch=2, tensors="numpy",
                            pin_memory=pin) as loader:
            digests.append(py_digest(loader, 1))
            pinned, why = loader.pinned
            if not pin:
                assert (pinned, why) == (False, "pin_memory is 0")
            elif detfeed.cuda_device_count() == 0:
                assert not pinned and why  # no CUDA build, or no device
            else:
                assert (pinned, why) == (True, None)
    assert digests[0] == digests[1]


def test_torch_tensors_share_memory_with_the_batch():
    torch = pytest.importorskip("torch")
    path = data("detect")
    with detfeed.Loader(path, imgsz=128, batch=2, dtype="bfloat16", tensors="torch") as a, \
            detfeed.Loader(path, imgsz=128, batch=2, dtype="bfloat16", tensors="numpy") as b:
        for x, y in zip(a, b):
            assert isinstance(x["img"], torch.Tensor) and x["img"].dtype == torch.bfloat16
            assert isinstance(x["cls"], torch.Tensor)
            assert np.array_equal(x["img"].view(torch.uint16).numpy(), y["img"])


def _matmul_models(a, b):
    """Each entry of a @ b (float32 3 x 3) both ways detfeed reproduces:
    every product and sum rounded, and fused multiply-adds (each fma exact
    in Python's float: a product of two float32 is exact in a double, and
    the sums chosen here stay within its 53 bits or round once)."""
    f32 = np.float32
    rounded = np.zeros((3, 3), f32)
    fused = np.zeros((3, 3), f32)
    for i in range(3):
        for j in range(3):
            p = [f32(a[i, k]) * f32(b[k, j]) for k in range(3)]
            rounded[i, j] = f32(f32(p[0] + p[1]) + p[2])
            acc = f32(p[0])
            for k in (1, 2):
                acc = f32(float(a[i, k]) * float(b[k, j]) + float(acc))
            fused[i, j] = acc
    return rounded, fused


def test_numpy_matmul_is_measured_not_the_version():
    # The stack's numpy setting says how this NumPy multiplies float32
    # matrices; on random matrices its products must follow that model
    # (and, where the two models differ, not the other one).
    from detfeed.stack import numpy_matmul
    mode = numpy_matmul()
    assert mode in ("1", "2"), "NumPy %s multiplies in neither order" % np.__version__
    rng = np.random.default_rng(3)
    differing = 0
    for _ in range(300):
        a = rng.standard_normal((3, 3)).astype(np.float32)
        b = rng.standard_normal((3, 3)).astype(np.float32)
        rounded, fused = _matmul_models(a, b)
        assert np.array_equal(a @ b, fused if mode == "2" else rounded)
        differing += not np.array_equal(rounded, fused)
    assert differing > 100  # the matrices do tell the two apart
    assert detfeed.stack.detect()["numpy"] == mode


def test_numpy_sort_is_measured_not_the_version():
    # The stack's numpy_sort names the argsort this NumPy runs on this CPU:
    # the library's variant of that name leaves equal keys where
    # np.argsort does (the masks of equal area, CopyPaste's overlaps), and
    # another variant does not.
    from detfeed import _lib
    from detfeed.stack import numpy_sort
    sort = numpy_sort()
    assert sort in ("scalar", "avx2", "avx512"), \
        "NumPy %s runs an argsort detfeed does not know" % np.__version__
    lib = _lib.library()
    rng = np.random.default_rng(5)
    other = 0
    for n in (5, 17, 300, 2000):
        for dtype in (np.uint64, np.float32):
            a = rng.integers(0, 4, n).astype(dtype)
            assert np.array_equal(lib.numpy_argsort(a, sort), np.argsort(a))
            other += not np.array_equal(
                lib.numpy_argsort(a, "avx2" if sort == "scalar" else "scalar"), np.argsort(a))
    assert other > 4  # the keys do tell the variants apart
    assert detfeed.stack.detect()["numpy_sort"] == sort


def test_an_image_with_20000_boxes_is_kept_with_them_all(tmp_path):
    """Ultralytics keeps an image whatever its number of labels: so does the
    Loader by default, and every box is in its batch; max_labels, a setting
    here, leaves it out with the reason."""
    src = os.path.join(os.path.dirname(data("detect")), "images", "train")
    image = sorted(os.listdir(src))[0]
    os.makedirs(tmp_path / "images")
    os.makedirs(tmp_path / "labels")
    os.symlink(os.path.join(src, image), tmp_path / "images" / image)
    k = np.arange(20000)
    rows = ["%d %.5f %.5f 0.004 0.004" % (c, 0.005 + (i % 141) * 0.007,
                                          0.005 + (i // 141) * 0.007)
            for i, c in zip(k, k % 80)]
    (tmp_path / "labels" / (os.path.splitext(image)[0] + ".txt")).write_text("\n".join(rows))
    with detfeed.Loader(str(tmp_path / "images"), imgsz=640, batch=1, workers=1,
                        augment=False, tensors="numpy") as loader:
        assert len(loader.dataset.labels[0]["cls"]) == 20000
        batch = next(iter(loader))
        assert batch["bboxes"].shape == (20000, 4) and batch["cls"].shape == (20000, 1)
        assert sorted(batch["cls"].ravel().astype(int).tolist()) == sorted((k % 80).tolist())
    with pytest.raises(detfeed.DetfeedError, match="more than 10000 labels in the file"):
        detfeed.Loader(str(tmp_path / "images"), imgsz=640, batch=1, workers=1,
                       augment=False, tensors="numpy", max_labels=10000)
    with pytest.raises(ValueError, match="max_labels: '0' is not a value it accepts"):
        detfeed.Loader(str(tmp_path / "images"), max_labels=0)


def test_progress_line_on_a_terminal_only(monkeypatch):
    """The open's progress line (detfeed._progress, as the tool's): stage,
    count, rate and time left on a terminal's stderr once a stage has run a
    second, cleared at the end; nothing when stderr is not a terminal or
    progress is off."""
    import io
    import time
    from detfeed import _progress

    class Tty(io.StringIO):
        def isatty(self):
            return True

    t0 = time.monotonic()

    def read():  # a "check" stage 100 units long, a unit each 20 ms
        k = min(int((time.monotonic() - t0) * 50), 100)
        return ("check", k, 100) if k < 100 else (None, 100, 100)

    err = Tty()
    monkeypatch.setattr("sys.stderr", err)
    with _progress.Progress(read):
        time.sleep(1.4)
    out = err.getvalue()
    lines = [s for s in out.split("\r") if s.startswith("\x1b[Kcheck [")]
    assert lines and "/100, " in lines[-1] and "/s, " in lines[-1] and " left" in lines[-1]
    assert out.endswith("\r\x1b[K")
    for tty, on in ((False, True), (True, False)):
        err = Tty() if tty else io.StringIO()
        monkeypatch.setattr("sys.stderr", err)
        t0 = time.monotonic()
        with _progress.Progress(read, on):
            time.sleep(1.2)
        assert err.getvalue() == ""
    with pytest.raises(ValueError):
        detfeed.Loader(data("detect"), progress="yes")
