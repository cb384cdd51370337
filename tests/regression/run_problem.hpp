// Shared helpers of the regression tests: run a problem's parameter file in-process.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "tessera/core/log.hpp"
#include "tessera/evolve/schema.hpp"
#include "tessera/evolve/simulation.hpp"

namespace tessera::testing {

// "run.backend=..." from $TESSERA_TEST_BACKEND (cpu unless set): the same regression
// tests run on the GPU with the same thresholds.
inline std::string backend_override() {
  const char* b = std::getenv("TESSERA_TEST_BACKEND");
  return std::string("run.backend=") + (b && *b ? b : "cpu");
}

// The overrides that select a hydro scheme by a test's label: "rk2" or "vl2" (the MOL
// integrators) or "relaxing_tvd" (that scheme at the Courant number it is used with, 0.8,
// and its default van Leer flux limiter).
inline std::vector<std::string> scheme_overrides(const std::string& label) {
  if (label == "relaxing_tvd") return {"hydro.scheme=relaxing_tvd", "hydro.cfl=0.8"};
  return {"hydro.integrator=" + label};
}

// Runs problems/<file> to its end with the given overrides (plot files off).
inline std::unique_ptr<evolve::Simulation> run_problem(const std::string& file,
                                                       std::vector<std::string> overrides) {
  set_log_quiet(true);
  overrides.push_back("output.enabled=false");
  overrides.push_back(backend_override());
  auto sim = std::make_unique<evolve::Simulation>(
      load_run_params(std::string(TESSERA_SOURCE_DIR) + "/problems/" + file, overrides));
  sim->run();
  return sim;
}

// Calls f(cell center, cell width, conserved values[nvar]) for every leaf cell, nvar the
// variables of the run (density, momentum, energy for adiabatic gas, passive scalars).
template <class F>
void for_each_cell(const evolve::Simulation& sim, F&& f) {
  const auto& m = sim.mesh();
  constexpr int n = mesh::kPatchSize, nc = mesh::kPatchCells;
  std::vector<double> vals(m.nvar());
  for (int p = 0; p < m.num_patches(); ++p) {
    if (!m.patch(p).is_leaf()) continue;
    const Real* u = m.current(p);
    for (int k = 0; k < n; ++k)
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) {
          const int c = (k * n + j) * n + i;
          for (int v = 0; v < m.nvar(); ++v) vals[v] = u[v * nc + c];
          f(m.cell_center(p, i, j, k), m.dx(m.patch(p).level), vals.data());
        }
  }
}

// Writes columns to $TESSERA_VALIDATION_DIR/<name>.csv when that variable is set, so
// scripts/validation can plot what the regression tests measured.
inline void write_validation_csv(const std::string& name, const std::string& header,
                                 const std::vector<std::vector<double>>& columns) {
  const char* dir = std::getenv("TESSERA_VALIDATION_DIR");
  if (!dir || columns.empty()) return;
  FILE* f = std::fopen((std::string(dir) + "/" + name + ".csv").c_str(), "w");
  if (!f) return;
  std::fprintf(f, "%s\n", header.c_str());
  for (std::size_t r = 0; r < columns[0].size(); ++r)
    for (std::size_t c = 0; c < columns.size(); ++c)
      std::fprintf(f, "%.10g%c", columns[c][r], c + 1 == columns.size() ? '\n' : ',');
  std::fclose(f);
}

}  // namespace tessera::testing
