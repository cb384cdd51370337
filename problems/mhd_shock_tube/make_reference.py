#!/usr/bin/python3
"""Brio-Wu reference density for tests/regression/test_mhd_shock_tube.cpp, from a plot file.

Usage: make_reference.py FILE.athdf [--command TEXT] [--note TEXT] [--cells 1024]
                         [--out problems/mhd_shock_tube/brio_wu_reference.txt]

FILE is the final plot file (t = run.t_end) of a high-resolution run of
problems/mhd_shock_tube/brio_wu.toml, e.g. 8192 cells along the tube on a GPU:

  tessera run problems/mhd_shock_tube/brio_wu.toml run.backend=cuda \\
      mesh.nx=[8192,16,16] mesh.xmax=[1,0.001953125,0.001953125] output.dt=0.1

Brio & Wu's problem has no closed-form solution (its compound wave, an intermediate shock
attached to a slow rarefaction, is found numerically), so the test compares with such a
run. The script averages the density over the transverse cells and, weighting by volume,
onto --cells equal cells of the tube (any resolution of at least --cells cells works, AMR
included), and writes rows "x rho" (cell centre, average) after '#' lines saying how the
reference was made: the command (--command, else `tessera run brio_wu.toml` with the
overrides that give the file's parameters), the resolution, the Riemann solver and the
scheme, read from the parameters the plot file stores. --note adds a line (e.g. that the
reference is provisional).

The run must be Brio-Wu as brio_wu.toml states it (gamma, states, bx, x0, t_end, a tube
of length 1 from 0): the test assumes that grid and those data.

Exit codes: 0 done; 2 bad input (a missing file, not a plot file, another problem or other
data than brio_wu.toml's, a plot file before t_end, a resolution below --cells); 3 a file
that cannot be read or written.
"""

import argparse
import os
import sys
import tomllib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "scripts"))

import tessera_files  # noqa: E402
from tessera_files import bad_input, decode, find_variable, open_plot_file  # noqa: E402

PRESET = os.path.join(HERE, "brio_wu.toml")
# What makes a run Brio-Wu: these keys of the run must equal brio_wu.toml's.
PHYSICS_KEYS = [("run", "t_end"), ("hydro", "gamma"), ("mhd", "enabled")] + [
    ("problem", k) for k in ("name", "x0", "bx", "rho_l", "p_l", "u_l", "v_l", "w_l", "by_l",
                             "bz_l", "rho_r", "p_r", "u_r", "v_r", "w_r", "by_r", "bz_r")]
# The scheme, for the header.
SCHEME_KEYS = [("hydro", k) for k in ("riemann", "reconstruction", "limiter", "integrator",
                                      "cfl")] + [("mhd", "glm_alpha"), ("amr", "max_level")]


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", help="final plot file (.athdf) of the high-resolution run")
    parser.add_argument("--command", help="the command that made the run (for the header)")
    parser.add_argument("--note", help="a line for the header (e.g. 'PROVISIONAL: ...')")
    parser.add_argument("--cells", type=int, default=1024,
                        help="cells of the reference along the tube (default 1024)")
    parser.add_argument("--out", default=os.path.join(HERE, "brio_wu_reference.txt"),
                        help="file to write (default: brio_wu_reference.txt beside this script)")
    args = parser.parse_args(argv)
    if args.cells < 1:
        parser.error("--cells must be positive")
    return args


def get(params, section, key):
    return params.get(section, {}).get(key)


def toml_value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return "[" + ",".join(toml_value(x) for x in v) + "]"
    return repr(v) if isinstance(v, float) else str(v)


def derived_command(preset, params):
    """`tessera run brio_wu.toml` with the overrides that give the run's parameters: every
    key of the preset (but [output]) whose value the run changed, and the backend."""
    overrides = [f"{section}.{key}={toml_value(params[section][key])}"
                 for section, keys in preset.items() if section != "output"
                 for key, want in keys.items()
                 if key in params.get(section, {}) and params[section][key] != want]
    backend = get(params, "run", "backend")
    if backend is not None:
        overrides.append(f"run.backend={backend}")
    return " ".join(["tessera run problems/mhd_shock_tube/brio_wu.toml"] + overrides)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    with open(PRESET, "rb") as f:
        preset = tomllib.load(f)
    with open_plot_file(args.file) as f:
        if "Parameters" not in f.attrs:
            raise bad_input(f"{args.file}: no 'Parameters' attribute; expected a Tessera plot "
                            f"file, which stores the run's parameters")
        params = tomllib.loads(decode(f.attrs["Parameters"]))
        time = float(f.attrs["Time"])
        version = decode(f.attrs.get("CodeVersion", b"?"))
        precision = decode(f.attrs.get("Precision", b"?"))
        root = [int(n) for n in f.attrs["RootGridSize"]]
        dataset, j = find_variable(f, args.file, "rho")
        rho = np.asarray(f[dataset][j], dtype=np.float64)  # [block][z][y][x]
        faces = [np.asarray(f[f"x{d + 1}f"][:], dtype=np.float64) for d in range(3)]
        extent = [tuple(float(v) for v in f.attrs[f"RootGridX{d + 1}"][:2]) for d in range(3)]

    for section, key in PHYSICS_KEYS:
        want, got = get(preset, section, key), get(params, section, key)
        if want != got:
            raise bad_input(f"{args.file}: {section}.{key} = {got!r}, but brio_wu.toml has "
                            f"{want!r}; expected a run of Brio & Wu's problem as the preset "
                            f"states it")
    t_end = params["run"]["t_end"]
    if abs(time - t_end) > 1e-12 * t_end:
        raise bad_input(f"{args.file}: t = {time!r}, not run.t_end = {t_end!r}; expected the "
                        f"final plot file of the run")
    axis = "xyz".index(params["problem"]["direction"])
    if extent[axis] != (0.0, 1.0):
        raise bad_input(f"{args.file}: the tube spans {list(extent[axis])} along "
                        f"{'xyz'[axis]}; expected [0, 1] as in brio_wu.toml")

    # Cells: the tube coordinate's faces and the volume of every cell.
    nb, nz, ny, nx = rho.shape
    width = [fc[:, 1:] - fc[:, :-1] for fc in faces]  # [block][i]
    volume = (width[2][:, :, None, None] * width[1][:, None, :, None] *
              width[0][:, None, None, :])
    lo_f = faces[axis][:, :-1]
    shape = [nb, 1, 1, 1]
    shape[3 - axis] = lo_f.shape[1]
    lo = np.broadcast_to(lo_f.reshape(shape), rho.shape).ravel()
    hi = np.broadcast_to(faces[axis][:, 1:].reshape(shape), rho.shape).ravel()
    vol = volume.ravel()
    val = rho.ravel()
    h = 1.0 / args.cells
    if np.max(hi - lo) > h * (1 + 1e-12):
        raise bad_input(f"{args.file}: cells of width {np.max(hi - lo):g} along the tube, "
                        f"wider than the reference's {h:g} (--cells {args.cells}); expected a "
                        f"run with at least {args.cells} cells along the tube")
    # A cell at most one bin wide overlaps at most two bins: split it between them.
    first = np.minimum(np.floor(lo / h + 1e-9).astype(int), args.cells - 1)
    split = np.clip((first + 1) * h, lo, hi)
    mass = np.zeros(args.cells)
    weight = np.zeros(args.cells)
    frac = (split - lo) / (hi - lo)
    for bins, fr in ((first, frac), (np.minimum(first + 1, args.cells - 1), 1 - frac)):
        np.add.at(mass, bins, val * vol * fr)
        np.add.at(weight, bins, vol * fr)
    if np.any(weight <= 0):
        raise bad_input(f"{args.file}: some reference cells hold no cell of the run")
    avg = mass / weight

    command = args.command or derived_command(preset, params)
    scheme = ", ".join(f"{s}.{k} = {get(params, s, k)!r}" for s, k in SCHEME_KEYS)
    lines = [
        "# Brio & Wu (1988) shock tube, density at t = %r: reference of "
        "tests/regression/test_mhd_shock_tube.cpp" % time,
    ]
    if args.note:
        lines.append(f"# {args.note}")
    lines += [
        f"# made by problems/mhd_shock_tube/make_reference.py from {os.path.basename(args.file)}",
        f"# run: {command}",
        f"# resolution: {root[axis]} cells along {'xyz'[axis]} "
        f"({' x '.join(str(n) for n in root)} root cells), {precision} precision, "
        f"Tessera {version}",
        f"# scheme: {scheme}",
        f"# rows: centre x and volume-weighted average density of {args.cells} equal cells "
        f"of [0, 1]",
    ]
    rows = [f"{(i + 0.5) * h:.10f} {a:.12e}" for i, a in enumerate(avg)]
    try:
        with open(args.out, "w") as out:
            out.write("\n".join(lines + rows) + "\n")
    except OSError as error:
        raise tessera_files.unreadable(f"{args.out}: cannot write: {tessera_files.reason(error)}")
    print(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(tessera_files.run(main))
