#!/usr/bin/python3
"""Kinetic and magnetic energy and rms Mach number of an MHD run over time, saved as a PNG.

Usage: plot_turbulence.py DIR|FILE.athdf [FILE.athdf ...] [--out FILE.png]

Reads the plot files of a run (a directory stands for every <problem>.NNNNN.athdf in it)
and integrates over every cell of each, with its volume dV:

  kinetic energy        E_K = sum rho |v|^2 / 2 dV
  magnetic energy       E_M = sum |B|^2 / 2 dV          (units with magnetic pressure B^2/2)
  fluctuating part      dE_M = sum |B - <B>|^2 / 2 dV   (<B> the volume mean, which a
                                                          periodic box conserves)
  rms Mach number       M = sqrt(sum |v|^2 / c_s^2 dV / V),  c_s^2 = Gamma p / rho

(Athena++-layout datasets: rho, press, vel1..3 in 'prim', Bcc1..3 in 'B', found through the
files' DatasetNames, NumVariables and VariableNames; Gamma is the file's attribute). Plots
E_K, E_M, dE_M and M against time (the decaying turbulence of problems/mhd_turbulence) and
prints a table of the values and the PNG path. Plot files whose times agree to 1e-9 count
once, the later: the output at run.t_end may land a round-off short of it, and the final
plot file then follows one step later.

Exit codes: 0 done; 2 bad input (a bad option, a missing file, a directory without plot
files, a file that is not a plot file, one without a magnetic field); 3 a file that cannot be
read or written (truncated or damaged, an I/O error).
"""

import argparse
import glob
import os
import sys

import numpy as np

import tessera_files
from tessera_files import bad_input, find_variable, open_plot_file

FIELDS = ("rho", "press", "vel1", "vel2", "vel3", "Bcc1", "Bcc2", "Bcc3")


def plot_files(inputs):
    """The plot files the arguments name; a directory stands for its *.athdf files."""
    files = []
    for path in inputs:
        if os.path.isdir(path):
            found = sorted(glob.glob(os.path.join(glob.escape(path), "*.athdf")))
            if not found:
                raise bad_input(f"{path}: a directory with no *.athdf files; expected a run's "
                                f"output.dir or {tessera_files.PLOT_FILE}")
            files += found
        else:
            files.append(path)
    return files


def integrals(path):
    """(step, (time, E_K, E_M, dE_M, rms Mach number)) of one plot file."""
    with open_plot_file(path) as f:
        names = tessera_files.variable_names(f)
        if "Bcc1" not in names:
            raise bad_input(f"{path}: no magnetic field (variables: {', '.join(names)}); "
                            f"expected a plot file of a run with mhd.enabled = true")
        q = {}
        for name in FIELDS:
            dataset, j = find_variable(f, path, name)
            q[name] = np.asarray(f[dataset][j], dtype=np.float64)  # [block][z][y][x]
        widths = [np.diff(np.asarray(f[x][:], dtype=np.float64), axis=1)
                  for x in ("x1f", "x2f", "x3f")]
        time = float(f.attrs["Time"])
        step = int(f.attrs["NumCycles"])
        gamma = float(f.attrs["Gamma"])
    # Cell volumes [block][z][y][x] from the face coordinates.
    dv = (widths[2][:, :, None, None] * widths[1][:, None, :, None] *
          widths[0][:, None, None, :])
    volume = dv.sum()
    v2 = q["vel1"] ** 2 + q["vel2"] ** 2 + q["vel3"] ** 2
    b = [q["Bcc1"], q["Bcc2"], q["Bcc3"]]
    ek = float(np.sum(0.5 * q["rho"] * v2 * dv))
    em = float(np.sum(0.5 * (b[0] ** 2 + b[1] ** 2 + b[2] ** 2) * dv))
    mean = [float(np.sum(c * dv)) / volume for c in b]
    dem = float(sum(np.sum(0.5 * (c - m) ** 2 * dv) for c, m in zip(b, mean)))
    mach = float(np.sqrt(np.sum(v2 * q["rho"] / (gamma * q["press"]) * dv) / volume))
    return step, (time, ek, em, dem, mach)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("inputs", nargs="+", help="a run's output.dir, or its plot files")
    parser.add_argument("--out", help="PNG to write (default: turbulence.png beside the first "
                        "plot file)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    files = plot_files(args.inputs)
    # One row per time: the output time that coincides with run.t_end may be reached a
    # round-off short of it, and the final plot file then follows one step later.
    rows = []
    for row in sorted(dict(integrals(path) for path in files).values()):
        if rows and row[0] - rows[-1][0] <= 1e-9 * max(abs(row[0]), 1e-300):
            rows[-1] = row
        else:
            rows.append(row)
    data = np.array(rows)
    t, ek, em, dem, mach = data.T

    print(f"{'t':>12} {'E_K':>12} {'E_M':>12} {'dE_M':>12} {'Mach_rms':>10}")
    for r in rows:
        print(f"{r[0]:12.5e} {r[1]:12.5e} {r[2]:12.5e} {r[3]:12.5e} {r[4]:10.4f}")

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a1, a2) = plt.subplots(2, 1, figsize=(7, 6.5), dpi=150, sharex=True,
                                 gridspec_kw={"height_ratios": [2, 1]})
    style = {"marker": "o", "markersize": 3}
    a1.plot(t, ek, label=r"kinetic $\sum \rho v^2/2\,dV$", **style)
    a1.plot(t, em, label=r"magnetic $\sum B^2/2\,dV$", **style)
    a1.plot(t, dem, label=r"magnetic, fluctuations $\sum |B-\langle B\rangle|^2/2\,dV$", **style)
    a1.set_ylim(bottom=0)
    a1.set_ylabel("energy")
    a1.legend(fontsize=8)
    a2.plot(t, mach, color="k", **style)
    a2.set_ylabel(r"rms Mach number")
    a2.set_xlabel("t")
    fig.suptitle(f"MHD turbulence: energies and rms Mach number ({len(rows)} output "
                 f"time{'s' * (len(rows) != 1)})")
    fig.tight_layout()
    out = args.out or os.path.join(os.path.dirname(files[0]) or ".", "turbulence.png")
    try:
        tessera_files.save_figure(fig, out)
    finally:
        plt.close(fig)
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(tessera_files.run(main))
