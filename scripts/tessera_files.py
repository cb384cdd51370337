"""Opening and checking the files the analysis scripts read, and their errors.

Shared by scripts/plot_*.py. The scripts exit with the codes of the tessera program
(docs/user_guide.md, "Analysis scripts"):

  0  done
  2  bad input: a bad option, a missing file, a directory, a file of the wrong kind (not
     HDF5, a checkpoint where a plot file is expected, a plot file where a log is, a log
     without totals), a variable the file lacks
  3  a file that cannot be read or written: empty, truncated or damaged, an I/O error, an
     image that cannot be written

Errors go to stderr as "<script>: error: <file>: <what is wrong>; <what was expected>",
never as a Python traceback (a traceback, exit code 1, is a bug in the script).
"""

import contextlib
import glob
import os
import sys

BAD_INPUT = 2
UNREADABLE = 3

HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"
CHECKPOINT_FORMAT = "tessera-checkpoint"
PLOT_FILE = "a plot file (<problem>.NNNNN.athdf)"
# Attributes that make an HDF5 file an Athena++-layout plot file, and what else it needs.
PLOT_FILE_MARKS = ("VariableNames", "DatasetNames")
PLOT_FILE_ATTRIBUTES = ("NumVariables", "RootGridSize", "RootGridX1", "RootGridX2",
                        "RootGridX3", "Time")
PLOT_FILE_DATASETS = ("Levels", "x1f", "x2f", "x3f", "x1v", "x2v", "x3v")


class ScriptError(Exception):
    """An error for the user: its message (without the script name) and exit code."""

    def __init__(self, message, code=BAD_INPUT):
        super().__init__(message)
        self.code = code


def bad_input(message):
    return ScriptError(message, BAD_INPUT)


def unreadable(message):
    return ScriptError(message, UNREADABLE)


def script_name():
    return os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "script"


def warn(message):
    print(f"{script_name()}: warning: {message}", file=sys.stderr)


def run(main):
    """Runs main() and returns its exit code; a ScriptError becomes its message and code."""
    try:
        return main()
    except ScriptError as error:
        sys.stdout.flush()
        print(f"{script_name()}: error: {error}", file=sys.stderr)
        return error.code


def decode(value):
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def reason(error):
    """The OS's reason for an OSError, without Python's repetition of the path."""
    return error.strerror or str(error)


def check_file(path, expected, series=None):
    """Fails with exit code 2 unless path is an existing regular file.

    expected says what the script wants ("a plot file (...)"); series, a glob pattern such
    as "*.athdf", lets the error for a directory name the newest such file in it.
    """
    if os.path.isdir(path):
        found = sorted(glob.glob(os.path.join(glob.escape(path), series))) if series else []
        if found:
            raise bad_input(f"{path}: is a directory; expected {expected}, "
                            f"such as {found[-1]} (the last of {len(found)} there)")
        what = f"a directory with no {series} files" if series else "a directory"
        raise bad_input(f"{path}: is {what}; expected {expected}")
    if not os.path.lexists(path):
        raise bad_input(f"{path}: no such file; expected {expected}")
    if not os.path.exists(path):
        raise bad_input(f"{path}: a link to a missing file; expected {expected}")
    if not os.path.isfile(path):
        raise bad_input(f"{path}: not a regular file; expected {expected}")


def file_kind(path):
    """"hdf5" when the file has the HDF5 signature (at 0, or after a user block of 512, 1024,
    ... bytes), "empty" or "other"; exit code 3 when it cannot be read."""
    try:
        with open(path, "rb") as f:
            offset = 0
            while True:
                f.seek(offset)
                head = f.read(len(HDF5_SIGNATURE))
                if head == HDF5_SIGNATURE:
                    return "hdf5"
                if offset == 0 and not head:
                    return "empty"
                if len(head) < len(HDF5_SIGNATURE):
                    return "other"
                offset = 512 if offset == 0 else 2 * offset
    except OSError as error:
        raise unreadable(f"{path}: cannot be read: {reason(error)}")


def checkpoint_text(f, path):
    """None, or the message for a Tessera checkpoint given where another file is expected."""
    if decode(f.attrs.get("Format", "")) != CHECKPOINT_FORMAT:
        return None
    problem = decode(f.attrs.get("Problem", "")) or "<problem>"
    step = f.attrs.get("Step")
    which = f"problem {problem}" + (f", step {int(step)}" if step is not None else "")
    beside = sorted(glob.glob(os.path.join(glob.escape(os.path.dirname(path) or "."),
                                           glob.escape(problem) + ".[0-9]*.athdf")))
    where = (f"such as {beside[-1]}" if beside
             else f"here {problem}.NNNNN.athdf in the run's output.dir")
    return (f"{path}: this is a Tessera checkpoint ({which}), not a plot file; plot files "
            f"are <problem>.NNNNN.athdf ({where}); checkpoints are for "
            f"`tessera run --restart` and `tessera verify`")


def describe_hdf5(path):
    """What an HDF5 file is, for messages: a Tessera checkpoint, a plot file or neither."""
    import h5py

    try:
        with h5py.File(path, "r") as f:
            if decode(f.attrs.get("Format", "")) == CHECKPOINT_FORMAT:
                return "a Tessera checkpoint"
            if all(name in f.attrs for name in PLOT_FILE_MARKS):
                return "a plot file"
    except OSError:
        pass
    return "an HDF5 file"


@contextlib.contextmanager
def open_plot_file(path):
    """Opens an Athena++-layout plot file for reading (an h5py.File) after checking that it is
    one, with Tessera's exit codes for every way it may not be. An OSError raised while the
    file is open (HDF5 could not read something) becomes exit code 3."""
    import h5py

    check_file(path, PLOT_FILE, series="*.athdf")
    kind = file_kind(path)
    if kind == "empty":
        raise unreadable(f"{path}: the file is empty (an interrupted copy or write?); "
                         f"expected {PLOT_FILE}")
    if kind != "hdf5":
        raise bad_input(f"{path}: not an HDF5 file; expected {PLOT_FILE}")
    try:
        f = h5py.File(path, "r")
    except OSError as error:
        raise unreadable(f"{path}: cannot be read: a truncated or damaged HDF5 file (HDF5: "
                         f"{error})")
    try:
        with f:
            text = checkpoint_text(f, path)
            if text:
                raise bad_input(text)
            if not all(name in f.attrs for name in PLOT_FILE_MARKS):
                raise bad_input(f"{path}: an HDF5 file without the attributes of a plot file "
                                f"({', '.join(PLOT_FILE_MARKS)}); expected {PLOT_FILE}")
            check_plot_file(f, path)
            yield f
    except OSError as error:
        raise unreadable(f"{path}: cannot be read: {error}")


def check_plot_file(f, path):
    """Exit code 3 when a plot file lacks an attribute or dataset it must have."""
    for name in PLOT_FILE_ATTRIBUTES:
        if name not in f.attrs:
            raise unreadable(f"{path}: a damaged plot file: the attribute '{name}' is missing")
    names = [decode(n) for n in f.attrs["DatasetNames"]]
    counts = [int(n) for n in f.attrs["NumVariables"]]
    if len(names) != len(counts) or sum(counts) != len(f.attrs["VariableNames"]):
        raise unreadable(f"{path}: a damaged plot file: DatasetNames, NumVariables and "
                         f"VariableNames disagree")
    for name in list(PLOT_FILE_DATASETS) + names:
        if name not in f:
            raise unreadable(f"{path}: a damaged plot file: the dataset '{name}' is missing")
    blocks = f["Levels"].shape[0]
    for name, count in zip(names, counts):
        shape = f[name].shape
        if len(shape) != 5 or shape[0] != count or shape[1] != blocks:
            raise unreadable(f"{path}: a damaged plot file: dataset '{name}' has shape "
                             f"{shape}, expected ({count}, {blocks}, nz, ny, nx)")


def variable_names(f):
    return [decode(n) for n in f.attrs["VariableNames"]]


def find_variable(f, path, field):
    """(dataset name, index in it) of a variable of a plot file; exit code 2 if it has none."""
    variables = variable_names(f)
    k = 0
    for dataset, count in zip([decode(n) for n in f.attrs["DatasetNames"]],
                              f.attrs["NumVariables"]):
        for j in range(int(count)):
            if variables[k] == field:
                return dataset, j
            k += 1
    raise bad_input(f"{path}: no variable '{field}'; expected one of the file's variables: "
                    f"{', '.join(variables)}")


def save_figure(fig, out, **options):
    """Writes a matplotlib figure (options: those of savefig): exit code 3 if it cannot be
    written, 2 for an unknown image format (--out's extension)."""
    try:
        fig.savefig(out, **options)
    except OSError as error:
        raise unreadable(f"{out}: cannot write the image: {reason(error)}")
    except ValueError as error:  # matplotlib: "Format 'xyz' is not supported ..."
        raise bad_input(f"{out}: cannot write the image: {error}")
