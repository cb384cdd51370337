// Simulation's diagnostics and plot files: the conserved totals of the log, the density
// error against an analytic solution, and the conversion of the pool's conserved fields to
// the primitive form plot files hold. The time loop that calls these is in simulation.cpp.
#include <cmath>
#include <exception>
#include <filesystem>
#include <string>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/evolve/diagnostics.hpp"
#include "tessera/evolve/simulation.hpp"
#include "tessera/io/plot_output.hpp"
#include "tessera/physics/model.hpp"

namespace tessera::evolve {

namespace {

// How the log names the total of a field: short (the "totals:" line, which scripts parse)
// and long (the final "total ..." lines).
struct TotalName {
  std::string brief, full;
};

TotalName total_name(const std::string& field) {
  if (field == "rho") return {"mass", "mass"};
  if (field == "vel1") return {"momx", "momentum x"};
  if (field == "vel2") return {"momy", "momentum y"};
  if (field == "vel3") return {"momz", "momentum z"};
  if (field == "press") return {"energy", "energy"};
  if (field.size() > 1 && field[0] == 'r') return {field, "scalar " + field.substr(1)};
  if (field.size() == 4 && field.compare(0, 3, "Bcc") == 0) {
    const char axis = char('x' + (field[3] - '1'));
    std::string brief = "b", full = "magnetic field ";  // appended: GCC 12 -Wrestrict
    brief += axis;
    full += axis;
    return {brief, full};
  }
  return {field, field};
}

}  // namespace

std::vector<double> Simulation::conserved_totals() const {
  sync_host();
  // Called at every log line, so patches are summed in parallel. The patch sums of this
  // rank's leaf patches are keyed by their canonical position and added in that order
  // (Comm::ordered_sum): the same bits whatever the thread count, the history of the
  // pool's slots and the number of ranks.
  const auto& m = *mesh_;
  const std::vector<int> order = m.canonical_order();
  const int nvar = m.nvar();
  std::vector<std::int64_t> keys;
  for (std::size_t i = 0; i < order.size(); ++i)
    if (m.patch(order[i]).is_leaf() && partition_.owns(comm_->rank(), order[i]))
      keys.push_back(static_cast<std::int64_t>(i));
  const int np = static_cast<int>(keys.size());
  std::vector<double> per_patch(std::size_t(np) * nvar, 0.0);
#pragma omp parallel for schedule(static)
  for (int i = 0; i < np; ++i) {
    const int p = order[keys[i]];
    const double h = m.dx(m.patch(p).level), vol = h * h * h;
    const Real* u = m.current(p);
    for (int v = 0; v < nvar; ++v) {
      double s = 0;
      for (int c = 0; c < mesh::kPatchCells; ++c) s += u[v * mesh::kPatchCells + c];
      per_patch[std::size_t(i) * nvar + v] = s * vol;
    }
  }
  return comm_->ordered_sum(keys, per_patch, nvar);
}

void Simulation::watch_totals() {
  // Closed sides (periodic or reflecting) keep the mass; without gravity, the energy too.
  const auto& geo = mesh_->geometry();
  bool closed = true;
  for (int d = 0; d < 3; ++d)
    for (int s = 0; s < 2; ++s)
      closed = closed && (geo.boundary[d][s] == mesh::Boundary::kPeriodic ||
                          geo.boundary[d][s] == mesh::Boundary::kReflecting);
  std::vector<int> fields;
  std::vector<std::string> names;
  for (int v = 0; v < fields_.size(); ++v) {
    const std::string& f = fields_[v].name;
    if (closed && (f == "rho" || (f == "press" && !gravity_))) {
      fields.push_back(v);
      names.push_back(total_name(f).full);
    }
  }
  watch_.watch_totals(std::move(fields), std::move(names), totals0_);
}

void Simulation::log_totals_line() const {
  sync_host();
  const auto tot = conserved_totals();
  watch_.totals(step_, tot, floored_);
  std::string line = strprintf("totals: step %ld t %.9e", step_, time_);
  for (int v = 0; v < fields_.size(); ++v)
    if (fields_[v].flux_corrected)  // conserved densities only (not the potential)
      line += strprintf(" %s %.15e", total_name(fields_[v].name).brief.c_str(), tot[v]);
  log_line("%s", line.c_str());
  if (gravity_) {
    // Total energy of a self-gravitating run: the gas energy (thermal, kinetic and, for
    // MHD, magnetic; kernels/gravity.hpp) plus the potential energy (1/2) int rho phi dV.
    const double w = gravity_->potential_energy(*mesh_);
    const int e = model_.has_energy() ? 4 : -1;
    if (e >= 0)
      log_line("gravity: step %ld t %.9e potential energy %.15e total energy %.15e", step_, time_,
               w, tot[e] + w);
    else
      log_line("gravity: step %ld t %.9e potential energy %.15e", step_, time_, w);
  }
  if (model_.has_magnetic_field()) {
    const DivergenceStats d = divergence();
    log_line("divB: step %ld t %.9e max |div B| dx/|B| %.3e mean %.3e", step_, time_,
             d.max_relative, d.mean_relative);
  }
}

std::vector<io::DerivedField> Simulation::derived_plot_fields() const {
  std::vector<io::DerivedField> out;
  if (model_.has_magnetic_field() && params_.boolean("mhd.plot_divb")) {
    const mesh::Mesh* m = mesh_.get();
    out.push_back({"divB", "uov", [m](int p, Real* div) {
                     magnetic_divergence(*m, p, kernels::MhdGlm::kBx, div, nullptr);
                   }});
  }
  return out;
}

void Simulation::log_total_changes(const std::vector<double>& totals) const {
  for (int v = 0; v < fields_.size(); ++v)
    if (fields_[v].flux_corrected)
      log_line("total %-10s %+.15e (change %+.3e)", total_name(fields_[v].name).full.c_str(),
               totals[v], totals[v] - totals0_[v]);
}

std::optional<double> Simulation::density_l1_error() const {
  sync_host();
  const auto& m = *mesh_;
  const auto& geo = m.geometry();
  // Per leaf patch of this rank, added in canonical order over the ranks.
  const std::vector<int> order = m.canonical_order();
  std::vector<std::int64_t> keys;
  std::vector<double> sums;
  bool analytic = true;
  for (std::size_t n = 0; n < order.size() && analytic; ++n) {
    const int p = order[n];
    if (!m.patch(p).is_leaf() || !partition_.owns(comm_->rank(), p)) continue;
    const double h = m.dx(m.patch(p).level);
    const Real* u = m.current(p);
    double err = 0;
    for (int k = 0; k < mesh::kPatchSize; ++k)
      for (int j = 0; j < mesh::kPatchSize; ++j)
        for (int i = 0; i < mesh::kPatchSize; ++i) {
          const auto x = m.cell_center(p, i, j, k);
          const CellBox cell = CellBox::around(x, h);
          const auto exact = problem_->analytic_density(cell, time_);
          if (!exact) {
            analytic = false;
            break;
          }
          err += std::fabs(u[(k * mesh::kPatchSize + j) * mesh::kPatchSize + i] - *exact);
        }
    keys.push_back(static_cast<std::int64_t>(n));
    sums.push_back(err * h * h * h);
  }
  // Every rank takes part in both collectives, or in neither: all agree first whether the
  // problem has an analytic density (a rank without leaf patches has no cell to ask).
  if (comm_->min(analytic ? 1.0 : 0.0) == 0) return std::nullopt;
  double volume = 1;
  for (int d = 0; d < 3; ++d) volume *= geo.xmax[d] - geo.xmin[d];
  return comm_->ordered_sum(keys, sums, 1)[0] / volume;
}

DivergenceStats Simulation::divergence() const {
  // Several ranks: the buffer patches exchanged on the host, whose plans send the coarser
  // level's patches in both time levels.
  if (comm_->size() > 1 && mesh_->num_levels() > 1)
    sync_all_slots();
  else
    sync_host();
  if (comm_->size() > 1)
    for (int level = 0; level < mesh_->num_levels(); ++level) exchange_buffers(level);
  return divergence_stats(*mesh_, kernels::MhdGlm::kBx, *comm_, partition_);
}

std::optional<double> Simulation::potential_energy() const {
  if (!gravity_) return std::nullopt;
  sync_host();
  return gravity_->potential_energy(*mesh_);
}

io::ToPrimitive Simulation::to_primitive() const {
  // The model's primitives in pool order: rho, v1, v2, v3, p (adiabatic gas, the floors
  // applied), then each passive scalar's concentration.
  // Fields after the model's (the potential) are written as they are stored.
  const physics::Model model = model_;
  const int first_extra = model_.num_vars(), nvar = fields_.size();
  return [model, first_extra, nvar](const Real* u, int stride, Real* w) {
    model.to_primitive(u, stride, w);
    for (int v = first_extra; v < nvar; ++v) w[v] = u[v * stride];
  };
}

std::string Simulation::write_plot_on_root(
    const std::function<std::string(const std::string& dir)>& name) {
  std::string path;
  sync_host();
  if (const auto c = collective_output()) {
    // Every rank forms and writes its own leaves; div B reads the neighbours' faces.
    const auto derived = derived_plot_fields();
    if (!derived.empty()) {
      if (mesh_->num_levels() > 1) sync_all_slots();  // as divergence()
      for (int level = 0; level < mesh_->num_levels(); ++level) exchange_buffers(level);
    }
    const std::string dir = params_.string("output.dir");
    std::exception_ptr error;
    if (comm_->rank() == 0) try {
        std::error_code ec;
        std::filesystem::create_directories(dir, ec);
        if (ec)
          throw Error(ErrorKind::kIo, "output.dir '" + dir + "': cannot create: " + ec.message());
      } catch (...) {
        error = std::current_exception();
      }
    comm_->agree(error);
    path = name(dir);
    io::PlotFile plot =
        io::make_plot_file(*mesh_, to_primitive(), model_.params().adiabatic.gamma, problem_name_,
                           static_cast<int>(step_), time_, params_.to_toml(), derived, c->owns);
    plot.run_id = run_id_;  // which run a later run in this directory finds (claim_output_dir)
    label_units(plot);
    io::write_plot_file(path, plot, &*c);
    return path;
  }
  run_on_root([&] {
    const std::string dir = params_.string("output.dir");
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw Error(ErrorKind::kIo, "output.dir '" + dir + "': cannot create: " + ec.message());
    path = name(dir);
    io::PlotFile plot = io::make_plot_file(*mesh_, to_primitive(), model_.params().adiabatic.gamma,
                                           problem_name_, static_cast<int>(step_), time_,
                                           params_.to_toml(), derived_plot_fields());
    plot.run_id = run_id_;
    label_units(plot);
    io::write_plot_file(path, plot);
  });
  return path;
}

void Simulation::label_units(io::PlotFile& plot) const {
  plot.units_cgs = {params_.real("units.length_cgs"), params_.real("units.mass_cgs"),
                    params_.real("units.time_cgs")};
  plot.mu = params_.real("units.mu");
}

void Simulation::guard_output_dir() {
  if (!check_output_dir_) return;
  parallel::agreed(*comm_, [&] {
    if (comm_->rank() == 0) check_output_dir_();
  });
}

void Simulation::write_plot(int index) {
  if (!params_.boolean("output.enabled")) return;
  ScopedTimer t(timers_, Stage::kOutput);
  guard_output_dir();
  const std::string path = write_plot_on_root(
      [&](const std::string& dir) { return io::plot_file_name(dir, problem_name_, index); });
  log_line("wrote %s", path.c_str());
}

std::vector<std::string> Simulation::history_columns() const {
  std::vector<std::string> c = {"step", "time", "dt"};
  for (int v = 0; v < fields_.size(); ++v) {
    if (!fields_[v].flux_corrected) continue;
    const std::string& name = fields_[v].name;
    // A scalar's total is the mass it marks (density x concentration), which the plot
    // files' field of the same name (the concentration) is not.
    const bool scalar = name.size() > 1 && name[0] == 'r' && name != "rho";
    c.push_back(scalar ? "mass_" + name : total_name(name).brief);
  }
  if (gravity_) c.push_back("potential_energy");
  c.push_back("floors");
  for (int level = 0; level <= refinement_.max_level; ++level)
    c.push_back(strprintf("cells_L%d", level));
  c.push_back("wall");
  for (int s = 0; s < static_cast<int>(Stage::kCount); ++s)
    c.push_back(std::string("wall_") + stage_name(Stage(s)));
  return c;
}

}  // namespace tessera::evolve
