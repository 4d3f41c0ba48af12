"""libdetfeed through ctypes: the one module that declares the C functions
the Python code of the repository calls (the package, the tests and the
bench scripts), loads the library, checks its ABI, and gives the exception
that carries the library's messages.

    from detfeed import _lib
    L = _lib.load("build/libdetfeed.so")  # a given library (tests, bench)
    L = _lib.library()                     # the package's own, found below
    L.detfeed_loader_create(...)           # any function of _SIGNATURES

Nothing is loaded when the module (or the package) is imported. The first
use loads one library for the process: the path given to load(), or else
DETFEED_LIBRARY, the copy inside the package, or build/libdetfeed.so of the
repository. Every later use, the package's included, gets that library;
load() of another path is refused, so a process never holds two.

A library whose detfeed_abi_version() is not ABI_VERSION, or whose version is
not the package's (detfeed/_version.py), is refused with a LibraryError (an
ImportError) naming both, its path and version. A wheel's libdetfeed finds
the libturbojpeg and libspng it carries through its RPATH (auditwheel).

Settings, dtypes and OpenCV stacks are named through the library's parse
functions; the enum values below are the ones it has no parse or name
function for, each with the C constant it mirrors.
"""
import ctypes
import os
import threading

from ._version import __version__

# The DETFEED_ABI_VERSION (detfeed.h) these declarations are written for.
ABI_VERSION = 2

_HERE = os.path.dirname(os.path.abspath(__file__))

# ---- enum values without a parse or name function in the library ----------

# Status codes (detfeed_status).
OK = 0               # DETFEED_OK
EINVAL = -1          # DETFEED_EINVAL
ENOMEM = -2          # DETFEED_ENOMEM
EOVERFLOW = -3       # DETFEED_EOVERFLOW
EIO = -4             # DETFEED_EIO
EFORMAT = -5         # DETFEED_EFORMAT
ECORRUPT = -6        # DETFEED_ECORRUPT
ELIMIT = -7          # DETFEED_ELIMIT
ENOTSUPPORTED = -8   # DETFEED_ENOTSUPPORTED
EBADSTATE = -9       # DETFEED_EBADSTATE
ECUDA = -10          # DETFEED_ECUDA
ELABEL = -11         # DETFEED_ELABEL

# detfeed_loader_next and detfeed_loader_next_timed's results besides a status.
NEXT_END = 1         # DETFEED_NEXT_END
NEXT_TIMEOUT = 2     # DETFEED_NEXT_TIMEOUT

# detfeed_mask_type: a mask's element type (its value is the element size).
MASK_NONE = 0        # DETFEED_MASK_NONE
MASK_U8 = 1          # DETFEED_MASK_U8
MASK_I32 = 4         # DETFEED_MASK_I32

# detfeed_policy (detfeed_loader_set_policy, the dataset's "policy").
POLICY_SKIP = 0      # DETFEED_POLICY_SKIP
POLICY_FAIL = 1      # DETFEED_POLICY_FAIL

# detfeed_output and detfeed_route, as detfeed_loader_route reports them.
OUTPUT_HOST = 0      # DETFEED_OUTPUT_HOST
OUTPUT_CUDA = 1      # DETFEED_OUTPUT_CUDA
ROUTE_WORKER = 0     # DETFEED_ROUTE_WORKER
ROUTE_DEVICE = 1     # DETFEED_ROUTE_DEVICE
ROUTE_RECIPE = 2     # DETFEED_ROUTE_RECIPE

# detfeed_task by value: TASKS[detfeed_dataset_task(ds)].
TASKS = (
    "detect",        # DETFEED_TASK_DETECT = 0
    "segment",       # DETFEED_TASK_SEGMENT = 1
    "pose",          # DETFEED_TASK_POSE = 2
)

# detfeed_scale by value (the loader takes it by name: "value_scale").
SCALES = (
    "quotient",      # DETFEED_SCALE_QUOTIENT = 0
    "reciprocal",    # DETFEED_SCALE_RECIPROCAL = 1
)

# detfeed_isa by value: ISAS.index("avx2") is DETFEED_ISA_AVX2.
ISAS = (
    "auto",          # DETFEED_ISA_AUTO = 0
    "portable",      # DETFEED_ISA_PORTABLE = 1
    "avx2",          # DETFEED_ISA_AVX2 = 2
    "avx512",        # DETFEED_ISA_AVX512 = 3
)

# detfeed_numpy_dtype by value: NUMPY_DTYPES.index("float32") is
# DETFEED_NUMPY_FLOAT32 (detfeed_numpy_argsort's keys).
NUMPY_DTYPES = (
    "int32",         # DETFEED_NUMPY_INT32 = 0
    "uint32",        # DETFEED_NUMPY_UINT32
    "int64",         # DETFEED_NUMPY_INT64
    "uint64",        # DETFEED_NUMPY_UINT64
    "float32",       # DETFEED_NUMPY_FLOAT32
    "float64",       # DETFEED_NUMPY_FLOAT64 = 5
)

# detfeed_dataset_param (detfeed_dataset_set_int / _set_float), by name.
DATASET_PARAMS = {
    "policy": 0,          # DETFEED_DATASET_POLICY
    "verify": 1,          # DETFEED_DATASET_VERIFY
    "nc": 2,              # DETFEED_DATASET_NC
    "max_label_line": 3,  # DETFEED_DATASET_MAX_LABEL_LINE
    "max_labels": 4,      # DETFEED_DATASET_MAX_LABELS
    "max_problems": 5,    # DETFEED_DATASET_MAX_PROBLEMS
    "fraction": 6,        # DETFEED_DATASET_FRACTION
    "single_cls": 7,      # DETFEED_DATASET_SINGLE_CLS
}

# The stat keys by value (the C names in lower case): NAMES.index(name) is
# the key to pass to the getter.
# detfeed_dataset_stat (detfeed_dataset_stat_get).
DATASET_STATS = (
    "images",             # DETFEED_STAT_IMAGES = 0
    "usable",             # DETFEED_STAT_USABLE
    "labelled",           # DETFEED_STAT_LABELLED
    "backgrounds",        # DETFEED_STAT_BACKGROUNDS
    "missing_labels",     # DETFEED_STAT_MISSING_LABELS
    "empty_labels",       # DETFEED_STAT_EMPTY_LABELS
    "orphan_labels",      # DETFEED_STAT_ORPHAN_LABELS
    "instances",          # DETFEED_STAT_INSTANCES
    "duplicates",         # DETFEED_STAT_DUPLICATES
    "corrupt",            # DETFEED_STAT_CORRUPT
    "rejected_lines",     # DETFEED_STAT_REJECTED_LINES
    "unsupported",        # DETFEED_STAT_UNSUPPORTED
    "left_out",           # DETFEED_STAT_LEFT_OUT
    "class_filtered",     # DETFEED_STAT_CLASS_FILTERED
    "link_loops",         # DETFEED_STAT_LINK_LOOPS = 14
)
# detfeed_cache_stat (detfeed_cache_stat_get).
CACHE_STATS = (
    "images",             # DETFEED_CACHE_IMAGES = 0
    "bytes",              # DETFEED_CACHE_BYTES
    "budget",             # DETFEED_CACHE_BUDGET
    "on_demand",          # DETFEED_CACHE_ON_DEMAND
    "failed",             # DETFEED_CACHE_FAILED = 4
)
# detfeed_disk_stat (detfeed_disk_cache_stat_get).
DISK_STATS = (
    "state",              # DETFEED_DISK_STATE = 0 (a detfeed_disk_state)
    "images",             # DETFEED_DISK_IMAGES
    "bytes",              # DETFEED_DISK_BYTES
    "file_bytes",         # DETFEED_DISK_FILE_BYTES
    "hits",               # DETFEED_DISK_HITS
    "decoded",            # DETFEED_DISK_DECODED
    "written",            # DETFEED_DISK_WRITTEN
    "expected",           # DETFEED_DISK_EXPECTED = 7
    "damaged",            # DETFEED_DISK_DAMAGED = 8
)
# detfeed_disk_state, the value of the "state" stat.
DISK_STATES = (
    "reused",             # DETFEED_DISK_REUSED = 0
    "writing",            # DETFEED_DISK_WRITING
    "built",              # DETFEED_DISK_BUILT
    "waiting",            # DETFEED_DISK_WAITING
    "adopted",            # DETFEED_DISK_ADOPTED
    "failed",             # DETFEED_DISK_FAILED = 5
)
# detfeed_verify_stat (detfeed_loader_verify_stat).
VERIFY_STATS = (
    "record",             # DETFEED_VERIFY_STAT_RECORD = 0 (a detfeed_record_state)
    "images",             # DETFEED_VERIFY_STAT_IMAGES
    "decoded",            # DETFEED_VERIFY_STAT_DECODED
    "reused",             # DETFEED_VERIFY_STAT_REUSED
    "cached",             # DETFEED_VERIFY_STAT_CACHED
    "failed",             # DETFEED_VERIFY_STAT_FAILED = 5
)
# detfeed_record_state, the value of the "record" stat.
RECORD_STATES = (
    "none",               # DETFEED_RECORD_NONE = 0
    "reused",             # DETFEED_RECORD_REUSED
    "written",            # DETFEED_RECORD_WRITTEN
    "unwritten",          # DETFEED_RECORD_UNWRITTEN = 3
)

# The staging format of detfeed_cuda_color_convert's params, private to the
# library (DETFEED__CUDA_PARAM_STRIDE and DETFEED__CUDA_PARAM_FLAG in
# src/cuda/cuda_host.h): per image, its three hsv tables at 0, and a flag byte (bit 0:
# colour the image) at CUDA_PARAM_FLAG, in blocks of CUDA_PARAM_STRIDE bytes.
CUDA_PARAM_STRIDE = 1024
CUDA_PARAM_FLAG = 768


# ---- the errors ---------------------------------------------------------------

class DetfeedError(RuntimeError):
    """An error reported by libdetfeed: `status` is its negative status code,
    the message names the file (and line) where there is one."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status

    def __reduce__(self):  # pickles (multiprocessing) with its status
        return type(self), (self.status, str(self))


class LibraryError(ImportError):
    """libdetfeed could not be loaded: not found, another ABI than
    ABI_VERSION, or a second library asked for in one process."""


# ---- the declarations ------------------------------------------------------------

class Cv(ctypes.Structure):
    """detfeed_cv: the reference OpenCV (a detfeed_cv_version), the code path
    it runs (a detfeed_cv_cpu) and its IPP flag; Library.cv makes one from
    names."""
    _fields_ = [("version", ctypes.c_int), ("cpu", ctypes.c_int), ("ipp", ctypes.c_int)]


class RecipeGeometry(ctypes.Structure):
    """detfeed_recipe_geometry: one image's Mosaic and RandomPerspective
    draws (detfeed.h documents each field)."""
    _fields_ = [("mosaic", ctypes.c_int), ("partners", ctypes.c_uint64 * 3),
                ("yc", ctypes.c_int), ("xc", ctypes.c_int),
                ("perspective", ctypes.c_double * 2), ("angle", ctypes.c_double),
                ("scale", ctypes.c_double), ("shear", ctypes.c_double * 2),
                ("translate", ctypes.c_double * 2)]

    def as_dict(self):
        return {"mosaic": bool(self.mosaic), "partners": list(self.partners),
                "yc": self.yc, "xc": self.xc, "perspective": list(self.perspective),
                "angle": self.angle, "scale": self.scale, "shear": list(self.shear),
                "translate": list(self.translate)}


class Recipe(ctypes.Structure):
    """detfeed_recipe: every random parameter of one sample (detfeed.h
    documents each field)."""
    _fields_ = [("epoch", ctypes.c_uint32), ("index", ctypes.c_uint64),
                ("augment", ctypes.c_int), ("geometry", RecipeGeometry),
                ("mixup", ctypes.c_int), ("mix_partner", ctypes.c_uint64),
                ("mix_ratio", ctypes.c_double), ("mix_geometry", RecipeGeometry),
                ("hsv", ctypes.c_int), ("gains", ctypes.c_double * 3),
                ("flipud", ctypes.c_int), ("fliplr", ctypes.c_int), ("bgr", ctypes.c_int),
                ("cutmix", ctypes.c_int), ("cut_partner", ctypes.c_uint64),
                ("cut_geometry", RecipeGeometry), ("cut_areas", (ctypes.c_int * 4) * 3),
                ("cut_choice", ctypes.c_double), ("copy_paste", ctypes.c_int),
                ("cp_partner", ctypes.c_uint64), ("cp_geometry", RecipeGeometry)]

    def as_dict(self):
        """The recipe as `detfeed sample --json` writes it: epoch, index, the
        sample's own draws (mosaic ... translate), mixup, mix_partner,
        mix_ratio, mix_recipe (the partner's draws), hsv, gains, flipud,
        fliplr, bgr, cutmix, cut_partner, cut_recipe (the partner's draws),
        cut_areas, cut_choice, copy_paste, cp_partner, cp_recipe (the
        partner's draws), augment; flags as bools, pairs and triples as
        lists."""
        out = {"epoch": self.epoch, "index": self.index}
        out.update(self.geometry.as_dict())
        out.update({"mixup": bool(self.mixup), "mix_partner": self.mix_partner,
                    "mix_ratio": self.mix_ratio, "mix_recipe": self.mix_geometry.as_dict(),
                    "hsv": bool(self.hsv), "gains": list(self.gains),
                    "flipud": bool(self.flipud), "fliplr": bool(self.fliplr),
                    "bgr": bool(self.bgr), "cutmix": bool(self.cutmix),
                    "cut_partner": self.cut_partner,
                    "cut_recipe": self.cut_geometry.as_dict(),
                    "cut_areas": [list(a) for a in self.cut_areas],
                    "cut_choice": self.cut_choice, "copy_paste": bool(self.copy_paste),
                    "cp_partner": self.cp_partner, "cp_recipe": self.cp_geometry.as_dict(),
                    "augment": bool(self.augment)})
        return out


_p, _i, _u32, _i64, _u64, _sz, _d, _s = (
    ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32, ctypes.c_int64, ctypes.c_uint64,
    ctypes.c_size_t, ctypes.c_double, ctypes.c_char_p)
_pp, _pi, _ps, _psz, _pcv = (ctypes.POINTER(_p), ctypes.POINTER(_i), ctypes.POINTER(_s),
                             ctypes.POINTER(_sz), ctypes.POINTER(Cv))
_IMG = [_p, _sz, _p, _sz, _i, _i]  # src, src_stride, dst, dst_stride, width, height
_WARP = [_p, _sz, _i, _i, _p, _sz, _i, _i, _p, _p]  # src..., dst..., M, border

# Every C function called from Python: name -> (restype, argtypes). Pointers
# to arrays are c_void_p (a NumPy array's .ctypes.data, a ctypes array).
_SIGNATURES = {
    # detfeed.h: version, ABI, status
    "detfeed_abi_version": (_i, []),
    "detfeed_version_string": (_s, []),
    "detfeed_strerror": (_s, [_i]),
    "detfeed_free": (None, [_p]),
    # detfeed.h: dtypes, randomness
    "detfeed_dtype_parse": (_i, [_s, _pi]),
    "detfeed_dtype_name": (_s, [_i]),
    "detfeed_dtype_size": (_sz, [_i]),
    "detfeed_uniform": (_d, [_u64, _u32, _u32, _u64]),
    "detfeed_epoch_order": (_i, [_u64, _u32, _sz, ctypes.POINTER(_u64)]),
    "detfeed_shard_size": (_sz, [_sz, _i, _i]),
    # detfeed.h: the reference stack's names
    "detfeed_cv_version_parse": (_i, [_s, _pi]),
    "detfeed_cv_cpu_parse": (_i, [_s, _pi]),
    "detfeed_cv_cpu_resolve": (_i, [_i]),
    "detfeed_numpy_sort_parse": (_i, [_s, _pi]),
    "detfeed_numpy_argsort": (_i, [_p, _i, _sz, _p, _i]),
    # detfeed.h: the image codec's handle
    "detfeed_codec_create": (_i, [_pp, _u32]),
    "detfeed_codec_destroy": (None, [_p]),
    "detfeed_codec_last_error": (_s, [_p]),
    # detfeed.h: datasets
    "detfeed_dataset_create": (_i, [_pp, _u32]),
    "detfeed_dataset_destroy": (None, [_p]),
    "detfeed_dataset_last_error": (_s, [_p]),
    "detfeed_dataset_set_int": (_i, [_p, _i, _i64]),
    "detfeed_dataset_set_float": (_i, [_p, _i, _d]),
    "detfeed_dataset_set_classes": (_i, [_p, _pi, _sz]),
    "detfeed_dataset_set_split": (_i, [_p, _s]),
    "detfeed_dataset_set_datasets_dir": (_i, [_p, _s]),
    "detfeed_dataset_root": (_s, [_p]),
    "detfeed_dataset_root_rule": (_s, [_p]),
    "detfeed_dataset_open": (_i, [_p, _s]),
    "detfeed_dataset_size": (_sz, [_p]),
    "detfeed_dataset_task": (_i, [_p]),
    "detfeed_dataset_class_count": (_i, [_p]),
    "detfeed_dataset_class_name": (_s, [_p, _i]),
    "detfeed_dataset_kpt_shape": (None, [_p, _pi, _pi]),
    "detfeed_dataset_image_path": (_s, [_p, _sz]),
    "detfeed_dataset_image_size": (_i, [_p, _sz, _pi, _pi]),
    "detfeed_dataset_instance_count": (_i, [_p, _sz]),
    "detfeed_dataset_labels": (_i, [_p, _sz, _p, _p, _p]),
    "detfeed_dataset_stat_get": (_i64, [_p, _i]),
    "detfeed_dataset_problem_count": (_sz, [_p]),
    "detfeed_dataset_problem": (_i, [_p, _sz, _ps, _pi, _ps]),
    # detfeed.h: caches and the verification record
    "detfeed_cache_stat_get": (_i64, [_p, _i]),
    "detfeed_disk_cache_stat_get": (_i64, [_p, _i]),
    "detfeed_disk_cache_path": (_s, [_p]),
    "detfeed_disk_cache_note": (_s, [_p]),
    "detfeed_disk_cache_damage": (_i, [_p, _sz, _p, _sz]),
    "detfeed_loader_verify_stat": (_i64, [_p, _i]),
    "detfeed_loader_verify_path": (_s, [_p]),
    "detfeed_loader_verify_note": (_s, [_p]),
    # detfeed.h: the loader
    "detfeed_loader_create": (_i, [_pp, _u32]),
    "detfeed_loader_destroy": (None, [_p]),
    "detfeed_loader_last_error": (_s, [_p]),
    "detfeed_dataset_problem_kind": (_i, [_p, _sz]),
    "detfeed_loader_progress": (_s, [_p, ctypes.POINTER(_u64), ctypes.POINTER(_u64)]),
    "detfeed_loader_param_parse": (_i, [_s, _pi]),
    "detfeed_loader_param_bounds_int": (_i, [_i, _p, _p, _p, _p]),
    "detfeed_loader_set": (_i, [_p, _s, _s]),
    "detfeed_loader_set_split": (_i, [_p, _s]),
    "detfeed_loader_set_policy": (_i, [_p, _i]),
    "detfeed_loader_set_rect_order": (_i, [_p, _p, _sz]),
    "detfeed_loader_open": (_i, [_p, _s]),
    "detfeed_loader_dataset": (_p, [_p]),
    "detfeed_loader_cache": (_p, [_p]),
    "detfeed_loader_disk_cache": (_p, [_p]),
    "detfeed_loader_route": (_i, [_p, _pi, _pi, _ps]),
    "detfeed_loader_batch_count": (_sz, [_p]),
    "detfeed_loader_sample_size": (_i, [_p, _u64, _pi, _pi]),
    "detfeed_loader_sample": (_i, [_p, _u32, _u64, _p, _i, _pi, _p, _p, _p]),
    "detfeed_loader_sample_mask_data": (_i, [_p, _u32, _u64, _p, _sz, _pi, _pi, _pi]),
    "detfeed_loader_recipe": (_i, [_p, _u32, _u64, ctypes.POINTER(Recipe)]),
    "detfeed_loader_start": (_i, [_p, _u32]),
    "detfeed_loader_next": (_i, [_p, _pp]),
    "detfeed_loader_next_timed": (_i, [_p, _pp, _i]),
    "detfeed_loader_release": (_i, [_p, _p]),
    "detfeed_loader_shutdown": (_i, [_p]),
    "detfeed_loader_skipped": (_i64, [_p, _ps]),
    "detfeed_loader_pinned": (_i, [_p, _ps]),
    "detfeed_loader_set_cuda_stream": (_i, [_p, _p]),
    "detfeed_loader_device_bytes": (_u64, [_p]),
    "detfeed_loader_device_made": (_i64, [_p]),
    # detfeed.h: batches
    "detfeed_batch_size": (_i, [_p, _pi, _pi]),
    "detfeed_batch_images": (_p, [_p, _psz]),
    "detfeed_batch_cuda_images": (_p, [_p, _psz]),
    "detfeed_batch_instances": (_i, [_p]),
    "detfeed_batch_cls": (_p, [_p]),
    "detfeed_batch_bboxes": (_p, [_p]),
    "detfeed_batch_batch_idx": (_p, [_p]),
    "detfeed_batch_keypoints": (_p, [_p]),
    "detfeed_batch_mask_data": (_p, [_p, _pi, _pi, _pi]),
    "detfeed_batch_im_file": (_s, [_p, _i]),
    "detfeed_batch_shapes": (None, [_p, _i, _pi, _pi]),
    # detfeed_img.h: CPU code paths
    "detfeed_isa_available": (_i, [_i]),
    "detfeed_isa_best": (_i, []),
    # detfeed_img.h: colour
    "detfeed_hsv_lut": (_i, [_d, _d, _d, _p]),
    "detfeed_hsv_apply": (_i, _IMG + [_p, _i]),
    "detfeed_hsv_apply_cv": (_i, _IMG + [_p, _pcv, _i]),
    "detfeed_bgr_to_hsv": (_i, _IMG),
    "detfeed_hsv_to_bgr_cv": (_i, _IMG + [_pcv]),
    # detfeed_img.h: conversion
    "detfeed_convert_chw": (_i, [_p, _sz, _i, _i, _p, _sz, _i, _i]),
    # detfeed_img.h: image files, resize, warps
    "detfeed_codec_decode": (_i, [_p, _s, _sz, _s, _pp, _pi, _pi]),
    "detfeed_codec_probe_file": (_i, [_p, _s, _pi, _pi]),
    "detfeed_codec_set_opencv": (_i, [_p, _i]),
    "detfeed_resize_linear": (_i, [_p, _sz, _i, _i, _p, _sz, _i, _i, _i]),
    "detfeed_load_size": (None, [_i, _i, _i, _pi, _pi]),
    "detfeed_warp_affine": (_i, _WARP),
    "detfeed_warp_perspective": (_i, _WARP),
    "detfeed_warp_affine_cv": (_i, _WARP + [_pcv]),
    "detfeed_warp_perspective_cv": (_i, _WARP + [_pcv]),
    # detfeed_cuda.h
    "detfeed_cuda_built": (_i, []),
    "detfeed_cuda_device_count": (_i, [_ps]),
    "detfeed_cuda_color_convert": (_i, [_p, _i, _i, _i, _p, _pcv, _p, _i, _i, _p]),
}


class Library:
    """One loaded libdetfeed. Each function of _SIGNATURES is an attribute,
    declared on its first use; the methods below name enum values through
    the library's parse functions. `path` is where it was loaded from."""

    def __init__(self, cdll, path):
        self._cdll = cdll
        self.path = path

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        if name not in _SIGNATURES:
            raise AttributeError("%s is not declared in detfeed/_lib.py (its _SIGNATURES table "
                                 "holds every C function Python calls)" % name)
        f = getattr(self._cdll, name)
        f.restype, f.argtypes = _SIGNATURES[name]
        setattr(self, name, f)  # later lookups find it without coming here
        return f

    # -- version and errors ---------------------------------------------------
    def version(self):
        """The library's version, "MAJOR.MINOR.PATCH"."""
        return self.detfeed_version_string().decode()

    def strerror(self, status):
        """The library's short text of a status code."""
        return self.detfeed_strerror(status).decode()

    def check(self, rc, what, message=None):
        """rc when it is not negative; else DetfeedError(rc, "detfeed WHAT:
        MESSAGE"), MESSAGE being `message` (a handle's last error) or, when
        that is empty, the status's text."""
        if rc < 0:
            raise DetfeedError(rc, "detfeed %s: %s" % (what, message or self.strerror(rc)))
        return rc

    # -- names through the parse functions -------------------------------------
    def _parse(self, fn, name, what):
        out = ctypes.c_int()
        if fn(name.encode() if isinstance(name, str) else name, ctypes.byref(out)) != OK:
            raise ValueError("detfeed: %r is not a %s the library knows" % (name, what))
        return out.value

    def dtype(self, name):
        """The detfeed_dtype of a name ("u8", "uint8", "f32", "float32", "f16",
        "float16", "half", "bf16", "bfloat16"); ValueError for another."""
        return self._parse(self.detfeed_dtype_parse, name, "dtype")

    def dtype_name(self, code):
        """The short name of a detfeed_dtype ("u8", "f32", "f16", "bf16")."""
        return self.detfeed_dtype_name(code).decode()

    def cv_version(self, name):
        """The detfeed_cv_version of "4", "4-debian", "5.0" or "5.1"."""
        return self._parse(self.detfeed_cv_version_parse, name, "reference OpenCV")

    def cv_cpu(self, name):
        """The detfeed_cv_cpu of "auto", "sse", "avx2" or "avx512"."""
        return self._parse(self.detfeed_cv_cpu_parse, name, "OpenCV code path")

    def cv(self, version, cpu="auto", ipp=1):
        """A Cv (detfeed_cv) from the names of its version and code path."""
        return Cv(self.cv_version(version), self.cv_cpu(cpu), int(ipp))

    def loader_param(self, name):
        """The detfeed_loader_param of a setting's name; ValueError for another."""
        return self._parse(self.detfeed_loader_param_parse, name, "loader setting")

    def numpy_sort(self, name):
        """The detfeed_numpy_sort of "scalar", "avx2" or "avx512"."""
        return self._parse(self.detfeed_numpy_sort_parse, name, "NumPy argsort")

    def numpy_argsort(self, keys, sort):
        """np.argsort(keys) as NumPy's variant `sort` ("scalar", "avx2",
        "avx512") computes it, by detfeed_numpy_argsort: an int64 NumPy
        array. keys: a 1-D NumPy array of int32, uint32, int64, uint64,
        float32 or float64 (ValueError for another dtype)."""
        import numpy as np
        keys = np.ascontiguousarray(keys)
        if keys.ndim != 1 or keys.dtype.name not in NUMPY_DTYPES:
            raise ValueError("detfeed: numpy_argsort takes a 1-D array of %s, not %s %s"
                             % (", ".join(NUMPY_DTYPES), keys.ndim, keys.dtype))
        keys = keys.astype(keys.dtype.newbyteorder("="), copy=False)
        order = np.empty(len(keys), np.int64)
        rc = self.detfeed_numpy_argsort(keys.ctypes.data, NUMPY_DTYPES.index(keys.dtype.name),
                                        len(keys), order.ctypes.data, self.numpy_sort(sort))
        self.check(rc, "numpy_argsort")
        return order

    # -- a loader's settings by name ---------------------------------------------
    def loader_set(self, loader, name, value):
        """detfeed_loader_set(loader, name, str(value)) (a bool as 0 or 1);
        DetfeedError with the loader's message when it is refused."""
        text = str(int(value) if isinstance(value, bool) else value)
        rc = self.detfeed_loader_set(loader, name.encode(), text.encode())
        return self.check(rc, "set %s=%s" % (name, text),
                          self.detfeed_loader_last_error(loader).decode())

    def recipe(self, loader, epoch, index):
        """The recipe of sample `index` of `epoch` (detfeed_loader_recipe) as
        a dict, Recipe.as_dict: the keys and values of `detfeed sample
        --json`'s recipe."""
        r = Recipe()
        rc = self.detfeed_loader_recipe(loader, epoch, index, ctypes.byref(r))
        self.check(rc, "recipe (epoch %d, index %d)" % (epoch, index),
                   self.detfeed_loader_last_error(loader).decode())
        return r.as_dict()


def _abi_of(lib):
    try:
        return lib.detfeed_abi_version()
    except AttributeError:  # from before the ABI number, or not libdetfeed
        return None


def _version_of(lib):
    try:
        return lib.version()
    except AttributeError:
        return "unknown version"


def open_library(path, abi=ABI_VERSION, version=__version__):
    """libdetfeed at `path` as a Library, once its ABI is checked against `abi`
    and its version against `version` (LibraryError naming both, the path and
    the library's version when they differ). The process's library is
    load()'s: this is for a check of a library, not for a second one to use."""
    try:
        lib = Library(ctypes.CDLL(path), path)
    except OSError as e:
        raise LibraryError("detfeed: cannot load %s: %s" % (path, e)) from e
    got = _abi_of(lib)
    if got != abi:
        raise LibraryError(
            "detfeed: %s (libdetfeed %s) has ABI %s, but this Python code is written for "
            "ABI %d: use the package and the library of one build (`pip install ./python`, "
            "or DETFEED_LIBRARY naming a library built from the same sources)"
            % (path, _version_of(lib), "unknown (no detfeed_abi_version)" if got is None
               else got, abi))
    if version is not None and lib.version() != version:
        raise LibraryError(
            "detfeed: %s is libdetfeed %s, but this package is detfeed %s: use the package and "
            "the library of one build" % (path, lib.version(), version))
    return lib


def _candidates():
    env = os.environ.get("DETFEED_LIBRARY")
    if env:
        return [env]
    top = os.path.dirname(os.path.dirname(_HERE))
    return [os.path.join(_HERE, "libdetfeed.so"),
            os.path.join(top, "build", "libdetfeed.so")]


def _default_path():
    tried = []
    for path in _candidates():
        if os.path.exists(path):
            return path
        tried.append(path)
    raise LibraryError("libdetfeed.so not found (tried %s); install the package with "
                       "`pip install ./python` or set DETFEED_LIBRARY" % ", ".join(tried))


_loaded = []  # the process's Library, once loaded
_lock = threading.Lock()


def load(path=None):
    """The process's library: the one at `path` (loaded now, or already), or
    with path None the one loaded, else the package's (DETFEED_LIBRARY, the
    package's copy, the repository's build/). LibraryError when it cannot
    be loaded, has another ABI, or `path` is not the library already loaded."""
    with _lock:
        if not _loaded:
            _loaded.append(open_library(path if path is not None else _default_path()))
        lib = _loaded[0]
    if path is not None and os.path.realpath(path) != os.path.realpath(lib.path):
        raise LibraryError("detfeed: %s is loaded already; a process uses one libdetfeed, so "
                           "%s is not loaded too" % (lib.path, path))
    return lib


def library():
    """The process's library (load() without a path)."""
    return load()


class _Lazy:
    """`lib` below: the process's library, loaded on the first attribute used."""

    def __getattr__(self, name):
        if name.startswith("_"):  # copy, pickle, help: not a reason to load
            raise AttributeError(name)
        value = getattr(load(), name)
        if name.startswith("detfeed_"):
            setattr(self, name, value)  # the functions: found directly next time
        return value


# The package's handle on the library: lib.detfeed_... loads it on first use.
lib = _Lazy()


def strerror(status):
    return lib.strerror(status)


def version():
    return lib.version()
