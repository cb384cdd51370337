// Regrid cost against mesh size at a fixed number of changed families: the incremental
// regrid (Mesh::apply_hierarchy + prolongation of the new families) beside a rebuild from
// scratch (a new mesh from the hierarchy, every family copied or prolonged: what a regrid
// did before it was incremental), and the flux-register rebuild that follows either; and
// the change of the structure alone (a store holding no family, as on a rank none of whose
// families changed: the part of a regrid every rank of a run repeats); and the planning
// with it, on a mesh one level deeper, from the marks (every refined patch marked again,
// the 64 new parents marked or not): the whole hierarchy's plan applied as a hierarchy
// (settle_hierarchy + apply_hierarchy) beside the plan of the change alone (settle_change +
// apply_changes; one rank, so its own pass over its refined patches is the whole mesh's);
// and on that mesh, 64 ranks, the partition that follows a regrid (Partition::following,
// the default tolerance and coarse-fine cost: a pass every rank repeats over every family)
// and rank 0's exchange plans for every level: its receives and its sends (plan_receives +
// plan_sends) beside every rank's receives, from which a rank took its sends before
// (plan_level).
//
//   tessera_regrid_scaling [ROOT ...]      (default: 64 96 128 160; ROOT >= 64)
//
// Each mesh is a root grid of ROOT^3 cells with the half x < 1/2 refined once, so its
// size grows as ROOT^3; the change adds 64 families in the other half, then removes them.
// Times are the median of 5 repetitions, one thread.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "../mesh_rebuild.hpp"
#include "cube.hpp"
#include "tessera/evolve/refinement.hpp"
#include "tessera/exec/flux_register.hpp"
#include "tessera/mesh/mesh.hpp"
#include "tessera/mesh/prolongation.hpp"
#include "tessera/parallel/partition.hpp"
#include "tessera/physics/fields.hpp"

using tessera::physics::hydro_fields;
using tessera::physics::mhd_fields;

using namespace tessera;
using namespace tessera::mesh;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void prolong_added(Mesh& m, const MeshChange& change) {
  CoarseBox scratch;
  for (int level = 1; level < m.num_levels(); ++level)
    for (int g : change.added[level]) prolong_family(m, g, scratch);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> roots;
  for (int i = 1; i < argc; ++i) roots.push_back(std::atoi(argv[i]));
  if (roots.empty()) roots = {64, 96, 128, 160};
  constexpr int kChanged = 64;
  std::printf(
      "%6s %9s %12s %9s | %12s %12s %12s | %12s | %14s %14s | %9s %12s %12s | %12s %12s %12s "
      "%12s | %12s %12s %12s\n",
      "root", "patches", "cells", "changed", "incr add ms", "incr del ms", "rebuild ms",
      "registers ms", "struct add ms", "struct del ms", "patches", "whole add ms", "whole del ms",
      "plan add ms", "apply add ms", "plan del ms", "apply del ms", "partition ms", "plans ms",
      "all plans ms");
  for (int n : roots) {
    const Geometry geo = tessera::perf::unit_cube(n);
    const int np = n / kPatchSize;
    const Hierarchy base = tessera::perf::half_refined(np);
    Hierarchy grown = base;
    for (int i = 0; i < kChanged; ++i)
      grown[0].push_back({np / 2 + i % (np / 2), i / (np / 2) % np, i / (np / 2) / np});
    if (np * np * np / 2 < kChanged) return std::fprintf(stderr, "ROOT must be at least 64\n"), 2;
    Mesh m(geo, hydro_fields(true, 0), base);
    for (int p = 0; p < m.num_patches(); ++p)
      for (std::size_t i = 0; i < m.patch_reals(); ++i) m.current(p)[i] = Real(1 + (p + i) % 7);
    // The structure alone (a store that holds no family: a rank of many, none of whose
    // families changed): what every rank repeats at each regrid.
    Mesh bare(geo, hydro_fields(true, 0), base, false);
    // One level deeper (metadata only): the level-1 patches at x >= 1 of the refined half
    // refined too (properly nested), and the marks that keep every refined patch.
    Hierarchy deep = base;
    deep.emplace_back();
    for (int z = 0; z < 2 * np; ++z)
      for (int y = 0; y < 2 * np; ++y)
        for (int x = 1; x < np - 1; ++x) deep[1].push_back({x, y, z});
    evolve::Marks keep(2), grow(2);
    for (int l = 0; l < 2; ++l)
      for (const auto& pc : deep[l]) keep[l].push_back(evolve::mark_key(pc));
    grow = keep;
    for (std::size_t i = base[0].size(); i < grown[0].size(); ++i)
      grow[0].push_back(evolve::mark_key(grown[0][i]));
    for (auto& l : keep) evolve::sort_marks(l);
    for (auto& l : grow) evolve::sort_marks(l);
    Mesh whole(geo, hydro_fields(true, 0), deep, false);
    Mesh changed(geo, hydro_fields(true, 0), deep, false);
    std::vector<double> add, del, full, regs, bare_add, bare_del;
    std::vector<double> whole_add, whole_del, plan_add, apply_add, plan_del, apply_del, parts;
    std::vector<double> plans, all_plans;
    const auto cut = parallel::Partition::along_curve(whole, 64, 1.5);
    for (int rep = 0; rep < 5; ++rep) {
      auto t0 = std::chrono::steady_clock::now();
      const MeshChange a = m.apply_hierarchy(grown);
      prolong_added(m, a);
      add.push_back(seconds_since(t0));
      if (a.added_families != kChanged) return std::fprintf(stderr, "unexpected change\n"), 1;
      t0 = std::chrono::steady_clock::now();
      exec::FluxRegisters registers;
      registers.build(m);
      regs.push_back(seconds_since(t0));
      t0 = std::chrono::steady_clock::now();
      const Mesh r = testing::rebuild(m, base);
      full.push_back(seconds_since(t0));
      t0 = std::chrono::steady_clock::now();
      const MeshChange d = m.apply_hierarchy(base);
      del.push_back(seconds_since(t0));
      if (d.removed_families != kChanged) return std::fprintf(stderr, "unexpected change\n"), 1;
      t0 = std::chrono::steady_clock::now();
      const MeshChange ba = bare.apply_hierarchy(grown);
      bare_add.push_back(seconds_since(t0));
      t0 = std::chrono::steady_clock::now();
      const MeshChange bd = bare.apply_hierarchy(base);
      bare_del.push_back(seconds_since(t0));
      if (ba.added_families != kChanged || bd.removed_families != kChanged || bare.held_families())
        return std::fprintf(stderr, "unexpected change of the structure\n"), 1;
      int families[4];
      t0 = std::chrono::steady_clock::now();
      families[0] = whole.apply_hierarchy(evolve::settle_hierarchy(whole, 2, grow)).added_families;
      whole_add.push_back(seconds_since(t0));
      t0 = std::chrono::steady_clock::now();
      families[1] =
          whole.apply_hierarchy(evolve::settle_hierarchy(whole, 2, keep)).removed_families;
      whole_del.push_back(seconds_since(t0));
      t0 = std::chrono::steady_clock::now();
      const HierarchyChange ca = evolve::settle_change(changed, 2, grow);
      plan_add.push_back(seconds_since(t0));
      t0 = std::chrono::steady_clock::now();
      families[2] = changed.apply_changes(ca).added_families;
      apply_add.push_back(seconds_since(t0));
      t0 = std::chrono::steady_clock::now();
      const HierarchyChange cd = evolve::settle_change(changed, 2, keep);
      plan_del.push_back(seconds_since(t0));
      t0 = std::chrono::steady_clock::now();
      families[3] = changed.apply_changes(cd).removed_families;
      apply_del.push_back(seconds_since(t0));
      for (const int f : families)
        if (f != kChanged) return std::fprintf(stderr, "unexpected planned change (%d)\n", f), 1;
      t0 = std::chrono::steady_clock::now();
      const auto followed = parallel::Partition::following(whole, cut, 0.1, 1.5);
      parts.push_back(seconds_since(t0));
      if (followed.ranks() != 64) return std::fprintf(stderr, "unexpected partition\n"), 1;
      std::size_t listed = 0, listed_all = 0;
      t0 = std::chrono::steady_clock::now();
      for (int level = 0; level < whole.num_levels(); ++level) {
        const auto in = parallel::plan_receives(whole, followed, 0, level);
        const auto out = parallel::plan_sends(whole, followed, 0, level);
        for (int q = 0; q < 64; ++q) listed += in.same_level[q].size() + out.same_level[q].size();
      }
      plans.push_back(seconds_since(t0));
      t0 = std::chrono::steady_clock::now();
      for (int level = 0; level < whole.num_levels(); ++level) {
        const auto all = parallel::plan_level(whole, followed, level);
        for (int q = 0; q < 64; ++q)
          listed_all += all[0].same_level[q].size() + all[q].same_level[0].size();
      }
      all_plans.push_back(seconds_since(t0));
      if (listed != listed_all || listed == 0)
        return std::fprintf(stderr, "the plans differ (%zu, %zu)\n", listed, listed_all), 1;
      if (!whole.has_hierarchy(deep) || !changed.has_hierarchy(deep))
        return std::fprintf(stderr, "the plans did not restore the mesh\n"), 1;
    }
    std::printf(
        "%6d %9d %12lld %9d | %12.3f %12.3f %12.3f | %12.3f | %14.3f %14.3f | %9d %12.3f %12.3f | "
        "%12.3f %12.3f %12.3f %12.3f | %12.3f %12.3f %12.3f\n",
        n, m.num_patches(), m.num_leaf_cells(), kChanged, 1e3 * median(add), 1e3 * median(del),
        1e3 * median(full), 1e3 * median(regs), 1e3 * median(bare_add), 1e3 * median(bare_del),
        whole.num_patches(), 1e3 * median(whole_add), 1e3 * median(whole_del),
        1e3 * median(plan_add), 1e3 * median(apply_add), 1e3 * median(plan_del),
        1e3 * median(apply_del), 1e3 * median(parts), 1e3 * median(plans), 1e3 * median(all_plans));
  }
  return 0;
}
