// The root-level Poisson solve with cuFFT's 3D plans (gravity/fft_poisson.hpp,
// make_cufft3d_poisson, the benchmark's reference for the slab passes of make_cufft_poisson):
// the same transforms and multipliers as the FFTW solvers (periodic: the 7-point
// Laplacian's eigenvalues, mean subtracted; isolated: the free-space Green's function on the
// doubled grid, Hockney & Eastwood 1981), as double-precision real-to-complex cuFFT plans
// (seed 004: the spectral Poisson solve on the GPU). The multipliers are computed once on
// the host and kept on the GPU. A solve copies rho to the GPU, fills the transform's input
// (the source, zero-padded for isolated boundaries), transforms, multiplies, transforms
// back, gathers phi with its ghost layer (periodic images, or the doubled grid's cells
// beyond the domain) and copies it back.
#include <cufft.h>

#include <numbers>
#include <string>

#include "src/exec/cuda/cuda_util.cuh"
#include "src/gravity/cufft_check.cuh"
#include "tessera/core/parallel.hpp"
#include "tessera/gravity/fft_poisson.hpp"

namespace tessera::gravity {

namespace {

// The transform's input: four_pi_g (rho - mean) on the grid (periodic, m = n), or G rho in
// the lower corner of the doubled grid m = 2n and zero elsewhere (isolated; the
// multipliers are per unit G, so G is applied here).
__global__ void fill_source(const double* rho, double* real, int n0, int n1, int n2, int m0, int m1,
                            int m2, double scale, double mean) {
  const long long total = 1LL * m0 * m1 * m2;
  for (long long c = blockIdx.x * 1LL * blockDim.x + threadIdx.x; c < total;
       c += 1LL * gridDim.x * blockDim.x) {
    const int i = int(c % m0), j = int((c / m0) % m1), k = int(c / (1LL * m0 * m1));
    real[c] = i < n0 && j < n1 && k < n2 ? scale * (rho[(1LL * k * n1 + j) * n0 + i] - mean) : 0.0;
  }
}

__global__ void multiply(cufftDoubleComplex* spec, const double* mult, long long modes) {
  for (long long c = blockIdx.x * 1LL * blockDim.x + threadIdx.x; c < modes;
       c += 1LL * gridDim.x * blockDim.x) {
    spec[c].x *= mult[c];
    spec[c].y *= mult[c];
  }
}

// phi with one ghost layer from the transform grid m: cell -1 is the grid's last (periodic
// image, or the doubled grid's cyclic convolution beyond the domain).
__global__ void gather_ghosted(const double* real, double* phi, int n0, int n1, int n2, int m0,
                               int m1, int m2) {
  const int g0 = n0 + 2, g1 = n1 + 2, g2 = n2 + 2;
  const long long total = 1LL * g0 * g1 * g2;
  for (long long c = blockIdx.x * 1LL * blockDim.x + threadIdx.x; c < total;
       c += 1LL * gridDim.x * blockDim.x) {
    const int i = int(c % g0) - 1, j = int((c / g0) % g1) - 1, k = int(c / (1LL * g0 * g1)) - 1;
    const int a = (i + m0) % m0, b = (j + m1) % m1, e = (k + m2) % m2;
    phi[c] = real[(1LL * e * m1 + b) * m0 + a];
  }
}

class CufftPoisson final : public RootPoissonSolver {
 public:
  CufftPoisson(std::array<int, 3> n, double h, bool periodic)
      : n_(n),
        m_(periodic ? n : std::array<int, 3>{2 * n[0], 2 * n[1], 2 * n[2]}),
        periodic_(periodic) {
    const std::vector<double> mult =
        periodic ? periodic_multipliers(n, h) : isolated_multipliers(n, h);
    const std::size_t cells = std::size_t(n[0]) * n[1] * n[2];
    const std::size_t grid = std::size_t(m_[0]) * m_[1] * m_[2];
    rho_ = cuda::DeviceBuffer<double>(cells);
    real_ = cuda::DeviceBuffer<double>(grid);
    spec_ = cuda::DeviceBuffer<cufftDoubleComplex>(mult.size());
    mult_ = cuda::DeviceBuffer<double>(mult.size());
    phi_ = cuda::DeviceBuffer<double>(std::size_t(n[0] + 2) * (n[1] + 2) * (n[2] + 2));
    h_rho_ = cuda::PinnedBuffer<double>(cells);
    h_phi_ = cuda::PinnedBuffer<double>(phi_.size());
    TESSERA_CUDA_CHECK(
        cudaMemcpy(mult_.get(), mult.data(), mult.size() * sizeof(double), cudaMemcpyHostToDevice));
    // cuFFT's dimensions are row-major: z, y, x (x fastest, halved by the r2c transform).
    TESSERA_CUFFT_CHECK(cufftPlan3d(&forward_, m_[2], m_[1], m_[0], CUFFT_D2Z));
    TESSERA_CUFFT_CHECK(cufftPlan3d(&backward_, m_[2], m_[1], m_[0], CUFFT_Z2D));
    TESSERA_CUFFT_CHECK(cufftSetStream(forward_, stream_.get()));
    TESSERA_CUFFT_CHECK(cufftSetStream(backward_, stream_.get()));
  }
  ~CufftPoisson() override {
    if (forward_) cufftDestroy(forward_);
    if (backward_) cufftDestroy(backward_);
  }

  double solve(const double* rho, double four_pi_g, double* phi) override {
    const std::size_t cells = std::size_t(n_[0]) * n_[1] * n_[2];
    const std::size_t ghosted = std::size_t(n_[0] + 2) * (n_[1] + 2) * (n_[2] + 2);
    // The mean on the host, as the FFTW solver computes it (same bits).
    const double mean = periodic_ ? grid_mean(rho, n_) : 0.0;
    const double scale = periodic_ ? four_pi_g : four_pi_g / (4 * std::numbers::pi);
    cudaStream_t s = stream_.get();
    // Through page-locked memory (the bus's rate; pageable copies run at a fraction of it).
    parallel_copy(h_rho_.get(), rho, cells);
    TESSERA_CUDA_CHECK(cudaMemcpyAsync(rho_.get(), h_rho_.get(), cells * sizeof(double),
                                       cudaMemcpyHostToDevice, s));
    TESSERA_CUDA_CHECK(cudaEventRecord(start_.get(), s));
    constexpr int kThreads = 256, kBlocks = 1024;
    fill_source<<<kBlocks, kThreads, 0, s>>>(rho_.get(), real_.get(), n_[0], n_[1], n_[2], m_[0],
                                             m_[1], m_[2], scale, mean);
    TESSERA_CUDA_CHECK(cudaGetLastError());
    TESSERA_CUFFT_CHECK(cufftExecD2Z(forward_, real_.get(), spec_.get()));
    multiply<<<kBlocks, kThreads, 0, s>>>(spec_.get(), mult_.get(),
                                          static_cast<long long>(mult_.size()));
    TESSERA_CUDA_CHECK(cudaGetLastError());
    TESSERA_CUFFT_CHECK(cufftExecZ2D(backward_, spec_.get(), real_.get()));
    gather_ghosted<<<kBlocks, kThreads, 0, s>>>(real_.get(), phi_.get(), n_[0], n_[1], n_[2], m_[0],
                                                m_[1], m_[2]);
    TESSERA_CUDA_CHECK(cudaGetLastError());
    TESSERA_CUDA_CHECK(cudaEventRecord(stop_.get(), s));
    TESSERA_CUDA_CHECK(cudaMemcpyAsync(h_phi_.get(), phi_.get(), ghosted * sizeof(double),
                                       cudaMemcpyDeviceToHost, s));
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));
    parallel_copy(phi, h_phi_.get(), ghosted);
    float ms = 0;
    TESSERA_CUDA_CHECK(cudaEventElapsedTime(&ms, start_.get(), stop_.get()));
    device_seconds_ = 1e-3 * ms;
    return mean;
  }
  const char* library() const override { return "cuFFT"; }
  double last_device_seconds() const override { return device_seconds_; }

 private:
  std::array<int, 3> n_, m_;
  bool periodic_;
  cuda::Stream stream_;
  cuda::Event start_, stop_;
  cuda::DeviceBuffer<double> rho_, real_, mult_, phi_;
  cuda::PinnedBuffer<double> h_rho_, h_phi_;
  cuda::DeviceBuffer<cufftDoubleComplex> spec_;
  cufftHandle forward_ = 0, backward_ = 0;
  double device_seconds_ = 0;
};

}  // namespace

std::unique_ptr<RootPoissonSolver> make_cufft3d_poisson(std::array<int, 3> n, double h,
                                                        bool periodic) {
  return std::make_unique<CufftPoisson>(n, h, periodic);
}

}  // namespace tessera::gravity
