"""The CLI on damaged and hostile input (needs no cv2):
- a copy of coco8 with one JPEG truncated after its header: replay, bench
  and grid report it as left out when opening (as `check` reports it) and
  no sample replaced, in their text and JSON;
- `detfeed bench` without DATA under a TMPDIR with a quote in its name:
  its generated dataset is gone after a normal run and after SIGINT or
  SIGTERM, and the exit status reports the signal;
- decompression bombs (a 782 KB PNG declaring 16384 x 16384, 768 MiB
  decoded): refused by default by check, replay and the Python Loader as a
  problem naming the file and the limit, without the memory (peak RSS);
  the limits set through --set (check and the loader) and Loader keywords;
- memory pressure (ulimit -v): a failed allocation is out of memory, never
  a damaged image, and never a verdict in the verification record;
- a disk cache with 4 KB flipped: the replay's digest unchanged, the image
  named, `cache --check` refusing it and `cache` rebuilding it."""
import glob
import json
import os
import resource
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import zlib

sys.path.insert(0, os.path.dirname(__file__))
import oracle_util as ou  # noqa: E402

DAMAGED = "000000000042"


def damaged_coco8(data, dst):
    """coco8's eight images in one folder, one JPEG cut to 4000 bytes."""
    os.makedirs(os.path.join(dst, "images"))
    os.makedirs(os.path.join(dst, "labels"))
    for img in sorted(glob.glob(os.path.join(data, "coco8", "images", "*", "*.jpg"))):
        stem = os.path.splitext(os.path.basename(img))[0]
        body = open(img, "rb").read()
        open(os.path.join(dst, "images", stem + ".jpg"), "wb").write(
            body[:4000] if stem == DAMAGED else body)
        lab = img.replace(os.sep + "images" + os.sep, os.sep + "labels" + os.sep)[:-4] + ".txt"
        shutil.copy(lab, os.path.join(dst, "labels", stem + ".txt"))
    return os.path.join(dst, "images")


def last_json(p):
    try:
        return json.loads(p.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {}


def check_skip_counts(t, d, src, tmp):
    small = ["--imgsz", "160", "--batch", "3", "--workers", "2"]
    p = subprocess.run([d, "check", src, "--json"], capture_output=True, text=True)
    ref = last_json(p)
    want = [q["reason"] for q in ref.get("problems", []) if DAMAGED in q["file"]]
    t.check(ref.get("corrupt") == 1 and len(want) == 1, f"check: {ref}")
    p = subprocess.run([d, "replay", src, "--json", "--epochs", "2", *small],
                       capture_output=True, text=True)
    got = last_json(p)
    t.check(p.returncode == 0 and got.get("corrupt") == 1 and got.get("skipped") == 0
            and got.get("first_skip", "") is None and got.get("images") == 14,
            f"replay --json: {got} {p.stderr}")
    t.check("1 corrupt image left out" in p.stderr, f"replay note: {p.stderr!r}")
    p = subprocess.run([d, "replay", src, "--sha256", *small], capture_output=True, text=True)
    lines = p.stdout.strip().splitlines()
    t.check(p.returncode == 0 and len(lines) == 2 and "skipped: 1 corrupt image left out "
            "when opening, 0 samples replaced" in lines[0], f"replay text: {p.stdout!r}")
    p = subprocess.run([d, "bench", src, "--json", "--epochs", "1", *small],
                       capture_output=True, text=True)
    got = last_json(p)
    t.check(p.returncode == 0 and got.get("corrupt") == 1 and got.get("skipped") == 0
            and got.get("images_per_epoch") == 7, f"bench --json: {got} {p.stderr}")
    t.check("skipped: 1 corrupt image" in p.stdout, f"bench text: {p.stdout[-400:]!r}")
    out = os.path.join(tmp, "grid.png")
    p = subprocess.run([d, "grid", src, "--out", out, "--batch", "7", "--imgsz", "160"],
                       capture_output=True, text=True)
    t.check(p.returncode == 0 and "skipped: 1 corrupt image left out when opening, 0 "
            "samples replaced" in p.stdout, f"grid: {p.stdout!r} {p.stderr!r}")


def bench_dirs(tmpdir):
    return glob.glob(os.path.join(glob.escape(tmpdir), "detfeed-bench-*"))


def check_bench_cleanup(t, d, tmp):
    tmpdir = os.path.join(tmp, "it's \"quoted\" $(x)")
    os.makedirs(tmpdir)
    env = dict(os.environ, TMPDIR=tmpdir)
    p = subprocess.run([d, "bench", "--imgsz", "64", "--epochs", "1", "--batch", "8",
                        "--workers", "1"], capture_output=True, text=True, env=env)
    t.check(p.returncode == 0 and not bench_dirs(tmpdir) and os.listdir(tmpdir) == [],
            f"bench without DATA: exit {p.returncode}, left {os.listdir(tmpdir)} {p.stderr}")
    # SIGINT while the loader runs (small images are generated at once),
    # SIGTERM while the images are generated
    for sig, imgsz in ((signal.SIGINT, "64"), (signal.SIGTERM, "640")):
        proc = subprocess.Popen([d, "bench", "--imgsz", imgsz, "--epochs", "64", "--workers",
                                 "1", "--cache", "none"], stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, env=env)
        deadline = time.monotonic() + 30
        while not bench_dirs(tmpdir) and time.monotonic() < deadline:
            time.sleep(0.02)
        made = bench_dirs(tmpdir)
        time.sleep(0.5)  # inside the generation or the loader
        proc.send_signal(sig)
        try:
            _, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
        t.check(len(made) == 1 and proc.returncode == -sig and os.listdir(tmpdir) == [],
                f"bench and {sig.name}: made {made}, exit {proc.returncode}, left "
                f"{os.listdir(tmpdir)}, {err.decode(errors='replace')[-300:]!r}")


def write_png(path, w, h, idat):
    def chunk(kind, body):
        return (struct.pack(">I", len(body)) + kind + body +
                struct.pack(">I", zlib.crc32(kind + body) & 0xffffffff))
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
                + chunk(b"IDAT", idat) + chunk(b"IEND", b""))


def bomb_idat(w, h):
    co = zlib.compressobj(9)
    row = bytes(1 + 3 * w)
    return b"".join([co.compress(row) for _ in range(h)] + [co.flush()])


def child_peak_mib(cmd, **kw):
    """Runs cmd; its exit status, output and peak RSS in MiB (ru_maxrss of
    children grows only, so each run goes through a fresh Python child)."""
    code = ("import resource, subprocess, sys, json\n"
            "p = subprocess.run(json.loads(sys.argv[1]), capture_output=True, text=True)\n"
            "print(json.dumps([p.returncode, p.stdout, p.stderr, "
            "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024]))\n")
    p = subprocess.run([sys.executable, "-c", code, json.dumps(cmd)], capture_output=True,
                       text=True, **kw)
    return json.loads(p.stdout)


def check_bombs(t, d, src, tmp, ctypes_ok):
    root = os.path.join(tmp, "bombs")
    os.makedirs(os.path.join(root, "images"))
    os.makedirs(os.path.join(root, "labels"))
    idat = bomb_idat(16384, 16384)
    for k in range(4):
        write_png(os.path.join(root, "images", "bomb%d.png" % k), 16384, 16384, idat)
    size = os.path.getsize(os.path.join(root, "images", "bomb0.png"))
    t.check(size < 800 * 1024, f"the bomb is a small file: {size} bytes")
    for img in glob.glob(os.path.join(src, "*.jpg")):
        if DAMAGED not in img:
            shutil.copy(img, os.path.join(root, "images"))
    imgs = os.path.join(root, "images")
    rc, out, err, peak = child_peak_mib([d, "check", imgs, "--json"])
    got = json.loads(out.strip().splitlines()[-1]) if rc == 1 else {}  # 1: corrupt found
    bombs = [q for q in got.get("problems", []) if "bomb" in q["file"]]
    t.check(got.get("corrupt") == 4 and got.get("usable") == 7 and len(bombs) == 4 and all(
        "16384x16384" in q["reason"] and "max_pixels = 178956970" in q["reason"]
        for q in bombs), f"check: {bombs or got} {err}")
    t.check(peak < 200, f"check: peak RSS {peak:.0f} MiB for four 768 MiB bombs")
    rc, out, err, _ = child_peak_mib([d, "check", imgs, "--json", "--set", "max_pixels=200000"])
    got = json.loads(out.strip().splitlines()[-1]) if rc == 1 else {}
    over = [q for q in got.get("problems", []) if "max_pixels = 200000" in q["reason"]]
    # the bombs and six of the seven coco8 images (000000000049 is 381 x 500)
    t.check(rc == 1 and len(over) == 4 + 6, f"check --set max_pixels=200000: {len(over)} {err}")
    p = subprocess.run([d, "check", imgs, "--set", "max_pixels=0"], capture_output=True,
                       text=True)
    t.check(p.returncode == 2 and "max_pixels" in p.stderr, f"check bad limit: {p.stderr}")
    p = subprocess.run([d, "check", imgs, "--set", "hsv_h=0.1"], capture_output=True,
                       text=True)
    t.check(p.returncode == 2 and "hsv_h" in p.stderr, f"check --set non-limit: {p.stderr}")
    rc, out, err, peak = child_peak_mib([d, "replay", imgs, "--json", "--workers", "2",
                                         "--imgsz", "160", "--batch", "4"])
    got = json.loads(out.strip().splitlines()[-1]) if rc == 0 else {}
    t.check(got.get("corrupt") == 4 and got.get("skipped") == 0 and got.get("images") == 7,
            f"replay: {got} {err}")
    t.check(peak < 300, f"replay with 2 workers: peak RSS {peak:.0f} MiB")
    rc, out, err, _ = child_peak_mib([d, "replay", imgs, "--json", "--imgsz", "160",
                                      "--set", "max_width=600,max_image_bytes=900000"])
    got = json.loads(out.strip().splitlines()[-1]) if rc == 0 else {}
    t.check(rc == 0 and got.get("corrupt", 0) > 4, f"replay --set limits: {got} {err}")
    if not ctypes_ok:
        return
    code = ("import sys, json; sys.path.insert(0, sys.argv[2])\n"
            "import detfeed\n"
            "ld = detfeed.Loader(sys.argv[1], imgsz=160, batch=4, workers=2, cache='none',"
            " tensors='numpy', max_pixels=int(sys.argv[3]))\n"
            "st = ld.dataset.stats()\n"
            "print(json.dumps([st['corrupt'], [p for p in ld.dataset.problems()]]))\n")
    pkg = os.path.join(os.path.dirname(__file__), "..", "..", "python")
    env = dict(os.environ, DETFEED_LIBRARY=os.path.join(os.path.dirname(d), "libdetfeed.so"))
    for limit, corrupt in ((178956970, 4), (300000, 4 + 3)):
        p = subprocess.run([sys.executable, "-c", code, imgs, pkg, str(limit)],
                           capture_output=True, text=True, env=env)
        try:
            n, probs = json.loads(p.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            n, probs = None, []
        t.check(n == corrupt and any("max_pixels = %d" % limit in str(q) for q in probs),
                f"Loader(max_pixels={limit}): {n} {p.stderr[-400:]}")
    p = subprocess.run([sys.executable, "-c", code, imgs, pkg, "0"], capture_output=True,
                       text=True, env=env)
    t.check(p.returncode != 0 and "max_pixels" in p.stderr, f"Loader(max_pixels=0): {p.stderr}")


def limited(kib, cmd):
    """cmd run with its address space limited to kib KiB (ulimit -v)."""
    return subprocess.run(["bash", "-c", 'ulimit -v %d; exec "$@"' % kib, "limited", *cmd],
                          capture_output=True, text=True)


def check_memory_pressure(t, d, tmp):
    """Under `ulimit -v` limits that run out of memory while images are
    decoded (found by raising the limit until a run succeeds), `check`
    either succeeds with every image usable or fails saying "out of
    memory": no good image is ever called damaged (a failed allocation in
    zlib used to read as "PNG data: IDAT stream error"). The loader's runs
    under such limits leave no verdict in the verification record: a run
    without a limit afterwards finds every image usable."""
    data = os.path.join(tmp, "many")
    p = subprocess.run([d, "synth", data, "--n", "1000", "--imgsz", "64"],
                       capture_output=True, text=True)
    t.check(p.returncode == 0, f"synth: {p.stderr}")
    start = next((k for k in range(4000, 400001, 4000)
                  if limited(k, [d, "--help"]).returncode == 0), None)
    if start is not None:  # the least limit the tool starts under, to 100 KiB
        lo = start - 4000
        while start - lo > 100:
            mid = (lo + start) // 2
            lo, start = (lo, mid) if limited(mid, [d, "--help"]).returncode == 0 else (
                mid, start)
    if start is None or limited(start + 131072, [d, "check", data, "--json"]).returncode:
        print("note: the tool does not run under ulimit -v here (a sanitizer's "
              "shadow memory?): memory pressure not checked")
        return
    check = [d, "check", data, "--json"]
    replay = [d, "replay", data, "--epochs", "1", "--imgsz", "64", "--workers", "2",
              "--json"]
    for name, cmd in (("check", check), ("replay", replay)):
        lo, hi = start, start + 131072  # fails (cannot start), succeeds
        while hi - lo > 200:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if limited(mid, cmd).returncode == 0 else (mid, hi)
        failed = 0
        # the last limits that fail, from where the tool starts at all (below
        # that, the CUDA runtime's static initializer, before main, may die)
        for kib in range(max(start, hi - 1600), hi + 1, 100):
            p = limited(kib, cmd)
            said = p.stderr + p.stdout
            if p.returncode == 0:
                got = last_json(p)
                t.check(got.get("corrupt") == 0 and got.get("images") == 1000,
                        f"{name} under ulimit -v {kib}: {got}")
                continue
            failed += "out of memory" in said
            t.check("IDAT" not in said and ("out of memory" in said or
                                            "error while loading" in said),
                    f"{name} under ulimit -v {kib}: exit {p.returncode}: {said[-400:]!r}")
        t.check(failed > 0, f"{name}: no limit below {hi} KiB ran out of memory")
        print(f"memory pressure: {name} needs {hi} KiB of address space here")
    got = last_json(subprocess.run(replay, capture_output=True, text=True))
    t.check(got.get("corrupt") == 0 and got.get("images") == 1000,
            f"replay after the limited runs: {got}")


def check_damaged_cache(t, d, data, tmp):
    """The issue's case: coco128 replayed at 320 through the disk cache, then
    4 KB flipped in the middle of the cache file: the replay's digest is the
    clean one and the tool names the damaged image; `detfeed cache --check`
    refuses the file and `detfeed cache` rebuilds it."""
    src = os.path.join(data, "coco128", "coco128.yaml")
    cache = os.path.join(tmp, "coco128-320.cache")
    replay = [d, "replay", src, "--imgsz", "320", "--epochs", "1", "--json",
              "--set", "cache=disk,cache_path=" + cache]
    clean = last_json(subprocess.run(replay, capture_output=True, text=True))
    size = os.path.getsize(cache)
    with open(cache, "r+b") as f:
        f.seek(size // 2)
        block = f.read(4096)
        f.seek(size // 2)
        f.write(bytes(b ^ 0xff for b in block))
    p = subprocess.run(replay, capture_output=True, text=True)
    got = last_json(p)
    t.check(got.get("sha256") and got.get("sha256") == clean.get("sha256"),
            f"replay of a damaged cache: {got.get('sha256')} against {clean.get('sha256')}")
    t.check(cache in p.stderr and "do not match their checksum" in p.stderr,
            f"replay names the damaged image: {p.stderr[-400:]!r}")
    check = [d, "cache", src, "--imgsz", "320", "--out", cache]
    p = subprocess.run(check + ["--check"], capture_output=True, text=True)
    t.check(p.returncode == 1 and "damaged: the pixels of" in p.stderr,
            f"cache --check of a damaged file: {p.returncode} {p.stderr!r}")
    p = subprocess.run(check, capture_output=True, text=True)
    t.check(p.returncode == 0 and "damaged" in p.stdout, f"cache rebuilds it: {p.stdout!r}")
    p = subprocess.run(check + ["--check"], capture_output=True, text=True)
    t.check(p.returncode == 0, f"cache --check after the rebuild: {p.stderr!r}")


def main():
    args = ou.parse_args()
    t = ou.Counter("test_faults")
    with tempfile.TemporaryDirectory() as tmp:
        check_bench_cleanup(t, args.detfeed, tmp)
        check_memory_pressure(t, args.detfeed, tmp)
        if os.path.isdir(os.path.join(args.data, "coco8")):
            src = damaged_coco8(args.data, os.path.join(tmp, "damaged"))
            check_skip_counts(t, args.detfeed, src, tmp)
            check_bombs(t, args.detfeed, src, tmp, not args.no_ctypes)
        if os.path.isdir(os.path.join(args.data, "coco128")):
            check_damaged_cache(t, args.detfeed, args.data, tmp)
        else:
            print(f"note: {args.data} has no coco8; damaged copies not checked")
    t.finish()


if __name__ == "__main__":
    main()
