"""The detfeed command line: help, usage errors and bad input give a clear
message and a non-zero exit, never a crash; `color` on grayscale input and
with all-zero gains; `bench --json` prints one JSON object last.
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import oracle_util as ou  # noqa: E402


def run(detfeed, *args):
    return subprocess.run([detfeed, *args], capture_output=True, text=True)


def expect(t, p, code, words, label):
    ok = p.returncode == code and all(w in p.stderr + p.stdout for w in words)
    t.check(ok, f"{label}: exit {p.returncode} (want {code}), output "
                f"{(p.stderr + p.stdout).strip()!r} should contain {words}")
    t.check(p.returncode >= 0, f"{label}: killed by signal {-p.returncode}")


def check_help(t, d):
    expect(t, run(d, "--help"), 0, ["color", "bench"], "--help")
    expect(t, run(d, "help"), 0, ["commands:"], "help")
    expect(t, run(d), 2, ["usage"], "no command")
    expect(t, run(d, "frobnicate"), 2, ["unknown command 'frobnicate'"], "unknown command")
    expect(t, run(d, "train", "model=yolov8n.yaml"), 2,
           ["'train' is a command of the Python package's detfeed", "python -m detfeed train"],
           "train in the C tool")
    expect(t, run(d, "profile"), 2, ["usage: detfeed profile DATA"], "profile without DATA")
    expect(t, run(d, "profile", "--help"), 0, ["usage: detfeed profile"], "profile --help")
    for cmd in ("color", "bench", "check", "sample", "synth", "replay", "grid"):
        expect(t, run(d, cmd, "--help"), 0, ["usage: detfeed " + cmd], cmd + " --help")
        expect(t, run(d, cmd, "--nope"), 2, ["unknown option '--nope'"], cmd + " --nope")
    expect(t, run(d, "version"), 0, ["detfeed 0."], "version")
    expect(t, run(d, "bench", "--imgsz", "abc"), 2, ["--imgsz"], "bench bad imgsz")
    expect(t, run(d, "bench", "--imgsz"), 2, ["needs a value"], "bench imgsz missing")
    expect(t, run(d, "replay", "x", "--set", "cache=ram", "--set", "opencv=4"), 2,
           ["--set given twice", "one --set takes K=V,K=V"], "replay --set twice")
    expect(t, run(d, "bench", "--imgsz", "320", "--imgsz=640"), 2, ["--imgsz given twice"],
           "bench --imgsz twice")
    expect(t, run(d, "bench", "/nonexistent/data"), 1, ["/nonexistent/data"], "bench missing data")


def check_gains(t, d, png, tmp):
    out = os.path.join(tmp, "o.png")
    for g in ["1,2", "a,b,c", "1,2,3,4", "nan,0,0", "inf,0,0", "", "1,,2",
              "0.1;0.2;0.3", "1e999,0,0", " ,0,0"]:
        expect(t, run(d, "color", "--gains", g, png, out), 2, ["--gains"], f"gains {g!r}")
    expect(t, run(d, "color", png, out), 2, ["usage"], "gains missing")
    expect(t, run(d, "color", "--gains", "0,0,0", png), 2, ["usage"], "one file")
    expect(t, run(d, "color", "--gains", "0,0,0", "--isa", "sse9", png, out), 2,
           ["--isa"], "bad isa")


def check_bad_files(t, d, cv2, np, tmp, data):
    out = os.path.join(tmp, "o.png")
    g = ["color", "--gains", "0.01,-0.3,0.2"]
    missing = os.path.join(tmp, "missing.png")
    expect(t, run(d, *g, missing, out), 1, [missing, "cannot open"], "missing file")
    folder = os.path.join(tmp, "folder.png")
    os.mkdir(folder)
    expect(t, run(d, *g, folder, out), 1, [folder, "not a regular file"], "directory")
    empty = os.path.join(tmp, "empty.png")
    open(empty, "wb").close()
    expect(t, run(d, *g, empty, out), 1, [empty, "empty"], "empty file")
    jpg = ou.real_images(data)[0]
    expect(t, run(d, *g, jpg, out), 1, [jpg, "not a PNG"], "a JPEG")
    deep = os.path.join(tmp, "deep.png")
    cv2.imwrite(deep, np.full((8, 8, 3), 1000, np.uint16))
    expect(t, run(d, *g, deep, out), 1, [deep, "16-bit"], "16-bit PNG")
    rgba = os.path.join(tmp, "rgba.png")
    cv2.imwrite(rgba, np.zeros((8, 8, 4), np.uint8))
    expect(t, run(d, *g, rgba, out), 1, [rgba, "RGBA"], "RGBA PNG")
    good = os.path.join(tmp, "good.png")
    cv2.imwrite(good, np.zeros((8, 32, 3), np.uint8))
    raw = open(good, "rb").read()
    trunc = os.path.join(tmp, "trunc.png")
    open(trunc, "wb").write(raw[: len(raw) // 2])
    expect(t, run(d, *g, trunc, out), 1, [trunc], "truncated PNG")
    bad_out = os.path.join(tmp, "no", "such", "dir.png")
    expect(t, run(d, *g, good, bad_out), 1, [bad_out, "cannot create"], "unwritable output")


def check_color(t, d, cv2, np, tmp):
    rng = np.random.default_rng(3)
    gray = rng.integers(0, 256, (16, 64), dtype=np.uint8)
    src, out = os.path.join(tmp, "gray.png"), os.path.join(tmp, "o.png")
    cv2.imwrite(src, gray)
    r = (0.012, 0.5, -0.3)
    p = run(d, "color", "--gains", ",".join(map(str, r)), src, out)
    want = ou.random_hsv(cv2.cvtColor(gray, cv2.COLOR_GRAY2BGR), r)
    t.check(p.returncode == 0 and np.array_equal(cv2.imread(out), want),
            f"grayscale input: {p.stderr}")
    img = rng.integers(0, 256, (16, 64, 3), dtype=np.uint8)
    cv2.imwrite(src, img)
    p = run(d, "color", "--gains", "0,0,0", src, out)
    got = cv2.imread(out)
    t.check(p.returncode == 0 and np.array_equal(got, ou.random_hsv(img.copy(), (0, 0, 0))),
            "zero gains: not the cv2 round trip")
    t.check(not np.array_equal(got, img), "zero gains: the round trip ran (not the identity)")
    for isa in ("portable", "auto"):
        p = run(d, "color", "--isa", isa, "--gains", "0.01,-0.3,0.2", src, out)
        t.check(p.returncode == 0 and np.array_equal(cv2.imread(out),
                ou.random_hsv(img.copy(), (0.01, -0.3, 0.2))), f"--isa {isa}")


def check_grid(t, d, data, tmp):
    import struct
    out = os.path.join(tmp, "grid.png")
    p = run(d, "grid", os.path.join(data, "coco8-pose", "coco8-pose.yaml"), "--out", out,
            "--batch", "4", "--imgsz", "160")
    ok = p.returncode == 0 and os.path.exists(out)
    if ok:
        w, h = struct.unpack(">II", open(out, "rb").read()[16:24])
        ok = (w, h) == (2 * 162 + 2, 2 * 162 + 2)  # 2 x 2 tiles of 160 and 2-pixel gaps
    t.check(ok, f"grid: {p.stdout!r} {p.stderr!r}")
    expect(t, run(d, "grid", os.path.join(data, "coco8")), 2, ["usage"], "grid without --out")
    expect(t, run(d, "grid", os.path.join(data, "coco8"), "--out", out, "--index", "99"), 1,
           ["--index 99"], "grid past the epoch")


def check_loader_bench(t, d, data):
    p = run(d, "bench", os.path.join(data, "coco8"), "--imgsz", "160", "--batch", "4",
            "--epochs", "2", "--json")
    try:
        obj = json.loads(p.stdout.strip().splitlines()[-1])
        ok = p.returncode == 0 and obj["images_per_s"] > 0 and obj["images_per_epoch"] == 8
        ok = ok and obj["pinned"] in (True, False) and "batch slots: " in p.stdout
    except (ValueError, KeyError, IndexError):
        ok = False
    t.check(ok, f"bench DATA --json: {p.stdout[-300:]!r} {p.stderr!r}")
    # pin_memory=0: pageable slots, and the text says why
    p = run(d, "bench", os.path.join(data, "coco8"), "--imgsz", "160", "--batch", "4",
            "--epochs", "1", "--set", "pin_memory=0", "--json")
    try:
        obj = json.loads(p.stdout.strip().splitlines()[-1])
        ok = (p.returncode == 0 and obj["pinned"] is False
              and "batch slots: pageable (pin_memory is 0)" in p.stdout)
    except (ValueError, KeyError, IndexError):
        ok = False
    t.check(ok, f"bench DATA --set pin_memory=0: {p.stdout[-300:]!r} {p.stderr!r}")


def check_bench(t, d):
    p = run(d, "bench", "color", "--imgsz", "64", "--runs", "3", "--json")
    lines = p.stdout.strip().splitlines()
    try:
        obj = json.loads(lines[-1])
        ok = p.returncode == 0 and obj["ms_per_image"] > 0 and obj["imgsz"] == 64
    except (ValueError, KeyError, IndexError):
        ok = False
    t.check(ok, f"bench --json: last line {lines[-1:]!r}")


def check_synth(t, d, tmp):
    out = os.path.join(tmp, "synth")
    p = run(d, "synth", out, "--n", "12", "--imgsz", "96", "--seed", "3")
    t.check(p.returncode == 0 and "wrote 12 images" in p.stdout, f"synth: {p.stderr}")
    p = run(d, "check", os.path.join(out, "data.yaml"), "--json")
    try:
        got = json.loads(p.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        got = {}
    t.check(got.get("images") == 12 and got.get("labelled") == 12 and got.get("corrupt") == 0
            and got.get("classes") == 8 and got.get("instances", 0) >= 12,
            f"synth dataset check: {got}")
    again = os.path.join(tmp, "synth2")
    run(d, "synth", again, "--n", "12", "--imgsz", "96", "--seed", "3")
    same = all(open(os.path.join(out, "images", "train", f), "rb").read() ==
               open(os.path.join(again, "images", "train", f), "rb").read()
               for f in os.listdir(os.path.join(out, "images", "train")))
    t.check(same, "synth is not deterministic")
    p = run(d, "sample", os.path.join(out, "data.yaml"), "--imgsz", "96", "--index", "5",
            "--json")
    t.check(p.returncode == 0 and '"bboxes"' in p.stdout, f"sample on synth: {p.stderr}")
    p = run(d, "synth", os.path.join(tmp, "no", "such", "dir"))
    t.check(p.returncode == 1 and "cannot create folder" in p.stderr, "synth to a bad path")
    before = sorted(os.listdir(os.path.join(out, "images", "train")))
    expect(t, run(d, "synth", out, "--n", "20", "--imgsz", "96", "--seed", "4"), 1,
           [out, "not empty"], "synth into a folder with files")
    t.check(sorted(os.listdir(os.path.join(out, "images", "train"))) == before,
            "synth into a folder with files changed it")
    empty = os.path.join(tmp, "synth_empty")
    os.mkdir(empty)
    p = run(d, "synth", empty, "--n", "2", "--imgsz", "64")
    t.check(p.returncode == 0, f"synth into an empty folder: {p.stderr}")


def check_replay(t, d, data):
    src = os.path.join(data, "coco8")
    digests = set()
    for workers, prefetch in ((1, 1), (2, 4), (4, 2)):
        p = run(d, "replay", src, "--epochs", "2", "--close-mosaic", "1", "--imgsz", "160",
                "--batch", "3", "--workers", str(workers), "--prefetch", str(prefetch),
                "--sha256")
        lines = p.stdout.strip().splitlines()
        ok = p.returncode == 0 and len(lines) == 2 and len(lines[1]) == 64
        t.check(ok and "2 epochs, 6 batches, 16 images" in lines[0],
                f"replay workers {workers}: {p.stdout!r} {p.stderr!r}")
        if ok:
            digests.add(lines[1])
    t.check(len(digests) == 1, f"replay digests differ: {digests}")
    p = run(d, "replay", src, "--imgsz", "160", "--json", "--dtype", "bf16")
    t.check(p.returncode == 0 and '"sha256"' in p.stdout, f"replay --json: {p.stderr}")
    p = run(d, "replay", src, "--dtype", "f64")
    t.check(p.returncode == 2 and "--dtype" in p.stderr, "replay bad dtype")


def check_replay_disk_note(t, d, data, tmp):
    """replay with the disk cache says what opening it found: built, and
    why (a damaged file is rebuilt, not silently)."""
    src, cache = os.path.join(data, "coco8"), os.path.join(tmp, "replay.cache")
    args = ("replay", src, "--imgsz", "64", "--set", "cache=disk,cache_path=" + cache)
    expect(t, run(d, *args), 0, ["disk cache: ", "no file"], "replay disk cache")
    expect(t, run(d, *args), 0, ["disk cache: reused"], "replay disk cache again")
    with open(cache, "ab") as f:
        f.write(b"xx")
    expect(t, run(d, *args), 0, ["disk cache: ", "damaged: longer"],
           "replay damaged disk cache")


def replay_json(d, path, *args):
    """`detfeed replay PATH --json ARGS` as (exit code, its JSON object or {})."""
    p = run(d, "replay", path, "--json", *args)
    try:
        return p.returncode, json.loads(p.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return p.returncode, {}


def check_replay_digest(t, d, data, no_ctypes):
    """`replay --sha256` equals the Python binding's batches hashed as
    python/tests/batch_digest.py hashes them, for each task: one digest over
    all consumer bytes, the segment masks included."""
    if no_ctypes:
        print("note: replay's digest against the Python binding (through ctypes) is "
              "skipped: a sanitizer build's libdetfeed.so cannot be loaded into Python")
        return
    ou.library(d)  # this build's libdetfeed, for the package
    sys.path.insert(0, os.path.join(ou.PYTHON_DIR, "tests"))
    import batch_digest
    import detfeed
    for name in ("coco8", "coco8-pose", "coco8-seg"):
        path = os.path.join(data, name, name + ".yaml")
        if not os.path.exists(path):
            continue
        with detfeed.Loader(path, imgsz=160, batch=3, workers=1, seed=5, epochs=2,
                            close_mosaic=1, dtype="uint8", tensors="numpy") as loader:
            want = batch_digest.digest(loader, 2)
            stack = ",".join("%s=%s" % kv for kv in sorted(loader.stack.items()))
        p = run(d, "replay", path, "--imgsz", "160", "--batch", "3", "--seed", "5",
                "--epochs", "2", "--close-mosaic", "1", "--dtype", "u8", "--sha256",
                *(["--set", stack] if stack else []))
        got = p.stdout.strip().splitlines()[-1:]
        t.check(p.returncode == 0 and got == [want],
                f"replay --sha256 on {name}: {got} (the binding's: {want}) {p.stderr!r}")


def check_set(t, d, data, tmp):
    """--set: a setting given twice is refused; values may hold commas
    (classes=45,49, a path); a setting without an option of the command's
    is taken, and one the command does not take is refused as such."""
    src = os.path.join(data, "coco8", "coco8.yaml")
    small = ("--imgsz", "160", "--batch", "3")
    expect(t, run(d, "replay", src, *small, "--set", "mosaic=0.5,mosaic=0.1"), 2,
           ["--set: mosaic given twice"], "--set with a key twice")
    expect(t, run(d, "check", src, "--set", "max_pixels=100,max_pixels=200000"), 2,
           ["--set: max_pixels given twice"], "check --set with a key twice")
    runs = {}
    for sets in ("classes=45,49,mosaic=0.5", "mosaic=0.5,classes=45,49", "classes=45,49",
                 "classes=45,mosaic=0.5"):
        rc, obj = replay_json(d, src, *small, "--close-mosaic", "0", "--set", sets)
        runs[sets] = (rc, obj.get("instances", 0), obj.get("sha256"))
    a, b, c, e = runs.values()
    t.check(a[0] == 0 and a == b and a[2] != c[2] and 0 < e[1] < a[1],
            f"--set classes=45,49 with mosaic=0.5 (mosaic applied, both classes): {runs}")
    cache = os.path.join(tmp, "a,b.cache")
    p = run(d, "replay", src, *small, "--set", f"cache=disk,cache_path={cache},mosaic=0.5")
    t.check(p.returncode == 0 and os.path.exists(cache), f"--set a path with a comma: {p.stderr}")
    taken = "nc=80,drop_last=1,cuda_device=0"
    for cmd, extra in (("replay", ("--set", taken + ",value_scale=quotient")),
                       ("bench", ("--epochs", "1", "--set", taken + ",value_scale=quotient")),
                       ("grid", ("--out", os.path.join(tmp, "g.png"), "--set", taken))):
        p = run(d, cmd, src, *small, *extra)
        t.check(p.returncode == 0, f"{cmd} {' '.join(extra)}: {p.stderr}")
    expect(t, run(d, "replay", src, "--set", "imgsz=320"), 2,
           ["--set: imgsz", "--imgsz"], "replay --set imgsz")
    for key in ("workers=2", "drop_last=1", "dtype=u8", "color=device", "rank=0"):
        expect(t, run(d, "sample", src, "--set", key), 2,
               ["detfeed sample does not take " + key.split("=")[0]], "sample --set " + key)
    expect(t, run(d, "grid", src, "--out", os.path.join(tmp, "g.png"), "--set", "dtype=f32"),
           2, ["detfeed grid does not take dtype"], "grid --set dtype")
    expect(t, run(d, "bench", src, "--set", "epochs=3"), 2,
           ["detfeed bench does not take epochs"], "bench --set epochs")


def check_modes(t, d, data):
    """Options of `bench color` only and of the loader benchmark only are
    refused in the other mode (and in profile), naming the option and its
    mode; profile reads option values as values."""
    src = os.path.join(data, "coco8", "coco8.yaml")
    for opt in (("--workers", "2"), ("--dtype", "f64"), ("--set", "mosaic=0"),
                ("--batch", "4"), ("--epochs", "1")):
        expect(t, run(d, "bench", "color", "--imgsz", "64", "--runs", "2", *opt), 2,
               [opt[0] + " applies to the loader benchmark"], "bench color " + opt[0])
    for opt in (("--runs", "3"), ("--warmup", "1"), ("--isa", "portable")):
        expect(t, run(d, "bench", src, "--imgsz", "160", *opt), 2,
               [opt[0] + " applies to detfeed bench color"], "bench DATA " + opt[0])
        expect(t, run(d, "bench", "--imgsz", "64", *opt), 2,
               [opt[0] + " applies to detfeed bench color"], "bench (synthetic) " + opt[0])
        expect(t, run(d, "profile", src, "--imgsz", "160", *opt), 2,
               [opt[0] + " applies to detfeed bench color", "detfeed profile"],
               "profile " + opt[0])
    expect(t, run(d, "profile", "--imgsz", "64", "--epochs", "1"), 2,
           ["usage: detfeed profile DATA"], "profile with option values only")
    expect(t, run(d, "profile", "color"), 2, ["detfeed bench color"], "profile color")
    p = run(d, "profile", "--imgsz", "160", "--batch", "4", "--epochs", "1", src, "--json")
    t.check(p.returncode == 0 and '"stages"' in p.stdout, f"profile DATA: {p.stderr}")


def check_sample_grid_args(t, d, data, tmp):
    """sample and grid: --out empty or not .png, and an --epoch past the
    run's epochs, are refused; sample takes any number of instances."""
    src = os.path.join(data, "coco8", "coco8.yaml")
    for cmd in ("sample", "grid"):
        expect(t, run(d, cmd, src, "--out", ""), 2, ["--out takes a file name"],
               cmd + " --out ''")
        jpg = os.path.join(tmp, cmd + ".jpg")
        expect(t, run(d, cmd, src, "--out", jpg), 2, [jpg, ".png"], cmd + " --out x.jpg")
        t.check(not os.path.exists(jpg), f"{cmd} --out x.jpg: a file was written")
    upper = os.path.join(tmp, "s.PNG")
    p = run(d, "sample", src, "--imgsz", "160", "--out", upper)
    t.check(p.returncode == 0 and os.path.exists(upper), f"sample --out s.PNG: {p.stderr}")
    expect(t, run(d, "sample", src, "--epoch", "200", "--epochs", "100"), 2,
           ["--epoch 200", "100 epochs"], "sample --epoch past --epochs")
    expect(t, run(d, "sample", src, "--epoch", "100"), 2, ["--epoch 100"],
           "sample --epoch past the default epochs")
    p = run(d, "sample", src, "--imgsz", "160", "--epoch", "99", "--epochs", "100")
    t.check(p.returncode == 0, f"sample --epoch 99: {p.stderr}")
    expect(t, run(d, "grid", src, "--out", os.path.join(tmp, "g.png"), "--epoch", "5000"), 2,
           ["--epoch 5000"], "grid --epoch past the epochs")
    dense = os.path.join(tmp, "dense")
    run(d, "synth", dense, "--n", "1", "--imgsz", "96")
    with open(os.path.join(dense, "labels", "train", "000000.txt"), "w") as f:
        f.writelines(f"{k % 8} {0.1 + 0.8 * (k % 97) / 97:.4f} {0.1 + 0.8 * (k % 89) / 89:.4f}"
                     " 0.1 0.1\n" for k in range(5000))
    p = run(d, "sample", os.path.join(dense, "data.yaml"), "--imgsz", "96", "--augment", "0",
            "--json")
    try:
        n = len(json.loads(p.stdout.strip().splitlines()[-1])["cls"])
    except (ValueError, KeyError, IndexError):
        n = -1
    t.check(p.returncode == 0 and n == 5000, f"sample of 5000 instances: {n} {p.stderr!r}")


def on_terminal(cmd):
    """cmd run with stderr on a pseudo-terminal: its exit status and what it
    wrote there."""
    import pty
    import select
    master, slave = pty.openpty()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    out = b""
    while True:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the slave side closed
                chunk = b""
            if not chunk:
                break
            out += chunk
        elif p.poll() is not None:
            break
    p.wait()
    os.close(master)
    return p.returncode, out.decode(errors="replace")


def check_progress(t, d, tmp):
    """Work over a second shows one updating line (count, rate, time left) on
    a terminal's stderr, cleared at the end; none with --quiet, none when
    stderr is not a terminal; check's and cache's opens too."""
    data = os.path.join(tmp, "progress")
    rc, err = on_terminal([d, "synth", data, "--n", "1500", "--imgsz", "96"])
    lines = [s for s in err.split("\r") if "synth [" in s]
    t.check(rc == 0 and len(lines) >= 2 and "/1500, " in lines[-1] and "/s, " in lines[-1]
            and " left" in lines[-1] and err.endswith("\r\x1b[K"),
            "synth on a terminal: a progress line, cleared: %r" % err[-160:])
    rc, err = on_terminal([d, "check", data, "--verify", "decode", "--quiet"])
    t.check(rc == 0 and err == "", "check --quiet on a terminal: %r" % err[:160])
    p = subprocess.run([d, "check", data, "--verify", "decode"], capture_output=True, text=True)
    t.check(p.returncode == 0 and p.stderr == "", "check, stderr not a terminal: %r"
            % p.stderr[:160])
    p = subprocess.run([d, "cache", data, "--imgsz", "64", "--workers", "1"], capture_output=True,
                       text=True)
    t.check(p.returncode == 0 and "\r" not in p.stderr, "cache, stderr not a terminal: %r"
            % p.stderr[:160])


def main():
    args = ou.parse_args()
    cv2, np = ou.require_cv2()
    t = ou.Counter("test_cli")
    d = args.detfeed
    with tempfile.TemporaryDirectory() as tmp:
        png = os.path.join(tmp, "in.png")
        cv2.imwrite(png, np.zeros((4, 32, 3), np.uint8))
        check_help(t, d)
        check_gains(t, d, png, tmp)
        check_bad_files(t, d, cv2, np, tmp, args.data)
        check_color(t, d, cv2, np, tmp)
        check_bench(t, d)
        check_synth(t, d, tmp)
        check_progress(t, d, tmp)
        if os.path.isdir(os.path.join(args.data, "coco8")):
            check_replay(t, d, args.data)
            check_replay_disk_note(t, d, args.data, tmp)
            check_loader_bench(t, d, args.data)
            check_grid(t, d, args.data, tmp)
            check_set(t, d, args.data, tmp)
            check_modes(t, d, args.data)
            check_sample_grid_args(t, d, args.data, tmp)
            check_replay_digest(t, d, args.data, args.no_ctypes)
    t.finish()


if __name__ == "__main__":
    main()
