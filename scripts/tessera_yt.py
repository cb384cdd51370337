"""Loading Tessera plot files in yt with their adiabatic index and units.

yt's athena_pp frontend reads Tessera's .athdf files as it reads Athena++'s, but takes the
adiabatic index to be 5/3 and the code units to be 1 cm, 1 g and 1 s whatever the run
used. load() passes it what the file holds: its Gamma, its [units] (UnitLength in cm,
UnitMass in g, UnitTime in s) and its mean molecular weight, so that yt's derived fields
(sound speed, Mach number, temperature, magnetic pressure) are the run's.

    import sys; sys.path.insert(0, "/path/to/tessera/scripts")
    import tessera_yt
    ds = tessera_yt.load("output/sedov/sedov.00002.athdf")
    ds.r[:]["gas", "sound_speed"]   # sqrt(Gamma p / rho), in cm/s

Magnetic fields: Tessera's B is in units where the magnetic pressure is B^2 / 2 (as in
Athena++), which is yt's default normalisation ("gaussian": B_gauss = sqrt(4 pi) B_code
in the code's pressure unit).

Run with Debian's /usr/bin/python3 (python3-yt, python3-h5py).
"""

import h5py


def file_units(path):
    """The file's Gamma, units and mean molecular weight, as a dict (read with h5py)."""
    with h5py.File(path, "r") as f:
        attrs = f.attrs
        out = {"gamma": float(attrs["Gamma"])}
        # Files written before [units] existed carry code units (1 cm, 1 g, 1 s).
        for key, name in (("length", "UnitLength"), ("mass", "UnitMass"), ("time", "UnitTime")):
            out[key] = float(attrs[name]) if name in attrs else 1.0
        out["mu"] = float(attrs["MeanMolecularWeight"]) if "MeanMolecularWeight" in attrs else 0.6
    return out


def load(path, **kwargs):
    """yt.load(path) with the file's Gamma, units and mean molecular weight.

    Further keyword arguments go to yt.load; units_override and parameters given there
    take precedence over the file's.
    """
    import yt

    u = file_units(path)
    units = {
        "length_unit": (u["length"], "cm"),
        "mass_unit": (u["mass"], "g"),
        "time_unit": (u["time"], "s"),
    }
    units.update(kwargs.pop("units_override", {}) or {})
    parameters = {"gamma": u["gamma"], "mu": u["mu"]}
    parameters.update(kwargs.pop("parameters", {}) or {})
    return yt.load(path, units_override=units, parameters=parameters, **kwargs)
