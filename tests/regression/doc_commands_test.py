#!/usr/bin/python3
"""Runs the commands that README.md, docs/user_guide.md and docs/checkpoints.md quote.

Usage: doc_commands_test.py SOURCE_DIR TESSERA_BINARY WORK_DIR

Every line of a ```sh block that starts a Tessera command (build/bin/tessera, tessera,
mpirun ... tessera, /usr/bin/python3 scripts/...) runs, in the order of the documents,
in WORK_DIR (which gets links to problems/, scripts/ and build/bin/tessera), as a small
variant: runs stop after 3 steps (run.max_steps=3), placeholders take an example
(FILE.toml: problems/sod/sod.toml, CHECKPOINT.h5: the newest checkpoint, [NAME]: sedov,
[SECTION]: gravity), a numbered checkpoint or plot file is the newest of its folder (3
steps write fewer), and mpirun runs 2 ranks. Each must exit 0. Skipped: ./scripts/run
and ./scripts/test (they build), job scripts (lines with $SLURM, "${restart[@]}", sbatch,
case/esac) and error examples. The documents' prose says "after ./scripts/run": the
demo's parameter file runs first.

Exit status 0 when every command succeeded, 1 otherwise (each failure printed).
"""

import glob
import os
import re
import shutil
import subprocess
import sys

DOCUMENTS = ("README.md", "docs/user_guide.md", "docs/checkpoints.md")
STARTS = ("build/bin/tessera ", "tessera ", "mpirun ", "/usr/bin/python3 scripts/")
SKIP = ("$SLURM", '"${restart[@]}"', "sbatch", "./scripts/run", "./scripts/test")


def commands(source):
    """(document, line number, block, command) of every Tessera command in the sh blocks."""
    out = []
    block = 0
    for doc in DOCUMENTS:
        inside = False
        with open(os.path.join(source, doc), encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                stripped = line.strip()
                if stripped.startswith("```"):
                    inside = not inside and stripped in ("```sh", "```bash")
                    block += 1
                    continue
                if not inside or not stripped.startswith(STARTS):
                    continue
                if any(s in stripped for s in SKIP):
                    continue
                out.append((doc, number, block, re.sub(r"\s+#\s.*$", "", stripped)))
    return out


def newest(pattern):
    found = sorted(glob.glob(pattern))
    return found[-1] if found else pattern


def variant(command, work):
    """The small variant of a documented command, to run in work."""
    c = command.replace("FILE.toml", "problems/sod/sod.toml")
    c = c.replace(" [section.key=value ...]", "").replace("[NAME]", "sedov")
    c = c.replace("[SECTION]", "gravity")
    c = re.sub(r"^tessera ", "build/bin/tessera ", c)
    c = c.replace("mpirun -np 4 ", "mpirun --oversubscribe -np 2 ")
    if "CHECKPOINT.h5" in c:
        c = c.replace("CHECKPOINT.h5", newest(os.path.join(work, "output/*/*.chk.*.h5")))
    # A numbered checkpoint or plot file: the newest of its folder.
    for name in re.findall(r"\S+\.chk\.\d{8}\.h5|\S+\.\d{5}\.athdf", c):
        pattern = re.sub(r"\d{8}\.h5$", "*.h5", re.sub(r"\d{5}\.athdf$", "*.athdf", name))
        c = c.replace(name, os.path.relpath(newest(os.path.join(work, pattern)), work))
    # Runs stop after 3 steps (after the parameter file's path: before a pipe).
    # A restart goes 3 steps further, so that it steps.
    if re.search(r"\btessera run ", c):
        steps = 6 if "--restart" in c else 3
        c = re.sub(r"(\S+\.toml)", rf"\1 run.max_steps={steps}", c, count=1)
    return c


def main(argv):
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    source, binary, work = (os.path.abspath(a) for a in argv[1:])
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.join(work, "build/bin"))
    os.symlink(os.path.join(source, "problems"), os.path.join(work, "problems"))
    os.symlink(os.path.join(source, "scripts"), os.path.join(work, "scripts"))
    os.symlink(binary, os.path.join(work, "build/bin/tessera"))
    env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "2"))
    have_mpirun = shutil.which("mpirun") is not None
    found = commands(source)
    demo = "build/bin/tessera run problems/sedov/sedov_amr.toml"
    failures = 0
    block = None
    for doc, number, b, command in found:
        # Each block is a sequence of its own, from an empty output/; one that reads the
        # demo's files ("after ./scripts/run") gets the demo's run, small, first.
        if b != block:
            block = b
            shutil.rmtree(os.path.join(work, "output"), ignore_errors=True)
        if "output/sedov_amr/" in command and not os.path.isdir(os.path.join(work, "output/sedov_amr")):
            subprocess.run(["bash", "-c", variant(demo, work)], cwd=work, env=env, check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=600)
        if command.startswith("mpirun") and not have_mpirun:
            print(f"skipped (no mpirun): {doc}:{number}: {command}")
            continue
        c = variant(command, work)
        r = subprocess.run(["bash", "-o", "pipefail", "-c", c], cwd=work, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=600, check=False)
        status = "ok" if r.returncode == 0 else f"FAILED (exit {r.returncode})"
        print(f"{status}: {doc}:{number}: {command}\n    ran: {c}")
        if r.returncode != 0:
            failures += 1
            print("    " + "\n    ".join(r.stdout.splitlines()[-15:]))
    print(f"{len(found)} commands, {failures} failed")
    if len(found) < 15:
        print(f"only {len(found)} documented commands found: the parser missed the blocks")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
