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
# Usage: batch_test.sh TESSERA SOURCE_DIR WORK_DIR
set -uo pipefail
tessera=$1
src=$2
work=$3
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
  restart=()
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
blob=(run "$src/problems/blob/blob.toml" amr.max_level=1 mesh.nx=[16,16,16] run.max_steps=40
  output.enabled=false output.checkpoint_interval=1000)
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
# that checkpoint as it was.
uniform=(run "$src/problems/uniform/uniform.toml" mesh.nx=[16,16,16] output.dir="$work/numeric")
"$tessera" "${uniform[@]}" run.max_steps=3 output.checkpoint_interval=1 >"$work/numeric.log" 2>&1 ||
  fail "healthy uniform run exited $?"
good=$(ls "$work"/numeric/uniform.chk.*.h5 | tail -n 1)
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

if [ $failures -ne 0 ]; then
  echo "$failures failure(s); logs in $work"
  exit 1
fi
echo "batch behaviour: all checks passed"
