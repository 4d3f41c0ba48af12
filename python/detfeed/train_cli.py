"""`detfeed train ...` and `detfeed val ...`: Ultralytics' `yolo train` and
`yolo val`, with detfeed's batches.

    detfeed train model=yolov8n.yaml data=coco8.yaml epochs=3 imgsz=640 color=device
    detfeed train resume model=runs/detect/train/weights/last.pt
    detfeed val model=runs/detect/train/weights/best.pt data=coco8.yaml

The command line is Ultralytics' own: what `yolo train ...` takes (key=value
pairs, bare flags such as `resume`, `cfg=custom.yaml`, task words such as
`detect`), parsed and run by the installed Ultralytics package's entrypoint
(ultralytics.cfg.entrypoint), so that an argument means what it means to
`yolo`, and one it does not know is refused with its message. The model's
train() gets the trainer class of detfeed.ultralytics.trainer() (val():
the validator class of detfeed.ultralytics.validator()).

detfeed's own arguments are taken out before Ultralytics sees them:
color=worker|device|recipe, dtype=float32|uint8, val=detfeed|ultralytics
(val=True/False stays Ultralytics' flag), and the Loader settings that
trainer() passes on (prefetch=, partner_window=, verify_record=, ...; see
`detfeed train help`), also from a cfg=custom.yaml (Ultralytics reads a
copy without them; the command line wins). `detfeed val` takes val= and
the settings a validation loader takes.

Resume: a checkpoint of a detfeed run records detfeed's settings (the
key detfeed.ultralytics.CHECKPOINT_KEY), and `detfeed train resume
model=last.pt` restores them (settings given on the command line win);
resuming a checkpoint made without detfeed says in one line that the run
goes on with detfeed's loader.

Ultralytics is imported here only (for train and val); the tool's other
commands never import it.
"""
import inspect
import logging
import sys

MODES = ("train", "val")
# Ultralytics' task words (ultralytics.cfg.TASKS), for telling a training
# command line from the C tool's commands before Ultralytics is imported.
TASK_WORDS = ("detect", "segment", "semantic", "depth", "classify", "pose", "obb")
HELP_WORDS = ("help", "-h", "--help", "-help", "--h")
# Ultralytics' val=True/False is its flag (validate during training); these
# values make val= detfeed's (which loader validates).
VAL_LOADERS = ("detfeed", "ultralytics")


class UsageError(Exception):
    """A command line detfeed refuses, with the reason."""


def is_command(argv):
    """Whether argv (without the program) is a train or val command line
    (`train ...`, or a task word first, as `yolo detect train ...`)."""
    return bool(argv) and (argv[0] in MODES or argv[0] in TASK_WORDS)


HELP = """usage: detfeed train|val [TASK] ARG=VALUE ... [resume]

Ultralytics' `yolo train` / `yolo val` with detfeed's batches. Every argument
is what `yolo %(mode)s` takes, parsed by the installed Ultralytics package:
key=value pairs (model=, data=, epochs=, imgsz=, batch=, device=, workers=,
cache=, seed=, the augmentation hyperparameters, ...), bare flags (resume),
cfg=custom.yaml, task words (detect, segment, pose). Their list and defaults:
`yolo cfg`, or https://docs.ultralytics.com/usage/cfg/. A few are refused
before training where detfeed cannot honour them (time=, augmentations, a
list scale=, mask_ratio other than 4, overlap_mask=False), with a message
naming them.

detfeed's own arguments (taken out before Ultralytics sees them):
  color=worker|device|recipe  where colour is applied (train; default worker):
                              device/recipe: the CUDA kernel (CUDA, float32)
  dtype=float32|uint8         the batches' dtype (train; default float32,
                              the floats Ultralytics' preprocess gives)
  val=detfeed|ultralytics     which loader gives the validation batches
                              (default detfeed; val=True/False stays
                              Ultralytics' flag: validate during training)
  NAME=VALUE                  a Loader setting (help(detfeed.Loader)); train:
    %(train_options)s
  (also as keys of a cfg=custom.yaml; the command line wins)
  detfeed val takes val= and:
    %(val_options)s

Examples:
  detfeed train model=yolov8n.yaml data=coco8.yaml epochs=3 imgsz=640 color=device
  detfeed train resume model=runs/detect/train/weights/last.pt
  detfeed val model=runs/detect/train/weights/best.pt data=coco8.yaml

Resume: a detfeed run's checkpoints record detfeed's settings; `detfeed train
resume model=.../last.pt` restores them (those given on the command line
win). A checkpoint made without detfeed resumes with detfeed's loader, and the
log says so. (`yolo train resume` on a detfeed checkpoint goes on with
Ultralytics' own loader.)
"""


def loader_options():
    """The Loader keywords detfeed's trainer passes on (those it does not
    set from Ultralytics' arguments), for train; and those of validation."""
    from . import ultralytics as du
    from .loader import Loader
    names = [k for k in inspect.signature(Loader.__init__).parameters
             if k not in ("self", "data", "hyp", "color", "dtype")
             and k not in du._FROM_TRAIN_ARGS]
    return names + ["partner_window"], list(du._VAL_OPTIONS)


def help_text(mode="train"):
    train, val = loader_options()
    return HELP % {"mode": mode, "train_options": _wrap(train, 4),
                   "val_options": _wrap(val, 4)}


def _wrap(names, indent):
    lines, line = [], ""
    for n in names:
        if line and len(line) + len(n) + 2 > 72 - indent:
            lines.append(line + ",")
            line = ""
        line = (line + ", " if line else "") + n
    return ("\n" + " " * indent).join(lines + [line])


def main(argv):
    """Runs `detfeed train|val ARGS` (argv without the program); returns the
    exit status."""
    mode = next((a for a in argv if a in MODES), "train")
    if any(a.lower() in HELP_WORDS for a in argv):
        print(help_text(mode))
        return 0
    try:
        import torch  # noqa: F401
        import ultralytics  # noqa: F401
    except ImportError as e:
        print("detfeed %s: needs PyTorch and Ultralytics (pip install ultralytics): %s"
              % (mode, e), file=sys.stderr)
        return 1
    from . import ultralytics as du
    from ._lib import DetfeedError
    try:
        run(argv)
    except (SyntaxError, UsageError, du.TrainArgumentError, DetfeedError) as e:
        text = str(e.msg if isinstance(e, SyntaxError) and e.msg else e).strip()
        if text.startswith("detfeed: "):
            text = text[len("detfeed: "):]
        print("detfeed %s: %s\n(detfeed %s help: the arguments)" % (mode, text, mode),
              file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C: one line, as a command stops, not a traceback
        print("\ndetfeed %s: interrupted%s" % (mode, "; `detfeed train resume "
              "model=.../weights/last.pt` goes on from the last epoch saved"
              if mode == "train" else ""), file=sys.stderr)
        return 130
    return 0


def split_args(argv):
    """(mode, detfeed's settings {name: value}, the arguments for
    Ultralytics): argv merged as Ultralytics merges it (`k = v`, brackets),
    detfeed's key=value pairs taken out and parsed as Ultralytics parses
    values. Raises UsageError for a second mode or a setting detfeed sets
    itself."""
    from ultralytics import cfg as ucfg
    from ultralytics.utils import DEFAULT_CFG_DICT
    from . import ultralytics as du
    train_options, val_options = loader_options()
    mode, own, rest = None, {}, []
    for a in ucfg.merge_equals_args(list(argv)):
        word = a[2:] if a.startswith("--") else a  # as entrypoint takes them
        word = word[:-1] if word.endswith(",") else word
        if word in ucfg.MODES:
            if mode is None or word == mode:
                mode = word
                continue
            raise UsageError("'%s' is a mode of its own: detfeed runs train and val (`yolo %s` "
                             "runs the others)" % (word, word))
        key, eq, value = word.partition("=")
        key = key.strip()
        if not eq or not _is_detfeed_key(key, value.strip(), DEFAULT_CFG_DICT, train_options):
            rest.append(a)
            continue
        try:
            key, own[key] = ucfg.parse_key_value_pair(word)
        except AssertionError as e:
            raise UsageError(str(e)) from None
    mode = mode or "train"
    rest = _cfg_settings(rest, own, DEFAULT_CFG_DICT, train_options)
    for key in own:
        if key in du._FROM_TRAIN_ARGS:
            raise UsageError("%s= is set by detfeed's trainer (from Ultralytics' arguments and "
                             "the device), not on the command line" % key)
        if mode == "val" and key != "val" and key not in val_options:
            raise UsageError("%s= concerns training batches: detfeed val takes val= and %s"
                             % (key, ", ".join(val_options)))
    if "val" in own and own["val"] not in VAL_LOADERS:
        raise UsageError("val must be detfeed or ultralytics (or Ultralytics' True/False), "
                         "not %r" % (own["val"],))
    return mode, own, rest


def _cfg_settings(rest, own, ultralytics_args, train_options):
    """detfeed's settings in a cfg=custom.yaml of the arguments, added to
    own (those of the command line win); the arguments with that cfg= in
    place of a copy of the file without them (removed at exit), so that
    Ultralytics reads the rest of it as it reads a cfg file."""
    from ultralytics import cfg as ucfg
    from ultralytics.utils import YAML, checks
    out = []
    for a in rest:
        word = a[2:] if a.startswith("--") else a
        key, eq, value = word.partition("=")
        if key.strip() != "cfg" or not eq or ucfg.smart_value(value.strip()) is None:
            out.append(a)
            continue
        path = checks.check_yaml(value.strip())
        items = YAML.load(path)
        taken = {k: v for k, v in items.items()
                 if _is_detfeed_key(k, str(v), ultralytics_args, train_options)}
        if taken:
            for k, v in taken.items():
                own.setdefault(k, v)
            a = "cfg=" + _without(items, taken, path)
        out.append(a)
    return out


def _without(items, taken, path):
    """A copy of the cfg file `path` (its items) without the keys of taken."""
    import atexit
    import os
    import tempfile
    from ultralytics.utils import YAML
    fd, copy = tempfile.mkstemp(prefix="detfeed-cfg-", suffix=".yaml")
    os.close(fd)
    atexit.register(lambda: os.path.exists(copy) and os.unlink(copy))
    YAML.save(copy, {k: v for k, v in items.items() if k not in taken},
              header="# %s without detfeed's settings (%s)\n" % (path, ", ".join(sorted(taken))))
    return copy


def _is_detfeed_key(key, value, ultralytics_args, train_options):
    if key == "val":
        return value.strip("'\"").lower() in VAL_LOADERS
    if key in ("color", "dtype") or key in train_options:
        return True
    if key in ultralytics_args:
        return False
    from ._lib import lib
    import ctypes
    return lib.detfeed_loader_param_parse(key.encode(), ctypes.byref(ctypes.c_int())) == 0


def run(argv):
    """Parses argv (split_args) and runs Ultralytics' entrypoint on the rest,
    its model's train() given detfeed's trainer (val(): its validator)."""
    mode, own, rest = split_args(argv)
    if "val" in own:
        own["val"] = own["val"].lower()
    from ultralytics import cfg as ucfg
    from ultralytics.engine.model import Model
    from . import ultralytics as du
    if mode == "train":
        color, dtype = own.pop("color", "worker"), own.pop("dtype", "float32")
        val = own.pop("val", "detfeed")
        given = set(own) | {k for k, v, d in (("color", color, "worker"),
                                             ("dtype", dtype, "float32"), ("val", val, "detfeed"))
                            if v != d}
        if color not in ("worker", "device", "recipe"):
            raise UsageError("color must be worker, device or recipe, not %r" % (color,))
        if str(dtype) not in ("float32", "uint8"):
            raise UsageError("dtype must be float32 or uint8 (the model receives float32 as "
                             "Ultralytics gives it), not %r" % (dtype,))
        cls = du._trainer({"loader": dict(own, color=color, dtype=dtype), "val": val,
                           "given": given})
    else:
        cls = du.validator(**own)
    real = getattr(Model, mode)

    # (Ultralytics calls these with its model= among the keywords.)
    def train(self, trainer=None, **kwargs):
        _check_model(self, mode)
        return real(self, trainer=trainer or cls, **kwargs)

    def val(self, validator=None, **kwargs):
        _check_model(self, mode)
        return real(self, validator=validator or cls, **kwargs)

    argv_before, quiet = ucfg.ARGV, _NoYoloHelp(ucfg.CLI_HELP_MSG)
    ucfg.ARGV = ["detfeed", mode] + rest
    setattr(Model, mode, train if mode == "train" else val)
    logging.getLogger("ultralytics").addFilter(quiet)
    try:
        ucfg.entrypoint()
    finally:
        logging.getLogger("ultralytics").removeFilter(quiet)
        setattr(Model, mode, real)
        ucfg.ARGV = argv_before


def _check_model(model, mode):
    """Refuses a model detfeed's trainer does not make (RT-DETR, SAM,
    YOLO-World, YOLOE; tasks other than detect, segment and pose)."""
    from ultralytics import YOLO
    from ._lib import TASKS
    if type(model) is not YOLO:
        raise UsageError("%s is a %s model: detfeed %ss YOLO models (yolo %s runs it with "
                         "Ultralytics' loader)" % (model.overrides.get("model", "the model"),
                                                   type(model).__name__, mode, mode))
    if model.task not in TASKS:
        raise UsageError("task=%s is not supported: detfeed %ss %s (yolo %s runs it with "
                         "Ultralytics' loader)" % (model.task, mode, ", ".join(TASKS), mode))


class _NoYoloHelp(logging.Filter):
    """Leaves out Ultralytics' `yolo` usage text, which its entrypoint logs
    before refusing an argument (detfeed prints its own pointer)."""

    def __init__(self, text):
        super().__init__()
        self.text = text

    def filter(self, record):
        return record.getMessage() != self.text
