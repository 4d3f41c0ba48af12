"""CUDA batches (skipped without a CUDA device): zero-copy tensors on the
GPU equal, byte for byte, to the host route's, for the three routes (worker,
device colour, device recipe) and every dtype, with the consumer on another
stream than the default."""
import pytest

import detfeed
from test_loader import data

torch = pytest.importorskip("torch")
if not torch.cuda.is_available() or detfeed.cuda_device_count() == 0:
    pytest.skip("no CUDA device", allow_module_level=True)


def coco128():
    path = data("detect").replace("coco8/coco8.yaml", "coco128/coco128.yaml")
    return path


@pytest.mark.parametrize("hyp", [{}, {"bgr": 0.5, "mixup": 0.3}], ids=["defaults", "bgr"])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16", "uint8"])
@pytest.mark.parametrize("color", ["device", "worker", "recipe"])
def test_cuda_tensors_equal_the_host_route(dtype, color, hyp):
    path = coco128()
    kw = dict(imgsz=640, batch=16, workers=4, seed=11, epochs=2, close_mosaic=1, dtype=dtype,
              **hyp)
    side = torch.cuda.Stream()
    ptrs, batches = set(), 0
    with detfeed.Loader(path, device="cuda", color=color, **kw) as dev, \
            detfeed.Loader(path, device="cpu", **kw) as host:
        assert dev.device == "cuda:0"
        want = "device" if color == "device" and dtype != "uint8" else "worker"
        assert dev.color == ("recipe" if color == "recipe" else want)
        for epoch in range(2):
            dev.set_epoch(epoch)
            host.set_epoch(epoch)
            with torch.cuda.stream(side):  # the consumer's current stream
                for a, b in zip(dev, host):
                    img = a["img"]
                    assert img.is_cuda and img.dtype == b["img"].dtype
                    assert img.shape == b["img"].shape and img.is_contiguous()
                    ptrs.add(img.data_ptr())
                    # queued on `side`, after the batch (its event) and
                    # before the buffer's reuse (the release)
                    got = img.view(torch.uint8).cpu() if img.dtype != torch.uint8 else img.cpu()
                    want = b["img"].view(torch.uint8) if b["img"].dtype != torch.uint8 else b["img"]
                    assert torch.equal(got, want)
                    assert torch.equal(a["bboxes"], b["bboxes"])
                    assert a["im_file"] == b["im_file"]
                    batches += 1
        # the recipe route's kernel made every sample (coco128 fits the RAM cache)
        assert dev.device_made == (2 * 128 if color == "recipe" else 0)
        assert dev.device_bytes > 0 and host.device_bytes == 0
    assert batches == 2 * 8
    assert len(ptrs) <= 4  # the loader's prefetch buffers, reused: no allocation per batch


def test_cuda_batch_stays_valid_while_the_consumer_computes():
    """A long kernel on the consumer's stream reads batch k while the loader
    is asked for batch k + 1: the release must keep k's buffer until then."""
    path = coco128()
    with detfeed.Loader(path, imgsz=640, batch=8, workers=4, device="cuda", color="device",
                        prefetch=2, seed=2) as dev, \
            detfeed.Loader(path, imgsz=640, batch=8, workers=4, seed=2) as host:
        sums = []  # of the f32 bit patterns as integers: exact in any order
        for a in dev:
            torch.cuda._sleep(20_000_000)  # about 10 ms of GPU time before the read
            sums.append(a["img"].view(torch.int32).sum(dtype=torch.int64))
        want = [b["img"].view(torch.int32).sum(dtype=torch.int64) for b in host]
        assert len(sums) == 16
        assert torch.equal(torch.stack(sums).cpu(), torch.stack(want))


@pytest.mark.parametrize("task", ["detect", "segment", "pose"])
@pytest.mark.parametrize("color", ["device", "worker", "recipe"])
def test_trainer_floats_equal_ultralytics_preprocess_batch(task, color):
    """What detfeed's trainer hands the model on CUDA (value_scale
    "reciprocal", as the trainer sets it there) equals, bit for bit,
    Ultralytics' own DetectionTrainer.preprocess_batch of the same 8-bit
    batch on the same device (PyTorch's `img.float() / 255` on CUDA)."""
    trainer = pytest.importorskip("ultralytics.models.yolo.detect.train")

    class Args:
        multi_scale = 0.0

    class Host:  # the parts of a trainer its preprocess_batch reads
        device = torch.device("cuda:0")
        args = Args()

    path = data(task)
    kw = dict(imgsz=320, batch=8, workers=4, seed=5, epochs=2, close_mosaic=1)
    batches = 0
    with detfeed.Loader(path, device="cuda", color=color, dtype="float32",
                        value_scale="reciprocal", **kw) as dev, \
            detfeed.Loader(path, device="cpu", dtype="uint8", **kw) as codes:
        for epoch in range(2):
            dev.set_epoch(epoch)
            codes.set_epoch(epoch)
            for a, b in zip(dev, codes):
                want = trainer.DetectionTrainer.preprocess_batch(Host(), {"img": b["img"]})["img"]
                assert want.is_cuda and want.dtype == torch.float32
                assert torch.equal(a["img"].view(torch.int32), want.view(torch.int32))
                batches += 1
    assert batches == 2 * len(dev)
