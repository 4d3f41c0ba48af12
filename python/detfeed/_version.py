"""The package's version: libdetfeed's (CMakeLists.txt's project VERSION),
which the library it loads must report (checked when it is loaded)."""
__version__ = "0.1.0"
