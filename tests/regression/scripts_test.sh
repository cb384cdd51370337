#!/usr/bin/env bash
# The analysis scripts run on small outputs and write their PNGs; the profile comparison
# with the analytic solution must agree with what the regression tests measure.
# Usage: scripts_test.sh TESSERA SOURCE_DIR WORK_DIR
set -uo pipefail
tessera=$1
src=$2
work=$3
py=/usr/bin/python3  # Debian's interpreter, with numpy, h5py and matplotlib
rm -rf "$work"
mkdir -p "$work"
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}
png_ok() { [ -s "$1" ] && head -c 8 "$1" | grep -q PNG; }

"$tessera" run "$src/problems/sod/sod.toml" output.dir="$work/sod" run.log_interval=5 \
  >"$work/sod.log" 2>&1 || fail "sod run exited $?"
"$tessera" run "$src/problems/sedov/sedov.toml" mesh.nx=[32,32,32] amr.max_level=1 \
  run.t_end=0.01 output.dir="$work/sedov" run.log_interval=5 >"$work/sedov.log" 2>&1 ||
  fail "sedov run exited $?"
sod=$(ls "$work"/sod/sod.*.athdf | tail -n 1)
sedov=$(ls "$work"/sedov/sedov.*.athdf | tail -n 1)

# Slices and projections, of any field, along any axis.
for args in "--field rho --axis z --log" "--field press --axis x" "--field vel1 --axis y --projection" \
  "--field rho --axis z --projection --log"; do
  out="$work/slice_$(echo $args | tr -d ' -').png"
  $py "$src/scripts/plot_slice.py" "$sedov" $args --out "$out" >/dev/null ||
    fail "plot_slice.py $args exited $?"
  png_ok "$out" || fail "plot_slice.py $args wrote no PNG"
done

# Profiles with the analytic solution: the L1 differences are those of the regression
# tests (Sod 128 cells: 4.1e-3; threshold 5e-3) or of coarse runs, bounded at 1.5x the
# measured value (Sedov 32^3 + 1 level at t = 0.01: 1.04e-2; blob 16^3 after 2 steps:
# 2.09e-2), so that a profile taken from the wrong cells or compared at the wrong time
# fails.
l1=$($py "$src/scripts/plot_profile.py" "$sod" --line x --compare --tessera "$tessera" \
  --out "$work/sod_profile.png" | sed -n 's/^L1 .*: //p')
png_ok "$work/sod_profile.png" || fail "plot_profile.py (sod) wrote no PNG"
awk -v e="${l1:-1}" 'BEGIN { exit !(e < 5e-3) }' || fail "Sod line-out L1 = '$l1', expected < 5e-3"
l1=$($py "$src/scripts/plot_profile.py" "$sedov" --radial --compare --tessera "$tessera" \
  --out "$work/sedov_profile.png" | sed -n 's/^L1 .*: //p')
png_ok "$work/sedov_profile.png" || fail "plot_profile.py (sedov) wrote no PNG"
awk -v e="${l1:-1}" 'BEGIN { exit !(e < 0.016) }' || fail "Sedov radial L1 = '$l1', expected < 0.016"
$py "$src/scripts/plot_profile.py" "$sedov" --line y --field press --out "$work/p.png" >/dev/null ||
  fail "plot_profile.py --line y --field press exited $?"
png_ok "$work/p.png" || fail "plot_profile.py (pressure line-out) wrote no PNG"
# Blob's analytic solution is the advected initial state; --compare is density only.
"$tessera" run "$src/problems/blob/blob.toml" mesh.nx=[16,16,16] run.max_steps=2 \
  output.dir="$work/blob" >/dev/null 2>&1 || fail "blob run exited $?"
blob=$(ls "$work"/blob/blob.*.athdf | tail -n 1)
l1=$($py "$src/scripts/plot_profile.py" "$blob" --line x --compare --tessera "$tessera" \
  --out "$work/blob_profile.png" | sed -n 's/^L1 .*: //p')
awk -v e="${l1:-1}" 'BEGIN { exit !(e < 0.031) }' || fail "blob line-out L1 = '$l1', expected < 0.031"
$py "$src/scripts/plot_profile.py" "$blob" --radial --compare --field press >/dev/null 2>&1
[ $? -eq 2 ] || fail "--compare --field press: expected exit 2"

# Conserved totals from the log: mass and energy change at round-off level.
out=$($py "$src/scripts/plot_totals.py" "$work/sedov.log" --out "$work/totals.png") ||
  fail "plot_totals.py exited $?"
png_ok "$work/totals.png" || fail "plot_totals.py wrote no PNG"
echo "$out" | grep -q "largest relative change: mass [0-9.]*e-1[0-9]" ||
  fail "plot_totals.py: unexpected summary '$out'"

if [ $failures -ne 0 ]; then
  echo "$failures failure(s); outputs in $work"
  exit 1
fi
echo "analysis scripts: all checks passed"
