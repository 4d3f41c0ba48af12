"""Ultralytics' settings for the tests: where YOLO_CONFIG_DIR is not set, a
temporary one whose settings.json names a datasets_dir holding links to the
shared data (DETFEED_TEST_DATA), so that the shared YAMLs (Ultralytics' own:
`path: coco8`, `path: ../datasets/coco8-seg`) resolve as check_det_dataset
resolves them for a user, whatever the host's own settings say."""
import atexit
import json
import os
import shutil
import tempfile

_TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_DATA = os.environ.get("DETFEED_TEST_DATA",
                       os.path.join(os.path.dirname(_TOP), "shared", "data"))

if not os.environ.get("YOLO_CONFIG_DIR"):
    _config = tempfile.mkdtemp(prefix="detfeed-test-config-")
    atexit.register(shutil.rmtree, _config, True)
    _datasets = os.path.join(_config, "datasets")
    os.makedirs(os.path.join(_config, "Ultralytics"))
    os.mkdir(_datasets)
    if os.path.isdir(_DATA):
        for _name in os.listdir(_DATA):
            if os.path.isdir(os.path.join(_DATA, _name)):
                os.symlink(os.path.join(_DATA, _name), os.path.join(_datasets, _name))
    with open(os.path.join(_config, "Ultralytics", "settings.json"), "w") as _f:
        json.dump({"datasets_dir": _datasets}, _f)
    os.environ["YOLO_CONFIG_DIR"] = _config
