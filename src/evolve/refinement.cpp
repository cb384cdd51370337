#include "tessera/evolve/refinement.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <exception>
#include <numbers>

#include "kernels/flagging.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/core/parallel.hpp"

namespace tessera::evolve {

namespace {

using mesh::kPatchSize;
constexpr int kHalo = kPatchSize + 2;        // a patch and one layer around it
constexpr int kFamily = 2 * kPatchSize + 2;  // a family (patch group) and one layer

int floor_div(int a, int b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

using kernels::lohner_sums;
using kernels::relative_gradient;

// Density and pressure of a family and one layer around it, converted once per cell,
// and the patch each 8^3 block of that region comes from (negative where the level has
// none: a coarser region, or outside the domain).
struct FamilyHalo {
  std::vector<double> rho = std::vector<double>(kFamily * kFamily * kFamily);
  std::vector<double> pres = std::vector<double>(kFamily * kFamily * kFamily);
  // The magnetic field (MHD runs with a field criterion only; else empty).
  std::vector<double> b[3];
  int block[4][4][4];  // [bz + 1][by + 1][bx + 1], b in -1..2
};

void gather_family(const mesh::Mesh& m, int first, const physics::Model& model, FamilyHalo& f) {
  constexpr int n = mesh::kPatchCells;
  const mesh::NeighbourTable::Row blocks = m.neighbours().row(first);
  for (int bz = -1; bz <= 2; ++bz)
    for (int by = -1; by <= 2; ++by)
      for (int bx = -1; bx <= 2; ++bx) {
        const int b[3] = {bx, by, bz};
        int lo[3], hi[3];
        for (int d = 0; d < 3; ++d) {
          lo[d] = std::max(b[d] * kPatchSize, -1);
          hi[d] = std::min(b[d] * kPatchSize + kPatchSize, 2 * kPatchSize + 1);
        }
        const int src = blocks[mesh::group_block(bx, by, bz)];
        f.block[bz + 1][by + 1][bx + 1] = src;
        if (src < 0) continue;
        const Real* u = m.current(src);
        for (int z = lo[2]; z < hi[2]; ++z)
          for (int y = lo[1]; y < hi[1]; ++y)
            for (int x = lo[0]; x < hi[0]; ++x) {
              const int c =
                  ((z - bz * kPatchSize) * kPatchSize + (y - by * kPatchSize)) * kPatchSize +
                  (x - bx * kPatchSize);
              Real w[kernels::kMaxVars];
              model.to_primitive(u + c, n, w);
              const int i = ((z + 1) * kFamily + (y + 1)) * kFamily + (x + 1);
              f.rho[i] = w[0];
              f.pres[i] = model.pressure(w);
              if (!f.b[0].empty())
                for (int d = 0; d < 3; ++d) f.b[d][i] = w[kernels::MhdGlm::kBx + d];
            }
      }
}

// Density and pressure of one patch of the family and one layer around it; where the
// neighbouring block has no same-level patch, the nearest cell of the patch itself.
void patch_halo(const FamilyHalo& f, int child, double* rho, double* pres, double* b[3]) {
  const int o[3] = {(child & 1) * kPatchSize, ((child >> 1) & 1) * kPatchSize,
                    ((child >> 2) & 1) * kPatchSize};
  for (int k = -1; k <= kPatchSize; ++k)
    for (int j = -1; j <= kPatchSize; ++j)
      for (int i = -1; i <= kPatchSize; ++i) {
        int x = o[0] + i, y = o[1] + j, z = o[2] + k;
        if (f.block[floor_div(z, kPatchSize) + 1][floor_div(y, kPatchSize) + 1]
                   [floor_div(x, kPatchSize) + 1] < 0) {
          x = o[0] + std::clamp(i, 0, kPatchSize - 1);
          y = o[1] + std::clamp(j, 0, kPatchSize - 1);
          z = o[2] + std::clamp(k, 0, kPatchSize - 1);
        }
        const int from = ((z + 1) * kFamily + (y + 1)) * kFamily + (x + 1);
        const int to = ((k + 1) * kHalo + (j + 1)) * kHalo + (i + 1);
        rho[to] = f.rho[from];
        pres[to] = f.pres[from];
        if (!f.b[0].empty())
          for (int d = 0; d < 3; ++d) b[d][to] = f.b[d][from];
      }
}

// |curl B| dx / |B| at b[.][c] (central differences; strides s), with |B| the largest
// field magnitude of the 7-point stencil: dimensionless, like relative_gradient; 0 where
// there is no field.
double relative_current(double* const b[3], const double* bmag, int c, const int s[3]) {
  auto d = [&](int comp, int axis) { return 0.5 * (b[comp][c + s[axis]] - b[comp][c - s[axis]]); };
  const double jx = d(2, 1) - d(1, 2), jy = d(0, 2) - d(2, 0), jz = d(1, 0) - d(0, 1);
  double scale = bmag[c];
  for (int a = 0; a < 3; ++a) scale = std::max({scale, bmag[c + s[a]], bmag[c - s[a]]});
  return scale > 0 ? std::sqrt(jx * jx + jy * jy + jz * jz) / scale : 0;
}

// The patches that the flags of the family's patch `child` mark: bit
// (dz + 1) * 9 + (dy + 1) * 3 + (dx + 1) for the neighbour at offset (dx, dy, dz), bit 13
// for the patch itself. A flagged cell marks its own patch and every neighbour that lies
// within amr.flag_buffer cells of it (in each direction), so that the cells around it are
// refined too. (Marking from the flagged cells' bounding box instead would mark a
// diagonal neighbour whenever a patch has flagged cells near each of two faces, apart:
// a curved shock crossing a patch then keeps the quiet region behind it refined.)
std::uint32_t flag_patch(const mesh::Mesh& m, int p, const FamilyHalo& family, int child,
                         const RefinementParams& rp, const Problem& problem, double time) {
  constexpr int kHaloCells = kHalo * kHalo * kHalo;
  double rho[kHaloCells], pres[kHaloCells], bx[kHaloCells], by[kHaloCells], bz[kHaloCells];
  double* b[3] = {bx, by, bz};
  patch_halo(family, child, rho, pres, b);
  const bool field = !family.b[0].empty();
  double bmag[kHaloCells];
  if (field)
    for (int c = 0; c < kHaloCells; ++c)
      bmag[c] = std::sqrt(bx[c] * bx[c] + by[c] * by[c] + bz[c] * bz[c]);
  const bool refined = !m.patch(p).is_leaf();
  const int lv = m.patch(p).level;
  using R = RefinementParams;
  const bool use_lohner = R::at(rp.lohner_refine, lv) > 0;
  const bool use_gradient = R::at(rp.gradient_refine, lv) > 0;
  const bool use_density = R::at(rp.density_refine, lv) > 0;
  const bool use_current = field && R::at(rp.current_refine, lv) > 0;
  const bool use_problem = problem.has_refine_criterion();
  const bool use_jeans = rp.jeans_cells > 0;
  const double jeans_h2 = (rp.jeans_cells * m.dx(lv)) * (rp.jeans_cells * m.dx(lv));
  const double lohner = R::at(refined ? rp.lohner_derefine : rp.lohner_refine, lv);
  const double gradient = R::at(refined ? rp.gradient_derefine : rp.gradient_refine, lv);
  const double density = R::at(refined ? rp.density_derefine : rp.density_refine, lv);
  const double current = R::at(refined ? rp.current_derefine : rp.current_refine, lv);
  const double h = m.dx(m.patch(p).level);
  const int s[3] = {1, kHalo, kHalo * kHalo};
  // Per index along an axis, the offsets it reaches: bit 0 for -1, 1 for 0, 2 for +1.
  int reach[kPatchSize];
  for (int i = 0; i < kPatchSize; ++i) reach[i] = kernels::flag_reach_axis(i, rp.flag_buffer);
  std::uint32_t marks = 0;
  int last[3] = {-1, -1, -1};  // the reach of the last flagged cell, already marked
  const bool lohner_rho = use_lohner && rp.lohner_density;
  const bool lohner_pres = use_lohner && rp.lohner_pressure;
  const bool lohner_field = use_lohner && rp.lohner_field && field;
  for (int k = 0; k < kPatchSize; ++k)
    for (int j = 0; j < kPatchSize; ++j) {
      // Löhner's estimators of a whole row first, in loops without branches that the
      // compiler vectorises (the same sums as before); then the flags.
      const int row = ((k + 1) * kHalo + (j + 1)) * kHalo + 1;
      double num_rho[kPatchSize] = {}, den_rho[kPatchSize] = {};
      double num_pres[kPatchSize] = {}, den_pres[kPatchSize] = {};
      double num_b[kPatchSize] = {}, den_b[kPatchSize] = {};
      if (lohner_rho)
        for (int i = 0; i < kPatchSize; ++i)
          lohner_sums<1, kHalo, kHalo * kHalo>(rho + row + i, rp.lohner_filter, num_rho[i],
                                               den_rho[i]);
      if (lohner_pres)
        for (int i = 0; i < kPatchSize; ++i)
          lohner_sums<1, kHalo, kHalo * kHalo>(pres + row + i, rp.lohner_filter, num_pres[i],
                                               den_pres[i]);
      if (lohner_field)
        for (int i = 0; i < kPatchSize; ++i)
          lohner_sums<1, kHalo, kHalo * kHalo>(bmag + row + i, rp.lohner_filter, num_b[i],
                                               den_b[i]);
      for (int i = 0; i < kPatchSize; ++i) {
        const int c = row + i;
        bool flag = (lohner_rho && lohner_exceeds(num_rho[i], den_rho[i], lohner)) ||
                    (lohner_pres && lohner_exceeds(num_pres[i], den_pres[i], lohner)) ||
                    (lohner_field && lohner_exceeds(num_b[i], den_b[i], lohner));
        if (!flag && use_gradient)
          flag =
              relative_gradient(rho + c, s) > gradient || relative_gradient(pres + c, s) > gradient;
        if (!flag && use_density) flag = rho[c] > density;
        // Truelove et al. 1997: lambda_J^2 = pi c_s^2 / (G rho) below (N_J h)^2.
        if (!flag && use_jeans) flag = rp.jeans_coefficient * pres[c] < jeans_h2 * rho[c] * rho[c];
        if (!flag && use_current) flag = relative_current(b, bmag, c, s) > current;
        if (!flag && use_problem) {
          const auto x = m.cell_center(p, i, j, k);
          flag = problem.refine(CellBox::around(x, h), time, m.patch(p).level);
        }
        if (!flag) continue;
        const int r[3] = {reach[i], reach[j], reach[k]};
        if (r[0] == last[0] && r[1] == last[1] && r[2] == last[2]) continue;
        for (int d = 0; d < 3; ++d) last[d] = r[d];
        marks |= kernels::flag_marks(r);
      }
    }
  return marks;
}

}  // namespace

std::uint64_t mark_key(mesh::PatchCoord pc) {
  return (std::uint64_t(pc[2]) << 42) | (std::uint64_t(pc[1]) << 21) | std::uint64_t(pc[0]);
}

mesh::PatchCoord mark_coord(std::uint64_t k) {
  const std::uint64_t mask = (1u << 21) - 1;
  return {int(k & mask), int((k >> 21) & mask), int((k >> 42) & mask)};
}

void sort_marks(std::vector<std::uint64_t>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

void nesting_parents(const mesh::Mesh& m, int level, std::uint64_t k,
                     std::vector<std::uint64_t>& out) {
  const mesh::PatchCoord pc = mark_coord(k);
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        mesh::PatchCoord q = {pc[0] + dx, pc[1] + dy, pc[2] + dz};
        if (!m.wrap(level, q)) continue;
        out.push_back(mark_key({floor_div(q[0], 2), floor_div(q[1], 2), floor_div(q[2], 2)}));
      }
}

RefinementParams RefinementParams::from_params(const Params& p) {
  RefinementParams rp;
  rp.max_level = static_cast<int>(p.integer("amr.max_level"));
  rp.flag_buffer = static_cast<int>(p.integer("amr.flag_buffer"));
  rp.lohner_filter = p.real("amr.lohner_filter");
  const std::string& vars = p.string("amr.lohner_variables");
  rp.lohner_density = vars == "density" || vars.rfind("density_pressure", 0) == 0;
  rp.lohner_pressure = vars == "pressure" || vars.rfind("density_pressure", 0) == 0;
  rp.lohner_field = vars == "field" || vars == "density_pressure_field";
  rp.field_criteria = rp.lohner_field;
  struct Pair {
    const char* name;
    std::vector<double>*refine, *derefine;
  };
  for (const Pair& c : {Pair{"lohner", &rp.lohner_refine, &rp.lohner_derefine},
                        Pair{"gradient", &rp.gradient_refine, &rp.gradient_derefine},
                        Pair{"density", &rp.density_refine, &rp.density_derefine},
                        Pair{"current", &rp.current_refine, &rp.current_derefine}}) {
    const std::string r = std::string("amr.") + c.name + "_refine";
    const std::string d = std::string("amr.") + c.name + "_derefine";
    *c.refine = p.real_list(r);
    *c.derefine = p.real_list(d);
    for (const auto& [key, list] : {std::pair{r, c.refine}, std::pair{d, c.derefine}}) {
      // Values beyond amr.max_level are kept (a file's list survives amr.max_level lowered
      // on the command line); more values than any run can have levels are a mistake.
      if (list->size() > std::size_t(mesh::kMaxLevels - 1))
        throw Error(ErrorKind::kInput,
                    strprintf("%s has %zu values, but a run has at most %d levels below the "
                              "finest (amr.max_level = %d here): give one value, or one per "
                              "level below the finest",
                              key.c_str(), list->size(), mesh::kMaxLevels - 1, rp.max_level));
      if (list->size() > 1 && static_cast<int>(list->size()) < rp.max_level)
        throw Error(ErrorKind::kInput,
                    strprintf("%s has %zu values but amr.max_level = %d: give one value, or "
                              "one per level below the finest (%d)",
                              key.c_str(), list->size(), rp.max_level, rp.max_level));
    }
    for (int level = 0; level < std::max(rp.max_level, 1); ++level)
      if (at(*c.derefine, level) > at(*c.refine, level))
        throw Error(
            ErrorKind::kInput,
            strprintf("%s = %g exceeds %s = %g on level %d: the derefine threshold "
                      "must not exceed the refine one",
                      d.c_str(), at(*c.derefine, level), r.c_str(), at(*c.refine, level), level));
  }
  rp.jeans_cells = p.real("amr.jeans_cells");
  if (rp.jeans_cells > 0) {
    if (!p.boolean("gravity.enabled"))
      throw Error(ErrorKind::kInput,
                  strprintf("amr.jeans_cells = %g refines on the Jeans length, which needs "
                            "self-gravity: set gravity.enabled = true or amr.jeans_cells = 0",
                            rp.jeans_cells));
    const double gamma = p.string("hydro.eos") == "isothermal" ? 1.0 : p.real("hydro.gamma");
    rp.jeans_coefficient = std::numbers::pi * gamma / p.real("gravity.G");
  }
  // Name the key that asks for the magnetic field (both may).
  int current_level = -1;
  for (int level = 0; level < std::max(rp.max_level, 1); ++level)
    if (at(rp.current_refine, level) > 0 && current_level < 0) current_level = level;
  if (current_level >= 0) rp.field_criteria = true;
  if (rp.field_criteria && !p.boolean("mhd.enabled")) {
    std::string why;
    if (rp.lohner_field) why = "amr.lohner_variables = \"" + vars + "\"";
    if (current_level >= 0)
      why += std::string(why.empty() ? "" : " and ") +
             strprintf("amr.current_refine = %g (level %d)", at(rp.current_refine, current_level),
                       current_level);
    throw Error(ErrorKind::kInput,
                why + " refines on the magnetic field, which needs mhd.enabled = true");
  }
  return rp;
}

double lohner_estimator(const double* q, const int stride[3], double filter) {
  // Unit spacing (the estimator is dimensionless).
  auto at = [&](int dx, int dy, int dz) {
    return q[dx * stride[0] + dy * stride[1] + dz * stride[2]];
  };
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

bool lohner_exceeds(double num, double den, double threshold) {
  return kernels::lohner_exceeds(num, den, threshold);
}

double lohner_estimator(const double s[3][3][3], double filter) {
  const int stride[3] = {1, 3, 9};
  return lohner_estimator(&s[1][1][1], stride, filter);
}

// Every rank's lists, per level, concatenated in rank order.
void gather_marks(Marks& refine, parallel::Comm& comm) {
  std::vector<double> mine;
  for (const auto& level : refine) {
    mine.push_back(double(level.size()));
    for (const std::uint64_t k : level) mine.push_back(std::bit_cast<double>(k));
  }
  const auto got = comm.allgather(std::move(mine));
  for (auto& level : refine) level.clear();
  for (int q = 0; q < comm.size(); ++q) {
    std::size_t i = 0;
    for (auto& level : refine) {
      if (i >= got[q].size())
        throw Error(ErrorKind::kInternal, strprintf("refinement flags: rank %d sent too few", q));
      const std::size_t n = static_cast<std::size_t>(got[q][i++]);
      if (i + n > got[q].size())
        throw Error(ErrorKind::kInternal, strprintf("refinement flags: rank %d sent too few", q));
      for (std::size_t j = 0; j < n; ++j)
        level.push_back(std::bit_cast<std::uint64_t>(got[q][i++]));
    }
  }
}

std::optional<kernels::FlagCriteria> device_flag_criteria(const RefinementParams& rp,
                                                          const Problem& problem, int level) {
  using R = RefinementParams;
  if (problem.has_refine_criterion() || rp.jeans_cells > 0 || rp.field_criteria) return {};
  kernels::FlagCriteria c;
  const bool lohner = R::at(rp.lohner_refine, level) > 0;
  c.lohner_density = lohner && rp.lohner_density;
  c.lohner_pressure = lohner && rp.lohner_pressure;
  c.gradient = R::at(rp.gradient_refine, level) > 0;
  c.density = R::at(rp.density_refine, level) > 0;
  c.lohner[0] = R::at(rp.lohner_refine, level), c.lohner[1] = R::at(rp.lohner_derefine, level);
  c.gradient_threshold[0] = R::at(rp.gradient_refine, level);
  c.gradient_threshold[1] = R::at(rp.gradient_derefine, level);
  c.density_threshold[0] = R::at(rp.density_refine, level);
  c.density_threshold[1] = R::at(rp.density_derefine, level);
  c.filter = rp.lohner_filter;
  c.flag_buffer = rp.flag_buffer;
  return c;
}

Marks mark_patches(const mesh::Mesh& m, const RefinementParams& rp, const physics::Model& model,
                   const Problem& problem, double time, const parallel::Partition* part,
                   parallel::Comm* comm, const std::vector<std::vector<std::uint32_t>>* given) {
  const bool ranks = part && comm && comm->size() > 1;
  const int top = std::min(rp.max_level, m.num_levels());  // levels that can gain children
  Marks refine(rp.max_level);
  // Flags of the existing patches, with the buffer spilling into neighbours. A family's
  // primitive variables are converted once for its 8 patches.
  for (int level = 0; level < top; ++level) {
    std::vector<int> own;
    if (ranks)
      for (const int g : m.groups(level))
        if (part->owns(comm->rank(), g)) own.push_back(g);
    const auto& groups = ranks ? own : m.groups(level);
    std::vector<std::vector<std::uint64_t>> marked(groups.size());
    // Marks computed on the device: only turned into patches here.
    const bool have = given && level < static_cast<int>(given->size()) &&
                      (*given)[level].size() == groups.size() * mesh::kFamilySize;
    ParallelErrors errors;  // the problem's refine() and the lists may throw
#pragma omp parallel for schedule(dynamic)
    for (std::size_t g = 0; g < groups.size(); ++g)
      errors.run(static_cast<std::int64_t>(g), [&] {
        thread_local FamilyHalo family;
        if (!have) {
          // The field only where a criterion looks at it.
          const std::size_t field_cells =
              rp.field_criteria && model.has_magnetic_field() ? family.rho.size() : 0;
          for (auto& b : family.b) b.resize(field_cells);
          gather_family(m, groups[g], model, family);
        }
        for (int c = 0; c < mesh::kFamilySize; ++c) {
          const int p = groups[g] + c;
          const std::uint32_t marks = have ? (*given)[level][g * mesh::kFamilySize + c]
                                           : flag_patch(m, p, family, c, rp, problem, time);
          if (!marks) continue;
          for (int dz = -1; dz <= 1; ++dz)
            for (int dy = -1; dy <= 1; ++dy)
              for (int dx = -1; dx <= 1; ++dx) {
                if (!(marks >> (((dz + 1) * 3 + dy + 1) * 3 + dx + 1) & 1)) continue;
                const int q = m.neighbours().neighbour(p, dx, dy, dz);
                if (q >= 0) marked[g].push_back(mark_key(m.patch(q).coord()));
              }
        }
      });
    // Several ranks: a rank's error (the problem's refine()) stops every rank before the
    // gather below.
    std::exception_ptr error;
    try {
      errors.rethrow();
    } catch (...) {
      if (!ranks) throw;
      error = std::current_exception();
    }
    if (ranks) comm->agree(error);
    for (const auto& list : marked)
      refine[level].insert(refine[level].end(), list.begin(), list.end());
    sort_marks(refine[level]);
  }
  return refine;
}

mesh::Hierarchy settle_hierarchy(const mesh::Mesh& m, int max_level, Marks refine,
                                 parallel::Comm* comm) {
  refine.resize(max_level);
  if (comm && comm->size() > 1) gather_marks(refine, *comm);
  // Proper nesting, from the finest level down: a refined patch needs all its
  // neighbours on its own level, so their parents are refined.
  for (int level = max_level - 1; level >= 1; --level) {
    sort_marks(refine[level]);
    for (const std::uint64_t k : refine[level]) nesting_parents(m, level, k, refine[level - 1]);
  }
  if (!refine.empty()) sort_marks(refine[0]);
  mesh::Hierarchy h;
  for (int level = 0; level < max_level && !refine[level].empty(); ++level) {
    h.emplace_back();
    for (std::uint64_t k : refine[level]) h.back().push_back(mark_coord(k));
  }
  return h;
}

mesh::Hierarchy plan_hierarchy(const mesh::Mesh& m, const RefinementParams& rp,
                               const physics::Model& model, const Problem& problem, double time,
                               const parallel::Partition* part, parallel::Comm* comm,
                               const std::vector<std::vector<std::uint32_t>>* given) {
  const bool ranks = part && comm && comm->size() > 1;
  return settle_hierarchy(m, rp.max_level,
                          mark_patches(m, rp, model, problem, time, part, comm, given),
                          ranks ? comm : nullptr);
}

}  // namespace tessera::evolve
