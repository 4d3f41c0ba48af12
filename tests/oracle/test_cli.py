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
    except (ValueError, KeyError, IndexError):
        ok = False
    t.check(ok, f"bench DATA --json: {p.stdout[-300:]!r} {p.stderr!r}")


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
        if os.path.isdir(os.path.join(args.data, "coco8")):
            check_replay(t, d, args.data)
            check_loader_bench(t, d, args.data)
            check_grid(t, d, args.data, tmp)
    t.finish()


if __name__ == "__main__":
    main()
