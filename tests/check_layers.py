#!/usr/bin/env python3
"""check_layers.py - fails when a file under src/ includes a header of a
folder it may not depend on (the rule of src/README.md, "Layout").

    tests/check_layers.py [SRC]        (SRC defaults to the src/ beside tests/)

Reads every #include "..." of src/**/*.{c,h,cu,cuh}: a path with a folder
("img/color_px.h") names that folder; a bare name ("color_px.h") must be a
file of the including folder, or a public header (a file of include/). Exit 0 when
every include follows the rule, 1 with one line per broken include.
"""
import pathlib
import re
import sys

# Which folders each folder may include, itself included. Downward only:
# core <- img <- data <- aug <- feed, and cuda beside data and aug (it sees
# core and img; only feed calls it).
ALLOWED = {
    "core": {"core"},
    "img": {"core", "img"},
    "data": {"core", "img", "data"},
    "aug": {"core", "img", "data", "aug"},
    "cuda": {"core", "img", "cuda"},
    "feed": {"core", "img", "data", "aug", "cuda", "feed"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SUFFIXES = {".c", ".h", ".cu", ".cuh"}


def broken_includes(src):
    """Yields "file:line: message" for every include that breaks the rule."""
    public = {p.name for p in (src.parent / "include").glob("*.h")}
    for path in sorted(src.rglob("*")):
        if path.suffix not in SUFFIXES or not path.is_file():
            continue
        rel = path.relative_to(src)
        folder = rel.parts[0] if len(rel.parts) > 1 else ""
        text = path.read_text(encoding="utf-8", errors="replace")
        for m in INCLUDE.finditer(text):
            name = m.group(1)
            line = text.count("\n", 0, m.start()) + 1
            where = f"src/{rel}:{line}"
            if folder not in ALLOWED:
                yield f"{where}: src/{folder or '.'} is not a known folder (add it to the rule)"
                break
            if "/" not in name:
                if name in public or (path.parent / name).is_file():
                    continue
                yield f'{where}: "{name}" is neither in src/{folder} nor public'
                continue
            target = name.split("/", 1)[0]
            if target not in ALLOWED:
                yield f'{where}: "{name}" names no folder of src/'
            elif target not in ALLOWED[folder]:
                yield (f'{where}: {folder} may not include {target} ("{name}"); '
                       f"{folder} may include {', '.join(sorted(ALLOWED[folder]))}")


def main(argv):
    src = pathlib.Path(argv[1]) if len(argv) > 1 else pathlib.Path(__file__).resolve().parents[1] / "src"
    if not src.is_dir():
        print(f"check_layers: {src} is not a folder", file=sys.stderr)
        return 2
    problems = list(broken_includes(src))
    for p in problems:
        print(p)
    print(f"check_layers: {len(problems)} include(s) break the layer rule" if problems
          else "check_layers: every include follows the layer rule")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
