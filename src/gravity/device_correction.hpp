// The potential correction's terms and source on the GPU for a device-resident adaptive
// run (the next step of device_potential.hpp; docs/architecture.md, "Self-gravity"):
// fine_terms and correction_source evaluated from the finer level's potential tables, with
// the bits of their host twins fine_terms_tables and correction_source_tables (so of
// fine_terms and correction_source). Compiled without contractions.
// tests/gpu/test_gpu_resident_potential.cpp compares them.
#pragma once

#include <memory>
#include <vector>

#include "src/gravity/device_potential.hpp"
#include "src/gravity/potential_tables.hpp"

namespace tessera::gravity {

class DeviceCorrection {
 public:
  virtual ~DeviceCorrection() = default;
  // For `fine.level - 1`, the level corrected: the finer level's tables (a covered patch's
  // box is its finer group's parent box, its terms that group's), and each of the level's
  // patches' six face neighbours and the finer group covering each (patches as pool
  // positions); again after a regrid. `computed`: the finer groups [0, computed) of the
  // tables are this rank's, whose terms fine_terms makes; the terms of the others come
  // from their ranks (write_terms), and only their parents' boxes are read (where the
  // parent is a patch of `groups`). `groups`: the corrected level's groups (first
  // patches) this rank corrects. One rank: every finer group, every group of the level.
  virtual void set_tables(const mesh::Mesh& m, const PotentialTables& fine, int computed,
                          const std::vector<int>& groups) = 0;
  void set_tables(const mesh::Mesh& m, const PotentialTables& fine) {
    set_tables(m, fine, fine.groups(), m.groups(fine.level - 1));
  }
  // fine_terms_tables for the finer groups [0, computed), into the device's terms (a face
  // without a gradient holds a quiet NaN, as CorrectionTerms leaves it). `mean`: the
  // periodic solve's mean density (0 when isolated).
  virtual void fine_terms(const mesh::Mesh& m, exec::DeviceMesh& dm, int phi_field,
                          int source_field, double four_pi_g, double mean,
                          const DeviceRootPotential& root) = 0;
  // The terms of the listed finer groups (indices into the tables), CorrectionTerms::kReals
  // each in list order, into `out` (resized); write_terms sets those of the groups
  // [first, first + values.size() / kReals) (several ranks: what the others made).
  virtual void read_terms(const std::vector<int>& groups, std::vector<double>& out) = 0;
  virtual void write_terms(int first, const std::vector<double>& values) = 0;
  // correction_source_tables on every patch of the level's groups, from the device's terms.
  virtual void correction_source(const mesh::Mesh& m, exec::DeviceMesh& dm, int phi_field,
                                 int source_field, double four_pi_g, double mean,
                                 const DeviceRootPotential& root) = 0;
  // keep_potential: a copy of the current potential of the level's groups, on the device.
  virtual void keep_potential(const mesh::Mesh& m, exec::DeviceMesh& dm, int phi_field) = 0;
  // coarse_change into the level's other time level: on covered cells the current
  // potential less the terms' restricted one, elsewhere less the kept copy.
  virtual void coarse_change(const mesh::Mesh& m, exec::DeviceMesh& dm, int phi_field) = 0;
  // The device's terms, [finer group][CorrectionTerms::kReals] (tests).
  virtual std::vector<double> terms() const = 0;
};

// Throws Error(kInput) in a build without the CUDA backend.
std::unique_ptr<DeviceCorrection> make_device_correction();

}  // namespace tessera::gravity
