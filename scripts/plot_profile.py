#!/usr/bin/python3
"""1D profile of a Tessera .athdf plot file: a line-out or a radial average, saved as a PNG.

Usage: plot_profile.py FILE.athdf [--field rho] (--line x|y|z [--through X Y Z] |
                       --radial [--center X Y Z] [--bins N]) [--compare] [--out FILE.png]

--line takes every leaf cell the line through --through (default: the domain centre) along
the axis crosses, at the resolution of the finest level there. --radial averages the field
over spherical shells about --center (default: the problem's center parameter, else the
domain centre), weighting cells by volume. --compare overlays the analytic solution of the
problem (sod, sedov: density only), evaluated by `tessera analytic` as cell averages of the
same cells and averaged the same way, and prints the L1 difference. Prints the PNG path.

Exit codes: 0 done; 2 bad input (a bad option, a missing file or a directory, a file that
is not a plot file, e.g. a checkpoint, a variable the file lacks, a line that misses the
domain, --compare without the tessera program or an analytic solution); 3 a file that
cannot be read or written (truncated or damaged, an I/O error).
"""

import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

import tessera_files
from tessera_files import bad_input, decode, find_variable, open_plot_file

AXES = {"x": 0, "y": 1, "z": 2}
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", help="plot file (.athdf)")
    parser.add_argument("--field", default="rho", help="variable name (default rho)")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--line", choices=sorted(AXES), help="line-out along this axis")
    mode.add_argument("--radial", action="store_true", help="average over spherical shells")
    parser.add_argument("--through", type=float, nargs=3, metavar=("X", "Y", "Z"),
                        help="a point of the line (default: the domain centre)")
    parser.add_argument("--center", type=float, nargs=3, metavar=("X", "Y", "Z"),
                        help="centre of the shells (default: problem.center or the domain centre)")
    parser.add_argument("--bins", type=int, default=64, help="radial shells (default 64)")
    parser.add_argument("--compare", action="store_true",
                        help="overlay the analytic density (problems with one: sod, sedov, "
                             "acoustic_wave, blob, uniform, mhd_linear_wave, field_loop)")
    parser.add_argument("--tessera", default=os.path.join(REPO, "build", "bin", "tessera"),
                        help="tessera program for --compare (default: build/bin/tessera)")
    parser.add_argument("--out", help="PNG to write (default: FILE with .<field>_<mode>.png)")
    args = parser.parse_args(argv)
    if args.bins < 1:
        parser.error("--bins must be positive")
    if args.compare and args.field != "rho":
        parser.error("--compare: the analytic solutions give the density (rho) only")
    if args.out is None:
        stem = args.file[: -len(".athdf")] if args.file.endswith(".athdf") else args.file
        mode = f"line{args.line}" if args.line else "radial"
        args.out = f"{stem}.{args.field}_{mode}.png"
    return args


def field_values(f, path, field):
    """[block][z][y][x] values of a variable, located by the Athena++ name attributes."""
    dataset, j = find_variable(f, path, field)
    return np.asarray(f[dataset][j], dtype=np.float64)


def cells(f, path, field):
    """Centres (n, 3), widths (n,) and values (n,) of every cell of the file."""
    values = field_values(f, path, field)
    centres = [np.asarray(f[name][:], dtype=np.float64) for name in ("x1v", "x2v", "x3v")]
    faces = np.asarray(f["x1f"][:], dtype=np.float64)
    nb, n = centres[0].shape
    z, y, x = np.meshgrid(np.arange(n), np.arange(n), np.arange(n), indexing="ij")
    pos = np.empty((nb, n, n, n, 3))
    pos[..., 0] = centres[0][:, x]
    pos[..., 1] = centres[1][:, y]
    pos[..., 2] = centres[2][:, z]
    width = np.repeat((faces[:, 1] - faces[:, 0])[:, None], n**3, axis=1)
    return pos.reshape(-1, 3), width.reshape(-1), values.reshape(-1)


def parameter(f, section, key):
    """A value of the effective parameters stored in the file (TOML text), or None."""
    text = decode(f.attrs.get("Parameters", b""))
    current = None
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("[") and line.endswith("]"):
            current = line[1:-1]
        elif current == section and line.split("=")[0].strip() == key:
            return line.split("=", 1)[1].strip()
    return None


def analytic(args, f, pos, width, time):
    """Analytic cell averages from `tessera analytic`, given the file's own parameters."""
    if not (os.path.isfile(args.tessera) and os.access(args.tessera, os.X_OK)):
        what = "not an executable program" if os.path.exists(args.tessera) else "no such program"
        raise bad_input(f"{args.tessera}: {what}; --compare needs the tessera program "
                        f"(build it, or name it with --tessera)")
    if "Parameters" not in f.attrs:
        raise bad_input(f"{args.file}: no 'Parameters' attribute; --compare needs the "
                        f"parameters that Tessera stores in its plot files")
    try:
        with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as params:
            params.write(decode(f.attrs["Parameters"]))
        try:
            points = "".join(f"{p[0]!r} {p[1]!r} {p[2]!r} {h!r}\n" for p, h in zip(pos, width))
            out = subprocess.run([args.tessera, "analytic", params.name, "--time", repr(time)],
                                 input=points, capture_output=True, text=True)
        finally:
            os.unlink(params.name)
    except OSError as error:
        raise tessera_files.unreadable(f"{args.tessera}: --compare: cannot run `tessera "
                                       f"analytic`: {tessera_files.reason(error)}")
    if out.returncode != 0:
        detail = out.stderr.strip().splitlines()[-1:] or [f"exit code {out.returncode}"]
        raise bad_input(f"{args.file}: --compare: `tessera analytic` failed: {detail[0]}")
    exact = np.array([float(v) for v in out.stdout.split()])
    if exact.size != width.size:
        raise bad_input(f"{args.file}: --compare: `tessera analytic` printed {exact.size} "
                        f"values for {width.size} cells")
    return exact


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    with open_plot_file(args.file) as f:
        time = float(f.attrs["Time"])
        problem = decode(f.attrs.get("Problem", b""))
        lo = np.array([f.attrs[f"RootGridX{d + 1}"][0] for d in range(3)])
        hi = np.array([f.attrs[f"RootGridX{d + 1}"][1] for d in range(3)])
        pos, width, values = cells(f, args.file, args.field)
        if args.line:
            axis = AXES[args.line]
            through = np.array(args.through) if args.through else 0.5 * (lo + hi)
            # The cells the line crosses: |transverse offset| < half a cell (lower face
            # inclusive), the same rule at every level.
            keep = np.ones(values.size, dtype=bool)
            for d in range(3):
                if d != axis:
                    off = through[d] - (pos[:, d] - 0.5 * width)
                    keep &= (off >= 0) & (off < width)
            pos, width, values = pos[keep], width[keep], values[keep]
            if values.size == 0:
                box = " x ".join(f"[{a:g}, {b:g}]" for a, b in zip(lo, hi))
                raise bad_input(f"{args.file}: --through {' '.join(f'{v:g}' for v in through)}: "
                                f"the line along {args.line} misses the domain; expected a "
                                f"point in {box}")
            order = np.argsort(pos[:, axis])
            pos, width, values = pos[order], width[order], values[order]
            coord = pos[:, axis]
            weight = width
            label = args.line
        else:
            centre = args.center
            if centre is None:
                text = parameter(f, "problem", "center")
                centre = ([float(v) for v in text.strip("[]").split(",")] if text
                          else list(0.5 * (lo + hi)))
            coord = np.linalg.norm(pos - np.array(centre), axis=1)
            weight = width**3
            label = "r"
        exact = analytic(args, f, pos, width, time) if args.compare else None

    if args.radial:
        edges = np.linspace(0.0, coord.max(), args.bins + 1)
        mass = np.histogram(coord, edges, weights=weight)[0]
        filled = mass > 0
        centres = 0.5 * (edges[1:] + edges[:-1])[filled]

        def shell_mean(q):
            return np.histogram(coord, edges, weights=weight * q)[0][filled] / mass[filled]

        x, y = centres, shell_mean(values)
        y_exact = shell_mean(exact) if exact is not None else None
    else:
        x, y, y_exact = coord, values, exact

    if exact is not None:
        # Volume-weighted L1 over the cells shown (per unit length or volume).
        l1 = float(np.sum(np.abs(values - exact) * weight) / np.sum(weight))
        print(f"L1 {args.field} difference to the analytic solution ({problem}, "
              f"{'radial' if args.radial else 'line-out'}): {l1:.6e}")

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=150)
    if exact is not None:
        ax.plot(x, y_exact, "-", color="black", lw=1.2, label=f"analytic ({problem})")
    ax.plot(x, y, "o", ms=2.5, color="tab:blue", label="Tessera")
    ax.set_xlabel(label)
    ax.set_ylabel(args.field)
    where = f"line along {args.line}" if args.line else "radial average"
    ax.set_title(f"{args.field} at t = {time:.6g} ({where})")
    ax.legend()
    fig.tight_layout()
    try:
        tessera_files.save_figure(fig, args.out)
    finally:
        plt.close(fig)
    print(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(tessera_files.run(main))
