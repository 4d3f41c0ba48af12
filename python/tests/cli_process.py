"""The `detfeed` command (detfeed._cli.main, what the console script and
`python -m detfeed` run), or Ultralytics' `yolo` (with `yolo` as the first
argument), in a process of its own for test_train_cli.py:

    python cli_process.py [yolo] ARGS...

DETFEED_TEST_DIE_AFTER_CHECKPOINT=1 ends the process (os._exit(75), as a
kill would) right after the first epoch's checkpoint is written: an
interrupted run to resume. Without polars (Ultralytics' results.csv
reader) the checkpoint's results summary is left empty, as
ultralytics_fits.py does.
"""
import os
import sys

from ultralytics.utils import callbacks

if os.environ.get("DETFEED_TEST_DIE_AFTER_CHECKPOINT"):
    def die(trainer):
        sys.stdout.flush()
        sys.stderr.write("cli_process: killed after the checkpoint of epoch %d\n"
                         % (trainer.epoch + 1))
        sys.stderr.flush()
        os._exit(75)
    callbacks.default_callbacks["on_model_save"].append(die)

try:
    import polars  # noqa: F401
except ImportError:
    import ultralytics.engine.trainer as _trainer_mod
    _trainer_mod.BaseTrainer.read_results_csv = lambda self: {}

if sys.argv[1:2] == ["yolo"]:
    from ultralytics import cfg
    cfg.ARGV = sys.argv[1:]
    cfg.entrypoint()
else:
    from detfeed._cli import main
    main()
