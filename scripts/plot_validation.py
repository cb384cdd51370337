#!/usr/bin/python3
"""Draws the validation figures from the CSV profiles the regression tests write.

usage: plot_validation.py CSV_DIR OUT_DIR

CSV_DIR holds the profiles the regression tests write when TESSERA_VALIDATION_DIR is set
(scripts/validation does both): sod_128_x.csv and sod_256_x.csv (x,rho,rho_exact),
sedov_16.csv, sedov_32.csv and sedov_48.csv (r,rho,rho_exact), sod_amr.csv (x,rho,level),
double_mach_32.csv and double_mach_256.csv (x,y,rho: the double Mach reflection's density
on the finest level's raster; the second from the GPU test GpuRuns.DoubleMachAtFineResolution).
Draws sod.png, sedov.png, sod_amr.png and double_mach.png into OUT_DIR from the profiles
present (a figure with none of its profiles is not drawn, with a warning) and prints their
paths.

Exit codes: 0 done; 2 bad input (a bad option, CSV_DIR missing or holding none of the
profiles, a profile without a column it needs); 3 a file that cannot be read or written
(a malformed or truncated profile, an I/O error, OUT_DIR cannot be created).
"""
import argparse
import os
import sys

import numpy as np

import tessera_files
from tessera_files import bad_input, check_file, unreadable

plt = None  # matplotlib.pyplot, imported once the input is known to be good (it is slow)

# The profiles of each figure and the columns it reads from them.
SOD = {f"sod_{n}_x.csv": ("x", "rho", "rho_exact") for n in (128, 256)}
SEDOV = {f"sedov_{n}.csv": ("r", "rho", "rho_exact") for n in (16, 32, 48)}
SOD_AMR = {"sod_amr.csv": ("x", "rho", "level")}
DOUBLE_MACH = {f"double_mach_{n}.csv": ("x", "y", "rho") for n in (32, 256)}
PROFILES = {**SOD, **SEDOV, **SOD_AMR, **DOUBLE_MACH}
EXPECTED = ("the CSV profiles the regression tests write when TESSERA_VALIDATION_DIR is set "
            "(./scripts/validation)")


def load(path, columns):
    """The columns of a CSV profile by name: exit code 2 when one of `columns` is missing,
    3 when the file cannot be read or is malformed (e.g. cut off by an interrupted test)."""
    check_file(path, f"a CSV profile with the columns {','.join(columns)}")
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError as error:
        raise unreadable(f"{path}: cannot be read: {tessera_files.reason(error)}")
    header = [name.strip() for name in lines[0].split(",")] if lines else []
    if not header:
        raise unreadable(f"{path}: the file is empty (a truncated file?); expected a header "
                         f"line {','.join(columns)}")
    for name in columns:
        if name not in header:
            raise bad_input(f"{path}: no column '{name}' (the header is "
                            f"'{lines[0][:80]}'); expected the columns {','.join(columns)}")
    rows = []
    for number, line in enumerate(lines[1:], 2):
        if not line.strip():
            continue
        fields = line.split(",")
        try:
            if len(fields) != len(header):
                raise ValueError
            rows.append([float(v) for v in fields])
        except ValueError:
            raise unreadable(f"{path}:{number}: a malformed line '{line[:80]}' (a truncated "
                             f"file?); expected {len(header)} numbers")
    if not rows:
        raise unreadable(f"{path}: no data below the header (a truncated file?)")
    data = np.array(rows)
    return {name: data[:, k] for k, name in enumerate(header)}


def save(fig, out_dir, name):
    out = os.path.join(out_dir, name)
    try:
        tessera_files.save_figure(fig, out, dpi=110)
    finally:
        plt.close(fig)
    print(out)


def sod(d, out_dir):
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for n, style in ((128, "o"), (256, ".")):
        p = d.get(f"sod_{n}_x.csv")
        if p is None:
            continue
        ax.plot(p["x"], p["rho"], style, ms=3, label=f"Tessera, {n} cells")
        if n == 256:
            ax.plot(p["x"], p["rho_exact"], "k-", lw=1, label="exact (cell averages)")
    ax.set_xlabel("x")
    ax.set_ylabel("density")
    ax.set_title("Sod shock tube, t = 0.2 (PLM-MC, HLLC, SSP-RK2)")
    ax.legend()
    fig.tight_layout()
    save(fig, out_dir, "sod.png")


def sedov(d, out_dir):
    fig, ax = plt.subplots(figsize=(7, 4.2))
    finest = None
    for n in (16, 32, 48):
        p = d.get(f"sedov_{n}.csv")
        if p is None:
            continue
        ax.plot(p["r"], p["rho"], "-", marker=".", ms=3, label=f"octant {n}$^3$ ({2 * n}$^3$ sphere)")
        finest = p
    ax.plot(finest["r"], finest["rho_exact"], "k-", lw=1, label="self-similar solution")
    ax.set_xlabel("r")
    ax.set_ylabel("density (spherical average)")
    ax.set_title("Sedov-Taylor blast, t = 0.05, E = 1, $\\gamma$ = 1.4")
    ax.legend()
    fig.tight_layout()
    save(fig, out_dir, "sedov.png")


def sod_amr(d, out_dir):
    p = d["sod_amr.csv"]
    fig, ax = plt.subplots(figsize=(7, 4.2))
    ax.plot(p["x"], p["rho"], "o", ms=2.5, label="density (AMR, root 32, 2 levels)")
    e = d.get("sod_128_x.csv")
    if e is not None:
        ax.plot(e["x"], e["rho_exact"], "k-", lw=1, label="exact")
    ax.set_xlabel("x")
    ax.set_ylabel("density")
    ax2 = ax.twinx()
    ax2.step(p["x"], p["level"], "r-", where="mid", lw=1, label="refinement level")
    ax2.set_ylabel("level", color="r")
    ax2.set_ylim(-0.2, 3)
    ax.set_title("Sod shock tube with AMR, t = 0.2")
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    ax.legend(h1 + h2, l1 + l2, loc="upper right")
    fig.tight_layout()
    save(fig, out_dir, "sod_amr.png")


def double_mach(d, out_dir):
    """Woodward & Colella's figure: 30 density contours from 1.731 to 20.92 on [0, 3] x [0, 1]."""
    present = [n for n in (32, 256) if f"double_mach_{n}.csv" in d]
    fig, axes = plt.subplots(len(present), 1, figsize=(9, 3.3 * len(present)), squeeze=False)
    levels = np.linspace(1.731, 20.92, 30)
    for ax, n in zip(axes[:, 0], present):
        p = d[f"double_mach_{n}.csv"]
        xs, ys = np.unique(p["x"]), np.unique(p["y"])
        if xs.size * ys.size != p["rho"].size:
            raise unreadable(f"double_mach_{n}.csv: {p['rho'].size} values are not a raster of "
                             f"{xs.size} x {ys.size} cell centres")
        order = np.lexsort((p["x"], p["y"]))
        rho = p["rho"][order].reshape(ys.size, xs.size)
        ax.contour(xs, ys, rho, levels=levels, colors="k", linewidths=0.5)
        ax.set_xlim(0, 3)
        ax.set_ylim(0, 1)
        ax.set_aspect("equal")
        ax.set_ylabel("y")
        ax.set_title(f"double Mach reflection, t = 0.2, dx = 1/{n}: density, 30 contours")
    axes[-1, 0].set_xlabel("x")
    fig.tight_layout()
    save(fig, out_dir, "double_mach.png")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv_dir", help="directory of the CSV profiles (TESSERA_VALIDATION_DIR)")
    parser.add_argument("out_dir", help="directory for the PNGs (created if missing)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    csv_dir, out_dir = args.csv_dir, args.out_dir
    if not os.path.isdir(csv_dir):
        what = "not a directory" if os.path.lexists(csv_dir) else "no such directory"
        raise bad_input(f"{csv_dir}: {what}; expected a directory of {EXPECTED}")
    present = [name for name in PROFILES if os.path.lexists(os.path.join(csv_dir, name))]
    if not present:
        raise bad_input(f"{csv_dir}: none of the profiles {', '.join(PROFILES)}; expected "
                        f"{EXPECTED}")
    # Every profile is read before any figure is drawn, so that a bad one leaves none half done.
    data = {name: load(os.path.join(csv_dir, name), PROFILES[name]) for name in present}
    if os.path.lexists(out_dir) and not os.path.isdir(out_dir):
        raise bad_input(f"{out_dir}: not a directory; expected a directory for the figures")
    try:
        os.makedirs(out_dir, exist_ok=True)
    except OSError as error:
        raise unreadable(f"{out_dir}: cannot create the directory: "
                         f"{tessera_files.reason(error)}")
    global plt
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    for figure, draw, profiles in (("sod.png", sod, SOD), ("sedov.png", sedov, SEDOV),
                                   ("sod_amr.png", sod_amr, SOD_AMR),
                                   ("double_mach.png", double_mach, DOUBLE_MACH)):
        if any(name in data for name in profiles):
            draw(data, out_dir)
        else:
            tessera_files.warn(f"{csv_dir}: none of {', '.join(profiles)}; {figure} not drawn")
    return 0


if __name__ == "__main__":
    sys.exit(tessera_files.run(main))
