"""detfeed._lib, the one ctypes module: the ABI check at load, one library
per process, loading nothing at import, its table against the library, and
the recipe struct against the tool's JSON of it."""
import ctypes
import json
import os
import re
import subprocess
import sys

import pytest

import detfeed
from detfeed import _lib
from test_loader import CLI, data

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON = os.path.dirname(HERE)


def test_the_library_of_this_abi_is_accepted():
    path = _lib.library().path
    lib = _lib.open_library(path)
    assert lib.detfeed_abi_version() == _lib.ABI_VERSION
    assert lib.version() == detfeed.__version__


def test_a_library_of_another_abi_is_refused_naming_both_numbers_path_and_version():
    path = _lib.library().path
    with pytest.raises(_lib.LibraryError) as e:
        _lib.open_library(path, abi=_lib.ABI_VERSION + 1)
    text = str(e.value)
    assert isinstance(e.value, ImportError)
    assert "has ABI %d" % _lib.ABI_VERSION in text
    assert "written for ABI %d" % (_lib.ABI_VERSION + 1) in text
    assert path in text and detfeed.__version__ in text


def test_a_library_of_another_version_is_refused_naming_both():
    path = _lib.library().path
    with pytest.raises(_lib.LibraryError) as e:
        _lib.open_library(path, version="9.8.7")
    text = str(e.value)
    assert "is libdetfeed %s" % detfeed.__version__ in text and "detfeed 9.8.7" in text
    assert path in text


def test_the_package_version_is_the_projects_and_the_librarys():
    path = os.path.join(PYTHON, "..", "CMakeLists.txt")
    if not os.path.exists(path):
        pytest.skip("not in the source tree (%s)" % path)
    cmake = open(path).read()
    m = re.search(r"project\(detfeed VERSION (\S+)", cmake)
    assert m and m.group(1) == detfeed.__version__
    assert _lib.library().version() == detfeed.__version__


def test_importing_checks_the_version_of_the_library_the_package_carries():
    """An installed package's _build.py (written by setup.py) names the
    version of the library it carries; another than the package's is refused
    at import, before anything is loaded."""
    p = run("import sys, types\n"
            "m = types.ModuleType('detfeed._build'); m.LIBRARY_VERSION = '0.0.9'\n"
            "sys.modules['detfeed._build'] = m\n"
            "try:\n"
            "    import detfeed\n"
            "except ImportError as e:\n"
            "    print('refused:', e)\n")
    assert p.returncode == 0, p.stderr
    assert "refused: detfeed %s carries libdetfeed 0.0.9" % detfeed.__version__ in p.stdout
    p = run("import sys, types\n"
            "m = types.ModuleType('detfeed._build'); m.LIBRARY_VERSION = %r\n"
            "sys.modules['detfeed._build'] = m\n"
            "import detfeed, detfeed._lib as L\n"
            "assert not L._loaded\n" % detfeed.__version__)
    assert p.returncode == 0, p.stderr


def test_a_library_without_an_abi_number_is_refused():
    with pytest.raises(_lib.LibraryError, match="no detfeed_abi_version"):
        _lib.open_library("libc.so.6")


def test_a_second_library_is_refused():
    loaded = _lib.library()
    assert _lib.load(loaded.path) is loaded  # the same one again: that one
    with pytest.raises(_lib.LibraryError, match="one libdetfeed"):
        _lib.load("libc.so.6")


def test_every_declared_function_is_in_the_library_and_others_are_refused():
    lib = _lib.library()
    for name in _lib._SIGNATURES:
        assert callable(getattr(lib, name)), name
    with pytest.raises(AttributeError, match="not declared"):
        lib.detfeed_version_number  # exported, but Python does not call it


def test_names_go_through_the_parse_functions():
    lib = _lib.library()
    assert lib.dtype_name(lib.dtype("bfloat16")) == "bf16"
    assert lib.dtype_name(lib.dtype("half")) == "f16"
    assert [lib.detfeed_dtype_size(lib.dtype(n)) for n in ("u8", "f32", "f16", "bf16")] == \
        [1, 4, 2, 2]
    with pytest.raises(ValueError):
        lib.dtype("int32")
    cv = lib.cv("5.1", "avx2", 0)
    assert (cv.version, cv.cpu, cv.ipp) == (lib.cv_version("5.1"), lib.cv_cpu("avx2"), 0)
    assert lib.cv_version("5.0") != lib.cv_version("5.1")
    assert lib.loader_param("imgsz") != lib.loader_param("seed")
    with pytest.raises(ValueError):
        lib.loader_param("no_such_setting")


def run(code, **env):
    e = dict(os.environ, PYTHONPATH=PYTHON, **env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=e)


def test_importing_loads_nothing_and_the_first_use_loads_the_library():
    missing = os.path.join(HERE, "no-such-libdetfeed.so")
    p = run("import detfeed, detfeed._lib as L, sys\n"
            "assert not L._loaded and 'numpy' not in sys.modules\n"
            "try:\n"
            "    detfeed.version()\n"
            "except ImportError as e:\n"
            "    print('refused:', e)\n", DETFEED_LIBRARY=missing)
    assert p.returncode == 0, p.stderr
    assert "refused: libdetfeed.so not found (tried %s)" % missing in p.stdout


def test_a_given_library_is_the_one_the_package_uses():
    path = _lib.library().path
    p = run("import detfeed, detfeed._lib as L\n"
            "lib = L.load(%r)\n"
            "assert L.library() is lib and detfeed.__version__ == lib.version()\n"
            "print(detfeed.cuda_device_count() >= 0)\n" % path,
            DETFEED_LIBRARY=os.path.join(HERE, "no-such-libdetfeed.so"))
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "True"


def test_the_recipe_is_what_detfeed_sample_json_prints():
    """Recipe.as_dict (the struct detfeed_loader_recipe fills) against the
    recipe `detfeed sample --json` writes from the same struct."""
    if not os.path.exists(CLI):
        pytest.skip("no detfeed tool at %s" % CLI)
    path = data("pose")
    lib = _lib.library()
    h = ctypes.c_void_p()
    lib.check(lib.detfeed_loader_create(ctypes.byref(h), 0), "create")
    try:
        for name, value in (("seed", 3), ("mixup", 0.5), ("degrees", 10), ("flipud", 0.5)):
            lib.loader_set(h, name, value)
        lib.check(lib.detfeed_loader_open(h, path.encode()), "open")
        for epoch, index in ((0, 0), (0, 3), (1, 2), (95, 1)):
            out = subprocess.run([CLI, "sample", path, "--json", "--seed", "3", "--epoch",
                                  str(epoch), "--index", str(index), "--set",
                                  "mixup=0.5,degrees=10,flipud=0.5"],
                                 capture_output=True, text=True, check=True).stdout
            want = json.loads(out)["recipe"]
            got = lib.recipe(h, epoch, index)
            assert list(got) == list(want) and got == want, (epoch, index)
        with pytest.raises(_lib.DetfeedError):
            lib.recipe(h, 0, 1 << 40)  # past the dataset
    finally:
        lib.detfeed_loader_destroy(h)
