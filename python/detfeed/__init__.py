"""detfeed: a training input pipeline for YOLO-style detectors.

    import detfeed
    with detfeed.Loader("coco128.yaml", imgsz=640, batch=16, device="cuda",
                        color="device") as loader:
        for epoch in range(3):
            loader.set_epoch(epoch)
            for batch in loader:
                ...  # batch["img"]: 16 x 3 x 640 x 640 float32 on the GPU

See help(detfeed.Loader); detfeed.ultralytics trains Ultralytics models with it.
"""
from ._lib import DetfeedError, version
from .loader import Dataset, Loader


def cuda_device_count():
    """CUDA devices libdetfeed can use (0 without a CUDA build or device)."""
    from ._lib import lib
    return lib.detfeed_cuda_device_count(None)


__all__ = ["Loader", "Dataset", "DetfeedError", "version", "cuda_device_count"]
__version__ = version()
