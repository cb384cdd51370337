#!/usr/bin/env bash
# Runs a small Sedov blast, then checks that yt (athena_pp frontend) loads the plot file
# and finds the total mass the code logged, and that the slice script draws it.
# usage: yt_load_test.sh TESSERA_BINARY SOURCE_DIR WORK_DIR
set -euo pipefail
bin=$1 src=$2 work=$3
rm -rf "$work"
mkdir -p "$work"
"$bin" run "$src/problems/sedov/sedov.toml" "mesh.nx=[32,32,32]" run.max_steps=10 \
  "output.dir=$work" output.dt=0 >"$work/log.txt"
mass=$(awk '/^total mass/ {print $3}' "$work/log.txt")
last=$(ls "$work"/sedov.*.athdf | sort | tail -n 1)
test -f "$last.xdmf"
echo "code total mass: $mass, file: $last"
/usr/bin/python3 "$src/tests/regression/yt_mass_check.py" "$last" "$mass" --rtol 1e-12
/usr/bin/python3 "$src/scripts/plot_slice.py" "$last" --out "$work/slice.png"
test -s "$work/slice.png"

# An adaptive run: yt must see every level (yt_mass_check compares yt's grid levels and
# cell widths with the file's) and the same total mass.
"$bin" run "$src/problems/blob/blob.toml" amr.max_level=2 run.max_steps=4 "output.dir=$work/amr" \
  output.dt=0 >"$work/log_amr.txt"
mass=$(awk '/^total mass/ {print $3}' "$work/log_amr.txt")
last=$(ls "$work"/amr/blob.*.athdf | sort | tail -n 1)
/usr/bin/python3 -c "import h5py, sys; sys.exit(0 if h5py.File('$last')['Levels'][:].max() == 2 else 1)"
/usr/bin/python3 "$src/tests/regression/yt_mass_check.py" "$last" "$mass" --rtol 1e-12
/usr/bin/python3 "$src/scripts/plot_slice.py" "$last" --out "$work/slice_amr.png"
test -s "$work/slice_amr.png"

# Passive scalars: yt reads the concentration r0, and the scalar's total as yt computes it
# (concentration * density * volume) equals the code's.
"$bin" run "$src/problems/blob/blob.toml" amr.max_level=1 run.max_steps=4 hydro.passive_scalars=1 \
  "output.dir=$work/scalar" output.dt=0 >"$work/log_scalar.txt"
total=$(awk '/^total scalar 0/ {print $4}' "$work/log_scalar.txt")
last=$(ls "$work"/scalar/blob.*.athdf | sort | tail -n 1)
/usr/bin/python3 - "$last" "$total" <<'PY'
import sys
import yt
yt.set_log_level(40)
ds = yt.load(sys.argv[1])
assert ("athena_pp", "r0") in ds.field_list, ds.field_list
ad = ds.all_data()
s = (ad["athena_pp", "r0"] * ad["athena_pp", "rho"] * ad["index", "cell_volume"]).sum()
expected = float(sys.argv[2])
got = float(s.d)
print(f"yt scalar total {got!r}, code {expected!r}")
sys.exit(0 if abs(got - expected) <= 1e-12 * abs(expected) else 1)
PY

# GLM-MHD with a refined level: yt's Athena++ frontend finds the field (dataset B, Bcc1..3)
# as magnetic_field_x/y/z, equal to the stored values in code units, and the x-flux it
# integrates equals the code's total.
"$bin" run "$src/problems/mhd_blast/mhd_blast.toml" "mesh.nx=[32,32,32]" \
  "mesh.xmin=[-0.5,-0.5,-0.5]" "mesh.xmax=[0.5,0.5,0.5]" amr.max_level=1 run.max_steps=2 \
  "output.dir=$work/mhd" output.dt=0 >"$work/log_mhd.txt"
total=$(awk '/^total magnetic field x/ {print $5}' "$work/log_mhd.txt")
last=$(ls "$work"/mhd/mhd_blast.*.athdf | sort | tail -n 1)
/usr/bin/python3 - "$last" "$total" <<'PY'
import sys
import numpy as np
import yt
yt.set_log_level(40)
ds = yt.load(sys.argv[1])
for d in "xyz":
    assert ("gas", f"magnetic_field_{d}") in ds.derived_field_list, d
ad = ds.all_data()
for i, d in enumerate("xyz"):
    stored = ad["athena_pp", f"Bcc{i + 1}"].d
    shown = ad["gas", f"magnetic_field_{d}"].to("code_magnetic").d
    assert np.allclose(shown, stored, rtol=1e-12, atol=0), d
flux = float((ad["athena_pp", "Bcc1"] * ad["index", "cell_volume"]).sum().d)
expected = float(sys.argv[2])
print(f"yt magnetic flux x {flux!r}, code {expected!r}; magnetic_field_x/y/z found")
sys.exit(0 if abs(flux - expected) <= 1e-12 * abs(expected) else 1)
PY

# Units and the adiabatic index: a gamma = 1.4 MHD run labelled in kpc, 1e10 solar masses
# and Myr. scripts/tessera_yt.load gives yt the file's Gamma, units and mean molecular
# weight: yt's sound speed, Mach number, temperature and magnetic pressure equal the ones
# computed here from the stored code-unit values. Plain yt.load assumes gamma = 5/3.
"$bin" run "$src/problems/mhd_blast/mhd_blast.toml" "mesh.nx=[32,32,32]" \
  "mesh.xmin=[-0.5,-0.5,-0.5]" "mesh.xmax=[0.5,0.5,0.5]" amr.max_level=0 run.max_steps=2 \
  hydro.gamma=1.4 units.length_cgs=3.0857e21 units.mass_cgs=1.989e43 units.time_cgs=3.15576e13 \
  units.mu=1.27 "output.dir=$work/units" output.dt=0 >"$work/log_units.txt"
grep -q '^units: length 3.0857e+21 cm, mass 1.989e+43 g, time 3.15576e+13 s, mean molecular weight 1.27' \
  "$work/log_units.txt"
last=$(ls "$work"/units/mhd_blast.*.athdf | sort | tail -n 1)
/usr/bin/python3 - "$last" "$src/scripts" <<'PY'
import sys
import numpy as np
import yt
from yt.units import physical_constants as pc
sys.path.insert(0, sys.argv[2])
import tessera_yt
yt.set_log_level(40)
assert abs(yt.load(sys.argv[1]).gamma - 5.0 / 3.0) < 1e-15  # what the frontend assumes
ds = tessera_yt.load(sys.argv[1])
assert ds.gamma == 1.4 and ds.mu == 1.27, (ds.gamma, ds.mu)
L, M, T = 3.0857e21, 1.989e43, 3.15576e13
ad = ds.all_data()
rho, p = ad["athena_pp", "rho"].d, ad["athena_pp", "press"].d
v2 = sum(ad["athena_pp", f"vel{i}"].d ** 2 for i in (1, 2, 3))
b2 = sum(ad["athena_pp", f"Bcc{i}"].d ** 2 for i in (1, 2, 3))
cs = np.sqrt(1.4 * p / rho) * L / T
rho_cgs, p_cgs = rho * M / L**3, p * M / (L * T * T)
temp = 1.27 * float(pc.mh.to("g").d) * p_cgs / (rho_cgs * float(pc.kb.to("erg/K").d))
checks = {
    "sound_speed": (ad["gas", "sound_speed"].to("cm/s").d, cs),
    "mach_number": (ad["gas", "mach_number"].d, np.sqrt(v2) * L / T / cs),
    "temperature": (ad["gas", "temperature"].to("K").d, temp),
    "magnetic_pressure": (ad["gas", "magnetic_pressure"].to("dyn/cm**2").d, 0.5 * b2 * M / (L * T * T)),
}
for name, (got, want) in checks.items():
    err = float(np.max(np.abs(got - want)) / np.max(np.abs(want)))  # v = 0 in the ambient gas
    print(f"yt {name}: largest difference {err:.2e} of the largest value")
    assert err < 1e-12, name
PY
