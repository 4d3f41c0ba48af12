"""The C library through ctypes: finding libdetfeed, the function signatures,
and the exception that carries the library's messages."""
import ctypes
import os

_HERE = os.path.dirname(os.path.abspath(__file__))
# Libraries a wheel built by setup.py carries beside libdetfeed (libturbojpeg,
# libspng), loaded first so that libdetfeed finds them without a system copy.
_BUNDLED = ("libturbojpeg.so.0", "libspng.so.0")


# Status codes and detfeed_loader_next's other results (detfeed.h).
EINVAL, EBADSTATE = -1, -9
NEXT_END, NEXT_TIMEOUT = 1, 2
# detfeed_mask_type: a mask's element type (its value is the element size).
MASK_U8, MASK_I32 = 1, 4


class DetfeedError(RuntimeError):
    """An error reported by libdetfeed: `status` is its negative status code,
    the message names the file (and line) where there is one."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status

    def __reduce__(self):  # pickles (multiprocessing) with its status
        return type(self), (self.status, str(self))


def _candidates():
    env = os.environ.get("DETFEED_LIBRARY")
    if env:
        return [env]
    top = os.path.dirname(os.path.dirname(_HERE))
    return [os.path.join(_HERE, "libdetfeed.so"),
            os.path.join(top, "build", "libdetfeed.so")]


def _load():
    for name in _BUNDLED:
        path = os.path.join(_HERE, name)
        if os.path.exists(path):
            ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    tried = []
    for path in _candidates():
        if os.path.exists(path):
            return ctypes.CDLL(path)
        tried.append(path)
    raise ImportError("libdetfeed.so not found (tried %s); install the package with "
                      "`pip install ./python` or set DETFEED_LIBRARY" % ", ".join(tried))


lib = _load()

_p, _i, _u32, _i64, _u64, _sz, _d = (ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32,
                                      ctypes.c_int64, ctypes.c_uint64, ctypes.c_size_t,
                                      ctypes.c_double)
_s = ctypes.c_char_p
_pi = ctypes.POINTER(ctypes.c_int)
_SIGNATURES = {
    "detfeed_version_string": (_s, []),
    "detfeed_strerror": (_s, [_i]),
    "detfeed_cuda_built": (_i, []),
    "detfeed_cuda_device_count": (_i, [ctypes.POINTER(_s)]),
    "detfeed_loader_create": (_i, [ctypes.POINTER(_p), _u32]),
    "detfeed_loader_destroy": (None, [_p]),
    "detfeed_loader_last_error": (_s, [_p]),
    "detfeed_loader_param_parse": (_i, [_s, _pi]),
    "detfeed_loader_set_int": (_i, [_p, _i, _i64]),
    "detfeed_loader_set": (_i, [_p, _s, _s]),
    "detfeed_loader_set_rect_order": (_i, [_p, _p, _sz]),
    "detfeed_dataset_image_size": (_i, [_p, _sz, _pi, _pi]),
    "detfeed_loader_set_float": (_i, [_p, _i, _d]),
    "detfeed_loader_set_split": (_i, [_p, _s]),
    "detfeed_loader_set_policy": (_i, [_p, _i]),
    "detfeed_loader_open": (_i, [_p, _s]),
    "detfeed_loader_dataset": (_p, [_p]),
    "detfeed_loader_batch_count": (_sz, [_p]),
    "detfeed_loader_start": (_i, [_p, _u32]),
    "detfeed_loader_next": (_i, [_p, ctypes.POINTER(_p)]),
    "detfeed_loader_next_timed": (_i, [_p, ctypes.POINTER(_p), _i]),
    "detfeed_loader_shutdown": (_i, [_p]),
    "detfeed_loader_release": (None, [_p, _p]),
    "detfeed_loader_route": (_i, [_p, _pi, _pi, ctypes.POINTER(_s)]),
    "detfeed_loader_set_cuda_stream": (_i, [_p, _p]),
    "detfeed_loader_device_bytes": (_u64, [_p]),
    "detfeed_loader_skipped": (_i64, [_p, ctypes.POINTER(_s)]),
    "detfeed_dataset_size": (_sz, [_p]),
    "detfeed_dataset_task": (_i, [_p]),
    "detfeed_dataset_class_count": (_i, [_p]),
    "detfeed_dataset_class_name": (_s, [_p, _i]),
    "detfeed_dataset_kpt_shape": (None, [_p, _pi, _pi]),
    "detfeed_dataset_image_path": (_s, [_p, _sz]),
    "detfeed_dataset_instance_count": (_i, [_p, _sz]),
    "detfeed_dataset_labels": (_i, [_p, _sz, _p, _p, _p]),
    "detfeed_shard_size": (_sz, [_sz, _i, _i]),
    "detfeed_dataset_stat_get": (_i64, [_p, _i]),
    "detfeed_dataset_problem_count": (_sz, [_p]),
    "detfeed_dataset_problem": (_i, [_p, _sz, ctypes.POINTER(_s), _pi, ctypes.POINTER(_s)]),
    "detfeed_cache_stat_get": (_i64, [_p, _i]),
    "detfeed_loader_cache": (_p, [_p]),
    "detfeed_loader_disk_cache": (_p, [_p]),
    "detfeed_disk_cache_stat_get": (_i64, [_p, _i]),
    "detfeed_disk_cache_path": (_s, [_p]),
    "detfeed_disk_cache_note": (_s, [_p]),
    "detfeed_loader_verify_stat": (_i64, [_p, _i]),
    "detfeed_loader_verify_path": (_s, [_p]),
    "detfeed_loader_verify_note": (_s, [_p]),
    "detfeed_batch_size": (_i, [_p, _pi, _pi]),
    "detfeed_batch_index": (_u64, [_p]),
    "detfeed_batch_images": (_p, [_p, ctypes.POINTER(_sz)]),
    "detfeed_batch_cuda_images": (_p, [_p, ctypes.POINTER(_sz)]),
    "detfeed_batch_instances": (_i, [_p]),
    "detfeed_batch_cls": (_p, [_p]),
    "detfeed_batch_bboxes": (_p, [_p]),
    "detfeed_batch_batch_idx": (_p, [_p]),
    "detfeed_batch_keypoints": (_p, [_p]),
    "detfeed_batch_mask_data": (_p, [_p, _pi, _pi, _pi]),
    "detfeed_batch_im_file": (_s, [_p, _i]),
    "detfeed_batch_shapes": (None, [_p, _i, _pi, _pi]),
}
for _name, (_res, _args) in _SIGNATURES.items():
    _f = getattr(lib, _name)
    _f.restype, _f.argtypes = _res, _args


def strerror(status):
    return lib.detfeed_strerror(status).decode()


def version():
    return lib.detfeed_version_string().decode()
