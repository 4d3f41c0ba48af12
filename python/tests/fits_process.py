"""Runs ultralytics_fits.py in a process of its own (Ultralytics reads its
settings once at import) with the detfeed this test process imports, and
returns the JSON it writes; used by test_ultralytics.py and
test_ultralytics_val.py."""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


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
