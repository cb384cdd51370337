#!/usr/bin/python3
"""Compares two output directories of Tessera runs dataset by dataset, byte for byte.

Usage: compare_h5.py DIR_A DIR_B
Every plot file (*.athdf) and checkpoint (*.chk.*.h5) of DIR_A must exist in DIR_B with the
same datasets, equal in shape, type and bytes, and the checkpoints' per-dataset Digest
attributes equal (between files of the same format version). Other attributes are not compared (they hold run identities, versions
and dates). Prints "N files, M datasets: equal" or the first
difference, and exits 1 on a difference.
"""
import pathlib
import sys

import h5py
import numpy as np


def datasets(f):
    out = {}
    f.visititems(lambda name, obj: out.__setitem__(name, obj) if isinstance(obj, h5py.Dataset) else None)
    return out


def main():
    a, b = (pathlib.Path(p) for p in sys.argv[1:3])
    files = sorted(p.name for p in a.iterdir() if p.suffix in (".athdf", ".h5"))
    if not files:
        print("no files in", a)
        return 1
    count = 0
    for name in files:
        if not (b / name).exists():
            print(f"{len(files):<8} {name} missing in {b}")
            return 1
        with h5py.File(a / name, "r") as fa, h5py.File(b / name, "r") as fb:
            da, db = datasets(fa), datasets(fb)
            # Digests are compared between files of one checkpoint format (version 3 changed
            # how a Digest is formed, not the data).
            same_format = fa.attrs.get("FormatVersion") == fb.attrs.get("FormatVersion")
            if sorted(da) != sorted(db):
                print(f"{len(files):<8} {name}: dataset lists differ")
                return 1
            for key in sorted(da):
                x, y = da[key][()], db[key][()]
                count += 1
                if x.shape != y.shape or x.dtype != y.dtype or x.tobytes() != y.tobytes():
                    diff = ""
                    if x.shape == y.shape and np.issubdtype(x.dtype, np.number):
                        diff = f" (max |a-b| {np.max(np.abs(x.astype(float) - y.astype(float))):.3e})"
                    print(f"{len(files):<8} {name}:{key} differs{diff}")
                    return 1
                ga, gb = da[key].attrs.get("Digest"), db[key].attrs.get("Digest")
                if same_format and ((ga is None) != (gb is None) or (ga is not None and ga != gb)):
                    print(f"{len(files):<8} {name}:{key} Digest attributes differ: {ga!r}, {gb!r}")
                    return 1
    print(f"{len(files):<8} {count} datasets: equal")
    return 0


if __name__ == "__main__":
    sys.exit(main())
