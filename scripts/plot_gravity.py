#!/usr/bin/python3
"""Figures of self-gravitating runs, saved as PNGs.

Usage:
  plot_gravity.py energy LOG [LOG ...] [--out FILE.png] [--e0 E0 --w0 W0]
  plot_gravity.py sphere PLOTFILE [--out FILE.png]
  plot_gravity.py point-masses PLOTFILE [PLOTFILE ...] [--out FILE.png]

Without --out the figure goes beside the first input: LOG.gravity_energy.png,
PLOTFILE.gravity_sphere.png, PLOTFILE.gravity_point_masses.png (the stem without .athdf).

energy: the "gravity:" lines of `tessera run` logs (potential energy W and total energy
E + W, every run.log_interval steps): W, the gas energy E (thermal + kinetic [+ magnetic])
and the change of the total, per log (one line style each, labelled by the log's root
grid). With --e0/--w0 the change is (E + W - E0) / |W0| (the Evrard collapse:
E0 = 0.05 - 2/3, W0 = -2/3); otherwise relative to the first line.

sphere: the potential phi of a uniform_sphere plot file against radius, with the
analytic -2 pi G rho (R^2 - r^2/3) inside and -G M / r outside (G, R, density and
background read from the file's parameters).

point-masses: phi / phi_exact of point_masses plot files (the first of each run, t = 0)
against the distance to the nearest mass in root cells, phi_exact = -G sum M_i / |x - x_i|
(masses, positions and G read from each file's parameters), one colour per file labelled
by its amr.max_level: seed 001's Fig. 15.

Exit codes: 0 done; 2 bad input (bad options, a missing file, no "gravity:" lines, a plot
file without phi); 3 a file that cannot be read or written.
"""

import argparse
import json
import re
import sys

import numpy as np

LINE = re.compile(r"gravity: step (\d+) t (\S+) potential energy (\S+) total energy (\S+)")
GRID = re.compile(r"^\s*nx = \[(\d+), (\d+), (\d+)\]", re.M)


def fail(code, message):
    print(f"plot_gravity.py: error: {message}", file=sys.stderr)
    sys.exit(code)


def read_log(path):
    try:
        text = open(path, encoding="utf-8", errors="replace").read()
    except (FileNotFoundError, IsADirectoryError) as e:
        fail(2, f"{path}: {e.strerror} (expected the log of a run)")
    except OSError as e:
        fail(3, f"{path}: {e.strerror}")
    rows = [tuple(float(x) for x in m.groups()[1:]) for m in LINE.finditer(text)]
    if len(rows) < 2:
        fail(2, f"{path}: fewer than two 'gravity:' lines (is it the log of a run with "
                "gravity.enabled = true?)")
    grid = GRID.search(text)
    label = f"{grid.group(1)}^3" if grid else path
    return label, np.array(rows)


def energy(args, plt):
    fig, ax = plt.subplots(1, 2, figsize=(11, 4.2))
    for path in args.logs:
        label, r = read_log(path)
        t, w, total = r[:, 0], r[:, 1], r[:, 2]
        line = ax[0].plot(t, w, label=f"W, {label}")[0]
        ax[0].plot(t, total - w, "--", color=line.get_color(), label=f"E gas, {label}")
        if args.e0 is not None and args.w0 is not None:
            change = (total - args.e0) / abs(args.w0)
        else:
            change = (total - total[0]) / abs(w[0])
        ax[1].plot(t, change, color=line.get_color(), label=label)
    ax[0].set_xlabel("t")
    ax[0].set_ylabel("energy")
    ax[0].legend(fontsize=8)
    ax[1].set_xlabel("t")
    ax[1].set_ylabel("(E + W - E0) / |W0|")
    ax[1].axhline(0, color="k", lw=0.5)
    ax[1].legend(fontsize=8)
    fig.tight_layout()
    return fig


def read_plot(path):
    import h5py

    try:
        f = h5py.File(path, "r")
    except OSError as e:
        fail(2, f"{path}: cannot open as HDF5 ({e}); expected a plot file")
    if "VariableNames" not in f.attrs:
        fail(2, f"{path}: not a Tessera plot file (no VariableNames)")
    names = [n.decode() for n in f.attrs["VariableNames"]]
    if "phi" not in names or "grav" not in f:
        fail(2, f"{path}: no potential (phi) in this plot file")
    params = f.attrs["Parameters"] if "Parameters" in f.attrs else b""
    params = params.decode() if isinstance(params, bytes) else str(params)
    return f, params


def sphere(args, plt):
    f, params = read_plot(args.plotfile)

    def param(section, key, default):
        block = re.search(r"\[" + section + r"\](.*?)(\n\[|\Z)", params, re.S)
        m = re.search(r"^\s*" + key + r" = (\S+)", block.group(1), re.M) if block else None
        return float(m.group(1)) if m else default

    G = param("gravity", "G", 1.0)
    R = param("problem", "radius", 0.25)
    rho = param("problem", "density", 1.0) - param("problem", "background", 0.0)
    phi = f["grav"][0]
    x, y, z = f["x1v"][:], f["x2v"][:], f["x3v"][:]
    # The sphere is centred in the domain.
    c = [0.5 * (f[a][:].min() + f[a][:].max()) for a in ("x1f", "x2f", "x3f")]
    r = np.sqrt(
        (x[:, None, None, :] - c[0]) ** 2
        + (y[:, None, :, None] - c[1]) ** 2
        + (z[:, :, None, None] - c[2]) ** 2
    ).ravel()
    phi = phi.ravel()
    M = 4 / 3 * np.pi * R**3 * rho
    rr = np.linspace(1e-3, r.max(), 400)
    exact = np.where(rr < R, -2 * np.pi * G * rho * (R**2 - rr**2 / 3), -G * M / rr)
    fig, ax = plt.subplots(figsize=(6, 4.2))
    ax.plot(r, phi, ".", ms=1, alpha=0.3, label="Tessera (cells)")
    ax.plot(rr, exact, "k-", lw=1, label="analytic")
    ax.axvline(R, color="gray", lw=0.5)
    ax.set_xlabel("r")
    ax.set_ylabel("phi")
    ax.legend()
    fig.tight_layout()
    return fig


def param_text(params, section, key):
    block = re.search(r"\[" + section + r"\](.*?)(\n\[|\Z)", params, re.S)
    m = re.search(r"^\s*" + key + r" = (.+)$", block.group(1), re.M) if block else None
    return m.group(1).strip() if m else None


def point_masses(args, plt):
    k = len(args.plotfiles)
    cols = min(k, 2)
    rows = (k + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.2 * rows), squeeze=False,
                             sharex=True, sharey=True)
    for n, path in enumerate(args.plotfiles):
        ax = axes[n // cols][n % cols]
        f, params = read_plot(path)
        masses = param_text(params, "problem", "masses")
        positions = param_text(params, "problem", "positions")
        if masses is None or positions is None:
            fail(2, f"{path}: no problem.masses / problem.positions (not a point_masses run)")
        m = np.atleast_1d(np.array(json.loads(masses), dtype=float))
        x = np.array(json.loads(positions), dtype=float).reshape(-1, 3)
        G = float(param_text(params, "gravity", "G") or 1.0)
        nx = int(re.search(r"\[(\d+)", param_text(params, "mesh", "nx")).group(1))
        lo = json.loads(param_text(params, "mesh", "xmin") or "[0, 0, 0]")
        hi = json.loads(param_text(params, "mesh", "xmax") or "[1, 1, 1]")
        h0 = (hi[0] - lo[0]) / nx
        levels = param_text(params, "amr", "max_level") or "0"
        phi = f["grav"][0]
        xv, yv, zv = f["x1v"][:], f["x2v"][:], f["x3v"][:]
        X = np.broadcast_to(xv[:, None, None, :], phi.shape)
        Y = np.broadcast_to(yv[:, None, :, None], phi.shape)
        Z = np.broadcast_to(zv[:, :, None, None], phi.shape)
        exact = np.zeros(phi.shape)
        nearest = np.full(phi.shape, np.inf)
        for mi, xi in zip(m, x):
            r = np.sqrt((X - xi[0]) ** 2 + (Y - xi[1]) ** 2 + (Z - xi[2]) ** 2)
            exact -= G * mi / np.maximum(r, 1e-300)
            nearest = np.minimum(nearest, r)
        ax.plot((nearest / h0).ravel(), (phi / exact).ravel(), ".", ms=1, alpha=0.3)
        ax.axhline(1.0, color="k", lw=0.5)
        ax.set_xscale("log")
        ax.set_ylim(0.7, 1.2)
        correction = param_text(params, "gravity", "potential_correction")
        title = f"{levels} refinement levels"
        if levels != "0" and correction is not None:
            title += ", with correction" if correction == "true" else ", without correction"
        ax.set_title(title, fontsize=10)
        if n // cols == rows - 1:
            ax.set_xlabel("distance to nearest mass / root cell")
        if n % cols == 0:
            ax.set_ylabel("phi / phi_exact")
    for n in range(k, rows * cols):
        axes[n // cols][n % cols].axis("off")
    fig.tight_layout()
    return fig


def main():
    p = argparse.ArgumentParser(description="Figures of self-gravitating runs.")
    sub = p.add_subparsers(dest="what", required=True)
    e = sub.add_parser("energy")
    e.add_argument("logs", nargs="+")
    e.add_argument("--out", help="the PNG (default: beside the first log)")
    e.add_argument("--e0", type=float)
    e.add_argument("--w0", type=float)
    s = sub.add_parser("sphere")
    s.add_argument("plotfile")
    s.add_argument("--out", help="the PNG (default: beside the plot file)")
    q = sub.add_parser("point-masses")
    q.add_argument("plotfiles", nargs="+")
    q.add_argument("--out", help="the PNG (default: beside the first plot file)")
    args = p.parse_args()
    if args.out is None:
        first = {"energy": lambda: args.logs[0], "sphere": lambda: args.plotfile,
                 "point-masses": lambda: args.plotfiles[0]}[args.what]()
        stem = first[: -len(".athdf")] if first.endswith(".athdf") else first
        args.out = f"{stem}.gravity_{args.what.replace('-', '_')}.png"
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure = {"energy": energy, "sphere": sphere, "point-masses": point_masses}[args.what]
    fig = figure(args, plt)
    try:
        fig.savefig(args.out, dpi=110)
    except OSError as err:
        fail(3, f"{args.out}: {err.strerror}")
    print(args.out)


if __name__ == "__main__":
    main()
