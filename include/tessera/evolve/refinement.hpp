// Where to refine: cell criteria (Löhner's error estimator, relative gradients, a
// density threshold, the problem's own), the flag buffer, derefinement hysteresis and
// proper nesting, turned into the hierarchy the mesh should have (Schive et al. 2010
// §2.1; Löhner 1987 in the form used by FLASH and GAMER).
#pragma once

#include "kernels/hydro_state.hpp"
#include "tessera/core/params.hpp"
#include "tessera/core/problem.hpp"
#include "tessera/mesh/mesh.hpp"

namespace tessera::evolve {

struct RefinementParams {
  int max_level = 0;
  int flag_buffer = 2;           // cells around a flagged cell that are flagged too
  double lohner_refine = 0;      // 0: criterion off
  double lohner_derefine = 0;
  double lohner_filter = 0.01;   // epsilon of the estimator's noise filter
  bool lohner_density = true;
  bool lohner_pressure = true;
  double gradient_refine = 0;    // max_d |q(i+1) - q(i-1)| / (2 |q(i)|), q = density, pressure
  double gradient_derefine = 0;
  double density_refine = 0;     // density above this
  double density_derefine = 0;

  static RefinementParams from_params(const Params& params);
};

// Löhner's estimator of variable q at the centre of a 3x3x3 stencil s[k][j][i]: second
// derivatives over first-derivative magnitudes plus a filter on |q|; in [0, 1].
double lohner_estimator(const double s[3][3][3], double filter);

// The hierarchy the mesh should have now: refined are the patches (below max_level) with
// a flagged cell within flag_buffer cells, where leaves flag on the refine thresholds and
// refined patches on the (lower) derefine thresholds; then the parents of every refined
// patch's 26 neighbours are refined too (proper nesting), level by level downward.
mesh::Hierarchy plan_hierarchy(const mesh::Mesh& mesh, const RefinementParams& rp,
                               const kernels::EosParams& eos, const Problem& problem,
                               double time);

}  // namespace tessera::evolve
