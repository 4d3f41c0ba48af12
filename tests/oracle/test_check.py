"""`detfeed check` on the shared COCO sets (the counts their README states)
and on generated bad datasets: every problem reported with file and line,
the fail policy stopping at the first, malformed input never crashing.
This test needs no cv2."""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import oracle_util as ou  # noqa: E402


def run(d, *args):
    return subprocess.run([d, "check", *args], capture_output=True, text=True)


def check_json(t, d, source, want, *extra, status=0):
    """check --json of source: the counts in want, and the exit status (0: a
    clean dataset, 1: unusable images or rejected label lines found)."""
    p = run(d, source, "--json", *extra)
    ok = p.returncode == status
    try:
        got = json.loads(p.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        got, ok = {}, False
    for k, v in want.items():
        ok = ok and got.get(k) == v
    t.check(ok, f"check {source} {extra}: want {want}, got "
                f"{ {k: got.get(k) for k in want} } (exit {p.returncode}: {p.stderr.strip()})")
    return got


def check_shared(t, d, data):
    got = check_json(t, d, os.path.join(data, "coco128"),
                     {"images": 128, "labelled": 126, "backgrounds": 2, "orphan_labels": 2,
                      "instances": 929, "duplicates": 0, "corrupt": 0})
    orphans = sorted(os.path.basename(p["file"]) for p in got.get("problems", [])
                     if "without an image" in p["reason"])
    t.check(orphans == ["000000000656.txt", "000000000659.txt"], f"orphans {orphans}")
    check_json(t, d, os.path.join(data, "coco128", "coco128.yaml"),
               {"images": 128, "labelled": 126, "instances": 929, "classes": 80})
    check_json(t, d, os.path.join(data, "coco8-pose", "coco8-pose.yaml"),
               {"images": 4, "instances": 14, "task": "pose"}, "--split", "val")
    check_json(t, d, os.path.join(data, "coco8-seg"), {"images": 8, "task": "segment"})
    p = run(d, os.path.join(data, "coco128"))
    t.check(p.returncode == 0 and "orphan label files" in p.stdout and "929" in p.stdout,
            f"text report: {p.stdout[:300]!r}")


def make_bad(tmp):
    img = os.path.join(tmp, "images")
    lab = os.path.join(tmp, "labels")
    os.makedirs(img)
    os.makedirs(lab)
    # A real 8-bit PNG, 16x16, written without any library: detfeed decodes it.
    import struct
    import zlib
    raw = b"".join(b"\x00" + bytes([x * 8 % 256, 0, 255 - x] * 16)[:48] for x in range(16))

    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data +
                struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff))
    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 16, 16, 8, 2, 0, 0, 0))
           + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
    lines = {
        "ok": "0 0.5 0.5 0.2 0.2\n",
        "nan": "0 0.5 nan 0.2 0.2\n",
        "neg": "0 0.5 0.5 -0.5 0.2\n",
        "range": "0 0.5 1.5 0.2 0.2\n",
        "cols": "0 0.5 0.5 0.2\n",
        "text": "0 0.5 zero 0.2 0.2\n",
        "cls": "0 0.5 0.5 0.2 0.2\n7 0.5 0.5 0.2 0.2\n",
        "crlf": "\ufeff0 0.5 0.5 0.2 0.2\r\n1 0.5 0.5 0.1 0.1\r\n",
    }
    for name, text in lines.items():
        open(os.path.join(img, name + ".png"), "wb").write(png)
        open(os.path.join(lab, name + ".txt"), "w", encoding="utf-8", newline="").write(text)
    open(os.path.join(img, "zero.jpg"), "wb").close()
    open(os.path.join(img, "trunc.png"), "wb").write(png[: len(png) // 2])
    crc = bytearray(png)
    crc[45] ^= 0xff  # inside the IDAT data: its CRC no longer matches
    open(os.path.join(img, "crc.png"), "wb").write(bytes(crc))
    os.makedirs(os.path.join(tmp, "listed.jpg"))
    open(os.path.join(tmp, "list.txt"), "w").write("images/ok.png\nlisted.jpg\n")
    open(os.path.join(tmp, "data.yaml"), "w").write(
        "train: images\nval: nowhere\nnames: [a, b]\n")
    open(os.path.join(tmp, "broken.yaml"), "w").write("train: images\nnames: {0: a\n")


def check_bad(t, d, tmp):
    yaml = os.path.join(tmp, "data.yaml")
    got = check_json(t, d, yaml, {"images": 11, "usable": 2, "corrupt": 9, "labelled": 2,
                                  "instances": 3}, status=1)
    want = {"nan.txt": (1, "not finite"), "neg.txt": (1, "below -0.01"),
            "range.txt": (1, "above 1.01"), "cols.txt": (1, "expected 5 columns"),
            "text.txt": (1, "non-numeric value 'zero'"),
            "cls.txt": (2, "not below the 2 classes"), "zero.jpg": (0, "empty"),
            "trunc.png": (0, ""), "crc.png": (0, "")}
    probs = {os.path.basename(p["file"]): (p["line"], p["reason"]) for p in got.get("problems", [])}
    for name, (line, words) in want.items():
        got_line, reason = probs.get(name, (None, ""))
        t.check(got_line == line and words in reason, f"{name}: want line {line} "
                f"'{words}', got {probs.get(name)}")
    p = run(d, yaml, "--policy", "fail")
    # Sorted order: cls.png comes first, and its label line 2 is the first problem.
    t.check(p.returncode == 1 and "cls.txt:2:" in p.stderr, f"fail policy: {p.stderr.strip()}")
    p = run(d, yaml, "--split", "val")
    t.check(p.returncode == 1 and "nowhere, which does not exist" in p.stderr
            and "data.yaml:2" in p.stderr and "no 'path' in the YAML: its folder" in p.stderr,
            f"missing split folder: {p.returncode} {p.stderr.strip()}")
    # the text report says where the data is and which rule found it
    p = run(d, yaml, "--verify", "header")
    want = "data: %s (no 'path' in the YAML: its folder)" % os.path.realpath(tmp)
    t.check(want in p.stdout, f"data line: {p.stdout[:300]!r}")
    # a relative path not there from the working folder: under --datasets-dir
    rel = os.path.join(tmp, "rel.yaml")
    open(rel, "w").write("path: %s\ntrain: images\nnames: [a, b]\n"
                         % os.path.basename(tmp))
    p = run(d, rel, "--verify", "header", "--datasets-dir", os.path.dirname(tmp))
    want = "data: %s (path: %s under datasets_dir %s (the datasets_dir setting))" % (
        os.path.realpath(tmp), os.path.basename(tmp), os.path.dirname(tmp))
    t.check(want in p.stdout, f"--datasets-dir: {p.stdout[:300]!r} {p.stderr[-300:]!r}")
    p = run(d, os.path.join(tmp, "broken.yaml"))
    t.check(p.returncode == 1 and "broken.yaml:2: malformed YAML" in p.stderr,
            f"malformed YAML: {p.stderr.strip()}")
    got = check_json(t, d, os.path.join(tmp, "list.txt"), {"images": 2, "usable": 1,
                                                          "corrupt": 1}, status=1)
    t.check(any("listed.jpg" in p["file"] and "not a regular file" in p["reason"]
                for p in got.get("problems", [])), "folder named like an image in a list")
    for args in (["--policy", "maybe"], ["--verify", "x"], ["--split", "dev"], []):
        p = run(d, *(args + ([yaml] if args else [])))
        t.check(p.returncode == 2, f"usage error {args}: exit {p.returncode}")
    p = run(d, os.path.join(tmp, "does-not-exist"))
    t.check(p.returncode == 1 and "does-not-exist" in p.stderr, "missing source")
    # --split is a YAML's: refused for a folder or list (all their images are read)
    p = run(d, os.path.join(tmp, "images"), "--split", "val")
    t.check(p.returncode == 2 and "--split is for a dataset YAML" in p.stderr,
            f"--split of a folder: exit {p.returncode} {p.stderr.strip()}")
    check_json(t, d, os.path.join(tmp, "images"), {"split": None, "images": 11}, status=1)
    p = run(d, os.path.join(tmp, "images"))
    t.check(p.returncode == 1 and "skipped (corrupt)" in p.stdout,
            f"text report of unusable images: exit {p.returncode}")
    # no usable image: the report comes all the same, then the error
    none = os.path.join(tmp, "none.yaml")
    open(none, "w").write("train: images/cls.png\nnames: [a]\n")
    p = run(d, none)
    t.check(p.returncode == 1 and "no usable images" in p.stderr and "cls.txt:2:" in p.stderr
            and "cls.txt:2:" in p.stdout and "usable" in p.stdout,
            f"no usable image: exit {p.returncode}, {p.stdout[-300:]!r} {p.stderr.strip()}")


def check_escapes(t, d, tmp):
    """Bytes a label file or a file name may hold (ESC, 0xff, NUL, BEL) reach
    the report escaped: the JSON is UTF-8 that Python's json module parses
    (control characters as \\u00XX, invalid UTF-8 bytes as U+FFFD), and the
    text report shows control characters and invalid bytes as \\xHH."""
    import shutil
    img, lab = os.path.join(tmp, "images"), os.path.join(tmp, "labels")
    os.makedirs(img)
    os.makedirs(lab)
    good = os.path.join(os.path.dirname(tmp), "bad", "images", "ok.png")
    for name in ("a", "b", "c"):
        shutil.copy(good, os.path.join(img, name + ".png"))
    open(os.path.join(lab, "a.txt"), "wb").write(b"0 0.5 0.5 0.2 0.2\n0 0.5 \x1b[31m\xff 0.2 0.2\n")
    open(os.path.join(lab, "b.txt"), "wb").write(b"0 0.5 \x1b]0;x\x07\xff\x00 0.2 0.2\n")
    weird = os.fsencode(img) + b"/w\x1b[2J\xfe.png"
    shutil.copy(good, weird)
    open(os.fsencode(lab) + b"/w\x1b[2J\xfe.txt", "wb").write(b"0 0.5 0.5 0.2 0.2\n1 2 3\n")
    p = subprocess.run([d, "check", tmp, "--json"], capture_output=True)
    try:
        got = json.loads(p.stdout.decode("utf-8", "strict"))
    except ValueError as e:
        got = {}
        t.check(False, f"check --json with control bytes: not UTF-8 JSON ({e}): {p.stdout[:200]!r}")
    probs = got.get("problems", [])
    a = [q for q in probs if q["file"].endswith("a.txt")]
    t.check(len(a) == 1 and "\x1b[31m\ufffd" in a[0]["reason"], f"a.txt reason: {a}")
    t.check(any(q["file"].endswith("b.txt") for q in probs), f"b.txt (ESC, 0xff, NUL) in {probs}")
    w = [q for q in probs if "w\x1b[2J\ufffd.txt" in q["file"]]
    t.check(len(w) == 1, f"a file name with ESC and 0xfe: {[q['file'] for q in probs]}")
    p = subprocess.run([d, "check", tmp], capture_output=True)
    out = p.stdout
    bad = sorted({c for c in out if (c < 0x20 and c not in (0x0a,)) or c == 0x7f})
    t.check(p.returncode == 1 and not bad, f"text report: control bytes {bad} in {out[-300:]!r}")
    try:
        text = out.decode("utf-8", "strict")
    except UnicodeDecodeError as e:
        text = ""
        t.check(False, f"text report is not UTF-8: {e}")
    t.check("\\x1b[31m\\xff" in text and "w\\x1b[2J\\xfe.txt" in text,
            f"text report escapes: {text[-400:]!r}")
    # an error message on stderr is escaped too
    p = subprocess.run([d, "check", os.fsencode(tmp) + b"/no\x1b[2Jne"], capture_output=True)
    t.check(p.returncode == 1 and b"\x1b" not in p.stderr and b"\\x1b[2J" in p.stderr,
            f"stderr escapes: {p.stderr!r}")


def main():
    args = ou.parse_args()
    t = ou.Counter("test_check")
    if os.path.isdir(os.path.join(args.data, "coco128")):
        check_shared(t, args.detfeed, args.data)
    else:
        print(f"note: {args.data} has no coco128; shared counts not checked")
    with tempfile.TemporaryDirectory() as tmp:
        make_bad(tmp)
        check_bad(t, args.detfeed, tmp)
    with tempfile.TemporaryDirectory() as top:
        make_bad(os.path.join(top, "bad"))
        check_escapes(t, args.detfeed, os.path.join(top, "ctl"))
    t.finish()


if __name__ == "__main__":
    main()
