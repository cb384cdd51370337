#!/usr/bin/env bash
# The analysis scripts run on small outputs and write their PNGs; the profile comparison
# with the analytic solution must agree with what the regression tests measure. Each
# script's errors (missing, unsuitable, truncated or damaged files, bad options, outputs
# that cannot be written) exit with tessera's codes, 2 or 3, with a message and no traceback.
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
  output.dir="$work/blob" output.checkpoint_interval=2 >/dev/null 2>&1 || fail "blob run exited $?"
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
# --help prints the usage and runs nothing.
"$src/scripts/bench" --help | grep -q -- "--ranks" || fail "scripts/bench --help: no usage"
"$src/scripts/validation" --help | grep -q "TESSERA_VALIDATION_DIR" ||
  fail "scripts/validation --help: no usage"
# The same from the run's history file (output.history), whose rows begin at step 0.
out=$($py "$src/scripts/plot_totals.py" "$work/sedov/sedov.hst" --out "$work/totals_hst.png") ||
  fail "plot_totals.py (history file) exited $?"
png_ok "$work/totals_hst.png" || fail "plot_totals.py (history file) wrote no PNG"
echo "$out" | grep -q "largest relative change: mass [0-9.]*e-1[0-9]" ||
  fail "plot_totals.py (history file): unexpected summary '$out'"

# MHD turbulence energies from the plot files of a small run: the first row has the
# initial rms Mach number problem.mach = 10 and no field fluctuations, and the kinetic
# energy decays.
"$tessera" run "$src/problems/mhd_turbulence/mhd_turbulence.toml" mesh.nx=[16,16,16] \
  run.t_end=0.02 output.dt=0.01 output.dir="$work/turbulence" >/dev/null 2>&1 ||
  fail "mhd_turbulence run exited $?"
out=$($py "$src/scripts/plot_turbulence.py" "$work/turbulence" --out "$work/turbulence.png") ||
  fail "plot_turbulence.py exited $?"
png_ok "$work/turbulence.png" || fail "plot_turbulence.py wrote no PNG"
echo "$out" | awk 'NR == 2 && $1 == 0 && $4 < 1e-20 && $5 == "10.0000" { first = $2 }
  NR > 2 && $1 ~ /^[0-9]/ { last = $2; rows = NR - 1 }
  END { exit !(first > 0 && rows == 3 && last < first) }' ||
  fail "plot_turbulence.py: unexpected table '$out'"

# Self-gravity: the uniform sphere's potential against its analytic profile, and the
# energy curves of a short collapse.
"$tessera" run "$src/problems/uniform_sphere/uniform_sphere.toml" mesh.nx=[32,32,32] \
  run.max_steps=1 output.dir="$work/sphere" >/dev/null 2>&1 || fail "uniform_sphere run exited $?"
"$tessera" run "$src/problems/evrard_collapse/evrard_collapse.toml" mesh.nx=[16,16,16] \
  run.t_end=0.3 output.enabled=false output.dir="$work/evrard" run.log_interval=1 \
  >"$work/evrard.log" 2>&1 || fail "evrard_collapse run exited $?"
sphere=$(ls "$work"/sphere/uniform_sphere.00000.athdf)
$py "$src/scripts/plot_gravity.py" sphere "$sphere" --out "$work/sphere.png" >/dev/null ||
  fail "plot_gravity.py sphere exited $?"
png_ok "$work/sphere.png" || fail "plot_gravity.py sphere wrote no PNG"
# Without --out: beside the plot file, its path printed.
out=$($py "$src/scripts/plot_gravity.py" sphere "$sphere") || fail "plot_gravity.py sphere (no --out) exited $?"
[ "$out" = "${sphere%.athdf}.gravity_sphere.png" ] || fail "plot_gravity.py sphere (no --out) printed '$out'"
png_ok "$out" || fail "plot_gravity.py sphere (no --out) wrote no PNG"
$py "$src/scripts/plot_gravity.py" energy "$work/evrard.log" --e0 -0.6166666666666667 \
  --w0 -0.6666666666666666 --out "$work/energy.png" >/dev/null || fail "plot_gravity.py energy exited $?"
png_ok "$work/energy.png" || fail "plot_gravity.py energy wrote no PNG"
"$tessera" run "$src/problems/point_masses/point_masses.toml" amr.max_level=1 \
  output.dir="$work/masses" >/dev/null 2>&1 || fail "point_masses run exited $?"
$py "$src/scripts/plot_gravity.py" point-masses "$work"/masses/point_masses.00000.athdf \
  --out "$work/masses.png" >/dev/null || fail "plot_gravity.py point-masses exited $?"
png_ok "$work/masses.png" || fail "plot_gravity.py point-masses wrote no PNG"

# --- Errors. expect CODE NAME PHRASE... -- COMMAND...: COMMAND exits CODE, its stderr has a
# line starting "<script>: error: " and every PHRASE, and no Python traceback.
expect() {
  local code=$1 name=$2 phrases=() rc msg script
  shift 2
  while [ "$1" != "--" ]; do
    phrases+=("$1")
    shift
  done
  shift
  script=$(basename "$2")
  "$@" >"$work/err/stdout" 2>"$work/err/stderr"
  rc=$?
  msg=$(tr '\n' ' ' <"$work/err/stderr" | cut -c 1-400)
  [ $rc -eq "$code" ] || fail "$name: exit code $rc, expected $code: $msg"
  grep -q "^$script: error: " "$work/err/stderr" || fail "$name: no '$script: error:' line: $msg"
  ! grep -q "Traceback" "$work/err/stderr" || fail "$name: a Python traceback: $msg"
  for phrase in "${phrases[@]}"; do
    grep -qF -- "$phrase" "$work/err/stderr" || fail "$name: no '$phrase' in the message: $msg"
  done
}
err=$work/err
mkdir -p "$err/empty_dir"
printf 'not an HDF5 file\n' >"$err/text.athdf"
: >"$err/empty.athdf"
cp "$sod" "$err/truncated.athdf"
truncate -s $(($(stat -c %s "$sod") / 2)) "$err/truncated.athdf"
checkpoint=$(ls "$work"/blob/blob.chk.*.h5 | tail -n 1)
$py - "$sod" "$err" <<'PY' || fail "could not write the HDF5 test files"
import sys, h5py
plot, err = sys.argv[1], sys.argv[2]
with h5py.File(f"{err}/other.h5", "w") as f:  # HDF5, but no plot file
    f.attrs["Format"] = "something else"
    f["data"] = [1.0, 2.0]
with h5py.File(plot, "r") as src, h5py.File(f"{err}/damaged.athdf", "w") as dst:
    for key, value in src.attrs.items():  # a plot file's attributes, a dataset missing
        dst.attrs[key] = value
    for name in src:
        if name != "x1f":
            src.copy(name, dst)
PY
# A file whose read fails with an I/O error, where the system has one (/proc/self/mem: EIO).
io_error=""
$py -c 'open("/proc/self/mem", "rb").read(1)' 2>/dev/null || io_error=/proc/self/mem

expect 2 "plot_gravity.py: log without gravity" "fewer than two 'gravity:' lines" -- \
  "$py" "$src/scripts/plot_gravity.py" energy "$work/sedov.log" --out "$err/out.png"
expect 2 "plot_gravity.py: missing log" "expected the log of a run" -- \
  "$py" "$src/scripts/plot_gravity.py" energy "$err/none.log" --out "$err/out.png"
expect 2 "plot_gravity.py: not a point_masses file" "not a point_masses run" -- \
  "$py" "$src/scripts/plot_gravity.py" point-masses "$sphere" --out "$err/out.png"
expect 2 "plot_gravity.py: plot file without phi" "no potential (phi)" -- \
  "$py" "$src/scripts/plot_gravity.py" sphere "$sod" --out "$err/out.png"
expect 2 "plot_gravity.py: not HDF5" "expected a plot file" -- \
  "$py" "$src/scripts/plot_gravity.py" sphere "$err/text.athdf" --out "$err/out.png"

for script in plot_slice plot_profile; do
  run=("$py" "$src/scripts/$script.py")
  mode=()
  [ $script = plot_profile ] && mode=(--line x)
  out=(--out "$err/out.png")
  expect 2 "$script.py: missing file" "$err/none.athdf" "no such file" "expected a plot file" -- \
    "${run[@]}" "$err/none.athdf" "${mode[@]}" "${out[@]}"
  expect 2 "$script.py: output directory" "$work/sod" "is a directory" "$sod" -- \
    "${run[@]}" "$work/sod" "${mode[@]}" "${out[@]}"
  expect 2 "$script.py: empty directory" "$err/empty_dir" "is a directory with no *.athdf files" -- \
    "${run[@]}" "$err/empty_dir" "${mode[@]}" "${out[@]}"
  expect 2 "$script.py: not HDF5" "$err/text.athdf" "not an HDF5 file" "expected a plot file" -- \
    "${run[@]}" "$err/text.athdf" "${mode[@]}" "${out[@]}"
  expect 2 "$script.py: a log" "$work/sod.log" "not an HDF5 file" -- \
    "${run[@]}" "$work/sod.log" "${mode[@]}" "${out[@]}"
  expect 2 "$script.py: checkpoint" "$checkpoint" "checkpoint" "not a plot file" \
    "plot files are <problem>.NNNNN.athdf" "$work/blob/blob.0000" -- \
    "${run[@]}" "$checkpoint" "${mode[@]}" "${out[@]}"
  expect 2 "$script.py: other HDF5 file" "$err/other.h5" "without the attributes of a plot file" -- \
    "${run[@]}" "$err/other.h5" "${mode[@]}" "${out[@]}"
  expect 2 "$script.py: missing variable" "$sod" "no variable 'temp'" "rho, press, vel1" -- \
    "${run[@]}" "$sod" "${mode[@]}" --field temp "${out[@]}"
  expect 2 "$script.py: unknown option" "unrecognized arguments: --bogus" -- \
    "${run[@]}" "$sod" "${mode[@]}" --bogus
  expect 2 "$script.py: image format" "$err/out.xyz" "not supported" -- \
    "${run[@]}" "$sod" "${mode[@]}" --out "$err/out.xyz"
  expect 3 "$script.py: empty file" "$err/empty.athdf" "empty" -- \
    "${run[@]}" "$err/empty.athdf" "${mode[@]}" "${out[@]}"
  expect 3 "$script.py: truncated file" "$err/truncated.athdf" "truncated" -- \
    "${run[@]}" "$err/truncated.athdf" "${mode[@]}" "${out[@]}"
  expect 3 "$script.py: damaged plot file" "$err/damaged.athdf" "damaged plot file" "'x1f'" -- \
    "${run[@]}" "$err/damaged.athdf" "${mode[@]}" "${out[@]}"
  [ -z "$io_error" ] || expect 3 "$script.py: I/O error" "$io_error" "cannot be read" -- \
    "${run[@]}" "$io_error" "${mode[@]}" "${out[@]}"
  expect 3 "$script.py: unwritable output" "$err/no_dir/out.png" "cannot write" -- \
    "${run[@]}" "$sod" "${mode[@]}" --out "$err/no_dir/out.png"
done
slice=("$py" "$src/scripts/plot_slice.py")
expect 2 "plot_slice.py: --at outside" "$sod" "--at 5" "outside the domain" "[0, 0.125]" -- \
  "${slice[@]}" "$sod" --at 5 --out "$err/out.png"
expect 2 "plot_slice.py: --log without positive values" "$sod" "no positive values" -- \
  "${slice[@]}" "$sod" --field vel2 --log --out "$err/out.png"
# argparse's own usage errors exit 2 too.
expect 2 "plot_slice.py: bad --axis" "invalid choice: 'w'" -- "${slice[@]}" "$sod" --axis w
profile=("$py" "$src/scripts/plot_profile.py")
expect 2 "plot_profile.py: --through outside" "$sod" "misses the domain" -- \
  "${profile[@]}" "$sod" --line x --through 5 5 5 --out "$err/out.png"
expect 2 "plot_profile.py: no tessera program" "$err/no_tessera" "needs the tessera program" -- \
  "${profile[@]}" "$sod" --line x --compare --tessera "$err/no_tessera" --out "$err/out.png"
expect 2 "plot_profile.py: no mode" "one of the arguments --line --radial is required" -- \
  "${profile[@]}" "$sod"

totals=("$py" "$src/scripts/plot_totals.py")
out=(--out "$err/out.png")
expect 2 "plot_totals.py: missing log" "$err/none.log" "no such file" "expected a log" -- \
  "${totals[@]}" "$err/none.log" "${out[@]}"
expect 2 "plot_totals.py: directory" "$err/empty_dir" "is a directory" "expected a log" -- \
  "${totals[@]}" "$err/empty_dir" "${out[@]}"
expect 2 "plot_totals.py: plot file" "$sod" "a plot file, not a log" -- \
  "${totals[@]}" "$work/sedov.log" "$sod" "${out[@]}"
expect 2 "plot_totals.py: checkpoint" "$checkpoint" "a Tessera checkpoint, not a log" -- \
  "${totals[@]}" "$checkpoint" "${out[@]}"
expect 2 "plot_totals.py: no totals" "$err/text.athdf" "0 'totals:' lines" "at least two" -- \
  "${totals[@]}" "$err/text.athdf" "${out[@]}"
expect 2 "plot_totals.py: unknown option" "unrecognized arguments: --bogus" -- \
  "${totals[@]}" "$work/sedov.log" --bogus
[ -z "$io_error" ] || expect 3 "plot_totals.py: I/O error" "$io_error" "cannot be read" -- \
  "${totals[@]}" "$io_error" "${out[@]}"
expect 3 "plot_totals.py: unwritable output" "$err/no_dir/out.png" "cannot write" -- \
  "${totals[@]}" "$work/sedov.log" --out "$err/no_dir/out.png"
# A log cut off in the middle of its last line (a killed job): that line is skipped.
{ cat "$work/sedov.log"; grep totals "$work/sedov.log" | tail -n 1 | sed 's/energy \(....\).*/energy \1e/'; } >"$err/cut.log"
$py "$src/scripts/plot_totals.py" "$err/cut.log" --out "$err/cut.png" >/dev/null 2>"$err/cut.err" ||
  fail "plot_totals.py: a log cut off mid-line: exit code $?, expected 0"
grep -q "malformed 'totals:' line skipped" "$err/cut.err" ||
  fail "plot_totals.py: a log cut off mid-line: no warning"

turbulence=("$py" "$src/scripts/plot_turbulence.py")
expect 2 "plot_turbulence.py: missing file" "$err/none.athdf" "no such file" -- \
  "${turbulence[@]}" "$err/none.athdf" "${out[@]}"
expect 2 "plot_turbulence.py: empty directory" "$err/empty_dir" "no *.athdf files" -- \
  "${turbulence[@]}" "$err/empty_dir" "${out[@]}"
expect 2 "plot_turbulence.py: hydrodynamics" "$sod" "no magnetic field" "mhd.enabled = true" -- \
  "${turbulence[@]}" "$sod" "${out[@]}"
expect 2 "plot_turbulence.py: checkpoint" "$checkpoint" "not a plot file" -- \
  "${turbulence[@]}" "$checkpoint" "${out[@]}"
expect 3 "plot_turbulence.py: truncated file" "$err/truncated.athdf" "truncated" -- \
  "${turbulence[@]}" "$err/truncated.athdf" "${out[@]}"
expect 3 "plot_turbulence.py: unwritable output" "$err/no_dir/out.png" "cannot write" -- \
  "${turbulence[@]}" "$work/turbulence" --out "$err/no_dir/out.png"

# Validation figures from the regression tests' CSV profiles.
csv=$err/csv
mkdir -p "$csv" "$err/csv_sod" "$err/csv_bad" "$err/csv_cut"
profile_csv() {  # profile_csv FILE HEADER N: N rows of a step profile
  awk -v h="$2" -v n="$3" 'BEGIN { print h; for (i = 0; i < n; i++) { x = (i + 0.5) / n;
    r = x < 0.5 ? 1 : 0.125; print x "," r "," (h ~ /level/ ? (x > 0.4 && x < 0.6 ? 2 : 0) : r) } }' >"$1"
}
for n in 128 256; do profile_csv "$csv/sod_${n}_x.csv" x,rho,rho_exact $n; done
for n in 16 32 48; do profile_csv "$csv/sedov_$n.csv" r,rho,rho_exact $n; done
profile_csv "$csv/sod_amr.csv" x,rho,level 64
# A 16 x 4 raster: a shock along x = 1 + y / 2.
awk 'BEGIN { print "x,y,rho"; for (j = 0; j < 4; j++) for (i = 0; i < 16; i++) {
  x = (i + 0.5) / 4; y = (j + 0.5) / 4; print x "," y "," (x < 1 + y / 2 ? 8 : 1.4) } }' \
  >"$csv/double_mach_32.csv"
cp "$csv"/sod_*_x.csv "$err/csv_sod/"
profile_csv "$err/csv_bad/sod_128_x.csv" x,density,rho_exact 16
{ head -n 5 "$csv/sod_128_x.csv"; printf '0.04296875,1'; } >"$err/csv_cut/sod_128_x.csv"
validation=("$py" "$src/scripts/plot_validation.py")
"${validation[@]}" "$csv" "$err/figures" >/dev/null 2>&1 || fail "plot_validation.py exited $?"
for f in sod sedov sod_amr double_mach; do
  png_ok "$err/figures/$f.png" || fail "plot_validation.py wrote no $f.png"
done
"${validation[@]}" "$err/csv_sod" "$err/figures_sod" >/dev/null 2>"$err/stderr" ||
  fail "plot_validation.py, Sod profiles only: exit code $?, expected 0"
png_ok "$err/figures_sod/sod.png" && [ ! -e "$err/figures_sod/sedov.png" ] &&
  grep -q "sedov.png not drawn" "$err/stderr" ||
  fail "plot_validation.py, Sod profiles only: expected sod.png, no sedov.png and a warning"
expect 2 "plot_validation.py: missing directory" "$err/none" "no such directory" "CSV profiles" -- \
  "${validation[@]}" "$err/none" "$err/figures"
expect 2 "plot_validation.py: a file as CSV_DIR" "$err/text.athdf" "not a directory" -- \
  "${validation[@]}" "$err/text.athdf" "$err/figures"
expect 2 "plot_validation.py: empty directory" "$err/empty_dir" "none of the profiles" -- \
  "${validation[@]}" "$err/empty_dir" "$err/figures_empty"
[ ! -e "$err/figures_empty" ] || fail "plot_validation.py: empty directory: figures written"
expect 2 "plot_validation.py: missing column" "sod_128_x.csv" "no column 'rho'" -- \
  "${validation[@]}" "$err/csv_bad" "$err/figures"
expect 2 "plot_validation.py: one argument" "required: out_dir" -- "${validation[@]}" "$csv"
expect 2 "plot_validation.py: unknown option" "unrecognized arguments: --bogus" -- \
  "${validation[@]}" "$csv" "$err/figures" --bogus
expect 3 "plot_validation.py: truncated profile" "sod_128_x.csv" "truncated" -- \
  "${validation[@]}" "$err/csv_cut" "$err/figures"
expect 3 "plot_validation.py: OUT_DIR cannot be created" "$err/text.athdf/figures" \
  "cannot create" -- "${validation[@]}" "$csv" "$err/text.athdf/figures"

if [ $failures -ne 0 ]; then
  echo "$failures failure(s); outputs in $work"
  exit 1
fi
echo "analysis scripts: all checks passed"
