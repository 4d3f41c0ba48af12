"""A progress line on stderr while a blocking library call runs (a Loader's
open: indexing, the RAM cache's fill, the decode check), as the detfeed
tool shows it: stage, bar, count, rate and time left, updated ten times a
second once the stage has taken a second; nothing unless stderr is a
terminal."""
import ctypes
import sys
import threading
import time


class Progress:
    """with Progress(read): ... shows read()'s (stage, done, total) while the
    block runs; read returns stage None when nothing is running."""

    def __init__(self, read, enabled=True):
        self._read = read
        try:
            tty = sys.stderr.isatty()
        except (AttributeError, ValueError):  # replaced or closed stderr
            tty = False
        self._on = enabled and tty
        self._stop = threading.Event()
        self._thread = None

    def __enter__(self):
        if self._on:
            self._thread = threading.Thread(target=self._run, name="detfeed-progress",
                                            daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc):
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
        return False

    def _run(self):
        stage, start, shown = None, 0.0, False
        while not self._stop.wait(0.1):
            now_stage, done, total = self._read()
            now = time.monotonic()
            if now_stage != stage:
                stage, start = now_stage, now
                shown = _clear(shown)
            if stage is None or now - start < 1.0:
                continue
            rate = done / (now - start)
            left = "%ds" % ((total - done) / rate) if rate > 0 else "?"
            fill = int(24 * done / total) if total else 0
            sys.stderr.write("\r\x1b[K%s [%s%s] %d/%d, %.1f/s, %s left" % (
                stage, "#" * fill, "." * (24 - fill), done, total, rate, left))
            sys.stderr.flush()
            shown = True
        _clear(shown)


def _clear(shown):
    if shown:
        sys.stderr.write("\r\x1b[K")
        sys.stderr.flush()
    return False


def loader_reader(lib, handle):
    """read() for detfeed_loader_progress of the loader at `handle`."""
    done, total = ctypes.c_uint64(), ctypes.c_uint64()

    def read():
        stage = lib.detfeed_loader_progress(handle, ctypes.byref(done), ctypes.byref(total))
        return (stage.decode() if stage else None), done.value, total.value
    return read
