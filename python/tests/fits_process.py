"""Runs ultralytics_fits.py in a process of its own (Ultralytics reads its
settings once at import) with the detfeed this test process imports, and
returns the JSON it writes; used by test_ultralytics.py and
test_ultralytics_val.py."""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def data_or_skip():
    """The shared data folder (DETFEED_TEST_DATA, else ../shared/data beside
    the checkout); skips the calling test module without torch, Ultralytics
    or coco8, coco8-seg and coco8-pose there."""
    import pytest
    data = os.environ.get("DETFEED_TEST_DATA",
                          os.path.join(HERE, "..", "..", "..", "shared", "data"))
    pytest.importorskip("torch")
    pytest.importorskip("ultralytics")
    if not all(os.path.isdir(os.path.join(data, d)) for d in ("coco8", "coco8-seg", "coco8-pose")):
        pytest.skip("no shared data (coco8, coco8-seg, coco8-pose)", allow_module_level=True)
    return data


def run_fits(data, work, names=(), timeout=1200):
    """ultralytics_fits.py DATA WORK OUT [NAME...]: its results as a dict;
    AssertionError with the end of its output when it fails."""
    out = os.path.join(str(work), "fits.json")
    env = dict(os.environ)
    import detfeed  # the fits import the detfeed this test imports
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.dirname(os.path.dirname(detfeed.__file__))]
        + [p for p in [env.get("PYTHONPATH")] if p])
    run = subprocess.run([sys.executable, os.path.join(HERE, "ultralytics_fits.py"), data,
                          str(work), out] + list(names), env=env, capture_output=True,
                         text=True, timeout=timeout)
    if run.returncode != 0:
        raise AssertionError("the run failed:\n" + run.stdout[-4000:] + run.stderr[-8000:])
    with open(out) as f:
        return json.load(f)
