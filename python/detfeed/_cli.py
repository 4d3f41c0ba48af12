"""The `detfeed` command of an installed package: runs the detfeed tool the
wheel carries (detfeed/_bin/detfeed, built with the package's libdetfeed)
with the command's arguments, in place of this process."""
import os
import sys

_TOOL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_bin", "detfeed")


def main():
    if not os.access(_TOOL, os.X_OK):
        sys.exit("detfeed: the detfeed tool is not in this installation (%s); it is built "
                 "with the package by `pip install ./python`" % _TOOL)
    os.execv(_TOOL, [_TOOL] + sys.argv[1:])


if __name__ == "__main__":
    main()
