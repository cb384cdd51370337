#!/usr/bin/python3
"""Draws the validation figures from the CSV profiles the regression tests write.

usage: plot_validation.py CSV_DIR OUT_DIR
"""
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def load(path):
    return np.genfromtxt(path, delimiter=",", names=True)


def sod(csv_dir, out_dir):
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for n, style in ((128, "o"), (256, ".")):
        path = os.path.join(csv_dir, f"sod_{n}_x.csv")
        if not os.path.exists(path):
            continue
        d = load(path)
        ax.plot(d["x"], d["rho"], style, ms=3, label=f"Tessera, {n} cells")
        if n == 256:
            ax.plot(d["x"], d["rho_exact"], "k-", lw=1, label="exact (cell averages)")
    ax.set_xlabel("x")
    ax.set_ylabel("density")
    ax.set_title("Sod shock tube, t = 0.2 (PLM-MC, HLLC, SSP-RK2)")
    ax.legend()
    fig.tight_layout()
    out = os.path.join(out_dir, "sod.png")
    fig.savefig(out, dpi=110)
    print(out)


def sedov(csv_dir, out_dir):
    fig, ax = plt.subplots(figsize=(7, 4.2))
    finest = None
    for n in (16, 32, 48):
        path = os.path.join(csv_dir, f"sedov_{n}.csv")
        if not os.path.exists(path):
            continue
        d = load(path)
        ax.plot(d["r"], d["rho"], "-", marker=".", ms=3, label=f"octant {n}$^3$ ({2 * n}$^3$ sphere)")
        finest = d
    if finest is not None:
        ax.plot(finest["r"], finest["rho_exact"], "k-", lw=1, label="self-similar solution")
    ax.set_xlabel("r")
    ax.set_ylabel("density (spherical average)")
    ax.set_title("Sedov-Taylor blast, t = 0.05, E = 1, $\\gamma$ = 1.4")
    ax.legend()
    fig.tight_layout()
    out = os.path.join(out_dir, "sedov.png")
    fig.savefig(out, dpi=110)
    print(out)


def sod_amr(csv_dir, out_dir):
    path = os.path.join(csv_dir, "sod_amr.csv")
    if not os.path.exists(path):
        return
    d = load(path)
    fig, ax = plt.subplots(figsize=(7, 4.2))
    ax.plot(d["x"], d["rho"], "o", ms=2.5, label="density (AMR, root 32, 2 levels)")
    ref = os.path.join(csv_dir, "sod_128_x.csv")
    if os.path.exists(ref):
        e = load(ref)
        ax.plot(e["x"], e["rho_exact"], "k-", lw=1, label="exact")
    ax.set_xlabel("x")
    ax.set_ylabel("density")
    ax2 = ax.twinx()
    ax2.step(d["x"], d["level"], "r-", where="mid", lw=1, label="refinement level")
    ax2.set_ylabel("level", color="r")
    ax2.set_ylim(-0.2, 3)
    ax.set_title("Sod shock tube with AMR, t = 0.2")
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    ax.legend(h1 + h2, l1 + l2, loc="upper right")
    fig.tight_layout()
    out = os.path.join(out_dir, "sod_amr.png")
    fig.savefig(out, dpi=110)
    print(out)


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    os.makedirs(sys.argv[2], exist_ok=True)
    sod(sys.argv[1], sys.argv[2])
    sedov(sys.argv[1], sys.argv[2])
    sod_amr(sys.argv[1], sys.argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main())
