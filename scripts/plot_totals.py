#!/usr/bin/python3
"""Time series of the conserved totals from a Tessera log, saved as a PNG.

Usage: plot_totals.py LOG [LOG ...] [--out FILE.png]

Reads the "totals:" lines `tessera run` writes every run.log_interval steps (several logs,
e.g. of a run and its restarts, are joined in order of time; a step repeated after a restart
is taken once). Plots the relative change of mass and energy and the change of each
momentum component (relative to the initial total momentum magnitude, or absolute when that
is zero). Prints the PNG path and the largest relative change of mass and energy.
"""

import argparse
import os
import re
import sys

import numpy as np

LINE = re.compile(
    r"totals: step (\d+) t (\S+) mass (\S+) momx (\S+) momy (\S+) momz (\S+) energy (\S+)"
)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("logs", nargs="+", help="log files of tessera run")
    parser.add_argument("--out", help="PNG to write (default: first LOG with .totals.png)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    rows = {}
    for log in args.logs:
        try:
            with open(log, encoding="utf-8", errors="replace") as f:
                for line in f:
                    m = LINE.search(line)
                    if m:
                        rows[int(m.group(1))] = [float(v) for v in m.groups()[1:]]
        except OSError as error:
            print(f"error: cannot read {log}: {error}", file=sys.stderr)
            return 1
    if len(rows) < 2:
        print("error: fewer than two 'totals:' lines in the log(s)", file=sys.stderr)
        return 2
    data = np.array([rows[k] for k in sorted(rows)])
    t, mass, mom, energy = data[:, 0], data[:, 1], data[:, 2:5], data[:, 5]
    rel_mass = (mass - mass[0]) / abs(mass[0])
    rel_energy = (energy - energy[0]) / abs(energy[0])
    p0 = float(np.linalg.norm(mom[0]))
    dmom = (mom - mom[0]) / (p0 if p0 > 0 else 1.0)

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
    a2.set_ylabel("change / |p(0)|" if p0 > 0 else "change")
    a2.set_xlabel("t")
    a2.legend()
    fig.suptitle(f"conserved totals ({len(rows)} log lines)")
    fig.tight_layout()
    out = args.out or os.path.splitext(args.logs[0])[0] + ".totals.png"
    try:
        fig.savefig(out)
    except OSError as error:
        print(f"error: cannot write {out}: {error}", file=sys.stderr)
        return 1
    finally:
        plt.close(fig)
    print(out)
    print(f"largest relative change: mass {np.max(np.abs(rel_mass)):.3e}, "
          f"energy {np.max(np.abs(rel_energy)):.3e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
