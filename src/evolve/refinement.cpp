#include "tessera/evolve/refinement.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"

namespace tessera::evolve {

namespace {

using mesh::kPatchSize;
constexpr int kHalo = kPatchSize + 2;

int floor_div(int a, int b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

// Density and pressure of the patch and one layer around it; where a same-level
// neighbour is missing (coarser level, or outside the domain) the nearest patch cell.
void gather_halo(const mesh::Mesh& m, int p, const kernels::EosParams& eos,
                 std::vector<double>& rho, std::vector<double>& pres) {
  rho.resize(kHalo * kHalo * kHalo);
  pres.resize(kHalo * kHalo * kHalo);
  const auto& meta = m.patch(p);
  for (int k = -1; k <= kPatchSize; ++k)
    for (int j = -1; j <= kPatchSize; ++j)
      for (int i = -1; i <= kPatchSize; ++i) {
        const int idx[3] = {i, j, k};
        int off[3], loc[3];
        for (int d = 0; d < 3; ++d) off[d] = idx[d] < 0 ? -1 : (idx[d] >= kPatchSize ? 1 : 0);
        int q = meta.neighbour[mesh::neighbour_index(off[0], off[1], off[2])];
        for (int d = 0; d < 3; ++d)
          loc[d] = q == mesh::kNoPatch ? std::clamp(idx[d], 0, kPatchSize - 1)
                                       : idx[d] - off[d] * kPatchSize;
        if (q == mesh::kNoPatch) q = p;
        const Real* u = m.current(q);
        const int c = (loc[2] * kPatchSize + loc[1]) * kPatchSize + loc[0];
        const int n = mesh::kPatchCells;
        const kernels::Cons cu = {u[c], {u[n + c], u[2 * n + c], u[3 * n + c]}, u[4 * n + c]};
        const kernels::Prim w = kernels::cons_to_prim(cu, eos);
        const int b = ((k + 1) * kHalo + (j + 1)) * kHalo + (i + 1);
        rho[b] = w.rho;
        pres[b] = w.p;
      }
}

void stencil(const std::vector<double>& q, int i, int j, int k, double s[3][3][3]) {
  for (int c = 0; c < 3; ++c)
    for (int b = 0; b < 3; ++b)
      for (int a = 0; a < 3; ++a) s[c][b][a] = q[((k + c) * kHalo + (j + b)) * kHalo + (i + a)];
}

double relative_gradient(const double s[3][3][3]) {
  const double c = std::fabs(s[1][1][1]);
  const double g = std::max({std::fabs(s[1][1][2] - s[1][1][0]), std::fabs(s[1][2][1] - s[1][0][1]),
                             std::fabs(s[2][1][1] - s[0][1][1])});
  return c > 0 ? 0.5 * g / c : 0;
}

// Whether any cell of patch p meets the criteria; the flagged cells' bounding box
// (patch cell indices) is returned in lo/hi.
bool flag_patch(const mesh::Mesh& m, int p, const RefinementParams& rp,
                const kernels::EosParams& eos, const Problem& problem, double time, int lo[3],
                int hi[3]) {
  thread_local std::vector<double> rho, pres;
  gather_halo(m, p, eos, rho, pres);
  const bool refined = !m.patch(p).is_leaf();
  const int lv = m.patch(p).level;
  using R = RefinementParams;
  const bool use_lohner = R::at(rp.lohner_refine, lv) > 0;
  const bool use_gradient = R::at(rp.gradient_refine, lv) > 0;
  const bool use_density = R::at(rp.density_refine, lv) > 0;
  const double lohner = R::at(refined ? rp.lohner_derefine : rp.lohner_refine, lv);
  const double gradient = R::at(refined ? rp.gradient_derefine : rp.gradient_refine, lv);
  const double density = R::at(refined ? rp.density_derefine : rp.density_refine, lv);
  const double h = m.dx(m.patch(p).level);
  bool any = false;
  for (int d = 0; d < 3; ++d) lo[d] = kPatchSize, hi[d] = -1;
  for (int k = 0; k < kPatchSize; ++k)
    for (int j = 0; j < kPatchSize; ++j)
      for (int i = 0; i < kPatchSize; ++i) {
        double sr[3][3][3], sp[3][3][3];
        stencil(rho, i, j, k, sr);
        stencil(pres, i, j, k, sp);
        bool flag = false;
        if (use_lohner)
          flag = (rp.lohner_density && lohner_estimator(sr, rp.lohner_filter) > lohner) ||
                 (rp.lohner_pressure && lohner_estimator(sp, rp.lohner_filter) > lohner);
        if (!flag && use_gradient)
          flag = relative_gradient(sr) > gradient || relative_gradient(sp) > gradient;
        if (!flag && use_density) flag = sr[1][1][1] > density;
        if (!flag) {
          const auto x = m.cell_center(p, i, j, k);
          const CellBox cell = CellBox::around(x, h);
          flag = problem.refine(cell, time, m.patch(p).level);
        }
        if (!flag) continue;
        any = true;
        const int idx[3] = {i, j, k};
        for (int d = 0; d < 3; ++d)
          lo[d] = std::min(lo[d], idx[d]), hi[d] = std::max(hi[d], idx[d]);
      }
  return any;
}

std::uint64_t pack(mesh::PatchCoord pc) {
  return (std::uint64_t(pc[2]) << 42) | (std::uint64_t(pc[1]) << 21) | std::uint64_t(pc[0]);
}

mesh::PatchCoord unpack(std::uint64_t k) {
  const std::uint64_t mask = (1u << 21) - 1;
  return {int(k & mask), int((k >> 21) & mask), int((k >> 42) & mask)};
}

}  // namespace

RefinementParams RefinementParams::from_params(const Params& p) {
  RefinementParams rp;
  rp.max_level = static_cast<int>(p.integer("amr.max_level"));
  rp.flag_buffer = static_cast<int>(p.integer("amr.flag_buffer"));
  rp.lohner_filter = p.real("amr.lohner_filter");
  const std::string& vars = p.string("amr.lohner_variables");
  rp.lohner_density = vars != "pressure";
  rp.lohner_pressure = vars != "density";
  struct Pair {
    const char* name;
    std::vector<double>*refine, *derefine;
  };
  for (const Pair& c : {Pair{"lohner", &rp.lohner_refine, &rp.lohner_derefine},
                        Pair{"gradient", &rp.gradient_refine, &rp.gradient_derefine},
                        Pair{"density", &rp.density_refine, &rp.density_derefine}}) {
    const std::string r = std::string("amr.") + c.name + "_refine";
    const std::string d = std::string("amr.") + c.name + "_derefine";
    *c.refine = p.real_list(r);
    *c.derefine = p.real_list(d);
    for (const auto& [key, list] : {std::pair{r, c.refine}, std::pair{d, c.derefine}})
      if (list->size() > 1 && static_cast<int>(list->size()) < rp.max_level)
        throw Error(ErrorKind::kInput,
                    strprintf("%s has %zu values but amr.max_level = %d: give one value, or "
                              "one per level below the finest (%d)",
                              key.c_str(), list->size(), rp.max_level, rp.max_level));
    for (int level = 0; level < std::max(rp.max_level, 1); ++level)
      if (at(*c.derefine, level) > at(*c.refine, level))
        throw Error(
            ErrorKind::kInput,
            strprintf("%s = %g exceeds %s = %g on level %d: the derefine threshold "
                      "must not exceed the refine one",
                      d.c_str(), at(*c.derefine, level), r.c_str(), at(*c.refine, level), level));
  }
  return rp;
}

double lohner_estimator(const double s[3][3][3], double filter) {
  // Index s[z][y][x]; unit spacing (the estimator is dimensionless).
  auto at = [&](int dx, int dy, int dz) { return s[1 + dz][1 + dy][1 + dx]; };
  double num = 0, den = 0;
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) {
      int ea[3] = {0, 0, 0}, eb[3] = {0, 0, 0};
      ea[a] = 1;
      eb[b] = 1;
      double d2, dd;
      if (a == b) {
        const double up = at(ea[0], ea[1], ea[2]), dn = at(-ea[0], -ea[1], -ea[2]), c = at(0, 0, 0);
        d2 = up - 2 * c + dn;
        dd = std::fabs(up - c) + std::fabs(c - dn) +
             filter * (std::fabs(up) + 2 * std::fabs(c) + std::fabs(dn));
      } else {
        const double pp = at(ea[0] + eb[0], ea[1] + eb[1], ea[2] + eb[2]);
        const double pm = at(ea[0] - eb[0], ea[1] - eb[1], ea[2] - eb[2]);
        const double mp = at(-ea[0] + eb[0], -ea[1] + eb[1], -ea[2] + eb[2]);
        const double mm = at(-ea[0] - eb[0], -ea[1] - eb[1], -ea[2] - eb[2]);
        d2 = 0.25 * (pp - pm - mp + mm);
        dd = 0.25 * (std::fabs(pp - mp) + std::fabs(pm - mm)) +
             filter * 0.25 * (std::fabs(pp) + std::fabs(pm) + std::fabs(mp) + std::fabs(mm));
      }
      num += d2 * d2;
      den += dd * dd;
    }
  return den > 0 ? std::sqrt(num / den) : 0;
}

mesh::Hierarchy plan_hierarchy(const mesh::Mesh& m, const RefinementParams& rp,
                               const kernels::EosParams& eos, const Problem& problem, double time) {
  const int top = std::min(rp.max_level, m.num_levels());  // levels that can gain children
  std::vector<std::set<std::uint64_t>> refine(rp.max_level);
  // Flags of the existing patches, with the buffer spilling into neighbours.
  for (int level = 0; level < top; ++level) {
    const auto& groups = m.groups(level);
    std::vector<std::vector<int>> marked(groups.size());
#pragma omp parallel for schedule(dynamic)
    for (std::size_t g = 0; g < groups.size(); ++g)
      for (int c = 0; c < mesh::kFamilySize; ++c) {
        const int p = groups[g] + c;
        int lo[3], hi[3];
        if (!flag_patch(m, p, rp, eos, problem, time, lo, hi)) continue;
        int from[3], to[3];
        for (int d = 0; d < 3; ++d) {
          from[d] = lo[d] - rp.flag_buffer < 0 ? -1 : 0;
          to[d] = hi[d] + rp.flag_buffer >= kPatchSize ? 1 : 0;
        }
        for (int dz = from[2]; dz <= to[2]; ++dz)
          for (int dy = from[1]; dy <= to[1]; ++dy)
            for (int dx = from[0]; dx <= to[0]; ++dx) {
              const int q = m.patch(p).neighbour[mesh::neighbour_index(dx, dy, dz)];
              if (q != mesh::kNoPatch) marked[g].push_back(q);
            }
      }
    for (const auto& list : marked)
      for (int q : list) refine[level].insert(pack(m.patch(q).coord()));
  }
  // Proper nesting, from the finest level down: a refined patch needs all its
  // neighbours on its own level, so their parents are refined.
  for (int level = rp.max_level - 1; level >= 1; --level)
    for (std::uint64_t k : refine[level]) {
      const mesh::PatchCoord pc = unpack(k);
      for (int dz = -1; dz <= 1; ++dz)
        for (int dy = -1; dy <= 1; ++dy)
          for (int dx = -1; dx <= 1; ++dx) {
            mesh::PatchCoord q = {pc[0] + dx, pc[1] + dy, pc[2] + dz};
            if (!m.wrap(level, q)) continue;
            refine[level - 1].insert(
                pack({floor_div(q[0], 2), floor_div(q[1], 2), floor_div(q[2], 2)}));
          }
    }
  mesh::Hierarchy h;
  for (int level = 0; level < rp.max_level && !refine[level].empty(); ++level) {
    h.emplace_back();
    for (std::uint64_t k : refine[level]) h.back().push_back(unpack(k));
  }
  return h;
}

}  // namespace tessera::evolve
