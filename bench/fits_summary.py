"""Summarises paired training fits (bench/run_fits.sh, bench/fit_pairs.sh):
per arm the median wall time of the fit with min-max, the training phase and
the data wait (medians), training images/s, peak allocated CUDA memory and GPU
idle fraction (1 - mean nvidia-smi utilisation over the fit, sampled every
100 ms, where a trace is there; the samples of the fit's own span where both
carry times); where a fit's time goes (start-up, the
training phases with their data wait and CPU time, validation, checkpoints,
the rest), for fits that recorded it; per epoch, the first training phase and
validation against the later ones; per step (fits with step times), the
first step, the first epoch's others and the later epochs'; each
validation's data wait and inference time per image; the paired reductions of wall time, of the
training phase and of the later epochs' median training time (the steady
state, without the trainer's one-time set-up; per pair, then the median);
whether the hashes of the detfeed arms agree; and the profile of any fit run
with --profile.

    python3 bench/fits_summary.py OUT [X:Y ...]

Fits are OUT/fit-ARM-PAIR.json; X:Y compares arm X against arm Y (default: c:b,
r:b, b:a, c:a, r:a, z:a, r:z where present; z names the trainer's floor,
train_ultralytics.py --loader floor, whose hashes are not compared: it trains
on the batches it holds, not on the fit's).
"""
import glob
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_util import median  # noqa: E402

HASHES = ("hash_model", "hash_optimizer", "hash_ema", "hash_losses", "hash_inputs")


def idle(path, span=None):
    """1 - the mean utilisation of an nvidia-smi trace: lines "TIME, PERCENT"
    (fit_pairs.sh), of which those inside span (the fit's start and end in
    the same local time, from its JSON) count, so that what the process does
    after the fit (--revalidate) is left out; or, in older traces, lines
    "PERCENT", which all count."""
    vals = []
    for line in open(path):
        f = [x.strip() for x in line.split(",")]
        if not f[-1].isdigit():
            continue
        if len(f) == 2 and span and not span[0] <= f[0] <= span[1]:
            continue
        vals.append(int(f[-1]))
    return 1 - sum(vals) / (100 * len(vals)) if vals else None


def load(out):
    fits = {}
    for f in glob.glob(os.path.join(out, "fit-*-*.json")):
        arm, pair = os.path.basename(f)[4:-5].rsplit("-", 1)
        r = json.load(open(f))
        util = os.path.join(out, "util-%s-%s.txt" % (arm, pair))
        r["idle"] = idle(util, r.get("fit_local_time")) if os.path.exists(util) else None
        r["later_epochs_s"] = later_epochs(r)
        fits[(arm, int(pair))] = r
    return fits


def label(r):
    if r["loader"] == "floor":
        n = 1 if r.get("floor_batches") is None else r["floor_batches"]  # older fits: 1
        held = "one batch" if n == 1 else "%d batches" % n if n else "the first epoch"
        return "trainer floor: %s repeated (%s colour)" % (held, r.get("color")) + (
            " (%s)" % r["label"] if r.get("label") else "")
    name = "Ultralytics loader" if r["loader"] == "ultralytics" else \
        "detfeed device recipe" if r.get("color") == "recipe" else \
        "detfeed %s colour" % r.get("color")
    return name + (" (%s)" % r["label"] if r.get("label") else "")


def med(rs, key, fmt="%.1f"):
    v = [r[key] for r in rs if r.get(key) is not None]
    return fmt % median(v) if v else "n/a"


def table(fits, arms, pairs):
    print("| arm | wall s (median, min-max) | train phase s | data wait s | train images/s "
          "| peak CUDA MiB | GPU idle | fits |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for arm in arms:
        rs = [fits[(arm, p)] for p in pairs if (arm, p) in fits]
        w = [r["wall_s"] for r in rs]
        idles = [r["idle"] for r in rs if r["idle"] is not None]
        print("| (%s) %s | %.1f (%.1f-%.1f) | %s | %s | %s | %s | %s | %d |" % (
            arm, label(rs[0]), median(w), min(w), max(w), med(rs, "train_s"),
            med(rs, "data_wait_s", "%.2f"), med(rs, "train_images_per_s"),
            med(rs, "peak_cuda_allocated_mib", "%.0f"),
            "%.1f%%" % (100 * median(idles)) if idles else "n/a", len(rs)))


def recorded(fits, arms, pairs, key):
    """Per arm, its fits that recorded `key` (not None, not empty); None
    when no fit of any arm did."""
    rows = [(arm, [fits[(arm, p)] for p in pairs if (arm, p) in fits
                   and fits[(arm, p)].get(key) not in (None, [])]) for arm in arms]
    return rows if any(rs for _, rs in rows) else None


def header(*cols):
    """A Markdown table's header after a blank line."""
    print("\n| %s |\n|%s" % (" | ".join(cols), " --- |" * len(cols)))


def breakdown(fits, arms, pairs):
    """Medians per arm of where the wall time goes (fits with start-up times)."""
    rows = recorded(fits, arms, pairs, "startup_s")
    if rows is None:
        return
    header("arm", "start-up s", "training s (data wait, CPU s in it)", "validation s",
           "checkpoints s", "rest s", "wall s")
    for arm, rs in rows:
        if not rs:
            continue
        rest = [r["wall_s"] - r["startup_s"] - r["train_s"] - r["val_s"] - r["save_s"]
                for r in rs]
        print("| (%s) | %s | %s (%s, %s) | %s | %s | %.1f | %s |" % (
            arm, med(rs, "startup_s"), med(rs, "train_s"), med(rs, "data_wait_s", "%.2f"),
            med(rs, "train_cpu_s"), med(rs, "val_s"), med(rs, "save_s"), median(rest),
            med(rs, "wall_s")))


def per_epoch(fits, arms, pairs):
    """Medians per arm of the first epoch's training phase and the later
    ones' (the first carries the trainer's one-time CUDA set-up), and of the
    validations: the first, the later per-epoch ones, the final validation of
    best.pt, and the CPU seconds of all of them (fits that recorded it)."""
    rows = recorded(fits, arms, pairs, "train_epochs_s")
    if rows is None:
        return
    header("arm", "epoch 1 train s", "later epochs train s (each)", "first val s",
           "later val s (each)", "final val s", "val CPU s")
    for arm, rs in rows:
        if not rs:
            continue
        later = [median(r["train_epochs_s"][1:]) for r in rs if len(r["train_epochs_s"]) > 1]
        vals = [r["val_epochs_s"] for r in rs if len(r.get("val_epochs_s", [])) > 2]
        print("| (%s) | %.2f | %s | %s | %s | %s | %s |" % (
            arm, median([r["train_epochs_s"][0] for r in rs]),
            "%.2f" % median(later) if later else "n/a",
            "%.2f" % median([v[0] for v in vals]) if vals else "n/a",
            "%.2f" % median([median(v[1:-1]) for v in vals]) if vals else "n/a",
            "%.2f" % median([v[-1] for v in vals]) if vals else "n/a",
            med(rs, "val_cpu_s")))


def per_step(fits, arms, pairs):
    """Medians per arm of the training steps' times (fits that recorded
    them): the first step of the fit, the rest of the first epoch's median
    step, the first epoch's data wait, and the later epochs' median step."""
    rows = recorded(fits, arms, pairs, "step_s")
    if rows is None:
        return
    header("arm", "step 1 s", "epoch 1's other steps s (median)", "epoch 1 data wait s",
           "later epochs' steps s (median)", "steps an epoch")
    for arm, rs in rows:
        if not rs:
            continue
        each = [len(r["step_s"]) // len(r["train_epochs_s"]) for r in rs]
        first = [r["step_s"][1:k] for r, k in zip(rs, each) if k > 1]
        later = [r["step_s"][k:] for r, k in zip(rs, each) if len(r["step_s"]) > k]
        print("| (%s) | %.3f | %s | %.3f | %s | %d |" % (
            arm, median([r["step_s"][0] for r in rs]),
            "%.4f" % median([median(f) for f in first]) if first else "n/a",
            median([sum(r["step_wait_s"][:k]) for r, k in zip(rs, each)]),
            "%.4f" % median([median(v) for v in later]) if later else "n/a", median(each)))


def validations(fits, arms, pairs):
    """Medians per arm of where the validations' time goes (fits that recorded
    it): for the first, the later per-epoch and the final validation, its
    seconds, the data wait in it (the time in its loader's next) and the
    validator's own inference milliseconds per image; a validation whose time
    is inference, not wait, is the model's first passes, not the loader's."""
    rows = recorded(fits, arms, pairs, "val_speed_ms")
    if rows is None:
        return
    header("arm", "first val s (data wait s, inference ms/image)",
           "later val s each (wait, inference)", "final val s (wait, inference)")
    for arm, rs in rows:
        rs = [r for r in rs if len(r["val_speed_ms"]) > 2]
        if not rs:
            continue

        def cell(pick):
            return "%.2f (%.3f, %.1f)" % tuple(median([pick(r[k]) for r in rs]) for k in (
                "val_epochs_s", "val_wait_s", "val_inference_ms"))
        for r in rs:
            r["val_inference_ms"] = [v["inference"] for v in r["val_speed_ms"]]
        print("| (%s) | %s | %s | %s |" % (arm, cell(lambda v: v[0]),
                                           cell(lambda v: median(v[1:-1])),
                                           cell(lambda v: v[-1])))


def later_epochs(r):
    """Median training time of the epochs after the first (the steady state,
    without the trainer's one-time set-up), where the fit recorded them."""
    e = r.get("train_epochs_s") or []
    return median(e[1:]) if len(e) > 1 else None


def compare(fits, pairs, x, y):
    for key, what in (("wall_s", "wall time"), ("train_s", "training phase"),
                      ("later_epochs_s", "later epochs' training time")):
        red = [1 - fits[(x, p)][key] / fits[(y, p)][key] for p in pairs
               if (x, p) in fits and (y, p) in fits and fits[(x, p)].get(key)
               and fits[(y, p)].get(key)]
        if red:
            print("(%s) vs (%s): %s reduced by %.1f%% (paired median over %d; %.1f%% to %.1f%%)"
                  % (x, y, what, 100 * median(red), len(red), 100 * min(red), 100 * max(red)))


def hashes(fits, loader="detfeed", keys=HASHES):
    """Whether the fits of `loader` agree on each hash of `keys`."""
    rs = [fits[k] for k in sorted(fits) if fits[k]["loader"] == loader]
    for h in keys if rs else ():
        vals = {r.get(h) for r in rs}
        print("%s over the %d %s fits: %s" % (
            h, len(rs), loader, "all equal (%s)" % str(next(iter(vals)))[:16]
            if len(vals) == 1 else "%d different values" % len(vals)))


def revalidations(fits):
    """The final models validated again over detfeed's and Ultralytics'
    validation loaders (train_ultralytics.py --revalidate)."""
    rv = [(k, fits[k]["revalidation"]) for k in sorted(fits) if fits[k].get("revalidation")]
    if not rv:
        return
    same = [k for k, r in rv if r["equal"]]
    print("final model validated over detfeed's and Ultralytics' validation loaders: metrics "
          "equal in %d of %d detfeed fits (largest difference %s)" % (
              len(same), len(rv), max(r["max_abs_diff"] for _, r in rv)))
    for (arm, pair), r in rv:
        st = r.get("detfeed_stats", {})
        print("  (%s) fit %d: mAP50-95 %.6f / %.6f; %s images, %s predictions, digest %s "
              "(%s); validation %.1f s / %.1f s" % (
                  arm, pair, r["detfeed"].get("metrics/mAP50-95(B)", float("nan")),
                  r["ultralytics"].get("metrics/mAP50-95(B)", float("nan")), st.get("images"),
                  st.get("predictions"), str(st.get("sha256"))[:16],
                  "equal" if st and st == r.get("ultralytics_stats") else "differs",
                  r["detfeed_s"], r["ultralytics_s"]))


def profiles(fits):
    for (arm, pair), r in sorted(fits.items()):
        p = r.get("profile")
        if not p:
            continue
        calls = ", ".join("%s %.1f/step %.2f ms" % (k, v["count_per_step"], v["cpu_ms_per_step"])
                          for k, v in sorted(p["calls"].items()))
        print("profile (%s) fit %d, %d steps: GPU busy %.1f ms/step; %s" % (
            arm, pair, p["steps"], p["gpu_busy_ms_per_step"], calls))


def main():
    out = sys.argv[1]
    fits = load(out)
    if not fits:
        raise SystemExit("%s: no fit-ARM-PAIR.json" % out)
    pairs = sorted({p for _, p in fits})
    arms = sorted({a for a, _ in fits})
    table(fits, arms, pairs)
    breakdown(fits, arms, pairs)
    per_epoch(fits, arms, pairs)
    per_step(fits, arms, pairs)
    validations(fits, arms, pairs)
    vs = [tuple(s.split(":")) for s in sys.argv[2:]] or \
        [(x, y) for x, y in (("c", "b"), ("r", "b"), ("b", "a"), ("c", "a"), ("r", "a"),
                             ("z", "a"), ("r", "z"))
         if x in arms and y in arms]
    for x, y in vs:
        compare(fits, pairs, x, y)
    hashes(fits)
    hashes(fits, "ultralytics", ("hash_inputs",))  # its own randomness: not detfeed's
    revalidations(fits)
    profiles(fits)


if __name__ == "__main__":
    main()
