"""Where a dataset YAML's data is: libdetfeed against the real Ultralytics'
check_det_dataset, for a set of YAML layouts.

One temporary tree: Ultralytics' settings (YOLO_CONFIG_DIR, its
settings.json naming a datasets_dir), datasets under that datasets_dir,
under the working folder and beside the YAMLs, a link to a dataset, and
YAMLs whose `path` and split entries take each rule (relative from the
working folder or under datasets_dir, never beside the YAML; absolute,
mistyped too; none; "../" entries; lists). For each, Ultralytics
(check_det_dataset(yaml, autodownload=False, split="train"), then its
BaseDataset.get_img_files on the train entries; downloads blocked besides)
gives the root and the image files, or the missing path it names; detfeed
(libdetfeed through ctypes, reading the same settings file itself) must give
the same root, the same image files, or a failure naming the same missing
path. Then detfeed.Loader("coco8.yaml") must find Ultralytics' packaged
coco8.yaml and its data under datasets_dir as check_det_dataset does.

    test_resolve_oracle.py --detfeed BIN --data DIR [--no-ctypes]

Exits 77 (skip) without ultralytics, or under a sanitizer build.
"""
import ctypes
import json
import os
import re
import sys
import tempfile
import types

import oracle_util as ou

PNG = None  # a 16x16 PNG's bytes, made once


def image(path):
    global PNG
    if PNG is None:
        import zlib
        import struct
        raw = b"".join(b"\0" + b"\x80" * 48 for _ in range(16))

        def chunk(kind, data):
            return (struct.pack(">I", len(data)) + kind + data
                    + struct.pack(">I", zlib.crc32(kind + data)))
        PNG = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 16, 16, 8, 2, 0, 0, 0))
               + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(PNG)


def dataset(top, splits=("train", "val")):
    """A dataset folder: one image and label per split."""
    for s in splits:
        image(os.path.join(top, "images", s, "a.png"))
        os.makedirs(os.path.join(top, "labels", s), exist_ok=True)
        with open(os.path.join(top, "labels", s, "a.txt"), "w") as f:
            f.write("0 0.5 0.5 0.2 0.2\n")


def make_tree(tmp):
    """The folders, and the YAML layouts {name: text}."""
    dd = os.path.join(tmp, "dd")
    for d in ("dd/rel", "dd/coco8", "dd/target", "datasets/seg", "here/cwdset",
              "yamls/beside", "yamls/own"):
        dataset(os.path.join(tmp, d))
    os.symlink(os.path.join(dd, "target"), os.path.join(dd, "linked"))
    os.makedirs(os.path.join(tmp, "cfg", "Ultralytics"))
    with open(os.path.join(tmp, "cfg", "Ultralytics", "settings.json"), "w") as f:
        json.dump({"settings_version": "0.0.8", "datasets_dir": dd}, f)
    tv = "train: images/train\nval: images/val\nnames: [a]\n"
    layouts = {
        "rel_under_datasets_dir": "path: rel\n" + tv,
        "rel_from_working_folder": "path: cwdset\n" + tv,
        "rel_beside_the_yaml_only": "path: beside\n" + tv,
        "rel_up_from_working_folder": "path: ../here/cwdset\n" + tv,
        "rel_up_under_datasets_dir": "path: ../datasets/seg\n" + tv,
        "rel_nowhere": "path: nothere\n" + tv,
        "rel_link_under_datasets_dir": "path: linked\n" + tv,
        "abs": "path: %s\n" % os.path.join(dd, "rel") + tv,
        "abs_trailing_slash": "path: %s/\n" % os.path.join(dd, "rel") + tv,
        "abs_mistyped": "path: %s\n" % os.path.join(dd, "rell") + tv,
        "no_path": "train: own/images/train\nval: own/images/val\nnames: [a]\n",
        "empty_path": "path: ''\ntrain: own/images/train\nval: own/images/val\nnames: [a]\n",
        "dot_path": "path: .\ntrain: cwdset/images/train\nval: cwdset/images/val\nnames: [a]\n",
        "lone_dotdot_entry": "path: rel\ntrain: ../images/train\nval: images/val\nnames: [a]\n",
        "list_dotdot_entry": "path: rel\ntrain: [../images/train]\nval: images/val\nnames: [a]\n",
        "list_two_entries": "path: rel\ntrain: [images/train, images/val]\nval: images/val\n"
                            "names: [a]\n",
        "abs_entry": "path: rel\ntrain: %s\nval: images/val\nnames: [a]\n"
                     % os.path.join(tmp, "here", "cwdset", "images", "train"),
        "missing_entry": "path: rel\ntrain: images/nothere\nval: images/val\nnames: [a]\n",
    }
    for name, text in layouts.items():
        with open(os.path.join(tmp, "yamls", name + ".yaml"), "w") as f:
            f.write(text)
    return layouts


def ultralytics_side(yaml):
    """('ok', root, image files) or ('missing', the path it names)."""
    from ultralytics.data.base import BaseDataset
    from ultralytics.data.utils import check_det_dataset
    try:
        d = check_det_dataset(yaml, autodownload=False, split="train")
    except FileNotFoundError as e:
        m = re.search(r"missing path '([^']*)'", str(e))
        return ("missing", m.group(1) if m else str(e))
    files = BaseDataset.get_img_files(types.SimpleNamespace(prefix="", fraction=1.0),
                                      d["train"])
    return ("ok", os.path.realpath(str(d["path"])), files)


def detfeed_side(L, yaml):
    """The same from libdetfeed (its own reading of the settings file)."""
    ds = ctypes.c_void_p()
    assert L.detfeed_dataset_create(ctypes.byref(ds), 0) == 0
    try:
        L.detfeed_dataset_set_split(ds, b"train")
        rc = L.detfeed_dataset_open(ds, os.fsencode(yaml))
        if rc != 0:
            msg = L.detfeed_dataset_last_error(ds).decode()
            m = re.search(r"' is (.*), which does not exist", msg)
            return ("missing", m.group(1) if m else msg)
        files = [os.fsdecode(L.detfeed_dataset_image_path(ds, i))
                 for i in range(L.detfeed_dataset_size(ds))]
        return ("ok", os.fsdecode(L.detfeed_dataset_root(ds)), files)
    finally:
        L.detfeed_dataset_destroy(ds)


def check_packaged(c, tmp):
    """detfeed.Loader("coco8.yaml"): Ultralytics' packaged YAML, its data
    under datasets_dir, as check_det_dataset finds them."""
    import detfeed
    want = ultralytics_side("coco8.yaml")
    with detfeed.Loader("coco8.yaml", imgsz=64, batch=1, workers=1, cache="none",
                        verify_record="none", tensors="numpy") as loader:
        got = ("ok", loader.dataset.root, loader.dataset.im_files)
        rule = loader.dataset.root_rule
    c.check(got == want, "Loader('coco8.yaml'): %r, Ultralytics %r" % (got, want))
    c.check("path: coco8 under datasets_dir %s" % os.path.join(tmp, "dd") in rule,
            "Loader('coco8.yaml') rule: %s" % rule)
    print("%-32s %s (%s)" % ("packaged coco8.yaml", got[1], rule))
    try:  # a name that is neither a file nor packaged: said, nothing downloaded
        detfeed.Loader("no-such-dataset.yaml", imgsz=64, batch=1, workers=1, cache="none")
        c.check(False, "Loader('no-such-dataset.yaml') opened")
    except FileNotFoundError as e:
        c.check("packaged dataset YAMLs" in str(e), "Loader('no-such-dataset.yaml'): %s" % e)


def main():
    args = ou.parse_args()
    if args.no_ctypes:
        print("SKIP: this oracle runs through ctypes (not under a sanitizer)")
        sys.exit(ou.SKIP)
    with tempfile.TemporaryDirectory(prefix="detfeed-resolve-") as tmp:
        tmp = os.path.realpath(tmp)
        layouts = make_tree(tmp)
        # Ultralytics reads its settings once, at import: the tree's first.
        os.environ["YOLO_CONFIG_DIR"] = os.path.join(tmp, "cfg")
        os.environ["DETFEED_LIBRARY"] = ou.library_path(args.detfeed)
        os.chdir(os.path.join(tmp, "here"))
        ou.require(("ultralytics",), "scripts/oracle_env.sh installs it")
        import logging
        import ultralytics.utils.downloads as downloads
        from ultralytics.utils import LOGGER

        def no_download(*a, **k):
            raise AssertionError("a download was attempted")
        downloads.safe_download = no_download
        LOGGER.setLevel(logging.ERROR)
        L = ou.library(args.detfeed)
        c = ou.Counter("test_resolve_oracle")
        for name in layouts:
            yaml = os.path.join(tmp, "yamls", name + ".yaml")
            want, got = ultralytics_side(yaml), detfeed_side(L, yaml)
            c.check(got == want, "%s: detfeed %r, Ultralytics %r" % (name, got, want))
            print("%-32s %s %s" % (name, want[0], want[1]))
        check_packaged(c, tmp)
        os.chdir("/")
    c.finish()


if __name__ == "__main__":
    main()
