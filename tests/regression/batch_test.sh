#!/usr/bin/env bash
# Batch-job behaviour of `tessera run`, end to end:
#   1. SIGKILL at up to 10 random moments of a run that checkpoints and plots every step: every file
#      under a checkpoint's final name verifies, a temporary is never taken for one, and
#      `--restart latest` finishes the run bit for bit like an uninterrupted run.
#   2. SIGTERM: checkpoint + exit 11; the restart finishes identically (AMR, subcycling).
#   3. run.wall_time: checkpoint + exit 10 before the limit; the restart finishes identically.
#   4. SIGINT once: exit 11 with a checkpoint; twice: exit 130 at once.
#   5. Damaged checkpoints through the command line: exit 3 (corrupt), 2 (incompatible).
#   6. Numerical failure: exit 4, a diagnostic plot file, the last checkpoint untouched.
#   7. Shared output directories: one run at a time (exit 2 for the second), a fresh run
#      refuses another run's checkpoints unless --overwrite, clean-up spares other runs'.
#   8. Random corruption: hundreds of changed bytes, each one found by verify (exit 3);
#      the Fletcher-blind 0xFFFF overwrite of a data chunk found by verify and restart.
#   9. Full disk (ENOSPC injected after N bytes): exit 3, never a crash, no temporaries,
#      earlier checkpoints intact and a restart from them finishes the run bit for bit.
#  10. Restart requests that cannot be met: t_end before the checkpoint (exit 2); SIGHUP.
#  11. The log's reader goes away (`tessera run ... | head -n 2`): the run finishes (exit 0,
#      its last checkpoint written) and says once on stderr that it lost its log.
#  12. `--restart latest` when the newest checkpoint's data are damaged: it is skipped (the
#      log says which and why) and the run continues from the newest intact one.
#  13. output.dir removed during a run: made and locked again at the next output (a
#      warning), the run finishes there.
# Usage: batch_test.sh TESSERA SOURCE_DIR WORK_DIR ENOSPC_LIBRARY
set -uo pipefail
tessera=$1
src=$2
work=$3
enospc=$4
rm -rf "$work"
mkdir -p "$work"
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# Final states equal bit for bit: the field data and the whole loop state of two checkpoints.
same_state() {
  h5diff -q "$1" "$2" /data /data && h5diff -q "$1" "$2" /state /state && h5diff -q "$1" "$2" /mesh /mesh
}

# Waits until file $1 has a line matching $2 (at most 60 s).
wait_for_line() {
  for _ in $(seq 600); do
    grep -q "$2" "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}

# --- 1. random SIGKILL ---------------------------------------------------------------------
sedov=(run "$src/problems/sedov/sedov.toml" mesh.nx=[48,48,48] run.max_steps=50 output.dt=1e-9
  output.checkpoint_interval=1 output.checkpoint_keep=4)
"$tessera" "${sedov[@]}" output.dir="$work/kill_ref" >"$work/kill_ref.log" 2>&1 ||
  fail "reference run (kill test) exited $?"
kills=0
partial_seen=0
for attempt in $(seq 10); do
  # A run killed before its first checkpoint left only plot files: start afresh over them
  # (a fresh run refuses another run's plot files without --overwrite).
  restart=(--overwrite)
  ls "$work"/kill/sedov.chk.*.h5 >/dev/null 2>&1 && restart=(--restart latest)
  "$tessera" "${sedov[@]}" output.dir="$work/kill" "${restart[@]}" >>"$work/kill.log" 2>&1 &
  pid=$!
  sleep "0.$((RANDOM % 9 + 1))$((RANDOM % 10))"
  kill -KILL $pid 2>/dev/null && kills=$((kills + 1))
  wait $pid 2>/dev/null && break  # the run finished before the kill: nothing left to kill
  # A temporary now was left by this kill: the next run removes it at its start.
  ls "$work"/kill/*.tmp* >/dev/null 2>&1 && partial_seen=$((partial_seen + 1))
  # Every file under a final checkpoint name is complete and verifies.
  for f in "$work"/kill/sedov.chk.*.h5; do
    [ -e "$f" ] || continue
    "$tessera" verify "$f" >/dev/null 2>&1 || fail "attempt $attempt: $f does not verify"
  done
done
"$tessera" "${sedov[@]}" output.dir="$work/kill" --restart latest >>"$work/kill.log" 2>&1 ||
  fail "final restart (kill test) exited $?"
same_state "$work/kill_ref/sedov.chk.00000050.h5" "$work/kill/sedov.chk.00000050.h5" ||
  fail "run interrupted by SIGKILL differs from the uninterrupted run"
[ "$kills" -ge 4 ] || fail "only $kills runs were still running when killed (at least 4 needed)"
ls "$work"/kill/*.tmp* >/dev/null 2>&1 && fail "temporaries left after the finished run"
echo "kill test: $kills kills, $partial_seen left a partial (temporary) file behind"

# --- 2. SIGTERM (AMR with subcycling) -------------------------------------------------------
# A log line every step: the signals below are sent once the log shows a given step.
blob=(run "$src/problems/blob/blob.toml" amr.max_level=1 mesh.nx=[16,16,16] run.max_steps=40
  output.enabled=false output.checkpoint_interval=1000 run.log_interval=1)
"$tessera" "${blob[@]}" output.dir="$work/amr_ref" >"$work/amr_ref.log" 2>&1 ||
  fail "reference run (AMR) exited $?"
"$tessera" "${blob[@]}" output.dir="$work/term" >"$work/term.log" 2>&1 &
pid=$!
wait_for_line "$work/term.log" "^step       5 " || fail "SIGTERM run did not reach step 5"
kill -TERM $pid
wait $pid
code=$?
[ $code -eq 11 ] || fail "SIGTERM: exit code $code, expected 11"
grep -q "received signal 15" "$work/term.log" || fail "SIGTERM: no log line"
n=$(ls "$work"/term/blob.chk.*.h5 2>/dev/null | wc -l)
[ "$n" -eq 1 ] || fail "SIGTERM: $n checkpoints, expected 1"
"$tessera" "${blob[@]}" output.dir="$work/term" --restart latest >>"$work/term.log" 2>&1 ||
  fail "restart after SIGTERM exited $?"
same_state "$work/amr_ref/blob.chk.00000040.h5" "$work/term/blob.chk.00000040.h5" ||
  fail "run stopped by SIGTERM and restarted differs from the uninterrupted run"

# --- 3. wall-time limit ---------------------------------------------------------------------
# A run several times longer than the limit on any machine (about 9 s on two cores), so that
# it cannot finish before the limit does; it has its own reference.
wallrun=(run "$src/problems/blob/blob.toml" amr.max_level=1 mesh.nx=[32,32,32] run.max_steps=64
  output.enabled=false output.checkpoint_interval=1000)
"$tessera" "${wallrun[@]}" output.dir="$work/wall_ref" >"$work/wall_ref.log" 2>&1 ||
  fail "reference run (wall time) exited $?"
start=$(date +%s.%N)
"$tessera" "${wallrun[@]}" output.dir="$work/wall" run.wall_time=00:00:03 >"$work/wall.log" 2>&1
code=$?
elapsed=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
[ $code -eq 10 ] || fail "wall time: exit code $code, expected 10"
awk -v e="$elapsed" 'BEGIN { exit !(e < 3.0) }' || fail "wall time: took $elapsed s, limit 3 s"
grep -q "stopping before the wall-time limit" "$work/wall.log" || fail "wall time: no log line"
"$tessera" "${wallrun[@]}" output.dir="$work/wall" --restart latest >>"$work/wall.log" 2>&1 ||
  fail "restart after the wall-time stop exited $?"
same_state "$work/wall_ref/blob.chk.00000064.h5" "$work/wall/blob.chk.00000064.h5" ||
  fail "run stopped at the wall-time limit and restarted differs from the uninterrupted run"
echo "wall-time test: stopped after $elapsed s (limit 3 s)"

# --- 4. SIGINT ------------------------------------------------------------------------------
"$tessera" "${blob[@]}" output.dir="$work/int1" >"$work/int1.log" 2>&1 &
pid=$!
wait_for_line "$work/int1.log" "^step       3 " || fail "SIGINT run did not reach step 3"
kill -INT $pid
wait $pid
code=$?
[ $code -eq 11 ] || fail "one SIGINT: exit code $code, expected 11"
ls "$work"/int1/blob.chk.*.h5 >/dev/null 2>&1 || fail "one SIGINT: no checkpoint"
# Steps of about a second, so both signals arrive within one step (a signal sent while the
# same one is pending merges with it, hence the pause between them).
"$tessera" run "$src/problems/sedov/sedov.toml" mesh.nx=[96,96,96] output.enabled=false \
  output.dir="$work/int2" >"$work/int2.log" 2>&1 &
pid=$!
wait_for_line "$work/int2.log" "^step       1 " || fail "SIGINT run did not reach step 1"
kill -INT $pid
sleep 0.1
kill -INT $pid
wait $pid
code=$?
[ $code -eq 130 ] || fail "two SIGINTs: exit code $code, expected 130"

# --- 5. damaged checkpoints through the command line -----------------------------------------
good=$(ls "$work"/int1/blob.chk.*.h5 | head -n 1)
cp "$good" "$work/truncated.h5"
truncate -s $(($(stat -c %s "$good") / 2)) "$work/truncated.h5"
"$tessera" "${blob[@]}" output.dir="$work/int1" --restart "$work/truncated.h5" >"$work/bad.log" 2>&1
code=$?
[ $code -eq 3 ] || fail "truncated checkpoint: exit code $code, expected 3"
grep -q "truncated.h5" "$work/bad.log" || fail "truncated checkpoint: message does not name the file"
"$tessera" verify "$work/kill_ref/sedov.00000.athdf" >"$work/bad.log" 2>&1
code=$?
[ $code -eq 2 ] || fail "plot file given as checkpoint: exit code $code, expected 2"
"$tessera" "${blob[@]}" output.dir="$work/int1" --restart "$good" hydro.cfl=0.2 >"$work/bad.log" 2>&1
code=$?
[ $code -eq 2 ] || fail "restart changing hydro.cfl: exit code $code, expected 2"

# --- 6. numerical failure --------------------------------------------------------------------
# A healthy run leaves a checkpoint; a run in the same directory whose energy flux overflows
# at its first step must exit 4 naming the cell, write a diagnostic plot file and leave
# that checkpoint as it was. (Another problem's: a fresh run of the same problem would be
# refused by the directory, section 7.)
uniform=(run "$src/problems/uniform/uniform.toml" mesh.nx=[16,16,16] output.dir="$work/numeric")
"$tessera" run "$src/problems/sod/sod.toml" output.dir="$work/numeric" output.enabled=false \
  run.max_steps=3 output.checkpoint_interval=1 >"$work/numeric.log" 2>&1 ||
  fail "healthy sod run exited $?"
good=$(ls "$work"/numeric/sod.chk.*.h5 | tail -n 1)
sum_before=$(md5sum <"$good")
"$tessera" "${uniform[@]}" problem.pressure=1e307 problem.velocity=[1e3,0,0] \
  output.checkpoint_interval=1 >"$work/numeric_fail.log" 2>&1
code=$?
[ $code -eq 4 ] || fail "numerical failure: exit code $code, expected 4"
for text in "unphysical state at step 1" "level 0, patch" "cell (" "engy=nan" \
  "wrote diagnostic plot file"; do
  grep -qF "$text" "$work/numeric_fail.log" || fail "numerical failure: log lacks '$text'"
done
[ -s "$work/numeric/uniform.failure.00000001.athdf" ] || fail "no diagnostic plot file"
h5dump -a /Time "$work/numeric/uniform.failure.00000001.athdf" >/dev/null 2>&1 ||
  fail "diagnostic plot file does not open"
[ "$(md5sum <"$good")" = "$sum_before" ] || fail "the last good checkpoint changed"
"$tessera" verify "$good" >/dev/null 2>&1 || fail "the last good checkpoint does not verify"

# --- 7. shared output directories ------------------------------------------------------------
sod=(run "$src/problems/sod/sod.toml" run.threads=1 output.enabled=false)
# Two runs at once: the second finds the directory locked and exits 2 at once, naming the
# first; the first finishes with all its checkpoints.
"$tessera" "${sod[@]}" output.dir="$work/shared" output.checkpoint_interval=5 hydro.cfl=0.5 \
  run.max_steps=400 >"$work/shared_a.log" 2>&1 &
pid=$!
wait_for_line "$work/shared_a.log" "^step       1 " || fail "shared: first run did not start"
"$tessera" "${sod[@]}" output.dir="$work/shared" output.checkpoint_interval=5 hydro.cfl=0.8 \
  >"$work/shared_b.log" 2>&1
code=$?
[ $code -eq 2 ] || fail "shared: second run at the same time exited $code, expected 2"
grep -q "is in use by another Tessera run (pid $pid" "$work/shared_b.log" ||
  fail "shared: second run's message does not name the first run"
wait $pid || fail "shared: first run exited $?"
last=$(ls "$work"/shared/sod.chk.*.h5 | tail -n 1)
"$tessera" verify "$last" >"$work/shared_verify.log" 2>&1 || fail "shared: $last does not verify"
grep -q "hydro.cfl = 0.5\|cfl = 0.5" <(h5dump -a /Parameters "$last" 2>/dev/null) ||
  fail "shared: the last checkpoint is not the first run's"
# A fresh run in a directory that holds checkpoints: refused (exit 2), nothing touched.
sums=$(md5sum "$work"/shared/sod.chk.*.h5)
"$tessera" "${sod[@]}" output.dir="$work/shared" output.checkpoint_interval=5 run.max_steps=10 \
  >"$work/shared_c.log" 2>&1
code=$?
[ $code -eq 2 ] || fail "shared: fresh run in a used directory exited $code, expected 2"
grep -q "holds checkpoints of an earlier run" "$work/shared_c.log" ||
  fail "shared: the refusal does not say why"
[ "$(md5sum "$work"/shared/sod.chk.*.h5)" = "$sums" ] || fail "shared: refused run changed files"
# --overwrite: the old checkpoints go, the new run's are there.
"$tessera" "${sod[@]}" output.dir="$work/shared" output.checkpoint_interval=5 run.max_steps=10 \
  --overwrite >"$work/shared_d.log" 2>&1 || fail "shared: --overwrite run exited $?"
[ "$(ls "$work"/shared/sod.chk.*.h5 | xargs -n 1 basename | tr '\n' ' ')" = \
  "sod.chk.00000005.h5 sod.chk.00000010.h5 " ] || fail "shared: --overwrite left $(ls "$work"/shared)"
# Clean-up removes only the run's own family: another run's older checkpoint dropped into
# the directory while a run writes checkpoint after checkpoint survives (checkpoint_keep=2).
cp "$work/kill_ref/sedov.chk.00000047.h5" "$work/foreign.h5"
"$tessera" "${sedov[@]}" output.dir="$work/family" run.max_steps=40 output.checkpoint_keep=2 \
  >"$work/family.log" 2>&1 &
pid=$!
wait_for_line "$work/family.log" "wrote checkpoint" || fail "family: no checkpoint written"
cp "$work/foreign.h5" "$work/family/sedov.chk.00000000.h5"
wait $pid || fail "family: run exited $?"
[ -e "$work/family/sedov.chk.00000000.h5" ] || fail "family: another run's checkpoint was removed"
n=$(ls "$work"/family/sedov.chk.*.h5 | wc -l)
[ "$n" -eq 3 ] || fail "family: $n checkpoints, expected 2 of the run and the foreign one"
# A restart into that directory now finds another family's file: refused, unless --overwrite.
"$tessera" "${sedov[@]}" output.dir="$work/family" run.max_steps=50 --restart latest \
  >>"$work/family.log" 2>&1
code=$?
[ $code -eq 2 ] || fail "family: restart beside another run's checkpoint exited $code, expected 2"
echo "shared directories: checked"

# --- 8. random corruption ---------------------------------------------------------------------
# Every changed byte of a checkpoint (anywhere: data, metadata, the digest block, free
# space) makes verify exit 3; 300 random changes of 1 to 512 bytes.
/usr/bin/python3 - "$tessera" "$work/kill_ref/sedov.chk.00000050.h5" "$work/corrupt" 300 <<'PY' ||
import os, random, shutil, subprocess, sys
tessera, source, work, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
os.makedirs(work, exist_ok=True)
size = os.path.getsize(source)
rng = random.Random(20261123)
missed = []
for n in range(count):
    path = os.path.join(work, "c.h5")
    shutil.copyfile(source, path)
    offset = rng.randrange(size)
    with open(path, "r+b") as f:
        f.seek(offset)
        old = f.read(rng.choice([1, 2, 8, 64, 512]))
        kind = rng.choice(["ff", "00", "random"])
        new = bytes(0xFF if kind == "ff" else 0 if kind == "00" else rng.randrange(256) for _ in old)
        if new == old:
            new = bytes(b ^ 0x5A for b in old)
        f.seek(offset)
        f.write(new)
    r = subprocess.run([tessera, "verify", path], capture_output=True, text=True)
    if r.returncode != 3:
        missed.append((offset, len(old), r.returncode, (r.stdout + r.stderr)[-200:]))
for m in missed[:10]:
    print("not caught: offset %d, %d bytes, exit %d: %s" % m)
print("corruption: %d of %d changes caught with exit 3" % (count - len(missed), count))
sys.exit(1 if missed else 0)
PY
  fail "random corruption: some changes were not found"
# The Fletcher-32 blind spot: 0xFF 0xFF over the 0x00 0x00 low bytes of a density of 1.0.
blob_ck=$(ls "$work"/int1/blob.chk.*.h5 | head -n 1)
cp "$blob_ck" "$work/ffff.h5"
/usr/bin/python3 - "$work/ffff.h5" <<'PY' || fail "0xFFFF test: could not place the change"
import sys, h5py, numpy as np
path = sys.argv[1]
with h5py.File(path, "r") as f:
    base = f.userblock_size
    d = f["data/level_0"]
    info = d.id.get_chunk_info(0)
    flat = d[0:min(64, d.shape[0])].reshape(-1).view(np.uint16)
    word = int(np.nonzero(flat == 0)[0][0])  # a 16-bit word 0x0000 in the first chunk
with open(path, "r+b") as f:
    f.seek(base + info.byte_offset + 2 * word)
    f.write(b"\xff\xff")
PY
"$tessera" verify "$work/ffff.h5" >"$work/ffff.log" 2>&1
code=$?
[ $code -eq 3 ] || fail "0xFFFF over data: verify exited $code, expected 3"
"$tessera" "${blob[@]}" output.dir="$work/ffff_restart" --restart "$work/ffff.h5" \
  >"$work/ffff_restart.log" 2>&1
code=$?
[ $code -eq 3 ] || fail "0xFFFF over data: restart exited $code, expected 3"
grep -q "does not match its digest" "$work/ffff_restart.log" ||
  fail "0xFFFF over data: the restart's message does not name the digest"

# --- 9. full disk -------------------------------------------------------------------------------
# Writes under the output directory fail with ENOSPC once a byte budget is spent: the
# run exits 3 with the system's reason (never 139), leaves no temporary, and what it wrote
# before stays whole; the budget is set from an unlimited run's first files.
full=(run "$src/problems/sod/sod.toml" run.threads=1 run.max_steps=20 output.checkpoint_interval=5
  output.checkpoint_keep=10 output.dt=1e9)
"$tessera" "${full[@]}" output.dir="$work/full_ref" >"$work/full_ref.log" 2>&1 ||
  fail "full disk: reference run exited $?"
size() { stat -c %s "$1"; }
plot0=$(($(size "$work/full_ref/sod.00000.athdf") + $(size "$work/full_ref/sod.00000.athdf.xdmf")))
chk=$(size "$work/full_ref/sod.chk.00000005.h5")
for case in "plot $((plot0 / 2))" "second-checkpoint $((plot0 + chk + chk / 2))"; do
  set -- $case
  rm -rf "$work/full"
  mkdir -p "$work/full"
  LD_PRELOAD="$enospc" ENOSPC_DIR="$work/full" ENOSPC_AFTER_BYTES=$2 \
    "$tessera" "${full[@]}" output.dir="$work/full" >"$work/full_$1.log" 2>&1
  code=$?
  [ $code -eq 3 ] || fail "full disk ($1): exit code $code, expected 3"
  grep -q "No space left on device" "$work/full_$1.log" || fail "full disk ($1): no reason given"
  ls "$work"/full/*.tmp* >/dev/null 2>&1 && fail "full disk ($1): temporaries left"
done
# The second case: the first checkpoint is whole, and a restart from it (the disk freed)
# finishes like the uninterrupted run.
[ -e "$work/full/sod.chk.00000010.h5" ] && fail "full disk: a checkpoint that cannot fit exists"
"$tessera" verify "$work/full/sod.chk.00000005.h5" >/dev/null 2>&1 ||
  fail "full disk: the checkpoint written before the disk filled does not verify"
"$tessera" "${full[@]}" output.dir="$work/full" --restart latest >>"$work/full_restart.log" 2>&1 ||
  fail "full disk: restart after freeing the disk exited $?"
same_state "$work/full_ref/sod.chk.00000020.h5" "$work/full/sod.chk.00000020.h5" ||
  fail "full disk: the restarted run differs from the uninterrupted one"
echo "full disk: checked"

# --- 10. restarts that cannot be met; SIGHUP ----------------------------------------------------
"$tessera" "${full[@]}" output.dir="$work/full" --restart "$work/full/sod.chk.00000020.h5" \
  run.t_end=0.01 >"$work/back.log" 2>&1
code=$?
[ $code -eq 2 ] || fail "restart with t_end before the checkpoint: exit $code, expected 2"
grep -q "earlier than the time of checkpoint" "$work/back.log" || fail "t_end before: no reason"
"$tessera" "${blob[@]}" output.dir="$work/hup" >"$work/hup.log" 2>&1 &
pid=$!
wait_for_line "$work/hup.log" "^step       3 " || fail "SIGHUP run did not reach step 3"
kill -HUP $pid
wait $pid
code=$?
[ $code -eq 11 ] || fail "SIGHUP: exit code $code, expected 11"
ls "$work"/hup/blob.chk.*.h5 >/dev/null 2>&1 || fail "SIGHUP: no checkpoint"

# --- 11. the log's reader goes away -------------------------------------------------------------
"$tessera" run "$src/problems/sod/sod.toml" output.dir="$work/pipe" run.max_steps=20 \
  output.checkpoint_interval=20 2>"$work/pipe.err" | head -n 2 >/dev/null
code=${PIPESTATUS[0]}
[ $code -eq 0 ] || fail "closed stdout: exit code $code, expected 0"
[ -s "$work/pipe/sod.chk.00000020.h5" ] || fail "closed stdout: the run did not finish"
grep -q "standard output was closed" "$work/pipe.err" || fail "closed stdout: not reported"

# --- 12. --restart latest past a damaged newest checkpoint ---------------------------------------
latest=(run "$src/problems/sod/sod.toml" output.dir="$work/latest" output.enabled=false
  output.checkpoint_interval=10)
"$tessera" "${latest[@]}" run.max_steps=20 >"$work/latest_a.log" 2>&1 || fail "latest: first run exited $?"
newest="$work/latest/sod.chk.00000020.h5"
size=$(stat -c %s "$newest")
# A run of 64 bytes in the middle of the file (field data) set to 0xFF.
head -c 64 /dev/zero | tr '\0' '\377' | dd of="$newest" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
"$tessera" "${latest[@]}" run.max_steps=30 --restart latest >"$work/latest_b.log" 2>&1
code=$?
[ $code -eq 0 ] || fail "--restart latest past a damaged checkpoint: exit $code, expected 0"
grep -q "skipping checkpoint.*sod.chk.00000020.h5" "$work/latest_b.log" ||
  fail "--restart latest: the damaged checkpoint's skip is not logged"
grep -q "restarted from.*sod.chk.00000010.h5" "$work/latest_b.log" ||
  fail "--restart latest: did not continue from the intact checkpoint of step 10"

# --- 13. the output directory removed during the run -------------------------------------------
# A run whose output.dir is deleted under it makes the directory and its lock again at the
# next output (with a warning) instead of writing into an unlocked directory, and finishes.
vanish=$work/vanish
"$tessera" run "$src/problems/sod/sod.toml" run.threads=1 mesh.nx=[256,16,16] \
  mesh.xmax=[1,0.0625,0.0625] output.dt=0.01 output.dir="$vanish" >"$work/vanish.log" 2>&1 &
pid=$!
for _ in $(seq 600); do [ -e "$vanish/sod.00001.athdf" ] && break; sleep 0.05; done
rm -rf "$vanish"
wait $pid
code=$?
[ $code -eq 0 ] || fail "output.dir removed during the run: exit $code, expected 0"
grep -q "was removed during the run: made again and locked again" "$work/vanish.log" ||
  fail "output.dir removed during the run: no warning"
[ -e "$vanish/.tessera.lock" ] || fail "output.dir removed during the run: no lock file after"
[ -e "$vanish/sod.00020.athdf" ] || fail "output.dir removed during the run: the last plot file is missing"

if [ $failures -ne 0 ]; then
  echo "$failures failure(s); logs in $work"
  exit 1
fi
echo "batch behaviour: all checks passed"
