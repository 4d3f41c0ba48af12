"""`detfeed train ...` and `detfeed val ...` with the real Ultralytics
package on the CPU (coco8, imgsz 64): Ultralytics' command line runs
detfeed's trainer and validator, detfeed's own arguments are taken out, an
unknown argument is refused with Ultralytics' message, a detfeed run
killed after its first epoch resumes with detfeed's settings from its
checkpoint, and a plain Ultralytics checkpoint resumes on detfeed's loader
with a line saying so. The commands run in processes of their own
(cli_process.py): Ultralytics reads its settings once at import."""
import os
import re
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.environ.get("DETFEED_TEST_DATA", os.path.join(HERE, "..", "..", "..", "shared", "data"))
pytest.importorskip("torch")
pytest.importorskip("ultralytics")
if not os.path.isdir(os.path.join(DATA, "coco8")):
    pytest.skip("no shared data (coco8)", allow_module_level=True)

TRAIN = ["model=yolov8n.yaml", "epochs=2", "imgsz=64", "batch=4", "device=cpu", "workers=0",
         "plots=False", "exist_ok=True"]
KILLED = 75  # cli_process.py's status after the first epoch's checkpoint


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    """A writable copy of coco8, its YAML (absolute path), and the
    environment of the commands (Ultralytics' settings in the folder)."""
    top = tmp_path_factory.mktemp("cli")
    shutil.copytree(os.path.join(DATA, "coco8"), str(top / "coco8"))
    for root, dirs, files in os.walk(str(top / "coco8")):
        os.chmod(root, 0o755)
        for f in files:
            os.chmod(os.path.join(root, f), 0o644)
    with open(os.path.join(DATA, "coco8", "coco8.yaml")) as f:
        text = "".join("path: %s\n" % (top / "coco8") if line.startswith("path:") else line
                       for line in f)
    (top / "coco8.yaml").write_text(text)
    import detfeed
    env = dict(os.environ, YOLO_CONFIG_DIR=str(top / "config"), YOLO_OFFLINE="1")
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.dirname(os.path.dirname(detfeed.__file__))]
        + [p for p in [env.get("PYTHONPATH")] if p])
    env.pop("DETFEED_TEST_DIE_AFTER_CHECKPOINT", None)
    return {"top": top, "data": "data=%s" % (top / "coco8.yaml"), "env": env,
            "project": "project=%s" % (top / "runs")}


def command(work, *args, die=False, module=False):
    """The `detfeed` command (`python -m detfeed` with module=True, else
    cli_process.py); its CompletedProcess with the output in .out."""
    env = dict(work["env"])
    if die:
        env["DETFEED_TEST_DIE_AFTER_CHECKPOINT"] = "1"
    head = ["-m", "detfeed"] if module else [os.path.join(HERE, "cli_process.py")]
    run = subprocess.run([sys.executable] + head + list(args), env=env, cwd=str(work["top"]),
                         capture_output=True, text=True, timeout=300)
    run.out = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", run.stdout + run.stderr).replace("\r", "\n")
    return run


def show(run):
    return "status %d:\n%s" % (run.returncode, run.out[-6000:])


def checkpoint(path):
    import torch
    return torch.load(str(path), map_location="cpu", weights_only=False)


@pytest.fixture(scope="module")
def killed(work):
    """detfeed train of 2 epochs, with detfeed's own settings, killed once
    the first epoch's checkpoint is written."""
    run = command(work, "train", work["data"], work["project"], "name=killed", "prefetch=2",
                  "partner_window=8", "val=detfeed", *TRAIN, die=True)
    assert run.returncode == KILLED, show(run)
    weights = work["top"] / "runs" / "killed" / "weights"
    # Its checkpoint as Ultralytics' own trainer writes it, for a resume
    # of a run made without detfeed: no detfeed record, a run folder of its
    # own (taken now: the resume of the run itself finishes the checkpoint).
    import torch
    ckpt = checkpoint(weights / "last.pt")
    del ckpt["detfeed"]
    plain = work["top"] / "runs" / "plain"
    ckpt["train_args"].update(name="plain", save_dir=str(plain))
    (plain / "weights").mkdir(parents=True)
    torch.save(ckpt, str(plain / "weights" / "last.pt"))
    return run, weights


@pytest.fixture(scope="module")
def resumed(work, killed):
    run = command(work, "train", "resume", "model=%s" % (killed[1] / "last.pt"))
    assert run.returncode == 0, show(run)
    return run, killed[1]


def test_train_runs_on_detfeed_batches_with_its_own_arguments(killed):
    run, weights = killed
    assert "train: detfeed " in run.out and "batches in cpu memory" in run.out, show(run)
    assert "val: detfeed " in run.out and "validation batches" in run.out, show(run)
    assert "killed after the checkpoint of epoch 1" in run.out
    ckpt = checkpoint(weights / "last.pt")
    assert ckpt["epoch"] == 0 and ckpt["optimizer"] is not None  # resumable
    import detfeed
    assert ckpt["detfeed"] == {"version": detfeed.__version__, "val": "detfeed",
                               "loader": {"prefetch": 2, "partner_window": 8,
                                          "color": "worker", "dtype": "float32"}}


def test_a_detfeed_checkpoint_loads_as_ultralytics_checkpoints_load(killed):
    # Plain values only: Ultralytics' safe loading (weights_only with its
    # own classes allowed) takes it, so no detfeed class is in it.
    from ultralytics.nn.tasks import torch_safe_load
    ckpt, _ = torch_safe_load(str(killed[1] / "last.pt"), safe_only=True)
    assert ckpt["detfeed"]["loader"]["prefetch"] == 2


def test_resume_continues_with_detfeed_and_its_recorded_settings(resumed):
    run, weights = resumed
    assert "detfeed: resuming %s with the detfeed settings it was trained with" \
        % (weights / "last.pt") in run.out, show(run)
    assert "partner_window=8, prefetch=2, val=detfeed" in run.out
    assert "from epoch 2 to 2 total epochs" in run.out
    assert "train: detfeed " in run.out and "batches in cpu memory" in run.out
    for name in ("last.pt", "best.pt"):  # stripped by Ultralytics, the record kept
        ckpt = checkpoint(weights / name)
        assert ckpt["epoch"] == -1 and ckpt["optimizer"] is None
        assert ckpt["detfeed"]["loader"]["prefetch"] == 2


def test_a_detfeed_checkpoint_predicts_and_validates(work, resumed):
    from ultralytics import YOLO
    weights = resumed[1]
    image = sorted((work["top"] / "coco8" / "images" / "val").iterdir())[0]
    results = YOLO(str(weights / "best.pt")).predict(str(image), imgsz=64, device="cpu",
                                                      verbose=False)
    assert len(results) == 1
    run = command(work, "val", "model=%s" % (weights / "best.pt"), work["data"], "imgsz=64",
                  "batch=4", "device=cpu", "plots=False", work["project"], "name=val",
                  "exist_ok=True", "prefetch=2", module=True)
    assert run.returncode == 0, show(run)
    assert "val: detfeed " in run.out and "validation batches" in run.out, show(run)
    assert "mAP50-95" in run.out and "Speed:" in run.out


def test_resume_of_an_ultralytics_checkpoint_switches_to_detfeed(work, killed):
    last = work["top"] / "runs" / "plain" / "weights" / "last.pt"
    ckpt = checkpoint(last)
    assert ckpt["epoch"] == 0 and ckpt["optimizer"] is not None and "detfeed" not in ckpt
    run = command(work, "train", "resume", "model=%s" % last)
    assert run.returncode == 0, show(run)
    said = [line for line in run.out.splitlines() if "trained without detfeed" in line]
    assert len(said) == 1 and "switches to detfeed's loader" in said[0], show(run)
    assert "from epoch 2 to 2 total epochs" in run.out
    assert "train: detfeed " in run.out and "batches in cpu memory" in run.out
    assert "detfeed" in checkpoint(last)  # the resumed run's checkpoint says so


def test_an_unknown_argument_is_refused_with_ultralytics_message(work, capsys):
    from detfeed.train_cli import main
    assert main(["train", work["data"], "model=yolov8n.yaml", "epochz=1"]) == 2
    err = capsys.readouterr().err
    assert "'epochz' is not a valid YOLO argument" in err and "epochs" in err
    assert "detfeed train help" in err


def test_help_explains_both_sets_of_arguments(capsys):
    from detfeed.train_cli import main
    assert main(["train", "--help"]) == 0
    out = capsys.readouterr().out
    for words in ("color=worker|device|recipe", "dtype=float32|uint8", "val=detfeed|ultralytics",
                  "prefetch", "partner_window", "yolo cfg", "resume"):
        assert words in out, words


def test_detfeed_arguments_are_taken_out_as_ultralytics_parses():
    from detfeed.train_cli import UsageError, split_args
    mode, own, rest = split_args(["detect", "train", "data=x.yaml", "color", "=", "device",
                                  "--prefetch=3", "val=False", "val=ultralytics", "resume"])
    assert mode == "train" and rest == ["detect", "data=x.yaml", "val=False", "resume"]
    assert own == {"color": "device", "prefetch": 3, "val": "ultralytics"}
    for argv, words in ((["train", "predict"], "mode of its own"),
                        (["train", "value_scale=quotient"], "set by detfeed's trainer"),
                        (["val", "color=device"], "concerns training batches"),
                        (["train", "prefetch="], "missing 'prefetch' value")):
        with pytest.raises(UsageError, match=words):
            split_args(argv)


def test_detfeed_settings_of_a_cfg_file_are_taken_out(tmp_path):
    from detfeed.train_cli import split_args
    from ultralytics.utils import YAML
    cfg = tmp_path / "custom.yaml"
    cfg.write_text("epochs: 3\ncolor: device\nprefetch: 5\nval: false\n")
    mode, own, rest = split_args(["train", "cfg=%s" % cfg, "prefetch=7"])
    assert own == {"color": "device", "prefetch": 7}  # the command line wins
    assert len(rest) == 1 and rest[0].startswith("cfg=")
    assert YAML.load(rest[0][4:]) == {"epochs": 3, "val": False}


def test_ctrl_c_ends_with_one_line_and_status_130(monkeypatch, capsys):
    """Ctrl-C during `detfeed train` (KeyboardInterrupt out of Ultralytics'
    run) ends with one line saying how to resume, status 130, no traceback."""
    from detfeed import train_cli

    def interrupted(argv):
        raise KeyboardInterrupt
    monkeypatch.setattr(train_cli, "run", interrupted)
    assert train_cli.main(["train", "model=yolov8n.yaml"]) == 130
    err = capsys.readouterr().err
    assert "detfeed train: interrupted; `detfeed train resume" in err and "Traceback" not in err
