#!/usr/bin/env bash
# The source folders are layers (docs/architecture.md, "Layers"): a folder includes only
# headers of the folders below it in this list, so that, e.g., gravity/ never reaches back
# into the hydro driver (evolve/), and kernels/ stay free of the host code.
# Usage: layers_test.sh SOURCE_DIR. Exit 1 with every offending include listed.
set -euo pipefail
cd "$1"
layers=(core kernels mesh parallel physics problem io exec gravity evolve app problems)

rank() {
  local i
  for i in "${!layers[@]}"; do
    [ "${layers[$i]}" = "$1" ] && { echo "$i"; return; }
  done
  echo -1
}

files_of() {
  case "$1" in
    kernels) echo kernels ;;
    problems) echo problems ;;
    *) for d in "include/tessera/$1" "src/$1"; do [ -d "$d" ] && echo "$d"; done ;;
  esac
}

bad=0
checked=0
for layer in "${layers[@]}"; do
  mine=$(rank "$layer")
  for dir in $(files_of "$layer"); do
    while IFS= read -r hit; do
      file=${hit%%:*}
      rest=${hit#*:}
      line=${rest%%:*}
      target=$(sed -E 's/.*#include "(tessera\/|src\/)?([a-z_]+)\/.*/\2/' <<<"$rest")
      [ "$target" = "$layer" ] && continue
      # kernels/ may include core's Real (the only host header the device code sees).
      if [ "$layer" = kernels ]; then
        grep -q '"tessera/core/real.hpp"' <<<"$rest" && continue
      fi
      theirs=$(rank "$target")
      checked=$((checked + 1))
      if [ "$theirs" -lt 0 ] || [ "$theirs" -ge "$mine" ]; then
        echo "$file:$line: $layer/ includes $target/ (${rest#*:})" >&2
        bad=1
      fi
    done < <(grep -rnE '^#include "(tessera/|src/|kernels/)' "$dir" || true)
  done
done
if [ "$checked" -lt 100 ]; then
  echo "only $checked includes across folders were found: is $1 the source tree?" >&2
  exit 1
fi
[ "$bad" -eq 0 ] && echo "layers: $checked includes across folders, each to a lower layer"
exit "$bad"
