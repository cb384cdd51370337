#!/usr/bin/python3
"""Time series of the conserved totals from a Tessera history file or log, saved as a PNG.

Usage: plot_totals.py FILE [FILE ...] [--out FILE.png]

Reads a run's history file (<output.dir>/<problem>.hst, output.history: a row at the first
step and every output.history_interval steps or with each totals line of the log), or the
"totals:" lines of `tessera run` logs (every run.log_interval steps when that is set, e.g.
run.log_interval=1; about once a minute otherwise). Several files, e.g. the logs of a run and
its restarts, are joined in order of time; a step repeated after a restart is taken once.
Plots the relative change of mass and energy and the change of each momentum component in
units of the system's momentum scale sqrt(2 M E) at the first row (mass times a typical
speed: meaningful whether the net momentum starts at zero, as in a shock tube, or not).
Prints the PNG path and the largest relative change of mass and energy.

Exit codes: 0 done; 2 bad input (a bad option, a missing file or a directory, a plot file
or checkpoint instead of a log, fewer than two "totals:" lines in all); 3 a file that
cannot be read or written (an I/O error, an image that cannot be written). A "totals:"
line cut off (the end of the log of a killed job) is skipped with a warning.
"""

import argparse
import os
import re
import sys

import numpy as np

import tessera_files
from tessera_files import bad_input, check_file, describe_hdf5, file_kind

LINE = re.compile(
    r"totals: step (\d+) t (\S+) mass (\S+) momx (\S+) momy (\S+) momz (\S+) energy (\S+)"
)
LOG = "a log of `tessera run` (its standard output, e.g. `tessera run FILE.toml | tee run.log`)"


def read_totals(log, rows):
    """Adds the totals lines of a log to rows {step: [t, mass, momx, momy, momz, energy]};
    returns how many it found."""
    check_file(log, LOG, series="*.log")
    if file_kind(log) == "hdf5":
        raise bad_input(f"{log}: {describe_hdf5(log)}, not a log; expected {LOG}")
    found = 0
    try:
        with open(log, encoding="utf-8", errors="replace") as f:
            for number, line in enumerate(f, 1):
                m = LINE.search(line)
                if not m:
                    continue
                try:
                    values = [float(v) for v in m.groups()[1:]]
                except ValueError:  # e.g. the last line of a log cut off mid-line
                    tessera_files.warn(f"{log}:{number}: malformed 'totals:' line skipped")
                    continue
                rows[int(m.group(1))] = values
                found += 1
    except OSError as error:
        raise tessera_files.unreadable(f"{log}: cannot be read: {tessera_files.reason(error)}")
    return found


HISTORY = "# Tessera history of problem "


def read_history(path, rows):
    """Adds the rows of a history file to rows {step: [t, mass, momx, momy, momz, energy]};
    returns how many it found."""
    with open(path, encoding="utf-8", errors="replace") as f:
        f.readline()
        names = [c.split("=", 1)[-1] for c in f.readline().split()[1:]]
    need = ["step", "time", "mass", "momx", "momy", "momz", "energy"]
    missing = [n for n in need if n not in names]
    if missing:
        raise bad_input(f"{path}: a history file without the column(s) {', '.join(missing)} "
                        f"(an isothermal run has no energy); its columns: {' '.join(names)}")
    try:
        data = np.loadtxt(path, ndmin=2)
    except ValueError as error:
        raise bad_input(f"{path}: not readable as a history file: {error}")
    for row in data:
        rows[int(row[names.index("step")])] = [row[names.index(n)] for n in need[1:]]
    return len(data)


def read_file(path, rows):
    """A history file or a log."""
    check_file(path, LOG + " or a history file (<problem>.hst)", series="*.log")
    if file_kind(path) != "hdf5":
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                if f.readline().startswith(HISTORY):
                    return read_history(path, rows)
        except OSError as error:
            raise tessera_files.unreadable(f"{path}: cannot be read: {tessera_files.reason(error)}")
    return read_totals(path, rows)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("logs", nargs="+", help="history files (.hst) or logs of tessera run")
    parser.add_argument("--out", help="PNG to write (default: first LOG with .totals.png)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    rows = {}
    found = sum(read_file(log, rows) for log in args.logs)
    if len(rows) < 2:
        which = args.logs[0] if len(args.logs) == 1 else ", ".join(args.logs)
        what = (f"{found} 'totals:' line{'s' * (found != 1)}" if found < 2
                else "'totals:' lines of a single step")
        raise bad_input(f"{which}: {what}; expected those of at least two steps (`tessera run` "
                        f"writes one every run.log_interval steps, e.g. run.log_interval=1)")
    data = np.array([rows[k] for k in sorted(rows)])
    t, mass, mom, energy = data[:, 0], data[:, 1], data[:, 2:5], data[:, 5]
    rel_mass = (mass - mass[0]) / abs(mass[0])
    rel_energy = (energy - energy[0]) / abs(energy[0])
    # The momentum scale: sqrt(2 M E), mass times a typical speed of the initial state.
    scale = float(np.sqrt(2 * abs(mass[0]) * abs(energy[0])))
    dmom = (mom - mom[0]) / (scale if scale > 0 else 1.0)

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a1, a2) = plt.subplots(2, 1, figsize=(7, 6), dpi=150, sharex=True)
    a1.plot(t, rel_mass, label="mass")
    a1.plot(t, rel_energy, label="energy")
    a1.set_ylabel("relative change")
    a1.legend()
    for d, name in enumerate("xyz"):
        a2.plot(t, dmom[:, d], label=f"momentum {name}")
    a2.set_ylabel("change / sqrt(2 M E)" if scale > 0 else "change")
    a2.set_xlabel("t")
    a2.legend()
    fig.suptitle(f"conserved totals ({len(rows)} rows)")
    fig.tight_layout()
    out = args.out or os.path.splitext(args.logs[0])[0] + ".totals.png"
    try:
        tessera_files.save_figure(fig, out)
    finally:
        plt.close(fig)
    print(out)
    print(f"largest relative change: mass {np.max(np.abs(rel_mass)):.3e}, "
          f"energy {np.max(np.abs(rel_energy)):.3e}")
    return 0


if __name__ == "__main__":
    sys.exit(tessera_files.run(main))
