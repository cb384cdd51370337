// The potential correction's terms and source on the GPU (device_correction.hpp): one block
// per finer group makes the terms of its parent (fine_terms_tables: the restricted
// potential, the restricted residual with the neighbours' ghost values, the gradients
// through the faces the tables mark), one block per patch of the corrected level its
// source (correction_source_tables). Each cell's sums run in the host twin's order;
// compiled without contractions (CMakeLists.txt: --fmad=false): the host's bits.
#include <cmath>
#include <vector>

#include "src/gravity/device_correction.hpp"
#include "src/gravity/potential_box.cuh"
#include "tessera/gravity/self_gravity.hpp"

namespace tessera::gravity {

namespace {

using cuda::DeviceBuffer;
using exec::gpu::CudaDeviceMesh;
using namespace potential_gpu;
constexpr int kReals = static_cast<int>(CorrectionTerms::kReals);
constexpr int kFace = static_cast<int>(CorrectionTerms::kFaceCells);

// The group's density (with the correction's source) at its cell (x, y, z), 0 .. 15.
__device__ Real group_rho(const Args& a, int g, int source_field, int x, int y, int z) {
  const int child = (x / kN) + 2 * (y / kN) + 4 * (z / kN);
  const Real* u = a.level + std::size_t(a.first[g] + child) * a.patch_reals +
                  ((z % kN) * kN + (y % kN)) * kN + (x % kN);
  return source_field >= 0 ? u[0] + u[std::size_t(source_field) * kCells] : u[0];
}

__global__ void __launch_bounds__(kThreads)
    terms_kernel(Args a, const unsigned char* __restrict__ faces, int source_field,
                 double four_pi_g, double mean, double hf, double* terms) {
  __shared__ Real box[kBoxCells];
  const int g = blockIdx.x;
  const unsigned marked = faces[g];
  if (needs_box(a, g, false, true) || marked) parent_box(a, g, box);  // faces: all it reads
  double* t = terms + std::size_t(g) * kReals;
  for (int c = threadIdx.x; c < kCells; c += blockDim.x) {
    const int i = c % kN, j = (c / kN) % kN, k = c / (kN * kN);
    double sum = 0;
    for (int o = 0; o < 8; ++o)
      sum += group_phi(a, g, box, false, 2 * i + (o & 1), 2 * j + ((o >> 1) & 1), 2 * k + (o >> 2));
    t[CorrectionTerms::kRestricted + c] = sum / 8;
    // The residual of the eight finer cells, in the group's cell order.
    double residual = 0.0;
    for (int dk = 0; dk < 2; ++dk)
      for (int dj = 0; dj < 2; ++dj)
        for (int di = 0; di < 2; ++di) {
          const int x = 2 * i + di, y = 2 * j + dj, z = 2 * k + dk;
          const Real centre = group_phi(a, g, box, false, x, y, z);
          const double lap =
              double(group_phi(a, g, box, false, x - 1, y, z)) +
              group_phi(a, g, box, false, x + 1, y, z) + group_phi(a, g, box, false, x, y - 1, z) +
              group_phi(a, g, box, false, x, y + 1, z) + group_phi(a, g, box, false, x, y, z - 1) +
              group_phi(a, g, box, false, x, y, z + 1) - 6.0 * centre;
          residual +=
              (four_pi_g * (group_rho(a, g, source_field, x, y, z) - mean) - lap / (hf * hf)) / 8;
        }
    t[CorrectionTerms::kResidual + c] = residual;
  }
  // The faces' gradients: the fine cell inside less the ghost interpolated from the box.
  for (int c = threadIdx.x; c < 6 * kFace; c += blockDim.x) {
    const int face = c / kFace, t1 = c % kN, t2 = (c % kFace) / kN;
    const int ax = face / 2;
    const bool low = face % 2 == 0;
    double* out = t + CorrectionTerms::kGradient + std::size_t(face) * kFace + t2 * kN + t1;
    if (!(marked & (1u << face))) {
      *out = __longlong_as_double(0x7ff8000000000000LL);  // as CorrectionTerms leaves it
      continue;
    }
    const int side = low ? 1 : -1, f_in = low ? 0 : 2 * kN - 1;
    const int a1 = (ax + 1) % 3, a2 = (ax + 2) % 3;
    double fine = 0;
    for (int s2 = 0; s2 < 2; ++s2)
      for (int s1 = 0; s1 < 2; ++s1) {
        int f[3];
        f[a1] = 2 * t1 + s1;
        f[a2] = 2 * t2 + s2;
        f[ax] = f_in;
        const double in = group_phi(a, g, box, false, f[0], f[1], f[2]);
        f[ax] = f_in - side;
        fine += in - double(kernels::interpolate_potential_cell(box, f));
      }
    *out = fine / (4 * hf);
  }
}

// What the source kernel reads of the corrected level: per patch (in the level's group
// order, 8 per group) its pool position and covering finer group (-1: a leaf), its six
// face neighbours' positions (-1: beyond the domain) and covering groups.
struct Level {
  const Real* pool;
  std::size_t patch_reals;
  const int* position;
  const int* cover;
  const int* nb;
  const int* nb_cover;
  int phi_field, source_field;
  double four_pi_g, mean, h;
  const double* terms;
};

__device__ double d_of(const Level& l, int pos, int cover, int a) {
  return l.terms[std::size_t(cover) * kReals + CorrectionTerms::kRestricted + a] -
         double(l.pool[std::size_t(pos) * l.patch_reals + std::size_t(l.phi_field) * kCells + a]);
}

// CorrectionTerms::face on the device: the terms' face of axis ax, its low one or high one.
__device__ int term_face(int ax, bool low) {
  return 2 * ax + (low ? 0 : 1);
}

// A patch's face neighbour along ax on side -1 or 1 in the tables' order.
__device__ int face_index(int ax, int side) {
  return 2 * ax + (side > 0 ? 1 : 0);
}

__global__ void __launch_bounds__(kThreads) source_kernel(Args a, Level l, Real* pool) {
  __shared__ Real box[kBoxCells];
  const int p = blockIdx.x;
  const int pos = l.position[p], cover = l.cover[p];
  const int* nb = l.nb + 6 * p;
  const int* nb_cover = l.nb_cover + 6 * p;
  Real* src = pool + std::size_t(pos) * l.patch_reals + std::size_t(l.source_field) * kCells;
  const Real* phi_p = l.pool + std::size_t(pos) * l.patch_reals + std::size_t(l.phi_field) * kCells;
  if (cover >= 0) {
    parent_box(a, cover, box);  // block-uniform: `cover` is the block's
    const double scale = 1.0 / (l.four_pi_g * l.h * l.h);
    const double* rp = l.terms + std::size_t(cover) * kReals + CorrectionTerms::kResidual;
    const Real* rho_p = l.pool + std::size_t(pos) * l.patch_reals;
    const auto at = [&](int i, int j, int k) -> double {
      int off[3] = {0, 0, 0}, idx[3] = {i, j, k};
      for (int d = 0; d < 3; ++d)
        if (idx[d] < 0)
          off[d] = -1, idx[d] += kN;
        else if (idx[d] >= kN)
          off[d] = 1, idx[d] -= kN;
      if (off[0] == 0 && off[1] == 0 && off[2] == 0)
        return d_of(l, pos, cover, (k * kN + j) * kN + i);
      int f = 0;
      for (int d = 0; d < 3; ++d)
        if (off[d]) f = face_index(d, off[d]);
      if (nb[f] < 0) {
        const int ci = i < 0 ? 0 : (i > kN - 1 ? kN - 1 : i);
        const int cj = j < 0 ? 0 : (j > kN - 1 ? kN - 1 : j);
        const int ck = k < 0 ? 0 : (k > kN - 1 ? kN - 1 : k);
        return d_of(l, pos, cover, (ck * kN + cj) * kN + ci);
      }
      if (nb_cover[f] < 0) return 0.0;
      return d_of(l, nb[f], nb_cover[f], (idx[2] * kN + idx[1]) * kN + idx[0]);
    };
    const auto phi_at = [&](int i, int j, int k) {
      return double(box[kernels::potential_box_index(i + 2, j + 2, k + 2)]);
    };
    for (int c = threadIdx.x; c < kCells; c += blockDim.x) {
      const int i = c % kN, j = (c / kN) % kN, k = c / (kN * kN);
      const double lap = at(i - 1, j, k) + at(i + 1, j, k) + at(i, j - 1, k) + at(i, j + 1, k) +
                         at(i, j, k - 1) + at(i, j, k + 1) - 6 * d_of(l, pos, cover, c);
      const double lap_phi = phi_at(i - 1, j, k) + phi_at(i + 1, j, k) + phi_at(i, j - 1, k) +
                             phi_at(i, j + 1, k) + phi_at(i, j, k - 1) + phi_at(i, j, k + 1) -
                             6 * phi_at(i, j, k);
      Real s = Real((lap + lap_phi) * scale + rp[c] / l.four_pi_g - double(rho_p[c]) + l.mean);
      // The domain's faces, in the host's order of axes and sides.
      const int idx[3] = {i, j, k};
      for (int ax = 0; ax < 3; ++ax)
        for (int side = -1; side <= 1; side += 2) {
          const int f = face_index(ax, side);
          if (nb[f] >= 0 || idx[ax] != (side < 0 ? 0 : kN - 1)) continue;
          const int t1 = idx[(ax + 1) % 3], t2 = idx[(ax + 2) % 3];
          int out[3] = {i, j, k};
          out[ax] += side;
          const double coarse = phi_at(out[0], out[1], out[2]) - phi_at(i, j, k);
          const double fine =
              -l.h * l.terms[std::size_t(cover) * kReals + CorrectionTerms::kGradient +
                             std::size_t(term_face(ax, side < 0)) * kFace + t2 * kN + t1];
          s += Real((fine - coarse) * scale);
        }
      src[c] = s;
    }
    return;
  }
  // A leaf: flux matching on its faces next to covered patches, in the host's order.
  for (int c = threadIdx.x; c < kCells; c += blockDim.x) {
    const int idx[3] = {c % kN, (c / kN) % kN, c / (kN * kN)};
    Real s = 0;
    for (int ax = 0; ax < 3; ++ax)
      for (int side = -1; side <= 1; side += 2) {
        const int f = face_index(ax, side);
        if (nb[f] < 0 || nb_cover[f] < 0 || idx[ax] != (side > 0 ? kN - 1 : 0)) continue;
        int cp_idx[3] = {idx[0], idx[1], idx[2]};
        cp_idx[ax] = side > 0 ? 0 : kN - 1;
        const int cp = (cp_idx[2] * kN + cp_idx[1]) * kN + cp_idx[0];
        const int t1 = idx[(ax + 1) % 3], t2 = idx[(ax + 2) % 3];
        const double fine = l.terms[std::size_t(nb_cover[f]) * kReals + CorrectionTerms::kGradient +
                                    std::size_t(term_face(ax, side > 0)) * kFace + t2 * kN + t1];
        const Real* phi_nb =
            l.pool + std::size_t(nb[f]) * l.patch_reals + std::size_t(l.phi_field) * kCells;
        const double coarse =
            (double(phi_nb[cp]) + d_of(l, nb[f], nb_cover[f], cp) - double(phi_p[c])) / l.h;
        s += Real((coarse - fine) / l.h / l.four_pi_g);
      }
    src[c] = s;
  }
}

// keep_potential / coarse_change on patch blockIdx.x of the corrected level (its tables'
// order): `change` false copies the potential to `kept`; true writes into `other` the
// current potential less the terms' restricted one (covered) or the kept one (a leaf), as
// coarse_change: Real(double(now) - double(before)).
__global__ void change_kernel(Level l, Real* kept, Real* other, bool change) {
  const int p = blockIdx.x;
  const std::size_t at =
      std::size_t(l.position[p]) * l.patch_reals + std::size_t(l.phi_field) * kCells;
  Real* k = kept + std::size_t(p) * kCells;
  for (int c = threadIdx.x; c < kCells; c += blockDim.x) {
    const Real now = l.pool[at + c];
    if (!change) {
      k[c] = now;
      continue;
    }
    const int cover = l.cover[p];
    const double before =
        cover >= 0 ? l.terms[std::size_t(cover) * kReals + CorrectionTerms::kRestricted + c]
                   : double(k[c]);
    other[at + c] = Real(double(now) - before);
  }
}

// read_terms: the terms of finer group picked[blockIdx.x] into row blockIdx.x of `out`.
__global__ void pick_terms(const double* __restrict__ terms, const int* __restrict__ picked,
                           double* __restrict__ out) {
  const double* from = terms + std::size_t(picked[blockIdx.x]) * kReals;
  double* to = out + std::size_t(blockIdx.x) * kReals;
  for (int c = threadIdx.x; c < kReals; c += blockDim.x) to[c] = from[c];
}

class CudaCorrection final : public DeviceCorrection {
 public:
  void set_tables(const mesh::Mesh& m, const PotentialTables& fine, int computed,
                  const std::vector<int>& groups) override {
    level_ = fine.level - 1;
    computed_ = computed;
    std::vector<int> group_of(m.num_patches(), -1);
    for (int g = 0; g < fine.groups(); ++g) group_of[m.patch(fine.first_patch[g]).parent] = g;
    // The finer groups of other ranks: only their terms (written) and, where the parent is
    // one of `groups`' patches, the parent's box are read; their patches (and the coarser
    // ones around a parent of another rank) are not held here.
    PotentialTables t = fine;
    if (computed < fine.groups()) {
      std::vector<char> corrected(m.num_patches() / mesh::kFamilySize, 0);
      for (const int first : groups) corrected[first / mesh::kFamilySize] = 1;
      for (int g = computed; g < fine.groups(); ++g) {
        t.first_patch[g] = -1;
        std::fill_n(t.blocks.begin() + std::size_t(g) * kernels::kGatherBlocks,
                    kernels::kGatherBlocks, -1);
        if (!corrected[m.patch(fine.first_patch[g]).parent / mesh::kFamilySize])
          std::fill_n(t.coarse.begin() + std::size_t(g) * kernels::kCoarseBlocks,
                      kernels::kCoarseBlocks, -1);
      }
    }
    fine_.set(m, t);
    faces_ = CudaDeviceMesh::to_device(fine.gradient_faces);
    std::vector<int> position, cover, nb, nb_cover;
    for (const int first : groups)
      for (int c = 0; c < mesh::kFamilySize; ++c) {
        const int p = first + c;
        position.push_back(CudaDeviceMesh::position(m, p));
        cover.push_back(group_of[p]);
        for (int ax = 0; ax < 3; ++ax)
          for (int side = -1; side <= 1; side += 2) {
            int off[3] = {0, 0, 0};
            off[ax] = side;
            const int q = m.neighbours().neighbour(p, off[0], off[1], off[2]);
            nb.push_back(q >= 0 ? CudaDeviceMesh::position(m, q) : -1);
            nb_cover.push_back(q >= 0 ? group_of[q] : -1);
          }
      }
    patches_ = static_cast<int>(position.size());
    position_ = CudaDeviceMesh::to_device(position);
    cover_ = CudaDeviceMesh::to_device(cover);
    nb_ = CudaDeviceMesh::to_device(nb);
    nb_cover_ = CudaDeviceMesh::to_device(nb_cover);
    terms_ = DeviceBuffer<double>(std::max<std::size_t>(std::size_t(fine.groups()) * kReals, 1));
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
  }

  void fine_terms(const mesh::Mesh& m, exec::DeviceMesh& dm, int phi_field, int source_field,
                  double four_pi_g, double mean, const DeviceRootPotential& root) override {
    if (computed_ == 0) return;
    auto& d = dynamic_cast<CudaDeviceMesh&>(dm);
    const Args a = fine_.args(m, d, phi_field, 1.0, root);
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
    terms_kernel<<<computed_, kThreads>>>(a, faces_.get(), source_field, four_pi_g, mean,
                                          m.dx(fine_.level), terms_.get());
    TESSERA_CUDA_CHECK(cudaGetLastError());
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
  }

  void correction_source(const mesh::Mesh& m, exec::DeviceMesh& dm, int phi_field, int source_field,
                         double four_pi_g, double mean, const DeviceRootPotential& root) override {
    if (patches_ == 0) return;
    auto& d = dynamic_cast<CudaDeviceMesh&>(dm);
    const Args a = fine_.args(m, d, phi_field, 1.0, root);
    Real* pool = d.pool(m.current_slot(level_));
    const Level l{
        pool,      d.patch_reals(), position_.get(), cover_.get(), nb_.get(),    nb_cover_.get(),
        phi_field, source_field,    four_pi_g,       mean,         m.dx(level_), terms_.get()};
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
    source_kernel<<<patches_, kThreads>>>(a, l, pool);
    TESSERA_CUDA_CHECK(cudaGetLastError());
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
  }

  void keep_potential(const mesh::Mesh& m, exec::DeviceMesh& dm, int phi_field) override {
    run_change(m, dynamic_cast<CudaDeviceMesh&>(dm), phi_field, false);
  }
  void coarse_change(const mesh::Mesh& m, exec::DeviceMesh& dm, int phi_field) override {
    run_change(m, dynamic_cast<CudaDeviceMesh&>(dm), phi_field, true);
  }

  void read_terms(const std::vector<int>& groups, std::vector<double>& out) override {
    out.resize(groups.size() * kReals);
    if (groups.empty()) return;
    for (const int g : groups)
      if (g < 0 || g >= computed_)  // only this rank's own groups hold computed terms
        throw Error(ErrorKind::kInternal, "the terms of a finer group this rank did not compute");
    if (picked_.size() < groups.size()) {
      picked_ = DeviceBuffer<int>(groups.size());
      packed_ = DeviceBuffer<double>(groups.size() * kReals);
    }
    TESSERA_CUDA_CHECK(cudaMemcpy(picked_.get(), groups.data(), groups.size() * sizeof(int),
                                  cudaMemcpyHostToDevice));
    pick_terms<<<static_cast<int>(groups.size()), kThreads>>>(terms_.get(), picked_.get(),
                                                              packed_.get());
    TESSERA_CUDA_CHECK(cudaGetLastError());
    TESSERA_CUDA_CHECK(
        cudaMemcpy(out.data(), packed_.get(), out.size() * sizeof(double), cudaMemcpyDeviceToHost));
  }

  void write_terms(int first, const std::vector<double>& values) override {
    if (values.empty()) return;
    if (first < 0 || values.size() % kReals != 0 ||
        std::size_t(first) * kReals + values.size() > std::size_t(fine_.groups) * kReals)
      throw Error(ErrorKind::kInternal, "terms written beyond the finer level's tables");
    TESSERA_CUDA_CHECK(cudaMemcpy(terms_.get() + std::size_t(first) * kReals, values.data(),
                                  values.size() * sizeof(double), cudaMemcpyHostToDevice));
  }

  std::vector<double> terms() const override {
    std::vector<double> out(std::size_t(fine_.groups) * kReals);
    if (!out.empty())
      TESSERA_CUDA_CHECK(cudaMemcpy(out.data(), terms_.get(), out.size() * sizeof(double),
                                    cudaMemcpyDeviceToHost));
    return out;
  }

 private:
  void run_change(const mesh::Mesh& m, CudaDeviceMesh& d, int phi_field, bool change) {
    if (patches_ == 0) return;
    if (kept_.size() != std::size_t(patches_) * kCells) {
      if (change)
        throw Error(ErrorKind::kInternal, "a coarse change without the potential it keeps");
      kept_ = DeviceBuffer<Real>(std::size_t(patches_) * kCells);
    }
    const Level l{d.pool(m.current_slot(level_)),
                  d.patch_reals(),
                  position_.get(),
                  cover_.get(),
                  nb_.get(),
                  nb_cover_.get(),
                  phi_field,
                  -1,
                  0.0,
                  0.0,
                  m.dx(level_),
                  terms_.get()};
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
    change_kernel<<<patches_, kThreads>>>(l, kept_.get(), d.pool(m.next_slot(level_)), change);
    TESSERA_CUDA_CHECK(cudaGetLastError());
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
  }

  DeviceBuffer<Real> kept_;
  DeviceTables fine_;
  DeviceBuffer<unsigned char> faces_;
  DeviceBuffer<int> position_, cover_, nb_, nb_cover_;
  DeviceBuffer<double> terms_;
  DeviceBuffer<int> picked_;     // read_terms' groups
  DeviceBuffer<double> packed_;  // ... and their terms
  int level_ = 0, patches_ = 0, computed_ = 0;
};

}  // namespace

std::unique_ptr<DeviceCorrection> make_device_correction() {
  return std::make_unique<CudaCorrection>();
}

}  // namespace tessera::gravity
