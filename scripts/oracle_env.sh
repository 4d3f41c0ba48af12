#!/usr/bin/env bash
# The Python oracles, installed where missing (idempotent, quick when done):
#   build-py/venv            Debian's python3 with its system packages
#                            (python3-opencv 4.6, NumPy), plus PyTorch,
#                            torchvision and the real `ultralytics` package
#                            from PyPI (ULTRALYTICS_VERSION, default
#                            8.4.190) with its other dependencies except
#                            opencv-python, so that cv2 stays Debian's 4.6;
#   build-py/numpy/2.4.6     NumPy 2 (NUMPY2_VERSION), the same way;
#   build-py/cv/VERSION      opencv-python-headless VERSION from PyPI, for
#                            each of OPENCV_WHEELS (default 4.12.0.88 5.0.0.93
#                            5.1.0.95), installed into its own folder:
#                            PYTHONPATH=build-py/cv/VERSION puts it in front
#                            of Debian's cv2 for one run;
#   build-py/heif            Pillow, pi-heif and pillow-heif (HEIF_STACK),
#                            for tests/oracle/test_heif_oracle.py.
# Prints nothing when everything is there already.
set -euo pipefail
cd "$(dirname "$0")/.."
ul=${ULTRALYTICS_VERSION:-8.4.190}
wheels=${OPENCV_WHEELS:-4.12.0.88 5.0.0.93 5.1.0.95}
py=build-py/venv
[ -x "$py/bin/python" ] || /usr/bin/python3 -m venv --system-site-packages "$py"
if ! "$py/bin/python" -c 'import torch, torchvision' 2>/dev/null; then
  echo "installing torch, torchvision into $py"
  "$py/bin/pip" install -q torch torchvision
fi
have=$("$py/bin/python" -c 'import importlib.metadata as m; print(m.version("ultralytics"))' 2>/dev/null || true)
if [ "$have" != "$ul" ]; then
  echo "installing ultralytics==$ul (without opencv-python) into $py"
  "$py/bin/pip" install -q --no-deps "ultralytics==$ul"
fi
# Debian's cv2 4.6 is built against NumPy 1.x: keep NumPy below 2 in the
# venv (the 5.x wheels and PyTorch work with it too).
deps='import numpy, cv2, ultralytics, matplotlib, PIL, yaml, requests, psutil, polars, thop'
if ! "$py/bin/python" -c "$deps; assert numpy.__version__ < '2'" 2>/dev/null; then
  echo "installing the dependencies of ultralytics (NumPy < 2) into $py"
  "$py/bin/pip" install -q "numpy<2" matplotlib pillow pyyaml requests psutil polars \
    "ultralytics-thop>=2.2.3"
fi
# NumPy 2 (what pip installs beside ultralytics today) for the runs with the
# 5.x wheels, in front of the venv's NumPy 1 through PYTHONPATH.
np2=${NUMPY2_VERSION:-2.4.6}
if [ ! -f "build-py/numpy/$np2/.complete" ]; then
  echo "installing numpy==$np2 into build-py/numpy/$np2"
  rm -rf "build-py/numpy/$np2"
  "$py/bin/pip" install -q --no-deps --target "build-py/numpy/$np2" "numpy==$np2"
  touch "build-py/numpy/$np2/.complete"
fi
for v in $wheels; do
  d=build-py/cv/$v
  [ -f "$d/.complete" ] && continue
  echo "installing opencv-python-headless==$v into $d"
  rm -rf "$d"
  "$py/bin/pip" install -q --no-deps --target "$d" "opencv-python-headless==$v"
  touch "$d/.complete"
done
# Pillow and pi-heif (what Ultralytics' imread reads a .avif, .heic or .heif
# with: Pillow 13's wheel decodes AVIF with libavif 1.4.2 and libyuv),
# plus pillow-heif (its encoder, x265, which writes the HEIC test files), for
# tests/oracle/test_avif_oracle.py and test_heif_oracle.py only: in front of the venv's own Pillow
# through PYTHONPATH.
heif=${HEIF_STACK:-pillow==13.0.0 pi-heif==1.4.0 pillow-heif==1.9.0}
d=build-py/heif
if [ "$(cat "$d/.complete" 2>/dev/null)" != "$heif" ]; then
  echo "installing $heif into $d"
  rm -rf "$d"
  # shellcheck disable=SC2086
  "$py/bin/pip" install -q --no-deps --target "$d" $heif
  echo "$heif" > "$d/.complete"
fi
