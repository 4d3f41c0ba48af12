"""Builds libdetfeed and the detfeed tool with CMake, in a temporary folder,
and puts both inside the package: detfeed/libdetfeed.so and
detfeed/_bin/detfeed (run by the `detfeed` command, detfeed._cli), with
detfeed/_build.py recording the library's version (checked at import). The wheel
this makes is tagged linux_x86_64 and links the system's libturbojpeg,
libspng and zlib; scripts/wheel.sh repairs it with auditwheel into a
manylinux wheel that carries them. Metadata: pyproject.toml.

Nothing is written into the source tree: the CMake build, setuptools' build
folder and its egg-info go to a temporary folder, removed at exit.

Environment: DETFEED_CMAKE_ARGS adds CMake arguments (e.g. -DDETFEED_CUDA=OFF,
-DCMAKE_CUDA_ARCHITECTURES=...); DETFEED_BUILD_DIR keeps the CMake build in
that folder instead (faster rebuilds); DETFEED_JOBS the build's parallelism.
"""
import atexit
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
TEMP = tempfile.mkdtemp(prefix="detfeed-build-")
atexit.register(shutil.rmtree, TEMP, True)

# What a source build needs: (what, how it is found, the Debian package).
NEEDS = (("cmake", ["cmake", "--version"], "cmake"),
         ("a C compiler", ["cc", "--version"], "gcc"),
         ("make", ["make", "--version"], "make"),
         ("pkg-config", ["pkg-config", "--version"], "pkg-config"),
         ("libspng", ["pkg-config", "--exists", "spng"], "libspng-dev"),
         ("libturbojpeg", ["pkg-config", "--exists", "libturbojpeg"], "libturbojpeg0-dev"),
         ("zlib", ["pkg-config", "--exists", "zlib"], "zlib1g-dev"),
         ("xxhash", ["pkg-config", "--exists", "libxxhash"], "libxxhash-dev"),
         ("libwebp", ["pkg-config", "--exists", "libwebpdemux"], "libwebp-dev"),
         ("libtiff", ["pkg-config", "--exists", "libtiff-4"], "libtiff-dev"),
         ("openjpeg", ["pkg-config", "--exists", "libopenjp2"], "libopenjp2-7-dev"),
         ("libavif", ["pkg-config", "--exists", "libavif"], "libavif-dev"),
         ("libheif", ["pkg-config", "--exists", "libheif"], "libheif-dev"),
         ("libde265", ["pkg-config", "--exists", "libde265"], "libde265-dev"))


def missing_tools():
    """The Debian packages of what NEEDS lists and this machine lacks, with
    their names."""
    missing = []
    for what, probe, package in NEEDS:
        try:
            ok = subprocess.run(probe, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL).returncode == 0
        except OSError:
            ok = False
        if not ok:
            missing.append((what, package))
    return missing


def check_tools():
    """One line naming what is missing and the command that installs it."""
    missing = missing_tools()
    if missing:
        sys.exit("detfeed: building from source needs %s: install with `sudo apt-get install %s` "
                 "(Debian, Ubuntu), or install a detfeed wheel"
                 % (", ".join(w for w, _ in missing), " ".join(p for _, p in missing)))


def build_native():
    """libdetfeed.so and the detfeed tool, built with CMake."""
    build = os.environ.get("DETFEED_BUILD_DIR") or os.path.join(TEMP, "cmake")
    args = ["-DCMAKE_BUILD_TYPE=Release", "-DDETFEED_BUILD_TESTS=OFF"]
    args += shlex.split(os.environ.get("DETFEED_CMAKE_ARGS", ""))
    jobs = os.environ.get("DETFEED_JOBS") or str(os.cpu_count() or 1)
    subprocess.check_call(["cmake", "-S", TOP, "-B", build] + args)
    subprocess.check_call(["cmake", "--build", build, "--target", "detfeed_shared", "detfeed",
                           "-j", jobs])
    return os.path.join(build, "libdetfeed.so"), os.path.join(build, "detfeed")


class BuildWithLibrary(build_py):
    def run(self):
        super().run()
        lib, tool = build_native()
        dest = os.path.join(self.build_lib, "detfeed")
        os.makedirs(os.path.join(dest, "_bin"), exist_ok=True)
        shutil.copyfile(os.path.realpath(lib), os.path.join(dest, "libdetfeed.so"))
        shutil.copyfile(tool, os.path.join(dest, "_bin", "detfeed"))
        os.chmod(os.path.join(dest, "_bin", "detfeed"), 0o755)
        with open(os.path.join(dest, "_build.py"), "w") as f:
            f.write('"""Written by setup.py: the version of the libdetfeed this package '
                    'carries."""\nLIBRARY_VERSION = %r\n' % library_version(lib))


def library_version(lib):
    """detfeed_version_string() of the library just built."""
    import ctypes
    f = ctypes.CDLL(lib).detfeed_version_string
    f.restype = ctypes.c_char_p
    return f().decode()


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


if "sdist" not in sys.argv[1:]:
    check_tools()
setup(cmdclass={"build_py": BuildWithLibrary, "bdist_wheel": PlatformWheel},
      distclass=BinaryDistribution,
      options={"build": {"build_base": os.path.join(TEMP, "build")},
               "egg_info": {"egg_base": TEMP},
               "bdist_wheel": {"bdist_dir": os.path.join(TEMP, "bdist")}})
