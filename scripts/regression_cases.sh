# The regression problems of scripts/compare_runs and tests/regression/mpi_test.sh:
# case_args NAME prints the parameter file and overrides of the case (small enough for
# two CPU cores: seconds each). Sourced; needs $src, the source tree.
# shellcheck shell=bash
p=$src/problems
case_args() {
  case $1 in
    sod) echo "$p/sod/sod.toml run.max_steps=40 output.dt=0.02" ;;
    sedov_amr) echo "$p/sedov/sedov_amr.toml run.max_steps=24 output.dt=0.002" ;;
    sedov_rtvd) echo "$p/sedov/sedov_amr.toml hydro.scheme=relaxing_tvd run.max_steps=24 output.dt=0.002" ;;
    mhd_blast_amr) echo "$p/mhd_blast/mhd_blast.toml run.max_steps=16 output.dt=0.005" ;;
    orszag_tang) echo "$p/orszag_tang/orszag_tang.toml mesh.nx=[64,64,16] mesh.xmax=[1,1,0.25] run.max_steps=30 output.dt=0.05" ;;
    jeans_amr) echo "$p/jeans_wave/jeans_wave.toml mesh.nx=[32,16,16] mesh.xmax=[1,0.5,0.5] hydro.cfl=0.3 amr.max_level=2 amr.density_refine=[1.0,1.0] amr.lohner_refine=[0] amr.lohner_derefine=[0] amr.flag_buffer=0 run.max_steps=16 output.dt=0.05" ;;
    sphere_amr) echo "$p/uniform_sphere/uniform_sphere.toml mesh.nx=[32,32,32] amr.max_level=1 run.max_steps=6 output.dt=0.01" ;;
    cloud_blast) echo "$p/cloud_blast/cloud_blast.toml mesh.nx=[16,16,16] amr.max_level=3 amr.lohner_refine=0.8 amr.lohner_derefine=0.2 amr.density_refine=0 amr.density_derefine=0 problem.cloud_radius=0.03 run.max_steps=12 output.dt=0.001" ;;
    double_mach) echo "$p/double_mach/double_mach.toml mesh.nx=[64,16,16] mesh.xmax=[4,1,1] amr.max_level=1 run.max_steps=40 output.dt=0.02" ;;
    field_loop) echo "$p/field_loop/field_loop.toml mesh.nx=[64,32,16] mesh.xmin=[-1,-0.5,-0.25] mesh.xmax=[1,0.5,0.25] amr.max_level=1 run.max_steps=30 output.dt=0.1" ;;
    *) echo "unknown case $1" >&2; exit 2 ;;
  esac
}
