"""The device route's kernel (detfeed_cuda_color_convert) at 640x640 on the
GPU, against the device's measured copy bandwidth and, in the same run,
against the PyTorch float HSV expressions that do the same work (the obvious
way to defer colour to the GPU: uint8 BGR in, colour, NCHW RGB float out).

    python3 bench/bench_cuda_kernel.py --lib build/libdetfeed.so [--out bench/results]

Timing: CUDA events around each launch after a warm-up, medians, with the
GPU kept busy (torch.cuda._sleep) while the events and the launch are
queued, so that the host's launch overhead is not counted; also the mean of
a back-to-back run of launches. Beside each: the kernel without colour (the
conversion alone) and PyTorch's contiguous cast of as many uint8 elements
to the dtype (the same bytes read and written by a streaming kernel: what
this mix of reads and writes reaches against copy bandwidth) and, where
Triton is installed, a Triton kernel of the same cast (16-byte loads and
stores, streaming cache hints; the fastest of a few block shapes): what a
plain streaming kernel of this mix reaches on this GPU, a ceiling for the
kernel, which also reorders HWC to planes. Inputs:
uniform random bytes (the worst case for the kernel's table reads) and, with
--images, real photos letterboxed. Bytes counted per pixel: 3 read, 3 x
dtype size written (the parameters, 1 KiB per image, are left out). Copy
bandwidth: device-to-device copy of 2 GiB, counted as bytes read plus bytes
written.
"""
import argparse
import ctypes
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_util import (add_lib_argument, capi, finish, load_library,  # noqa: E402
                        machine_info, median)

# The dtypes by the library's names (detfeed_dtype_parse gives their codes).
DTYPES = {"u8": torch.uint8, "f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}


def event_times(fn, warmup, runs):
    """Milliseconds of each of `runs` calls of fn, timed with CUDA events."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(runs):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(2_000_000)  # about 1 ms: the launch is queued meanwhile
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return times


def back_to_back(fn, n):
    """Mean milliseconds per call over n calls in a row."""
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    fn()
    a.record()
    for _ in range(n):
        fn()
    b.record()
    b.synchronize()
    return a.elapsed_time(b) / n


def copy_bandwidth(runs):
    x = torch.empty(1 << 31, dtype=torch.uint8, device="cuda")
    y = torch.empty_like(x)
    ms = median(event_times(lambda: y.copy_(x), 3, runs))
    return 2 * x.numel() / (ms * 1e-3) / 1e9


def triton_cast(runs):
    """A function (src, dst) -> the best back-to-back milliseconds of a
    Triton cast of src's elements to dst's dtype over a few block shapes, or
    a string saying why there is none (no Triton, or it failed)."""
    try:
        import triton
        import triton.language as tl
    except ImportError as e:
        return "no Triton (%s)" % e

    @triton.jit
    def cast(src, dst, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        x = tl.load(src + offs, mask=m, eviction_policy="evict_first")
        tl.store(dst + offs, x.to(dst.dtype.element_ty), mask=m, cache_modifier=".cs")

    def best(src, dst):
        n, times = src.numel(), []
        for block in (4096, 8192):
            grid = (triton.cdiv(n, block),)
            times.append(back_to_back(
                lambda: cast[grid](src, dst, n, BLOCK=block, num_warps=8), runs))
        return min(times)

    def measure(src, dst):
        try:
            return best(src, dst)
        except Exception as e:  # a failed compile or launch: the row says so
            return "Triton failed: %s" % str(e).splitlines()[0][:200]
    return measure


def torch_hsv(img, gains):
    """Float HSV jitter on a B x H x W x 3 uint8 BGR batch: to float, BGR->HSV,
    gains, HSV->RGB, NCHW float32 (what a PyTorch user would write)."""
    x = img.permute(0, 3, 1, 2).float() / 255
    b, g, r = x[:, 0], x[:, 1], x[:, 2]
    mx, _ = x.max(1)
    mn, _ = x.min(1)
    d = mx - mn
    dz = torch.where(d == 0, torch.ones_like(d), d)
    h = torch.where(mx == r, (g - b) / dz % 6, torch.where(mx == g, (b - r) / dz + 2,
                                                          (r - g) / dz + 4)) / 6
    h = torch.where(d == 0, torch.zeros_like(h), h)
    s = torch.where(mx == 0, torch.zeros_like(d), d / torch.where(mx == 0, torch.ones_like(mx), mx))
    gh, gs, gv = gains[:, 0, None, None], gains[:, 1, None, None], gains[:, 2, None, None]
    h = (h + gh) % 1
    s = (s * (1 + gs)).clamp(0, 1)
    v = (mx * (1 + gv)).clamp(0, 1)
    out = []
    for n in (5, 3, 1):  # R, G, B
        k = (n + h * 6) % 6
        out.append(v - v * s * torch.clamp(torch.minimum(k, 4 - k), 0, 1))
    return torch.stack(out, 1).contiguous()


def load_photos(folder, size):
    """The folder's images, letterboxed to size x size, as one uint8 tensor."""
    import cv2
    import numpy as np
    from bench_util import letterbox
    names = sorted(f for f in os.listdir(folder) if f.lower().endswith((".jpg", ".png")))
    imgs = [letterbox(cv2, np, cv2.imread(os.path.join(folder, f)), size) for f in names[:64]]
    return torch.from_numpy(np.stack(imgs))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_lib_argument(ap)
    ap.add_argument("--size", type=int, default=640)
    ap.add_argument("--opencv", choices=("4", "5.0", "5.1"), default="5.1",
                    help="the OpenCV whose colour arithmetic the kernel follows")
    ap.add_argument("--batches", default="8,64")
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--images", help="a folder of photos for the real-image rows")
    ap.add_argument("--out", help="folder for the JSON result")
    a = ap.parse_args()
    lib = load_library(a.lib)
    cv = lib.cv(a.opencv, "auto", 1)  # IPP on (no part in colour)
    stride, flag = capi().CUDA_PARAM_STRIDE, capi().CUDA_PARAM_FLAG
    quotient = capi().SCALES.index("quotient")
    torch.manual_seed(0)
    bw = copy_bandwidth(20)
    print(f"device copy bandwidth: {bw:.0f} GB/s (read + write)")
    ceiling, ceilings = triton_cast(a.runs), {}
    if isinstance(ceiling, str):
        print(f"no Triton ceiling: {ceiling}")
    s = a.size
    rows = []
    photos = load_photos(a.images, s) if a.images else None
    inputs = [(B, kind) for B in [int(x) for x in a.batches.split(",")]
              for kind in (["random", "photos"] if photos is not None else ["random"])]
    for B, kind in inputs:
        if kind == "random":
            img = torch.randint(0, 256, (B, s, s, 3), dtype=torch.uint8, device="cuda")
        else:
            img = photos[torch.arange(B) % len(photos)].contiguous().cuda()
        gains = (torch.rand(B, 3, dtype=torch.float64) * 2 - 1) * torch.tensor(
            [0.015, 0.7, 0.4], dtype=torch.float64)
        params = torch.zeros(B, stride, dtype=torch.uint8)
        for i in range(B):
            lib.detfeed_hsv_lut(*[float(g) for g in gains[i]], params[i].data_ptr())
            params[i, flag] = 1
        params = params.cuda()
        stream = torch.cuda.current_stream().cuda_stream
        for name, tdt in DTYPES.items():
            code = lib.dtype(name)
            out = torch.empty(B, 3, s, s, dtype=tdt, device="cuda")

            def run(p=params.data_ptr()):
                rc = lib.detfeed_cuda_color_convert(img.data_ptr(), B, s, s, p,
                                                    ctypes.byref(cv), out.data_ptr(), code,
                                                    quotient, stream)
                assert rc == 0, rc

            times = event_times(run, 10, a.runs)
            ms, b2b = median(times), back_to_back(run, a.runs)
            nbytes = B * s * s * (3 + 3 * out.element_size())
            # The same bytes moved without the colour (no parameters: the
            # conversion alone), and by PyTorch's contiguous cast of as many
            # uint8 elements to the dtype (a streaming kernel with this mix
            # of reads and writes and no layout change).
            plain = back_to_back(lambda: run(None), a.runs)
            src, dst = img.view(-1), out.view(-1)
            cast = back_to_back(lambda: dst.copy_(src), a.runs)
            if not isinstance(ceiling, str) and (B, name) not in ceilings:
                ceilings[(B, name)] = ceiling(src, dst)  # the same bytes for every input
            tri = ceilings.get((B, name))
            row = {"batch": B, "input": kind, "dtype": name, "kernel_ms_median": ms, "kernel_ms_min": min(times),
                   "kernel_ms_max": max(times), "kernel_ms_back_to_back": b2b,
                   "bytes": nbytes, "gb_per_s": nbytes / (b2b * 1e-3) / 1e9,
                   "share_of_copy_bandwidth": nbytes / (b2b * 1e-3) / 1e9 / bw,
                   "plain_ms_back_to_back": plain, "torch_cast_ms_back_to_back": cast,
                   "torch_cast_share_of_copy": nbytes / (cast * 1e-3) / 1e9 / bw,
                   "triton_cast_ms_back_to_back": tri if isinstance(tri, float) else None,
                   "triton_cast_share_of_copy":
                   nbytes / (tri * 1e-3) / 1e9 / bw if isinstance(tri, float) else None,
                   "triton_cast_note": tri if isinstance(tri, str) else None}
            if name == "f32":
                g = gains.to("cuda", torch.float32)
                tt = event_times(lambda: torch_hsv(img, g), 5, max(10, a.runs // 5))
                row["torch_float_hsv_ms_median"] = median(tt)
                row["speedup_vs_torch"] = median(tt) / ms
            rows.append(row)
            print(f"batch {B:3d} {kind:6s} {name:4s}: {ms * 1e3:7.1f} us/launch (events), "
                  f"{b2b * 1e3:7.1f} us back to back, {row['gb_per_s']:6.0f} GB/s = "
                  f"{100 * row['share_of_copy_bandwidth']:.0f}% of copy; no colour "
                  f"{plain * 1e3:.1f} us; torch cast {cast * 1e3:.1f} us = "
                  f"{100 * row['torch_cast_share_of_copy']:.0f}% of copy"
                  + (f"; Triton cast {tri * 1e3:.1f} us = "
                     f"{100 * row['triton_cast_share_of_copy']:.0f}% of copy"
                     if isinstance(tri, float) else f"; {tri}" if tri else "")
                  + (f"; torch float HSV {row['torch_float_hsv_ms_median'] * 1e3:.0f} us "
                     f"({row['speedup_vs_torch']:.0f}x)" if name == "f32" else ""))
    res = {"bench": "cuda_kernel", "size": s, "opencv": a.opencv, "copy_gb_per_s": bw, "rows": rows,
           "machine": machine_info({"gpu": torch.cuda.get_device_name(0),
                                    "torch": torch.__version__,
                                    "cuda": torch.version.cuda,
                                    "command": "python3 bench/bench_cuda_kernel.py --lib "
                                               "build/libdetfeed.so --images "
                                               "DATA/coco128/images/train2017 "
                                               "--out bench/results"})}
    finish(res, a.out, "cuda-kernel")


if __name__ == "__main__":
    main()
