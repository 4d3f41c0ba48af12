"""Builds libdetfeed with CMake and puts it, with the libturbojpeg and libspng
it was linked against, inside the package (so that a wheel runs where those
are not installed). Metadata: pyproject.toml.

Environment: DETFEED_CMAKE_ARGS adds CMake arguments (e.g. -DDETFEED_CUDA=OFF);
DETFEED_BUILD_DIR is the build folder (default: build-python in the repository).
"""
import os
import re
import shlex
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
BUNDLE = ("libturbojpeg.so.0", "libspng.so.0")


def build_library():
    build = os.environ.get("DETFEED_BUILD_DIR", os.path.join(TOP, "build-python"))
    args = ["-DCMAKE_BUILD_TYPE=Release", "-DDETFEED_BUILD_TESTS=OFF"]
    args += shlex.split(os.environ.get("DETFEED_CMAKE_ARGS", ""))
    subprocess.check_call(["cmake", "-S", TOP, "-B", build] + args)
    subprocess.check_call(["cmake", "--build", build, "--target", "detfeed_shared", "-j",
                           str(os.cpu_count() or 1)])
    return os.path.join(build, "libdetfeed.so")


def linked(lib):
    """The paths of BUNDLE's libraries as the loader resolves them for lib."""
    out = subprocess.run(["ldd", lib], capture_output=True, text=True).stdout
    paths = {}
    for line in out.splitlines():
        m = re.match(r"\s*(\S+) => (\S+)", line)
        if m and m.group(1) in BUNDLE:
            paths[m.group(1)] = m.group(2)
    return paths


class BuildWithLibrary(build_py):
    def run(self):
        super().run()
        lib = build_library()
        dest = os.path.join(self.build_lib, "detfeed")
        os.makedirs(dest, exist_ok=True)
        shutil.copyfile(os.path.realpath(lib), os.path.join(dest, "libdetfeed.so"))
        for name, path in linked(lib).items():
            shutil.copyfile(path, os.path.join(dest, name))


try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # setuptools < 70
    from wheel.bdist_wheel import bdist_wheel


class PlatformWheel(bdist_wheel):
    """py3-none-<platform>: the package uses no Python C API (ctypes only), so
    one wheel serves every Python 3 on the platform."""

    def get_tag(self):
        return ("py3", "none", super().get_tag()[2])


class BinaryDistribution(Distribution):
    def has_ext_modules(self):
        return True  # the wheel carries a native library: tag it for this platform


setup(cmdclass={"build_py": BuildWithLibrary, "bdist_wheel": PlatformWheel},
      distclass=BinaryDistribution)
