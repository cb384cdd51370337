// SelfGravity on a device-resident run (self_gravity.hpp; docs/architecture.md,
// "Data residency"): where the potential's copies are current, the root's and the refined
// levels' device objects (device_root.hpp, device_potential.hpp, device_correction.hpp)
// made and kept with the device copy's tables, and the potential correction's steps there.
#include <algorithm>
#include <memory>

#include "device_correction.hpp"
#include "device_potential.hpp"
#include "device_root.hpp"
#include "kernels/poisson_sor.hpp"
#include "potential_tables.hpp"
#include "resident_gather.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/exec/resident.hpp"
#include "tessera/gravity/fft_poisson.hpp"
#include "tessera/gravity/self_gravity.hpp"
#include "tessera/parallel/comm.hpp"

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
  if (!device_) {
    device_ = make_device_root_gravity(n_);
    device_->layout(boxes(), nullptr);
  }
  if (device_current_) return;
  if (phi_.size() != boxes().size() || phi_prev_.size() != phi_.size())
    throw Error(ErrorKind::kInternal, "the root potential on the GPU before the first root solve");
  device_->upload(phi_.data(), phi_prev_.data());
  device_current_ = true;
}

DeviceRootPotential SelfGravity::device_root() const {
  make_device_current();
  return {device_->potential(0), device_->potential(1), device_->boxes()};
}

DevicePotential& SelfGravity::device_level(const mesh::Mesh& m, exec::DeviceMesh& dm,
                                           int level) const {
  if (!gpu_) throw Error(ErrorKind::kInternal, "a device-resident refined level without the GPU");
  const std::size_t l = static_cast<std::size_t>(level);
  if (device_levels_.size() <= l) {
    device_levels_.resize(l + 1);
    device_levels_version_.resize(l + 1, -1);
  }
  if (!device_levels_[l]) device_levels_[l] = make_device_potential();
  if (device_levels_version_[l] != dm.tables_version()) {
    // The device copy's tables were made again (a regrid, a new copy): so are these, for
    // its groups in its order (several ranks: this rank's), which the batches index.
    device_levels_[l]->set_tables(
        m, build_potential_tables(m, level, &dm.tables(level).first_patch, this));
    device_levels_version_[l] = dm.tables_version();
  }
  return *device_levels_[l];
}

DeviceCorrection& SelfGravity::device_correction(const mesh::Mesh& m, exec::DeviceMesh& dm,
                                                 int level) const {
  if (!gpu_)
    throw Error(ErrorKind::kInternal, "a device-resident potential correction without the GPU");
  const std::size_t l = static_cast<std::size_t>(level);
  if (device_corrections_.size() <= l) {
    device_corrections_.resize(l + 1);
    device_corrections_version_.resize(l + 1, -1);
    terms_plans_.resize(l + 1);
  }
  if (!device_corrections_[l]) device_corrections_[l] = make_device_correction();
  if (device_corrections_version_[l] != dm.tables_version()) {
    // The finer level's groups of the device copy (this rank's), then those of other ranks
    // whose terms this rank reads (term_readers), in canonical order, each from its rank.
    std::vector<int> fine = dm.tables(level + 1).first_patch;
    TermsPlan plan;
    plan.computed = static_cast<int>(fine.size());
    if (comm_ && comm_->size() > 1) {
      const int rank = comm_->rank();
      std::vector<int> index(m.num_patches() / mesh::kFamilySize, -1);
      for (int g = 0; g < plan.computed; ++g) index[fine[g] / mesh::kFamilySize] = g;
      plan.send.resize(comm_->size());
      plan.receive.resize(comm_->size());
      for (const int g : m.groups(level + 1)) {
        const int from = partition_->owner(g);
        const std::vector<int> readers = term_readers(m, *partition_, m.patch(g).parent);
        if (from == rank) {
          // (A group this rank owns that its device tables lack: read_terms refuses it,
          // agreed with the other ranks before the exchange.)
          for (const int to : readers)
            if (to != rank) plan.send[to].push_back(index[g / mesh::kFamilySize]);
        } else if (std::binary_search(readers.begin(), readers.end(), rank)) {
          plan.receive[from].push_back(static_cast<int>(fine.size()));
          fine.push_back(g);
        }
      }
    }
    plan.groups = static_cast<int>(fine.size());
    device_corrections_[l]->set_tables(m, build_potential_tables(m, level + 1, &fine, this),
                                       plan.computed, dm.tables(level).first_patch);
    terms_plans_[l] = std::move(plan);
    device_corrections_version_[l] = dm.tables_version();
  }
  return *device_corrections_[l];
}

void SelfGravity::exchange_device_terms(DeviceCorrection& c, const TermsPlan& plan) const {
  constexpr std::size_t n = CorrectionTerms::kReals;
  const int ranks = comm_->size();
  // One read of every group that goes out, split per peer.
  // A failure on one rank is agreed before the exchange and after it, so that all ranks
  // stop together instead of some waiting in a collective that a failed one never enters.
  std::vector<std::vector<double>> send(ranks);
  parallel::agreed(*comm_, [&] {
    std::vector<int> out;
    for (const auto& list : plan.send) out.insert(out.end(), list.begin(), list.end());
    std::vector<double> read;
    c.read_terms(out, read);
    device_terms_sent_ += static_cast<long long>(out.size());
    std::size_t at = 0;
    for (int q = 0; q < ranks; ++q) {
      send[q].assign(read.begin() + at * n, read.begin() + (at + plan.send[q].size()) * n);
      at += plan.send[q].size();
    }
  });
  const auto got = comm_->exchange(std::move(send));
  parallel::agreed(*comm_, [&] {
    std::vector<double> in(std::size_t(plan.groups - plan.computed) * n);
    for (int q = 0; q < ranks; ++q) {
      if (got[q].size() != plan.receive[q].size() * n)
        throw Error(ErrorKind::kInternal,
                    strprintf("the potential correction's terms: rank %d sent %zu values, %zu "
                              "expected",
                              q, got[q].size(), plan.receive[q].size() * n));
      for (std::size_t i = 0; i < plan.receive[q].size(); ++i)
        std::copy_n(got[q].data() + i * n, n,
                    in.data() + std::size_t(plan.receive[q][i] - plan.computed) * n);
    }
    c.write_terms(plan.computed, in);
  });
}

void SelfGravity::device_clear_correction(mesh::Mesh& m, exec::DeviceMesh& dm) const {
  dm.zero_field(source_field_);
  m.set_host_stale(0, true);
  m.set_host_stale(1, true);
}

void SelfGravity::device_correct_down(mesh::Mesh& m, exec::DeviceMesh& dm, int level,
                                      const std::function<void(int)>& refresh) const {
  DeviceCorrection& c = device_correction(m, dm, level);
  const DeviceRootPotential root = device_root();
  refresh(level + 1);  // the smoothed neighbours: the residual's ghost values
  c.keep_potential(m, dm, phi_field_);
  c.fine_terms(m, dm, phi_field_, source_field_, four_pi_g_, mean_, root);
  if (comm_ && comm_->size() > 1) exchange_device_terms(c, terms_plans_[level]);
  refresh(level);  // the potential around each patch of the level
  c.correction_source(m, dm, phi_field_, source_field_, four_pi_g_, mean_, root);
  m.set_host_stale(m.current_slot(level), true);
}

void SelfGravity::device_correct_up(mesh::Mesh& m, exec::DeviceMesh& dm, int level,
                                    const std::function<void(int)>& refresh) const {
  device_correction(m, dm, level - 1).coarse_change(m, dm, phi_field_);
  m.set_host_stale(m.next_slot(level - 1), true);
  refresh(level);  // the change of the coarser level around each parent
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
