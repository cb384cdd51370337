#!/usr/bin/python3
"""Checks the total mass of a Tessera plot file as yt sees it.

Usage: yt_mass_check.py FILE.athdf EXPECTED_MASS [--rtol 1e-12]

Loads FILE with yt's athena_pp frontend (no Tessera-specific reader, which is the point:
it proves the file is a valid Athena++ .athdf), sums density * cell volume over all cells
and compares with EXPECTED_MASS in code units. Before that it checks that yt sees the
refinement hierarchy of the file (levels of every block, maximum level) and selects every
cell exactly once: Tessera, like Athena++, writes only leaf blocks, so no cell is covered
twice.

Exit status: 0 when the masses agree within rtol (relative), 1 when they do not or yt
cannot read the file, 2 on usage errors.

Run with Debian's /usr/bin/python3 (python3-yt, python3-h5py, python3-numpy).
"""

import argparse
import math
import os
import sys


def parse_args(argv):
    parser = argparse.ArgumentParser(
        description="Compare the total mass yt computes from an .athdf file with an expected value."
    )
    parser.add_argument("file", help="plot file (.athdf)")
    parser.add_argument("expected_mass", type=float, help="expected total mass, code units")
    parser.add_argument(
        "--rtol", type=float, default=1e-12, help="relative tolerance (default 1e-12)"
    )
    args = parser.parse_args(argv)  # exits with status 2 on a usage error
    # yt picks its frontend by the extension, so another name would not reach athena_pp.
    if not args.file.endswith(".athdf"):
        parser.error(f"{args.file}: not an .athdf file")
    if not os.path.isfile(args.file):
        parser.error(f"{args.file}: no such file")
    if not (args.rtol >= 0.0) or not math.isfinite(args.expected_mass):
        parser.error("rtol must be >= 0 and EXPECTED_MASS finite")
    return args


def check_hierarchy(ds, path):
    """Returns a list of problems with how yt sees the blocks of the file (empty: none)."""
    import h5py
    import numpy as np

    with h5py.File(path, "r") as f:
        file_levels = np.asarray(f["Levels"][:], dtype=np.int64)
        max_level = int(f.attrs["MaxLevel"])
        block_cells = int(np.prod(f.attrs["MeshBlockSize"]))
    problems = []
    index = ds.index
    yt_levels = np.asarray(index.grid_levels, dtype=np.int64).ravel()
    if yt_levels.size != file_levels.size or np.any(yt_levels != file_levels):
        problems.append("yt's grid levels differ from the Levels dataset")
    elif file_levels.max() > max_level or int(index.max_level) != max_level:
        problems.append(
            f"MaxLevel {max_level}, yt max_level {index.max_level}, "
            f"deepest block at level {file_levels.max()}"
        )
    else:
        # The refinement as yt uses it: every grid's cell width is the root cell width
        # halved once per level (refine_by 2), so levels and coordinates agree.
        root_dx = ((ds.domain_right_edge - ds.domain_left_edge) / ds.domain_dimensions).d
        dds = ((index.grid_right_edge - index.grid_left_edge) / index.grid_dimensions).d
        expected_dds = root_dx[None, :] / 2.0 ** yt_levels[:, None]
        bad = ~np.isclose(dds, expected_dds, rtol=1e-6, atol=0.0).all(axis=1)
        if np.any(bad):
            problems.append(
                f"{int(bad.sum())} grids whose cell width does not match their level "
                f"(first: grid {int(np.argmax(bad))})"
            )
    # Every cell of every (leaf) block selected exactly once (nothing masked, nothing twice)
    # and the cells tile the domain. Summed chunk by chunk: bounded memory on big files.
    ad = ds.all_data()
    selected = int(round(float(ad.quantities.total_quantity(("index", "ones")))))
    if selected != block_cells * file_levels.size:
        problems.append(
            f"yt selects {selected} cells, the file has {block_cells * file_levels.size}"
        )
    volume = float(ad.quantities.total_quantity(("index", "cell_volume")).to("code_length**3").d)
    domain = float(np.prod((ds.domain_right_edge - ds.domain_left_edge).to("code_length").d))
    if not math.isclose(volume, domain, rel_tol=1e-10):
        problems.append(f"the cells' volume {volume:.17g} != the domain's {domain:.17g}")
    counts = np.bincount(file_levels)
    summary = ", ".join(f"level {l}: {n}" for l, n in enumerate(counts) if n)
    print(f"blocks:        {file_levels.size} ({summary}); yt max_level {index.max_level}")
    return problems


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)

    import yt

    # The file carries no units, so yt assumes 1 code unit = 1 cgs unit and warns about it
    # for every unit; that noise would bury the result.
    yt.set_log_level(40)
    try:
        ds = yt.load(args.file)
        problems = check_hierarchy(ds, args.file)
        total = ds.all_data().quantities.total_quantity(("gas", "mass"))
        # Code units whatever yt's unit system: converted explicitly, then a plain float.
        mass = float(total.to("code_mass").d)
    except Exception as error:  # noqa: BLE001 - any failure to read is a failed check
        print(f"error: yt could not process {args.file}: {error!r}", file=sys.stderr)
        return 1

    expected = args.expected_mass
    difference = abs(mass - expected)
    relative = difference / abs(expected) if expected != 0.0 else difference
    print(f"yt mass:       {mass:.17g}")
    print(f"expected mass: {expected:.17g}")
    print(f"relative diff: {relative:.3e} (rtol {args.rtol:g})")
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    ok = math.isfinite(mass) and difference <= args.rtol * abs(expected) and not problems
    print("OK" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
