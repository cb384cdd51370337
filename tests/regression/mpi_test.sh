#!/usr/bin/env bash
# Runs of several MPI ranks, end to end (`mpirun -np N tessera run ...`):
#   1. Every dataset of every plot file and of the final checkpoint of 2, 3 and 4 ranks
#      equals one rank's byte for byte: uniform Sedov, adaptive runs regridded every root
#      step (families added, removed and moved between ranks) with a passive scalar, with
#      relaxing TVD, GLM-MHD, self-gravity with the potential correction, and the double
#      Mach reflection (problem-defined boundaries).
#   2. A checkpoint of 4 ranks restarts on 2 and on 1 and ends equal to one rank's
#      uninterrupted run.
#   3. Collective output (parallel HDF5): the files verify, and write calls cut into small
#      rounds, or rank 0 gathering (mpi.parallel_io=false), give one rank's files.
#   4. Faults: an unphysical cell stops every rank with exit 4 and one message naming the
#      failing rank, and its diagnostic plot file equals one rank's; a parameter error and
#      a damaged checkpoint give one message and exit 2 and 3; a parameter file that is a
#      named pipe runs on 3 ranks; SIGTERM to mpirun writes a checkpoint and exits 11, as on one rank.
# Usage: mpi_test.sh TESSERA SOURCE_DIR WORK_DIR [MPIRUN]
# Environment: TESSERA_TEST_BACKEND=cuda runs 1 and 2 on the GPU backend (the ranks of a
# host take its GPUs in turn, or share one), with device-resident uniform and adaptive runs
# whose buffer patches go between the GPUs by each route; MPI_TEST_CASES restricts section 1.
set -uo pipefail
tessera=$1
src=$2
work=$3
mpirun=${4:-mpirun}
rm -rf "$work"
mkdir -p "$work"
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}
# Two cores run up to 4 ranks.
on() {
  local n=$1
  shift
  "$mpirun" --oversubscribe -np "$n" "$tessera" "$@"
}
compare() {
  "${PYTHON:-/usr/bin/python3}" "$src/scripts/compare_h5.py" "$1" "$2"
}
# What the comparisons need, asked once before any run (a machine without them would
# otherwise fail every comparison after minutes of runs).
if ! "${PYTHON:-/usr/bin/python3}" -c "import h5py, numpy" 2>/dev/null; then
  echo "FAIL: the comparisons need a Python with h5py and numpy (scripts/compare_h5.py):" \
    "${PYTHON:-/usr/bin/python3} has not; install them or set PYTHON to one that has"
  exit 1
fi
command -v h5diff >/dev/null || { echo "FAIL: h5diff (HDF5's tools) is not on PATH"; exit 1; }
p=$src/problems
blob=(mesh.nx=[32,16,16] mesh.xmax=[1,0.5,0.5] problem.center=[0.3,0.25,0.25]
  problem.velocity=[2,0.5,0] problem.width=0.05 amr.regrid_interval=1)

# --- 1. bitwise equal to one rank -----------------------------------------------------------
# name | parameter file and overrides (each a few seconds on one core)
case_args() {
  case $1 in
    sedov) echo "$p/sedov/sedov.toml mesh.nx=[32,32,32] run.max_steps=10 output.dt=0.002" ;;
    blob_scalar) echo "$p/blob/blob.toml ${blob[*]} amr.max_level=2 hydro.passive_scalars=1 run.max_steps=12 output.dt=0.02" ;;
    blob_rtvd) echo "$p/blob/blob.toml ${blob[*]} amr.max_level=1 hydro.scheme=relaxing_tvd hydro.cfl=0.8 run.max_steps=12 output.dt=0.04" ;;
    mhd_blast) echo "$p/mhd_blast/mhd_blast.toml mesh.nx=[32,32,32] mesh.xmin=[-0.5,-0.5,-0.5] mesh.xmax=[0.5,0.5,0.5] amr.max_level=1 run.max_steps=6 output.dt=0.005 mhd.plot_divb=true" ;;
    gravity) echo "$p/blob/blob.toml mesh.nx=[32,32,32] mesh.xmax=[0.5,0.5,0.5] problem.center=[0.05,0.25,0.25] problem.velocity=[2,0.5,0] problem.width=0.05 amr.regrid_interval=1 amr.max_level=2 gravity.enabled=true run.max_steps=4 output.dt=0.005" ;;
    double_mach) echo "$p/double_mach/double_mach.toml mesh.nx=[64,16,16] mesh.xmax=[4,1,1] amr.max_level=1 amr.regrid_interval=1 run.max_steps=10 output.dt=0.01" ;;
    orszag_tang) echo "$p/orszag_tang/orszag_tang.toml mesh.nx=[64,64,16] mesh.xmax=[1,1,0.25] run.max_steps=10 output.dt=0.01" ;;
    sphere) echo "$p/uniform_sphere/uniform_sphere.toml mesh.nx=[32,32,32] hydro.integrator=vl2 run.max_steps=8 output.dt=0.01" ;;
    sedov_mixed) echo "$p/sedov/sedov.toml mesh.nx=[32,48,32] mesh.xmin=[-0.5,-0.75,-0.5] mesh.xmax=[0.5,0.75,0.5] mesh.bc_xlo=reflecting mesh.bc_xhi=outflow mesh.bc_zlo=outflow mesh.bc_zhi=reflecting hydro.passive_scalars=1 run.max_steps=10 output.dt=0.002" ;;
  esac
}
backend=${TESSERA_TEST_BACKEND:-cpu}
# The GPU backend adds uniform runs whose data stay on the GPUs (device-resident levels,
# their buffer patches exchanged between the GPUs): GLM-MHD, hydro with reflecting,
# outflow and periodic sides and a passive scalar, and self-gravity (the isolated sphere).
default_cases="sedov blob_scalar blob_rtvd mhd_blast gravity double_mach"
[ "$backend" = cuda ] && default_cases="$default_cases orszag_tang sedov_mixed sphere"
for c in ${MPI_TEST_CASES:-$default_cases}; do
  read -r -a args <<<"$(case_args "$c") run.backend=$backend"
  steps=$(printf '%s\n' "${args[@]}" | sed -n 's/^run.max_steps=//p')
  args+=(output.checkpoint_interval="$steps")
  "$tessera" run "${args[@]}" output.dir="$work/$c/1" >"$work/$c.1.log" 2>&1 ||
    { fail "$c: one rank exited $?"; continue; }
  for n in 2 3 4; do
    on "$n" run "${args[@]}" output.dir="$work/$c/$n" >"$work/$c.$n.log" 2>&1
    code=$?
    if [ $code -ne 0 ]; then
      fail "$c: $n ranks exited $code (see $work/$c.$n.log)"
      continue
    fi
    grep -q "^ranks: $n (MPI)" "$work/$c.$n.log" || fail "$c: the log of $n ranks has no rank table"
    if result=$(compare "$work/$c/1" "$work/$c/$n"); then
      echo "$c, $n ranks: $result"
    else
      fail "$c, $n ranks differ from one rank: $result"
    fi
  done
done

# A case of section 1 on 3 ranks with one more setting, against its one-rank run:
# variant CASE NAME KEY=VALUE (the log in $work/CASE.3_NAME.log).
variant() {
  local c=$1 name=$2 setting=$3 steps
  read -r -a args <<<"$(case_args "$c") run.backend=$backend"
  steps=$(printf '%s\n' "${args[@]}" | sed -n 's/^run.max_steps=//p')
  on 3 run "${args[@]}" "$setting" output.checkpoint_interval="$steps" \
    output.dir="$work/$c/3_$name" >"$work/$c.3_$name.log" 2>&1 ||
    { fail "$c: 3 ranks with $setting exited $?"; return; }
  if result=$(compare "$work/$c/1" "$work/$c/3_$name"); then
    echo "$c, 3 ranks, $setting: $result"
  else
    fail "$c, 3 ranks with $setting differ from one rank: $result"
  fi
}
selected() { [ -z "${MPI_TEST_CASES:-}" ] || [[ " $MPI_TEST_CASES " == *" $1 "* ]]; }

# Load balance: the double Mach run's regrids keep the cuts of the ranks (the default
# mpi.imbalance_tolerance) until a level is out of balance, then cut it again and migrate
# families; with tolerance 0 every regrid that leaves a level worse than the best cut does.
if selected double_mach; then
  migrated=$(sed -n 's/.* \([0-9]*\) families changed rank$/\1/p' "$work/double_mach.3.log")
  [ "${migrated:-0}" -gt 0 ] || fail "double_mach, 3 ranks: no family changed rank at a regrid"
  variant double_mach tol0 mpi.imbalance_tolerance=0
fi

# Self-gravity: the root FFT cut into slabs over the ranks (the default: FFTW on the CPU,
# cuFFT on the GPUs) and gathered whole on every rank (mpi.root_fft = "gathered") give one
# rank's bits; on the GPUs the slabs' transposes go GPU to GPU (CUDA IPC) or, with
# mpi.device_exchange = "host", through host memory, with the same bits.
if selected gravity; then
  library=FFTW
  [ "$backend" = cuda ] && library=cuFFT
  grep -q "FFT Poisson solve ($library) .* in z-slabs over 3 ranks" "$work/gravity.3.log" ||
    fail "gravity, 3 ranks: the root FFT was not cut into slabs"
  variant gravity gathered mpi.root_fft=gathered
  grep -q "the whole grid on every rank" "$work/gravity.3_gathered.log" ||
    fail "gravity, 3 ranks, gathered: the log does not say so"
  if [ "$backend" = cuda ]; then
    grep -q "root FFT on the GPUs in z-slabs over 3 ranks: transposes GPU to GPU (CUDA IPC) between 3 rank pairs, through host memory between 0" \
      "$work/gravity.3.log" || fail "gravity, 3 ranks: the GPU slabs' transposes were not GPU to GPU"
    variant gravity host mpi.device_exchange=host
    grep -q "GPU to GPU (CUDA IPC) between 0 rank pairs, through host memory between 3" \
      "$work/gravity.3_host.log" || fail "gravity, 3 ranks, host route: the log does not say so"
    # The resident root's density and potential between the ranks' GPUs, by either route.
    grep -q "root density and potential between the ranks' GPUs: GPU to GPU (CUDA IPC) between 3 rank pairs, through host memory between 0" \
      "$work/gravity.3.log" || fail "gravity, 3 ranks: the root density and potential did not go GPU to GPU"
    grep -q "root density and potential between the ranks' GPUs: GPU to GPU (CUDA IPC) between 0 rank pairs, through host memory between 3" \
      "$work/gravity.3_host.log" || fail "gravity, 3 ranks, host route: the root density and potential's route"
    grep -q "root solves ([0-9]*) on 3 ranks, density and potential GPU to GPU" "$work/gravity.3.log" ||
      fail "gravity, 3 ranks: the summary does not give the root solves on the GPUs"
  fi
fi

# The hydro pass without overlap (everything received before the level's step) gives the
# same bits as with it (the default, section 1).
if selected blob_scalar; then variant blob_scalar no_overlap mpi.overlap_exchange=false; fi

# Device-resident levels on several ranks (GPU backend): the runs of section 1 kept their
# data on the GPUs (all but the double Mach reflection's problem-defined sides, which the
# hosts take part in), adaptive ones too, with their regrids' data on the GPUs (but those
# after an output gathered on rank 0, whose device copies are made again); self-gravity
# kicks on the GPUs, and with refinement solves its refined levels and the potential
# correction there;
# within one host the buffer patches went GPU to GPU (mpi.device_exchange = "auto": peer),
# and through page-locked host memory ("host"), without overlap, and GLM-MHD give one
# rank's bits too.
if [ "$backend" = cuda ]; then
  for c in sedov orszag_tang sedov_mixed blob_scalar blob_rtvd mhd_blast sphere gravity; do
    selected "$c" || continue
    for n in 2 3 4; do
      grep -q "^device-resident on $n ranks: buffer patches go GPU to GPU (CUDA IPC) between [1-9]" \
        "$work/$c.$n.log" || fail "$c, $n ranks: not device-resident with GPU-to-GPU exchange"
      grep -q "device halo [0-9.]* GB sent GPU to GPU" "$work/$c.$n.log" ||
        fail "$c, $n ranks: the summary gives no device halo"
      case $c in blob_scalar | blob_rtvd | gravity)
        grep -Eq "^regrids: [1-9][0-9]* changed the mesh \([1-9][0-9]* with their data made on the GPU\)" \
          "$work/$c.$n.log" || fail "$c, $n ranks: no regrid made its data on the GPUs" ;;
      esac
    done
  done
  if selected sedov_mixed; then
    variant sedov_mixed host mpi.device_exchange=host
    grep -q "through page-locked host memory between [1-9]" "$work/sedov_mixed.3_host.log" ||
      fail "sedov_mixed, 3 ranks, host route: the log does not say so"
    variant sedov_mixed no_overlap mpi.overlap_exchange=false
  fi
  if selected orszag_tang; then variant orszag_tang host mpi.device_exchange=host; fi
  if selected sphere; then
    grep -q "self-gravity's kicks and potential too" "$work/sphere.2.log" ||
      fail "sphere, 2 ranks: the log does not say the kicks run on the GPUs"
    grep -q "root density and potential between the ranks' GPUs: GPU to GPU (CUDA IPC) between 1 rank pairs" \
      "$work/sphere.2.log" || fail "sphere, 2 ranks: the root density and potential did not go GPU to GPU"
    variant sphere gathered mpi.root_fft=gathered
    variant sphere host mpi.device_exchange=host
  fi
  if selected gravity; then
    grep -q "self-gravity's solves, kicks and potential correction on every level too" \
      "$work/gravity.2.log" || fail "gravity, 2 ranks: the log does not say the levels' solves run on the GPUs"
    variant gravity staged gpu.resident=off
  fi
  if selected blob_scalar; then
    variant blob_scalar host mpi.device_exchange=host
    variant blob_scalar staged gpu.resident=off
  fi
fi

# --- 2. checkpoint of 4 ranks, restarted on 2 and on 1 ---------------------------------------
read -r -a args <<<"$(case_args blob_scalar) run.backend=$backend"
args+=(run.max_steps=12 output.enabled=false output.checkpoint_interval=6 output.checkpoint_keep=4)
"$tessera" run "${args[@]}" output.dir="$work/restart_ref" >"$work/restart_ref.log" 2>&1 ||
  fail "restart reference exited $?"
on 4 run "${args[@]}" output.dir="$work/restart_4" >"$work/restart_4.log" 2>&1 ||
  fail "4 ranks exited $?"
for n in 2 1; do
  dir=$work/restart_on_$n
  mkdir -p "$dir"
  cp "$work/restart_4/blob.chk.00000006.h5" "$dir/"
  if [ "$n" -eq 1 ]; then
    "$tessera" run "${args[@]}" output.dir="$dir" --restart latest >"$dir.log" 2>&1 ||
      fail "restart on 1 rank exited $?"
  else
    on "$n" run "${args[@]}" output.dir="$dir" --restart latest >"$dir.log" 2>&1 ||
      fail "restart on $n ranks exited $?"
  fi
  for d in /data /state /mesh; do
    h5diff -q "$work/restart_ref/blob.chk.00000012.h5" "$dir/blob.chk.00000012.h5" $d $d ||
      fail "checkpoint of 4 ranks restarted on $n: $d differs from the uninterrupted run"
  done
done

# --- 3. collective output ---------------------------------------------------------------------
# With parallel HDF5 the ranks write each file together (the log says so), and the file
# verifies as one rank's does (its digests, formed where the patches are, are one rank's:
# compare checks them above). Write calls cut into rounds of a few KB (the guard against
# MPI-IO's 2^31-byte limit, taken many times and a different number of times per rank) and
# mpi.parallel_io=false (rank 0 gathers and writes) give one rank's files too.
if "$tessera" --version | grep -q "output of several ranks: parallel HDF5"; then
  grep -q "wrote checkpoint .*, 4 ranks together)" "$work/restart_4.log" ||
    fail "collective output: the 4 ranks did not write their checkpoint together"
fi
"$tessera" verify "$work/restart_4/blob.chk.00000012.h5" >"$work/verify_4.log" 2>&1 ||
  fail "collective output: the checkpoint of 4 ranks fails tessera verify"
if selected blob_scalar; then
  read -r -a args <<<"$(case_args blob_scalar) run.backend=$backend"
  args+=(output.checkpoint_interval=12)
  for how in rounds gathered; do
    extra=()
    [ $how = gathered ] && extra=(mpi.parallel_io=false)
    TESSERA_IO_MAX_TRANSFER=$([ $how = rounds ] && echo 5000 || echo 0) \
      on 3 run "${args[@]}" "${extra[@]}" output.dir="$work/blob_scalar/3_$how" \
      >"$work/blob_scalar.3_$how.log" 2>&1 || fail "blob_scalar, 3 ranks ($how) exited $?"
    if result=$(compare "$work/blob_scalar/1" "$work/blob_scalar/3_$how"); then
      echo "blob_scalar, 3 ranks, output $how: $result"
    else
      fail "blob_scalar, 3 ranks, output $how, differs from one rank: $result"
    fi
  done
  grep -q "ranks together" "$work/blob_scalar.3_gathered.log" &&
    fail "blob_scalar: mpi.parallel_io=false still wrote collectively"
fi

# --- 4. faults (backend-independent: on the CPU only) ----------------------------------------
if [ "$backend" != cpu ]; then
  [ $failures -eq 0 ] && echo "all MPI checks passed ($backend backend, sections 1 to 3)"
  exit $((failures != 0))
fi
# An unphysical cell (a blast of 1e300) on the ranks that own the centre.
bad=(run "$p/sedov/sedov.toml" mesh.nx=[32,32,32] problem.energy=1e300 problem.radius=0.02
  run.max_steps=2 output.dir="$work/bad")
on 3 "${bad[@]}" >"$work/bad.log" 2>"$work/bad.err"
code=$?
[ $code -eq 4 ] || fail "unphysical cell on 3 ranks: exit $code, expected 4"
n=$(grep -c "^tessera: error (rank [0-9] of 3): .*unphysical state" "$work/bad.err")
[ "$n" -eq 1 ] || fail "unphysical cell on 3 ranks: $n error messages naming the rank, expected 1"
# The diagnostic plot file (the state at the start of the failed step, gathered on rank 0)
# equals one rank's.
"$tessera" "${bad[@]/#output.dir=*/output.dir=$work/bad_1}" >/dev/null 2>&1
if result=$(compare "$work/bad_1" "$work/bad"); then
  echo "unphysical cell: diagnostic plot file of 3 ranks: $result"
else
  fail "unphysical cell: the diagnostic plot file of 3 ranks differs from one rank's: $result"
fi
# A parameter error: every rank finds it; one message, exit 2.
on 3 run "$p/sedov/sedov.toml" hydro.cfl=7 output.dir="$work/param" >/dev/null 2>"$work/param.err"
code=$?
[ $code -eq 2 ] || fail "parameter error on 3 ranks: exit $code, expected 2"
n=$(grep -c "^tessera: error" "$work/param.err")
[ "$n" -eq 1 ] || fail "parameter error on 3 ranks: $n messages, expected 1"
# A parameter file that is a named pipe (a job script's <(...) or a FIFO): rank 0 reads it
# and hands its text to the others, so 3 ranks run as from the file (each rank reading
# the pipe would leave the others an empty or cut-off file).
mkfifo "$work/params.fifo"
cat "$p/sedov/sedov.toml" >"$work/params.fifo" &
on 3 run "$work/params.fifo" mesh.nx=[16,16,16] run.max_steps=2 output.dir="$work/fifo" \
  >"$work/fifo.log" 2>&1
code=$?
wait
[ $code -eq 0 ] || fail "named-pipe parameter file on 3 ranks: exit $code, expected 0 (see $work/fifo.log)"
grep -q "^ranks: 3 (MPI)" "$work/fifo.log" || fail "named-pipe parameter file: no 3-rank run in the log"
# A damaged checkpoint: every rank reads it and finds the damage; one message, exit 3.
mkdir -p "$work/damaged"
cp "$work/restart_4/blob.chk.00000006.h5" "$work/damaged/"
# 64 bytes of the first chunk of the root level's data set to 0xFF.
"${PYTHON:-/usr/bin/python3}" - "$work/damaged/blob.chk.00000006.h5" <<'PY' ||
import sys, h5py
path = sys.argv[1]
with h5py.File(path, "r") as f:
    base = f.userblock_size
    offset = f["data/level_0"].id.get_chunk_info(0).byte_offset
with open(path, "r+b") as f:
    f.seek(base + offset + 256)
    f.write(b"\xff" * 64)
PY
  fail "damaged checkpoint: could not place the change"
on 3 run "${args[@]}" output.dir="$work/damaged" \
  --restart "$work/damaged/blob.chk.00000006.h5" >/dev/null 2>"$work/damaged.err"
code=$?
[ $code -eq 3 ] || fail "damaged checkpoint on 3 ranks: exit $code, expected 3"
n=$(grep -c "^tessera: error" "$work/damaged.err")
[ "$n" -eq 1 ] || fail "damaged checkpoint on 3 ranks: $n messages, expected 1"
# Signals: to mpirun (SIGUSR1, which it passes on; SIGTERM, which it passes on before it
# ends the job itself) and to one rank (SIGTERM). Every rank learns of the signal at the
# next step's agreement, they stop after that step with one checkpoint, and the ranks exit
# 11 like one rank (mpirun's own exit status after a SIGTERM is Open MPI's: non-zero).
term=(run "$p/blob/blob.toml" amr.max_level=1 mesh.nx=[16,16,16] run.max_steps=400
  output.enabled=false output.checkpoint_interval=1000 run.log_interval=1)
for how in usr1_mpirun term_mpirun term_rank; do
  # mpirun itself in the background (not through on(): $! would be a subshell's).
  "$mpirun" --oversubscribe -np 2 "$tessera" "${term[@]}" output.dir="$work/$how" \
    >"$work/$how.log" 2>&1 &
  pid=$!
  for _ in $(seq 600); do
    grep -q "^step       5 " "$work/$how.log" 2>/dev/null && break
    sleep 0.1
  done
  case $how in
    usr1_mpirun) kill -USR1 $pid ;;
    term_mpirun) kill -TERM $pid ;;
    term_rank) pkill -TERM -n -f "tessera run .*output.dir=$work/$how" ;;
  esac
  wait $pid
  code=$?
  if [ $how = term_mpirun ]; then
    [ $code -ne 0 ] || fail "$how: exit 0"
  else
    [ $code -eq 11 ] || fail "$how: exit $code, expected 11"
  fi
  grep -q "received signal" "$work/$how.log" || fail "$how: no log line"
  n=$(ls "$work/$how"/blob.chk.*.h5 2>/dev/null | wc -l)
  [ "$n" -eq 1 ] || fail "$how: $n checkpoints, expected 1"
done

if [ $failures -ne 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "all MPI checks passed"
