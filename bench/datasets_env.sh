# Sourced by the bench scripts with DATA (a folder of the shared datasets:
# coco8, coco128, ...): where YOLO_CONFIG_DIR is not set, a temporary
# Ultralytics config whose settings.json names a datasets_dir of links to
# DATA's folders, so that their YAMLs (Ultralytics' own: `path: coco128`,
# `path: ../datasets/coco8-seg`) resolve there, as check_det_dataset and
# detfeed resolve them, whatever the host's settings say.
#
#   . bench/datasets_env.sh DATA
if [ -z "${YOLO_CONFIG_DIR:-}" ]; then
  _cfg=$(mktemp -d "${TMPDIR:-/tmp}/detfeed-bench-config-XXXXXX")
  mkdir -p "$_cfg/Ultralytics" "$_cfg/datasets"
  for _d in "$1"/*/; do
    _d=${_d%/}
    ln -s "$(cd "$_d" && pwd)" "$_cfg/datasets/$(basename "$_d")"
  done
  python3 -c 'import json, sys; json.dump({"datasets_dir": sys.argv[2]}, open(sys.argv[1], "w"))' \
    "$_cfg/Ultralytics/settings.json" "$_cfg/datasets"
  export YOLO_CONFIG_DIR=$_cfg
fi
