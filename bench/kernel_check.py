"""The colour kernel (detfeed_cuda_color_convert) against the library's CPU
route, byte for byte, on a CUDA device: a quick gate for a changed kernel
before it is timed (tests/gpu/test_cuda_kernel is the full proof: every BGR
triple under every stack).

    python3 bench/kernel_check.py --lib path/to/libdetfeed.so [--seed 1]

Cases: every OpenCV stack (4, 5.0, 5.1) and CPU code path (sse, avx2,
avx512: the row tail's formula), image sizes with and without a row tail and
with width * height not a multiple of 4, batches of 3 and (at 640x640) 16
images, so that float32 runs both of the grid's forms on a 132-SM device (one
wave of blocks at 3, four at 16), whose images are coloured, coloured and
mirrored (flipped left-right after the colour step, as the loader stages
them), or converted only, in turn, each with gains drawn at random, random
bytes; dtypes u8, f32 (both scales), f16, bf16. Expected: per image
detfeed_hsv_apply_cv (on the unflipped image for a mirrored one) and
detfeed_convert_chw. Prints the bytes compared and differing; exit 1 on any
difference.
"""
import argparse
import ctypes
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_util import add_lib_argument, capi, load_library  # noqa: E402

SHAPES = ((640, 640, 3), (643, 480, 3), (333, 218, 3), (37, 5, 3), (640, 640, 16))  # w, h, n
DTYPES = (("u8", "quotient"), ("f32", "quotient"), ("f32", "reciprocal"), ("f16", "quotient"),
          ("bf16", "quotient"))
TORCH = {"u8": torch.uint8, "f32": torch.float32, "f16": torch.float16, "bf16": torch.int16}


def reference(lib, img, lut, mode, cv, dtype, scale):
    """One image's expected CHW planes (bytes) under `mode`."""
    h, w, _ = img.shape
    src = np.ascontiguousarray(img[:, ::-1] if mode == "mirrored" else img)
    col = src.copy()
    if mode != "plain":
        rc = lib.detfeed_hsv_apply_cv(src.ctypes.data, 3 * w, col.ctypes.data, 3 * w, w, h,
                                      lut.ctypes.data, ctypes.byref(cv), 0)
        assert rc == 0, rc
    if mode == "mirrored":
        col = np.ascontiguousarray(col[:, ::-1])
    esize = lib.detfeed_dtype_size(lib.dtype(dtype))
    out = np.empty(3 * h * w * esize, np.uint8)
    rc = lib.detfeed_convert_chw(col.ctypes.data, 3 * w, w, h, out.ctypes.data, h * w * esize,
                                 lib.dtype(dtype), capi().SCALES.index(scale))
    assert rc == 0, rc
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_lib_argument(ap)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    lib = load_library(a.lib)
    api = capi()
    stride, flag = api.CUDA_PARAM_STRIDE, api.CUDA_PARAM_FLAG
    rng = np.random.default_rng(a.seed)
    stream = torch.cuda.current_stream().cuda_stream
    modes = ("coloured", "mirrored", "plain")
    compared = differing = cases = 0
    for version in ("4", "5.0", "5.1"):
        for cpu in ("sse", "avx2", "avx512"):
            cv = lib.cv(version, cpu, 1)
            for w, h, n in SHAPES:
                imgs = rng.integers(0, 256, (n, h, w, 3), dtype=np.uint8)
                params = np.zeros((n, stride), np.uint8)
                luts = []
                image_modes = [modes[i % len(modes)] for i in range(n)]
                for i, mode in enumerate(image_modes):
                    gains = (rng.random(3) * 2 - 1) * np.array([0.015, 0.7, 0.4])
                    lut = np.zeros(stride, np.uint8)
                    assert lib.detfeed_hsv_lut(*[float(g) for g in gains], lut.ctypes.data) == 0
                    luts.append(lut[:768].reshape(3, 256).copy())
                    params[i] = lut
                    params[i, flag] = {"coloured": 1, "mirrored": 3, "plain": 0}[mode]
                d_img = torch.from_numpy(imgs).cuda()
                d_par = torch.from_numpy(params).cuda()
                for dtype, scale in DTYPES:
                    out = torch.full((n, 3, h, w), 7, dtype=TORCH[dtype], device="cuda")
                    rc = lib.detfeed_cuda_color_convert(
                        d_img.data_ptr(), n, w, h, d_par.data_ptr(), ctypes.byref(cv),
                        out.data_ptr(), lib.dtype(dtype), api.SCALES.index(scale), stream)
                    assert rc == 0, (rc, version, cpu, w, h, dtype)
                    torch.cuda.synchronize()
                    got = out.cpu().numpy().view(np.uint8).reshape(n, -1)
                    for i, mode in enumerate(image_modes):
                        want = reference(lib, imgs[i], luts[i], mode, cv, dtype, scale)
                        bad = int(np.count_nonzero(got[i] != want))
                        compared += want.size
                        differing += bad
                        cases += 1
                        if bad:
                            print("DIFFER: opencv %s cpu %s %dx%d %s %s %s: %d bytes"
                                  % (version, cpu, w, h, mode, dtype, scale, bad))
    print("kernel_check: %d cases, %d bytes compared, %d differ" % (cases, compared, differing))
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
