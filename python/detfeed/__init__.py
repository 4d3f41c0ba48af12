"""detfeed: a training input pipeline for YOLO-style detectors.

    import detfeed
    with detfeed.Loader("coco128.yaml", imgsz=640, batch=16, device="cuda",
                        color="device") as loader:
        for epoch in range(3):
            loader.set_epoch(epoch)
            for batch in loader:
                ...  # batch["img"]: 16 x 3 x 640 x 640 float32 on the GPU

See help(detfeed.Loader); detfeed.ultralytics trains Ultralytics models with it.

__version__ is the package's version, which is libdetfeed's: importing checks
it against the version of the library an installed package carries (its
_build.py, written when it was built) without loading the library, and
raises ImportError when they differ. Importing loads nothing: libdetfeed
(DETFEED_LIBRARY, else the package's copy) is loaded, and its ABI and
version checked, on first use (a Loader, version(), cuda_device_count());
detfeed.Loader and detfeed.Dataset import NumPy (and PyTorch, where
installed) on first use.
"""
from ._lib import DetfeedError, LibraryError, version
from ._version import __version__


def _check_build():
    try:
        from ._build import LIBRARY_VERSION
    except ImportError:  # a source checkout: no library of its own
        return
    if LIBRARY_VERSION != __version__:
        raise ImportError("detfeed %s carries libdetfeed %s: reinstall the package"
                          % (__version__, LIBRARY_VERSION))


_check_build()

__all__ = ["Loader", "Dataset", "DetfeedError", "LibraryError", "version",
           "cuda_device_count"]


def cuda_device_count():
    """CUDA devices libdetfeed can use (0 without a CUDA build or device)."""
    from ._lib import lib
    return lib.detfeed_cuda_device_count(None)


def __getattr__(name):
    """Loader and Dataset, on first use."""
    if name in ("Loader", "Dataset"):
        from . import loader
        value = getattr(loader, name)
    else:
        raise AttributeError("module 'detfeed' has no attribute %r" % name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | {"Loader", "Dataset", "__version__"})
