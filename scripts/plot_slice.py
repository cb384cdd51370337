#!/usr/bin/python3
"""Slice or projection of a Tessera (Athena++ layout) .athdf plot file, saved as a PNG.

Usage: plot_slice.py FILE.athdf [--field rho] [--axis z] [--out FILE.png] [--log] [--at C]
                     [--projection]

A slice shows the field on a plane (the mid-plane unless --at says otherwise); a projection
(--projection) its integral along the axis, the column density for rho.

Reads the file with h5py only (importing yt would take longer than the plot). Every block
cut by the mid-plane is painted into one image at the resolution of the finest level
present (capped by --max-pixels), coarser levels first so that finer data is drawn over
coarser data should a file hold both; thin outlines show the blocks, coloured by refinement
level. Prints the PNG path.

Exit codes: 0 done; 2 bad input (a bad option, a missing file or a directory, a file that
is not a plot file, e.g. a checkpoint, a variable the file lacks, a plane outside the
domain); 3 a file that cannot be read or written (truncated or damaged, an I/O error).
"""

import argparse
import sys

import numpy as np

import tessera_files
from tessera_files import bad_input, find_variable, open_plot_file

AXES = {"x": 0, "y": 1, "z": 2}
# (horizontal, vertical) axes of the image for each slice normal, as yt orients them.
IMAGE_AXES = {0: (1, 2), 1: (0, 2), 2: (0, 1)}
AXIS_NAMES = ("x", "y", "z")


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", help="plot file (.athdf)")
    parser.add_argument("--field", default="rho", help="variable name (default rho)")
    parser.add_argument("--axis", default="z", choices=sorted(AXES), help="slice normal")
    parser.add_argument("--out", help="PNG to write (default: FILE with .<field>_<axis>.png)")
    parser.add_argument("--log", action="store_true", help="logarithmic colour scale")
    parser.add_argument(
        "--at", type=float, help="position of the plane along the axis (default: mid-plane)"
    )
    parser.add_argument(
        "--projection",
        action="store_true",
        help="integrate the field along the axis instead of slicing it",
    )
    parser.add_argument(
        "--max-pixels",
        type=int,
        default=4096,
        help="cap on the image size per side; finer blocks are averaged down (default 4096)",
    )
    args = parser.parse_args(argv)
    if args.max_pixels < 1:
        parser.error("--max-pixels must be positive")
    if args.out is None:
        stem = args.file[: -len(".athdf")] if args.file.endswith(".athdf") else args.file
        kind = "proj" if args.projection else ""
        args.out = f"{stem}.{args.field}_{kind}{args.axis}.png"
    return args


def reduce_to_pixels(tile, q):
    """Averages q x q cells into one pixel (cells finer than the image)."""
    n0, n1 = tile.shape
    if q <= min(n0, n1) and n0 % q == 0 and n1 % q == 0:
        return tile.reshape(n0 // q, q, n1 // q, q).mean(axis=(1, 3))
    return np.full((1, 1), tile.mean())  # block smaller than a pixel


class ImageGrid:
    """The pixel grid of an image normal to `axis` and how blocks map onto it.

    The image level is the finest present, unless that exceeds max_pixels per side.
    """

    def __init__(self, f, axis, max_pixels):
        self.levels = np.asarray(f["Levels"][:], dtype=np.int64)
        self.faces = [np.asarray(f[name][:], dtype=np.float64) for name in ("x1f", "x2f", "x3f")]
        self.lo = np.array([f.attrs[f"RootGridX{d + 1}"][0] for d in range(3)], dtype=np.float64)
        self.hi = np.array([f.attrs[f"RootGridX{d + 1}"][1] for d in range(3)], dtype=np.float64)
        root = np.asarray(f.attrs["RootGridSize"], dtype=np.int64)
        self.h, self.v = IMAGE_AXES[axis]
        level = int(self.levels.max())
        while level > 0 and max(root[self.h], root[self.v]) * 2**level > max_pixels:
            level -= 1
        self.image_level = level
        self.shape = (int(root[self.v]) * 2**level, int(root[self.h]) * 2**level)  # (rows, cols)
        self.pixel = (self.hi - self.lo) / (root * 2.0**level)
        self.outlines = []

    def extent(self):
        return (self.lo[self.h], self.hi[self.h], self.lo[self.v], self.hi[self.v])

    def place(self, image, b, tile, add=False):
        """Writes (or adds) block b's tile [rows along v][columns along h] into the image at
        the image level, and records the block's outline."""
        faces, h, v, shape = self.faces, self.h, self.v, self.shape
        level = int(self.levels[b])
        if level <= self.image_level:
            r = 2 ** (self.image_level - level)
            tile = np.repeat(np.repeat(tile, r, axis=0), r, axis=1)
        else:
            tile = reduce_to_pixels(tile, 2 ** (level - self.image_level))
        i0 = int(np.floor((faces[h][b][0] - self.lo[h]) / self.pixel[h] + 0.5))
        j0 = int(np.floor((faces[v][b][0] - self.lo[v]) / self.pixel[v] + 0.5))
        i0, j0 = min(max(i0, 0), shape[1] - 1), min(max(j0, 0), shape[0] - 1)
        rows = min(tile.shape[0], shape[0] - j0)
        cols = min(tile.shape[1], shape[1] - i0)
        width = faces[h][b][-1] - faces[h][b][0]
        height = faces[v][b][-1] - faces[v][b][0]
        if add and tile.shape == (1, 1) and level > self.image_level:
            # A block smaller than a pixel adds its share of the pixel's area.
            image[j0, i0] += tile[0, 0] * width * height / (self.pixel[h] * self.pixel[v])
        elif add:
            image[j0 : j0 + rows, i0 : i0 + cols] += tile[:rows, :cols]
        else:
            image[j0 : j0 + rows, i0 : i0 + cols] = tile[:rows, :cols]
        self.outlines.append((faces[h][b][0], faces[v][b][0], width, height, level))


def make_slice(f, path, field, axis, max_pixels, at=None):
    """Image (rows: vertical axis), its extent, the slice coordinate and the block outlines."""
    dataset, var = find_variable(f, path, field)
    data = f[dataset]
    grid = ImageGrid(f, axis, max_pixels)
    lo, hi, faces = grid.lo, grid.hi, grid.faces
    image = np.full(grid.shape, np.nan)

    # The plane (the domain's mid-plane by default) cuts a cell when lower face <= c < upper
    # face, so a plane on a face takes the cells above it at every level, consistently.
    c = 0.5 * (lo[axis] + hi[axis]) if at is None else float(at)
    if not lo[axis] <= c <= hi[axis]:
        raise bad_input(f"{path}: --at {c:g}: the plane {AXIS_NAMES[axis]} = {c:g} lies outside "
                        f"the domain; expected a value in [{lo[axis]:g}, {hi[axis]:g}]")
    for b in np.argsort(grid.levels, kind="stable"):  # coarse first: finer drawn over coarser
        fa = faces[axis][b]
        if not (fa[0] <= c < fa[-1] or (c == fa[-1] == hi[axis])):
            continue
        k = int(np.clip(np.searchsorted(fa, c, side="right") - 1, 0, fa.size - 2))
        # Only the cut plane is read. Blocks are [z][y][x], so the tile's rows run along v and
        # its columns along h: [y][x], [z][x] and [z][y] for z, y and x normals.
        if axis == 0:
            tile = data[var, b, :, :, k]
        elif axis == 1:
            tile = data[var, b, :, k, :]
        else:
            tile = data[var, b, k, :, :]
        grid.place(image, b, np.asarray(tile, dtype=np.float64))
    return image, grid.extent(), c, grid.outlines


def make_projection(f, path, field, axis, max_pixels):
    """Integral of the field along `axis`: image, extent and the outlines of every block.

    Leaf blocks tile the domain once, so each block adds its own column integrals (sum of
    cells times their width along the axis) to the pixels it covers.
    """
    dataset, var = find_variable(f, path, field)
    grid = ImageGrid(f, axis, max_pixels)
    image = np.zeros(grid.shape)
    # Blocks are [z][y][x]: summing over the axis leaves [y][x], [z][x] or [z][y], rows along v.
    sum_axis = {0: 2, 1: 1, 2: 0}[axis]
    values = np.asarray(f[dataset][var], dtype=np.float64)  # [block][z][y][x]
    for b in range(grid.levels.size):
        width = grid.faces[axis][b][1] - grid.faces[axis][b][0]
        grid.place(image, b, values[b].sum(axis=sum_axis) * width, add=True)
    return image, grid.extent(), grid.outlines


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    axis = AXES[args.axis]
    with open_plot_file(args.file) as f:
        if args.projection:
            image, extent, outlines = make_projection(f, args.file, args.field, axis,
                                                      args.max_pixels)
            c = None
        else:
            image, extent, c, outlines = make_slice(
                f, args.file, args.field, axis, args.max_pixels, args.at
            )
        time = float(f.attrs["Time"])
        cycle = int(f.attrs["NumCycles"]) if "NumCycles" in f.attrs else None

    import matplotlib

    matplotlib.use("Agg")  # no display needed (batch jobs, CI)
    import matplotlib.pyplot as plt
    from matplotlib.collections import PatchCollection
    from matplotlib.colors import LogNorm, Normalize
    from matplotlib.patches import Rectangle
    from mpl_toolkits.axes_grid1 import make_axes_locatable

    values = np.ma.masked_invalid(image)
    if args.log:
        if np.any(values <= 0):
            tessera_files.warn("non-positive values left blank on the log scale")
        values = np.ma.masked_less_equal(values, 0.0)
    if values.count() == 0:
        if args.log:
            raise bad_input(f"{args.file}: '{args.field}' has no positive values to plot here; "
                            f"expected some for --log (leave --log out)")
        raise bad_input(f"{args.file}: '{args.field}' has no finite values to plot here")
    vmin, vmax = float(values.min()), float(values.max())
    if vmin == vmax:  # uniform field: give the colour scale some width
        span = abs(vmin) * 1e-6 or 1e-6
        vmin, vmax = vmin - span, vmax + span
        if args.log:
            vmin = max(vmin, vmax * 0.5)
    norm = LogNorm(vmin=vmin, vmax=vmax) if args.log else Normalize(vmin=vmin, vmax=vmax)

    h, v = IMAGE_AXES[axis]
    width, height = extent[1] - extent[0], extent[3] - extent[2]
    aspect = height / width if width > 0 else 1.0
    fig, ax = plt.subplots(figsize=(7.0, max(3.0, min(14.0, 5.5 * aspect + 1.0))), dpi=150)
    im = ax.imshow(values, origin="lower", extent=extent, norm=norm, cmap="viridis",
                   interpolation="nearest")
    # Block outlines, one colour per refinement level (and a legend when there are several),
    # so that the adaptive mesh shows.
    levels = sorted({o[4] for o in outlines})
    # Far apart in hue and lightness, and from viridis's blue-green-yellow: white, red,
    # black, amber, cyan, magenta (neighbouring levels never look alike).
    colours = ["white", "#ff2020", "black", "#ffb000", "#00e5ff", "#ff00ff"]
    for lev in levels:
        colour = colours[lev % len(colours)]
        ax.add_collection(
            PatchCollection(
                [Rectangle((x, y), w, hgt) for x, y, w, hgt, lv in outlines if lv == lev],
                facecolor="none", edgecolor=colour, linewidth=0.3 if lev == 0 else 0.5,
                alpha=0.6 if lev == 0 else 0.8,
            )
        )
        if len(levels) > 1:
            ax.plot([], [], color=colour, linewidth=1.5, label=f"level {lev} blocks")
    if len(levels) > 1:
        ax.legend(loc="upper right", fontsize=7, framealpha=0.6)
    ax.set_xlim(extent[0], extent[1])
    ax.set_ylim(extent[2], extent[3])
    ax.set_xlabel(AXIS_NAMES[h])
    ax.set_ylabel(AXIS_NAMES[v])
    cycle_text = f", cycle {cycle}" if cycle is not None else ""
    where = f"projected along {args.axis}" if c is None else f"{args.axis} = {c:.4g}"
    ax.set_title(f"{args.field} at t = {time:.6g}{cycle_text}  ({where})")
    # A colorbar axis cut from the image's own, so it matches the image height at any aspect.
    cax = make_axes_locatable(ax).append_axes("right", size="4%", pad=0.1)
    label = f"integral of {args.field} d{args.axis}" if c is None else args.field
    fig.colorbar(im, cax=cax, label=label)
    fig.tight_layout()
    try:
        tessera_files.save_figure(fig, args.out)
    finally:
        plt.close(fig)
    print(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(tessera_files.run(main))
