"""The `detfeed` command of an installed package (also `python -m detfeed`).

`detfeed train ...` and `detfeed val ...` (or a task word first, as `yolo
detect train ...`) are Ultralytics' `yolo train` / `yolo val` with detfeed's
batches, run here in Python (detfeed.train_cli; Ultralytics is imported for
them only). Every other command runs the detfeed tool the wheel carries
(detfeed/_bin/detfeed, built with the package's libdetfeed) with the
command's arguments, in place of this process; its help gets the two
lines of train and val."""
import os
import subprocess
import sys

_TOOL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_bin", "detfeed")

_PYTHON_COMMANDS = """
commands of the Python package (Ultralytics' trainer, `detfeed train help`):
  train      train an Ultralytics YOLO model on detfeed's batches (as `yolo train`)
  val        validate a model on detfeed's validation batches (as `yolo val`)
"""


def main():
    argv = sys.argv[1:]
    from . import train_cli
    if train_cli.is_command(argv):
        sys.exit(train_cli.main(argv))
    tool = os.access(_TOOL, os.X_OK)
    if not argv or argv[0] in ("help", "-h", "--help"):
        code = subprocess.call([_TOOL] + argv) if tool else 0
        try:
            print(_PYTHON_COMMANDS.rstrip() if tool else "usage: detfeed COMMAND [options]\n"
                  + _PYTHON_COMMANDS.rstrip())
            sys.stdout.flush()
        except BrokenPipeError:  # the reader stopped early (`detfeed --help | head`)
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(code)
    if not tool:
        sys.exit("detfeed: the detfeed tool is not in this installation (%s); it is built "
                 "with the package by `pip install ./python`" % _TOOL)
    os.execv(_TOOL, [_TOOL] + argv)


if __name__ == "__main__":
    main()
