// SelfGravity on a device-resident run (self_gravity.hpp; docs/architecture.md,
// "Data residency"): where the potential's copies are current, the root's and the refined
// levels' device objects (device_root.hpp, device_potential.hpp, device_correction.hpp)
// made and kept with the device copy's tables, and the potential correction's steps there.
#include <memory>

#include "device_correction.hpp"
#include "device_potential.hpp"
#include "device_root.hpp"
#include "kernels/poisson_sor.hpp"
#include "potential_tables.hpp"
#include "resident_gather.hpp"
#include "tessera/core/error.hpp"
#include "tessera/exec/resident.hpp"
#include "tessera/gravity/fft_poisson.hpp"
#include "tessera/gravity/self_gravity.hpp"

namespace tessera::gravity {

bool SelfGravity::on_device() const {
  return gpu_ && !(comm_ && comm_->size() > 1);
}

void SelfGravity::make_host_current() const {
  if (host_current_) return;
  device_->download(phi_.data(), phi_prev_.data());
  host_current_ = true;
}

void SelfGravity::make_device_current() const {
  if (!device_) device_ = make_device_root_gravity(n_);
  if (device_current_) return;
  device_->upload(phi_.data(), phi_prev_.data());
  device_current_ = true;
}

DeviceRootPotential SelfGravity::device_root() const {
  make_device_current();
  return {device_->potential(0), device_->potential(1), n_[0], n_[1]};
}

DevicePotential& SelfGravity::device_level(const mesh::Mesh& m, exec::DeviceMesh& dm,
                                           int level) const {
  if (!on_device())
    throw Error(ErrorKind::kInternal, "a device-resident refined level on several ranks");
  const std::size_t l = static_cast<std::size_t>(level);
  if (device_levels_.size() <= l) {
    device_levels_.resize(l + 1);
    device_levels_version_.resize(l + 1, -1);
  }
  if (!device_levels_[l]) device_levels_[l] = make_device_potential();
  if (device_levels_version_[l] != dm.tables_version()) {
    // The device copy's tables were made again (a regrid, a new copy): so are these.
    device_levels_[l]->set_tables(m, build_potential_tables(m, level, nullptr, this));
    device_levels_version_[l] = dm.tables_version();
  }
  return *device_levels_[l];
}

DeviceCorrection& SelfGravity::device_correction(const mesh::Mesh& m, exec::DeviceMesh& dm,
                                                 int level) const {
  if (!on_device())
    throw Error(ErrorKind::kInternal, "a device-resident potential correction on several ranks");
  const std::size_t l = static_cast<std::size_t>(level);
  if (device_corrections_.size() <= l) {
    device_corrections_.resize(l + 1);
    device_corrections_version_.resize(l + 1, -1);
  }
  if (!device_corrections_[l]) device_corrections_[l] = make_device_correction();
  if (device_corrections_version_[l] != dm.tables_version()) {
    device_corrections_[l]->set_tables(m, build_potential_tables(m, level + 1, nullptr, this));
    device_corrections_version_[l] = dm.tables_version();
  }
  return *device_corrections_[l];
}

void SelfGravity::device_clear_correction(mesh::Mesh& m, exec::DeviceMesh& dm) const {
  dm.zero_field(source_field_);
  m.set_host_stale(0, true);
  m.set_host_stale(1, true);
}

void SelfGravity::device_correct_down(mesh::Mesh& m, exec::DeviceMesh& dm, int level) const {
  DeviceCorrection& c = device_correction(m, dm, level);
  const DeviceRootPotential root = device_root();
  c.keep_potential(m, dm, phi_field_);
  c.fine_terms(m, dm, phi_field_, source_field_, four_pi_g_, mean_, root);
  c.correction_source(m, dm, phi_field_, source_field_, four_pi_g_, mean_, root);
  m.set_host_stale(m.current_slot(level), true);
}

void SelfGravity::device_correct_up(mesh::Mesh& m, exec::DeviceMesh& dm, int level) const {
  device_correction(m, dm, level - 1).coarse_change(m, dm, phi_field_);
  m.set_host_stale(m.next_slot(level - 1), true);
  device_level(m, dm, level).add_coarse_change(m, dm, phi_field_);
  m.set_host_stale(m.current_slot(level), true);
}

const exec::DeviceGather* SelfGravity::device_gather(const mesh::Mesh& m, exec::DeviceMesh& dm,
                                                     int level, double weight,
                                                     bool coarse_ghosts) const {
  if (!gather_) gather_ = std::make_unique<ResidentGather>();
  gather_->potential = &device_level(m, dm, level);
  gather_->mesh = &m;
  gather_->phi_field = phi_field_;
  gather_->source_field = source_field_;
  gather_->weight = weight;
  gather_->coarse_ghosts = coarse_ghosts;
  gather_->root = device_root();
  return gather_.get();
}

}  // namespace tessera::gravity
