"""The Python binding is memory-safe whatever the caller does: batches held
across close() or past the Loader's life, the dataset after close(), forked
children, two iterators, K x 2 pose datasets, Ctrl-C while a batch is being
made, and clear messages for bad arguments.

Runs under Debian's python3 (NumPy, no PyTorch) as well as with PyTorch, and
against the ASan+UBSan build of the library (scripts/test.sh), where a
use-after-free or overflow is a report rather than luck.
"""
import gc
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import detfeed
from test_loader import data

try:
    import torch
except ImportError:
    torch = None


def small(task="detect", **kw):
    args = dict(imgsz=64, batch=2, workers=2, seed=3, tensors="numpy")
    args.update(kw)
    return detfeed.Loader(data(task), **args)


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


# -- 2. batches and the dataset after close() or the Loader's end -------------

def test_a_batch_held_across_close_keeps_its_bytes():
    loader = small()
    b = next(iter(loader))
    img = b["img"].copy()
    loader.close()
    gc.collect()
    assert np.array_equal(b["img"], img)
    del loader
    gc.collect()
    assert np.array_equal(b["img"], img)
    assert int(b["img"].sum()) == int(img.sum())


def test_a_batch_of_a_collected_loader_stays_valid():
    b = next(iter(small(seed=9)))  # the Loader is gone after this line
    gc.collect()
    got = b["img"].copy()
    with small(seed=9) as ref:
        want = next(iter(ref))["img"].copy()
    assert np.array_equal(got, want)
    # A later epoch of another loader reusing freed memory does not show here.
    with small(seed=1, imgsz=128) as other:
        for _ in other:
            pass
    assert np.array_equal(b["img"], want)


def test_torch_tensors_keep_the_memory_too():
    if torch is None:
        pytest.skip("no PyTorch")
    loader = small(tensors="torch", dtype="bfloat16")
    t = next(iter(loader))["img"]
    want = t.float().clone()
    loader.close()
    del loader
    gc.collect()
    assert torch.equal(t.float(), want)


def test_a_cuda_tensor_held_across_close_keeps_its_bytes():
    if torch is None or not torch.cuda.is_available() or detfeed.cuda_device_count() == 0:
        pytest.skip("no CUDA device")
    loader = small(device="cuda", tensors="torch", imgsz=128)
    t = next(iter(loader))["img"]
    want = t.cpu()
    loader.close()
    del loader
    gc.collect()
    assert t.is_cuda and torch.equal(t.cpu(), want)


def test_the_dataset_after_close_is_a_clear_error():
    loader = small()
    ds = loader.dataset
    n, files = len(ds), list(ds.im_files)
    loader.close()
    with pytest.raises(detfeed.DetfeedError, match="the loader is closed"):
        ds.labels
    with pytest.raises(detfeed.DetfeedError, match="the loader is closed"):
        loader.dataset.labels
    assert len(ds) == n and ds.im_files == files  # plain Python values stay
    with pytest.raises(detfeed.DetfeedError, match="the loader is closed"):
        next(iter(loader))
    with pytest.raises(detfeed.DetfeedError, match="the loader is closed"):
        loader.skipped
    loader.close()  # twice: nothing happens
    # Collected without close(): the same.
    ds = small().dataset
    gc.collect()
    with pytest.raises(detfeed.DetfeedError, match="the loader is closed"):
        ds.labels


def test_close_while_iterating_ends_the_iterator():
    loader = small()
    it = iter(loader)
    first = next(it)
    img = first["img"].copy()
    loader.close()
    with pytest.raises(detfeed.DetfeedError, match="the loader is closed"):
        next(it)
    assert np.array_equal(first["img"], img)


def test_close_from_another_thread_while_waiting():
    """The consumer waits for a slow batch; close() on another thread ends its
    wait with the closed error, promptly. A batch of slow_loader() takes
    about a second and the consumer does nothing else, so the close, 0.05 s
    after it starts asking, comes during a wait; should a machine make
    batches faster than that, the consumer goes on asking (epoch after
    epoch) until the close reaches it."""
    loader = slow_loader()
    asking, closed_at = threading.Event(), []

    def close_soon():
        asking.wait(5)
        time.sleep(0.05)
        closed_at.append(time.perf_counter())
        loader.close()

    closer = threading.Thread(target=close_soon)
    closer.start()
    with pytest.raises(detfeed.DetfeedError, match="the loader is closed"):
        asking.set()
        for _ in range(3):  # epochs of one batch
            for _ in loader:
                pass
    woke = time.perf_counter()
    closer.join()
    assert closed_at and woke - closed_at[0] < 0.5  # not the batch's time


# -- 3. fork -------------------------------------------------------------------

FORK_HINT = "fork"


def run_in_child(fn, timeout=60):
    """fn() in a forked child; its exit status (0: passed), never a hang."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 1
        try:
            code = 0 if fn() else 1
        except BaseException as e:  # noqa: B902 - report anything
            sys.stderr.write("child: %r\n" % (e,))
        finally:
            os._exit(code)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.02)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    pytest.fail("the forked child hung")


def test_a_forked_child_is_refused_not_hung():
    loader = small()
    held = next(iter(loader))  # threads running, a batch held
    img = held["img"].copy()

    def child():
        try:
            next(iter(loader))
        except detfeed.DetfeedError as e:
            msg = str(e)
            ok = FORK_HINT in msg and "create the Loader" in msg and str(os.getppid()) in msg
        else:
            return False
        ok = ok and len(loader.dataset.labels) == len(loader.dataset)  # plain reads
        with pytest.raises(detfeed.DetfeedError, match=FORK_HINT):
            loader.skipped
        loader.close()  # marks it closed here, and stops nothing
        return ok

    assert run_in_child(child) == 0

    def child_collects():
        nonlocal loader, held
        del loader, held  # the child's garbage collection must not join threads
        gc.collect()
        return True

    assert run_in_child(child_collects) == 0
    # The parent's loader is untouched.
    assert np.array_equal(held["img"], img)
    assert sum(b["img"].shape[0] for b in loader) == 4
    loader.close()


DATALOADER_CHILD = r"""
import sys, torch, detfeed
class Epochs(torch.utils.data.IterableDataset):
    def __init__(self, loader):
        self.loader = loader
    def __iter__(self):
        for b in self.loader:
            yield b["img"]
loader = detfeed.Loader(sys.argv[1], imgsz=64, batch=2, workers=2, tensors="torch")
dl = torch.utils.data.DataLoader(Epochs(loader), batch_size=None, num_workers=2,
                                 multiprocessing_context="fork")
try:
    for x in dl:
        pass
except Exception as e:
    print("ERROR", type(e).__name__, str(e).replace("\n", " "))
else:
    print("NO ERROR")
# The parent still iterates it.
print("PARENT", sum(b["img"].shape[0] for b in loader))
"""


def test_torch_dataloader_workers_get_a_clear_error():
    if torch is None:
        pytest.skip("no PyTorch")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-c", DATALOADER_CHILD, data("detect")],
                         capture_output=True, text=True, timeout=180, env=env)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert lines[0].startswith("ERROR") and FORK_HINT in lines[0] and "num_workers=0" in lines[0], \
        out.stdout
    assert lines[-1] == "PARENT 4"


def test_a_loader_cannot_be_pickled():
    import pickle
    with small() as loader:
        with pytest.raises(TypeError, match="pickle"):
            pickle.dumps(loader)


def test_a_dataset_cannot_be_pickled_and_says_why():
    import pickle
    with small() as loader:
        with pytest.raises(TypeError, match="detfeed.Dataset cannot be pickled"):
            pickle.dumps(loader.dataset)


def test_errors_pickle_with_their_status():
    import pickle
    e = pickle.loads(pickle.dumps(detfeed.DetfeedError(-9, "detfeed: it")))
    assert isinstance(e, detfeed.DetfeedError) and e.status == -9 and str(e) == "detfeed: it"


# -- 4. one iterator at a time ------------------------------------------------

def test_a_second_live_iterator_is_an_error():
    with small() as loader:
        it = iter(loader)
        first = next(it)
        second = iter(loader)  # made: nothing yet (the Ultralytics trainer drops one unused)
        with pytest.raises(detfeed.DetfeedError, match="another iterator"):
            next(second)
        with pytest.raises(StopIteration):  # refused: over
            next(second)
        with pytest.raises(detfeed.DetfeedError, match="iterator"):
            for _ in loader:
                pass
        rest = list(it)  # the first one goes on undisturbed
        assert len(rest) == 1 and first["img"].shape[0] == 2
        # Finished: the slot is free.
        assert len(list(loader)) == 2
        # Closed: free too.
        it = iter(loader)
        next(it)
        it.close()
        with pytest.raises(StopIteration):
            next(it)
        assert len(list(loader)) == 2
        # Dropped (garbage collected): free too.
        it = iter(loader)
        next(it)
        del it
        gc.collect()
        assert len(list(loader)) == 2
        # One that was made and never started holds nothing.
        unused = iter(loader)
        assert len(list(loader)) == 2
        del unused


def test_epochs_after_an_abandoned_iterator_are_whole():
    with small(seed=4) as a, small(seed=4) as b:
        it = iter(a)
        next(it)
        del it  # epoch 0 abandoned: the next iteration runs epoch 0 again, whole
        x = [y["img"].copy() for y in a]
        z = [y["img"].copy() for y in b]
        assert len(x) == len(z) == 2 and all(np.array_equal(p, q) for p, q in zip(x, z))


# -- 5. Ctrl-C -------------------------------------------------------------------

def slow_loader():
    """A loader whose batches take seconds: 4 mosaics at 4096 px on one
    worker, decoded again each time."""
    return detfeed.Loader(data("detect"), imgsz=4096, batch=4, workers=1, cache="none",
                          prefetch=1, dtype="uint8", tensors="numpy")


@pytest.fixture
def sigint_raises():
    """Python's own SIGINT handler (KeyboardInterrupt) for the test, also
    where the test run started with SIGINT ignored (a background job of a
    non-interactive shell inherits SIG_IGN, and Python keeps it)."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, old)


def test_ctrl_c_arrives_while_a_batch_is_made(sigint_raises):
    loader = slow_loader()
    it = iter(loader)
    main = threading.get_ident()
    sent = []

    def interrupt():
        sent.append(time.perf_counter())
        signal.pthread_kill(main, signal.SIGINT)

    timer = threading.Timer(0.3, interrupt)
    timer.start()
    t0 = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        next(it)
    latency = time.perf_counter() - sent[0]
    timer.join()
    print("\nCtrl-C latency while waiting for a batch: %.1f ms (batch not ready after %.2f s)"
          % (latency * 1e3, sent[0] - t0))
    assert latency < 0.1 + 0.05
    # The iterator goes on where it was (nothing was taken) ...
    t1 = time.perf_counter()
    b = next(it)
    assert b["img"].shape == (4, 3, 4096, 4096)
    made = time.perf_counter() - t1
    # ... another one is refused while it lives; closing is prompt.
    with pytest.raises(detfeed.DetfeedError, match="iterator"):
        next(iter(loader))
    t2 = time.perf_counter()
    loader.close()
    print("batch after the interrupt in %.2f s; close() in %.3f s"
          % (made, time.perf_counter() - t2))
    with pytest.raises(detfeed.DetfeedError, match="closed"):
        next(it)


def test_ctrl_c_then_a_new_iteration(sigint_raises):
    loader = slow_loader()
    timer = threading.Timer(0.2, signal.pthread_kill, (threading.get_ident(), signal.SIGINT))
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        for _ in loader:
            pass
    timer.join()
    gc.collect()
    loader.close()  # or iterate again: both fine
    with pytest.raises(detfeed.DetfeedError, match="closed"):
        iter(loader)


def test_an_interrupt_after_a_batch_was_taken_loses_none():
    """An exception between the library handing a batch over and the dict
    being made (a signal handler's) keeps the batch for the next next()."""
    with small(seed=5, batch=1) as ref:
        want = [b["im_file"] for b in ref]
    with small(seed=5, batch=1) as loader:
        real, calls = loader._batch, []

        def interrupted(*args):
            calls.append(1)
            if len(calls) in (1, 3):
                raise KeyboardInterrupt
            return real(*args)

        loader._batch = interrupted
        it, got = iter(loader), []
        while True:
            try:
                got.append(next(it)["im_file"])
            except KeyboardInterrupt:
                continue
            except StopIteration:
                break
        assert got == want and len(calls) == len(want) + 2


# -- 6. messages ------------------------------------------------------------------

def test_imgsz_33_gives_the_librarys_message():
    with pytest.raises(ValueError) as e:
        small(imgsz=33)
    assert ("imgsz: '33' is not a value it accepts (an integer from 32 to 8192, a multiple "
            "of 32)") in str(e.value)


def test_an_unknown_split_names_the_accepted_ones():
    with pytest.raises(ValueError) as e:
        small(split="validation")
    msg = str(e.value)
    assert "validation" in msg and "'train'" in msg and "'val'" in msg and "'test'" in msg


def test_imgsz_pair_says_training_takes_one_size():
    for bad in ([640, 480], (640, 480)):
        with pytest.raises(ValueError, match="one integer") as e:
            small(imgsz=bad)
        assert "imgsz" in str(e.value)
    with small(imgsz=[64]) as loader:  # one size in a list, as Ultralytics takes it
        assert next(iter(loader))["img"].shape[-1] == 64


@pytest.mark.parametrize("kw,name", [
    (dict(rank="a", world_size=2), "rank"), (dict(rank=0, world_size=0), "world_size"),
    (dict(world_size="x"), "world_size"), (dict(augment="maybe"), "augment"),
    (dict(drop_last="x"), "drop_last"), (dict(dtype="float64"), "dtype"),
    (dict(dtype=["u8"]), "dtype"), (dict(cache=-1), "cache"), (dict(cache=[1]), "cache"),
    (dict(split=5), "split"), (dict(batch=None), "batch"), (dict(epochs="x"), "epochs"),
    (dict(workers=-1), "workers"), (dict(workers="two"), "workers"),
    (dict(prefetch=0), "prefetch"), (dict(seed="x"), "seed"), (dict(policy=1), "policy"),
    (dict(color=1), "color"), (dict(device=None), "device"), (dict(device=[0]), "device"),
    (dict(tensors="jax"), "tensors"), (dict(value_scale=None), "value_scale"),
    (dict(hsv_h="x"), "hsv_h"), (dict(close_mosaic=-1), "close_mosaic"),
    (dict(imgsz="big"), "imgsz"), (dict(imgsz=None), "imgsz"), (dict(opencv="6"), "opencv"),
    (dict(hsv_q=1), "hsv_q"), (dict(imgsz={640: 1}), "imgsz"),
])
def test_every_argument_error_names_the_argument(kw, name):
    with pytest.raises((ValueError, TypeError)) as e:
        small(**kw)
    assert name in str(e.value), str(e.value)
    assert "detfeed" in str(e.value) or "Loader" in str(e.value), str(e.value)


def test_data_of_the_wrong_type_is_named():
    for bad in (None, 5):
        with pytest.raises(TypeError, match="data"):
            detfeed.Loader(bad)



# -- 7. threads ------------------------------------------------------------------

@pytest.fixture
def switch_often():
    """Python threads switch every microsecond, so that races show."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(old)


READS = {"stats": lambda loader: loader.dataset.stats(),
         "problems": lambda loader: loader.dataset.problems(),
         "cache_stats": lambda loader: loader.cache_stats(),
         "verify_stats": lambda loader: loader.verify_stats(),
         "skipped": lambda loader: loader.skipped,
         "device_bytes": lambda loader: loader.device_bytes}


@pytest.mark.parametrize("read", sorted(READS))
def test_a_read_holds_the_loader_while_another_thread_closes_it(switch_often, read):
    """What reads the loader's memory keeps it while it reads: a close() on
    another thread meanwhile frees nothing under it (under ASan a
    use-after-free is a report, not luck), and the reads after the close
    raise the closed error."""
    for _ in range(20):
        loader = small(workers=1, verify_record="none")
        go = threading.Event()
        closer = threading.Thread(target=lambda: (go.wait(5), loader.close()))
        closer.start()
        go.set()
        with pytest.raises(detfeed.DetfeedError, match="closed"):
            while True:
                READS[read](loader)
        closer.join()


def test_one_iterator_shared_by_two_threads_hands_each_batch_once(switch_often):
    """Two threads taking from one iterator take turns: every sample of the
    epoch comes once, none is lost, nothing crashes."""
    with small(batch=1, epochs=1000) as loader:
        for _ in range(20):
            it, got, errors = iter(loader), [], []

            def take():
                try:
                    got.extend(b["im_file"][0] for b in it)
                except Exception as e:  # noqa: BLE001 - reported below
                    errors.append(e)
            threads = [threading.Thread(target=take) for _ in range(2)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert not errors and sorted(got) == sorted(loader.dataset.im_files)


def test_two_threads_iterating_at_once_one_waits_or_is_refused(switch_often):
    """Two threads each iterating the loader: the second either runs the
    next epoch after the first or is refused (one epoch at a time), never
    half an epoch each."""
    for _ in range(20):
        with small(epochs=1000) as loader:
            counts, refused = [], []

            def run():
                try:
                    counts.append(sum(1 for _ in loader))
                except detfeed.DetfeedError as e:
                    refused.append(str(e))
            threads = [threading.Thread(target=run) for _ in range(2)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert counts and all(c == len(loader) for c in counts), counts
            assert len(counts) + len(refused) == 2
            assert all("iterated already" in e for e in refused), refused


# -- 8. values that C would take differently ---------------------------------------

def test_a_dataset_is_made_by_a_loader_only():
    for arg in (b"coco8.yaml", "coco8.yaml", 12345678, None):
        with pytest.raises(TypeError, match="loader.dataset"):
            detfeed.Dataset(arg)


def test_set_epoch_takes_the_librarys_epochs_only():
    with small() as loader:
        for bad in (-1, 2**32, 2**64 + 5, 2.9, "x"):
            with pytest.raises(ValueError, match="epoch"):
                loader.set_epoch(bad)
        loader.set_epoch(2**32 - 1)
        assert len(list(loader)) == 2
        with pytest.raises(detfeed.DetfeedError, match="past the last"):
            next(iter(loader))


def test_rank_and_world_size_without_a_process_group():
    for kw in (dict(rank=True, world_size=2), dict(rank=0, world_size=np.bool_(True))):
        with pytest.raises(ValueError, match="must be an integer"):
            small(**kw)
    with pytest.raises(ValueError, match="world_size defaults to 1 without a torch.distributed"):
        small(rank=1)
    with small(world_size=2) as loader:
        assert (loader.rank, loader.world_size) == (0, 2)
    with pytest.raises(ValueError, match="validation batches .* made by one process"):
        small(augment=False, rank=0, world_size=2)


def test_a_null_byte_in_a_path_or_value_is_refused(tmp_path):
    for kw in (dict(cache="disk", cache_path=str(tmp_path / "c\0.bin")),
               dict(verify_record=str(tmp_path / "r\0.rec")), dict(hsv_h="0.5\0x")):
        with pytest.raises(ValueError, match="null byte"):
            small(**kw)
    with pytest.raises(ValueError, match="null byte"):
        detfeed.Loader(data("detect") + "\0/not/this")
    assert os.listdir(tmp_path) == []


def test_workers_0_is_refused_not_all_cpus():
    with pytest.raises(ValueError, match="workers must be at least 1"):
        small(workers=0)


def test_classes_as_a_list_as_ultralytics_gives_them():
    with small(classes=[0, 2]) as a, small(classes="0,2") as b:
        assert [x["cls"].tolist() for x in a.dataset.labels] == \
            [x["cls"].tolist() for x in b.dataset.labels]
        assert all(set(x["cls"].ravel()) <= {0, 2} for x in a.dataset.labels)


def test_a_subnormal_hyperparameter_is_a_number():
    with small(hsv_h=1e-320) as loader:
        assert len(list(loader)) == 2


def test_a_dataset_path_that_is_not_utf8(tmp_path):
    src = os.path.dirname(data("detect"))
    root = os.path.join(os.fsencode(str(tmp_path)), b"odd\xffname")
    for sub in (b"images", b"labels"):
        os.makedirs(os.path.join(root, sub))
        for name in os.listdir(os.path.join(os.fsencode(src), sub, b"train")):
            os.symlink(os.path.join(os.fsencode(src), sub, b"train", name),
                       os.path.join(root, sub, name))
    with detfeed.Loader(root, imgsz=64, batch=2, workers=1, tensors="numpy") as loader:
        assert all(os.fsencode(f).startswith(root) for f in loader.dataset.im_files)
        assert all(os.path.exists(f) for f in loader.dataset.im_files)
        files = [f for b in loader for f in b["im_file"]]
        assert sorted(files) == sorted(loader.dataset.im_files)
    with pytest.raises(detfeed.DetfeedError, match="odd"):
        detfeed.Loader(os.path.join(root, b"missing.yaml"))


def test_a_file_that_is_not_detfeeds_is_not_written_over(tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("the user's notes")
    with pytest.raises(detfeed.DetfeedError, match="does not start with DFDCACHE"):
        small(cache="disk", cache_path=str(notes))
    assert notes.read_text() == "the user's notes"
    with small(verify_record=str(notes)) as loader:
        v = loader.verify_stats()
        assert v["record"] == "unwritten" and "does not start with DFVERIFY" in v["note"]
    assert notes.read_text() == "the user's notes"


def test_a_disk_cache_cut_short_under_a_running_loader(tmp_path):
    """Another program truncates the disk cache while a Loader reads it (the
    file used to be mapped: SIGBUS killed the process). The process lives,
    the batches are the clean run's bytes, and a warning names the file and
    each image found damaged."""
    import hashlib
    import warnings
    path = str(tmp_path / "coco8.cache")

    def digest(loader, change=None):
        h = hashlib.sha256()
        for epoch in range(2):
            for k, b in enumerate(loader):
                if change and epoch == 0 and k == 0:
                    change()
                for key in ("img", "cls", "bboxes", "batch_idx"):
                    h.update(np.ascontiguousarray(b[key]).tobytes())
        return h.hexdigest()

    with small(cache="none") as loader:
        ref = digest(loader)
    with small(cache="disk", cache_path=path) as loader:
        assert digest(loader) == ref  # built while it opens

    def cut_short():
        os.truncate(path, os.path.getsize(path) // 2)

    def child():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with small(cache="disk", cache_path=path) as loader:
                got = digest(loader, cut_short)
                disk = loader.cache_stats()["disk"]
        said = [str(w.message) for w in caught if "the file ends before" in str(w.message)]
        ok = got == ref and disk["damaged"] >= 1 and len(disk["damage"]) == disk["damaged"]
        ok = ok and len(said) == disk["damaged"] and all(path in s for s in said)
        if not ok:
            sys.stderr.write("damaged %r, warnings %r\n" % (disk, said))
        return ok

    assert run_in_child(child) == 0
