// The root Poisson solve in z-slabs over the ranks' GPUs (device_slab.hpp; SlabPoisson with
// gpu = true; docs/architecture.md, "Self-gravity on several GPUs").
//
// The transform is SlabFft3d's (slab_fft.hpp) with cuFFT doing its passes: each z-plane of
// a rank goes through one 2D real-to-complex plan ([m1][m0] -> [m1][m0/2 + 1]), a transpose
// brings every rank its y-rows of all planes ([row][m2][m0/2 + 1]), and each row goes
// through one 1D plan along z (batch m0/2 + 1, stride m0/2 + 1); backwards the same in
// reverse. A plan is always given one plane or one row, never a rank-dependent batch, so
// every 1D and 2D transform runs the same cuFFT kernels on the same numbers whatever the
// rank count: the potential has the same bits on one GPU as on N (the FFTW slabs' argument,
// slab_fft.hpp). The spectral multiply is SlabPoisson's (Hockney & Eastwood 1981, ch. 6:
// the 7-point Laplacian's eigenvalues, or the lattice Green's function's transform on the
// doubled grid).
//
// Transposes: each rank packs what every other rank gets into one device buffer (one
// kernel), then writes each piece straight into the receiver's spectrum or plane buffer:
//  - peer (ranks that are processes of one host): a 2D copy into the receiver's buffer,
//    mapped at set-up through CUDA IPC, over NVLink or PCIe, never through host memory;
//  - host (other hosts, virtual ranks, mpi.device_exchange = "host"): the piece copied to
//    page-locked memory, sent by Comm::exchange, copied up by the receiver.
// Two agreements (Comm::agree, which also carries any rank's error) fence a transpose: the
// first once every rank has packed (so the buffers written into are no longer read), the
// second once every copy has completed.
#include <algorithm>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "src/exec/cuda/cuda_util.cuh"
#include "src/exec/cuda/peer_maps.cuh"
#include "src/gravity/cufft_check.cuh"
#include "src/gravity/device_slab.hpp"
#include "tessera/core/log.hpp"
#include "tessera/core/parallel.hpp"
#include "tessera/gravity/slab_fft.hpp"
#include "tessera/parallel/mpi.hpp"

namespace tessera::gravity {

namespace {

using cuda::DeviceBuffer;
using cuda::Event;
using cuda::PinnedBuffer;
using cuda::Stream;
using Complex = cufftDoubleComplex;

constexpr int kThreads = 256;

unsigned blocks_for(long long n) {
  return static_cast<unsigned>(std::clamp<long long>((n + kThreads - 1) / kThreads, 1, 4096));
}

#define TESSERA_GRID_STRIDE(c, total)                                          \
  for (long long c = blockIdx.x * 1LL * blockDim.x + threadIdx.x; c < (total); \
       c += 1LL * gridDim.x * blockDim.x)

// The transform's input planes [zc][m1][m0] from the density planes [planes][n1][n0]:
// periodic, scale (rho - mean); isolated, rho in the lower corner and zero beyond (the
// doubled grid's padding), as SlabPoisson::solve fills them.
__global__ void fill_input(const double* rho, double* real, int zc, int planes, int n0, int n1,
                           int m0, int m1, bool periodic, double scale, double mean) {
  TESSERA_GRID_STRIDE(c, 1LL * zc * m1 * m0) {
    const int i = int(c % m0), j = int((c / m0) % m1), z = int(c / (1LL * m0 * m1));
    double v = 0.0;
    if (z < planes && j < n1 && i < n0) {
      const double r = rho[(1LL * z * n1 + j) * n0 + i];
      v = periodic ? scale * (r - mean) : r;
    }
    real[c] = v;
  }
}

// Forward transpose's pack: send[j][z][i] = planes[z][j][i] (a rank's piece is its rows j).
__global__ void pack_rows(const Complex* planes, Complex* send, int zc, int m1, int nh) {
  TESSERA_GRID_STRIDE(c, 1LL * zc * m1 * nh) {
    const int i = int(c % nh), z = int((c / nh) % zc), j = int(c / (1LL * nh * zc));
    send[c] = planes[(1LL * z * m1 + j) * nh + i];
  }
}

// Backward transpose's pack: send[T][j][i] = spec[j][out_planes[T]][i] for every output
// plane T of every rank in rank order (a rank's piece is its planes).
__global__ void pack_planes(const Complex* spec, Complex* send, const int* out_planes, int total,
                            int yc, int m2, int nh) {
  TESSERA_GRID_STRIDE(c, 1LL * total * yc * nh) {
    const int i = int(c % nh), j = int((c / nh) % yc), t = int(c / (1LL * nh * yc));
    send[c] = spec[(1LL * j * m2 + out_planes[t]) * nh + i];
  }
}

// SlabPoisson's multiply: by the multiplier (periodic), or by scale times it (isolated).
__global__ void multiply_modes(Complex* spec, const double* mult, long long modes, bool periodic,
                               double scale) {
  TESSERA_GRID_STRIDE(c, modes) {
    const double s = periodic ? mult[c] : scale * mult[c];
    spec[c].x *= s;
    spec[c].y *= s;
  }
}

// The ghosted planes [oc][n1 + 2][n0 + 2] from the output planes [oc][m1][m0]: cell -1 is
// the transform grid's last (periodic image, or the doubled grid's cyclic convolution).
__global__ void gather_ghosted_planes(const double* real, double* ghost, int oc, int n0, int n1,
                                      int m0, int m1) {
  const int g0 = n0 + 2, g1 = n1 + 2;
  TESSERA_GRID_STRIDE(c, 1LL * oc * g1 * g0) {
    const int i = int(c % g0) - 1, j = int((c / g0) % g1) - 1, t = int(c / (1LL * g0 * g1));
    const int a = (i + m0) % m0, b = (j + m1) % m1;
    ghost[c] = real[(1LL * t * m1 + b) * m0 + a];
  }
}

// A cuFFT plan, destroyed with its owner.
struct Plan {
  cufftHandle h = 0;
  Plan() = default;
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
  ~Plan() {
    if (h) cufftDestroy(h);
  }
};

class CudaSlabSolve final : public DeviceSlabSolve {
 public:
  CudaSlabSolve(const DeviceSlabSetup& s, const std::vector<double>& multipliers,
                parallel::Comm& comm)
      : n_(s.n),
        m_(s.m),
        nh_(s.m[0] / 2 + 1),
        periodic_(s.periodic),
        comm_(comm),
        rank_(comm.rank()),
        ranks_(comm.size()),
        in_{s.data_planes, comm.size()},
        rows_{s.m[1], comm.size()},
        out_{static_cast<int>(s.out_planes.size()), comm.size()},
        peer_spec_(ranks_, nullptr),
        peer_planes_(ranks_, nullptr),
        peer_(ranks_, false) {
    std::exception_ptr error;
    try {
      const std::size_t zc = std::max(in_count(), out_count());
      const std::size_t plane = std::size_t(m_[1]) * m_[0], cplane = std::size_t(m_[1]) * nh_;
      const std::size_t modes = std::size_t(y_count()) * m_[2] * nh_;
      if (multipliers.size() != modes)
        throw Error(ErrorKind::kInternal,
                    "multipliers of the device slab solve: " + std::to_string(multipliers.size()) +
                        " for " + std::to_string(modes) + " modes");
      real_ = DeviceBuffer<double>(std::max<std::size_t>(zc * plane, 1));
      planes_ = DeviceBuffer<Complex>(std::max<std::size_t>(zc * cplane, 1));
      spec_ = DeviceBuffer<Complex>(std::max<std::size_t>(modes, 1));
      mult_ = DeviceBuffer<double>(std::max<std::size_t>(modes, 1));
      send_size_ = std::max(std::size_t(in_count()) * cplane,
                            s.out_planes.size() * std::size_t(y_count()) * nh_);
      send_ = DeviceBuffer<Complex>(std::max<std::size_t>(send_size_, 1));
      rho_ =
          DeviceBuffer<double>(std::max<std::size_t>(std::size_t(in_count()) * n_[0] * n_[1], 1));
      ghost_ = DeviceBuffer<double>(
          std::max<std::size_t>(std::size_t(out_count()) * (n_[0] + 2) * (n_[1] + 2), 1));
      h_rho_ = PinnedBuffer<double>(rho_.size());
      h_ghost_ = PinnedBuffer<double>(ghost_.size());
      out_planes_ = DeviceBuffer<int>(std::max<std::size_t>(s.out_planes.size(), 1));
      if (!s.out_planes.empty())
        TESSERA_CUDA_CHECK(cudaMemcpy(out_planes_.get(), s.out_planes.data(),
                                      s.out_planes.size() * sizeof(int), cudaMemcpyHostToDevice));
      if (modes)
        TESSERA_CUDA_CHECK(cudaMemcpy(mult_.get(), multipliers.data(), modes * sizeof(double),
                                      cudaMemcpyHostToDevice));
      // The copies above are from pageable memory on the default stream: complete before
      // the solves' stream reads the buffers.
      TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
      // One plane (2D, x fastest: cuFFT's row-major [m1][m0]), or one y-row's m2 x nh block
      // along z (stride nh between the elements of a transform, 1 between transforms).
      int xy[2] = {m_[1], m_[0]}, z = m_[2];
      TESSERA_CUFFT_CHECK(
          cufftPlanMany(&xy_forward_.h, 2, xy, nullptr, 1, 0, nullptr, 1, 0, CUFFT_D2Z, 1));
      TESSERA_CUFFT_CHECK(
          cufftPlanMany(&xy_backward_.h, 2, xy, nullptr, 1, 0, nullptr, 1, 0, CUFFT_Z2D, 1));
      TESSERA_CUFFT_CHECK(cufftPlanMany(&z_plan_.h, 1, &z, &z, nh_, 1, &z, nh_, 1, CUFFT_Z2Z, nh_));
      for (cufftHandle p : {xy_forward_.h, xy_backward_.h, z_plan_.h})
        TESSERA_CUFFT_CHECK(cufftSetStream(p, stream_.get()));
    } catch (...) {
      error = std::current_exception();
    }
    comm_.agree(error);  // allocation may fail on some ranks only
    choose_routes(s.route);
  }

  ~CudaSlabSolve() override {
    cudaStreamSynchronize(stream_.get());
    for (int q = 0; q < ranks_; ++q) {
      if (peer_spec_[q]) cudaIpcCloseMemHandle(peer_spec_[q]);
      if (peer_planes_[q]) cudaIpcCloseMemHandle(peer_planes_[q]);
    }
  }

  void solve(const double* rho, int planes, double fill_scale, double mean, double mode_scale,
             double* ghosted) override {
    run(rho, nullptr, planes, fill_scale, mean, mode_scale, ghosted, nullptr);
  }
  void solve_on_device(const double* rho, int planes, double fill_scale, double mean,
                       double mode_scale, double* ghosted) override {
    run(nullptr, rho, planes, fill_scale, mean, mode_scale, nullptr, ghosted);
  }

  double last_device_seconds() const override { return device_seconds_; }
  double peer_bytes() const override { return peer_bytes_; }
  double host_bytes() const override { return host_bytes_; }
  std::string routes() const override { return routes_; }

 private:
  // The solve: the density from the host (`rho`, copied up through page-locked memory) or
  // from the GPU (`device_rho`), the potential to the host (`ghosted`) or to the GPU
  // (`device_ghosted`).
  void run(const double* rho, const double* device_rho, int planes, double fill_scale, double mean,
           double mode_scale, double* ghosted, double* device_ghosted) {
    cudaStream_t s = stream_.get();
    const int m0 = m_[0], m1 = m_[1], m2 = m_[2];
    const std::size_t plane = std::size_t(m1) * m0, cplane = std::size_t(m1) * nh_;
    const std::size_t row = std::size_t(m2) * nh_;
    std::exception_ptr error;
    try {
      if (planes > 0 && !device_rho) {
        // Through page-locked memory: a copy from pageable memory runs at a fraction of the
        // bus's rate, and at 512^3 it took longer than the whole transform.
        const std::size_t count = std::size_t(planes) * n_[0] * n_[1];
        parallel_copy(h_rho_.get(), rho, count);
        TESSERA_CUDA_CHECK(cudaMemcpyAsync(rho_.get(), h_rho_.get(), count * sizeof(double),
                                           cudaMemcpyHostToDevice, s));
      }
      TESSERA_CUDA_CHECK(cudaEventRecord(start_.get(), s));
      const long long in_cells = (long long)in_count() * plane;
      if (in_cells > 0) {
        fill_input<<<blocks_for(in_cells), kThreads, 0, s>>>(
            device_rho ? device_rho : rho_.get(), real_.get(), in_count(), planes, n_[0], n_[1], m0,
            m1, periodic_, fill_scale, mean);
        TESSERA_CUDA_CHECK(cudaGetLastError());
      }
      for (int z = 0; z < in_count(); ++z)
        TESSERA_CUFFT_CHECK(
            cufftExecD2Z(xy_forward_.h, real_.get() + z * plane, planes_.get() + z * cplane));
    } catch (...) {
      error = std::current_exception();
    }
    transpose(true, error);
    try {
      // The planes beyond the input: zero (the isolated solve's padding), rewritten before
      // each forward pass since the pass transforms whole rows in place.
      if (in_.count < m2 && y_count() > 0)
        TESSERA_CUDA_CHECK(
            cudaMemset2DAsync(spec_.get() + std::size_t(in_.count) * nh_, row * sizeof(Complex), 0,
                              std::size_t(m2 - in_.count) * nh_ * sizeof(Complex), y_count(), s));
      for (int j = 0; j < y_count(); ++j)
        TESSERA_CUFFT_CHECK(
            cufftExecZ2Z(z_plan_.h, spec_.get() + j * row, spec_.get() + j * row, CUFFT_FORWARD));
      const long long modes = (long long)y_count() * row;
      if (modes > 0) {
        multiply_modes<<<blocks_for(modes), kThreads, 0, s>>>(spec_.get(), mult_.get(), modes,
                                                              periodic_, mode_scale);
        TESSERA_CUDA_CHECK(cudaGetLastError());
      }
      for (int j = 0; j < y_count(); ++j)
        TESSERA_CUFFT_CHECK(
            cufftExecZ2Z(z_plan_.h, spec_.get() + j * row, spec_.get() + j * row, CUFFT_INVERSE));
    } catch (...) {
      error = std::current_exception();
    }
    transpose(false, error);
    try {
      for (int t = 0; t < out_count(); ++t)
        TESSERA_CUFFT_CHECK(
            cufftExecZ2D(xy_backward_.h, planes_.get() + t * cplane, real_.get() + t * plane));
      const long long ghost = (long long)out_count() * (n_[0] + 2) * (n_[1] + 2);
      if (ghost > 0) {
        gather_ghosted_planes<<<blocks_for(ghost), kThreads, 0, s>>>(
            real_.get(), device_ghosted ? device_ghosted : ghost_.get(), out_count(), n_[0], n_[1],
            m0, m1);
        TESSERA_CUDA_CHECK(cudaGetLastError());
      }
      TESSERA_CUDA_CHECK(cudaEventRecord(stop_.get(), s));
      if (ghost > 0 && !device_ghosted)
        TESSERA_CUDA_CHECK(cudaMemcpyAsync(h_ghost_.get(), ghost_.get(), ghost * sizeof(double),
                                           cudaMemcpyDeviceToHost, s));
      TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));
      if (ghost > 0 && !device_ghosted) parallel_copy(ghosted, h_ghost_.get(), std::size_t(ghost));
      float ms = 0;
      TESSERA_CUDA_CHECK(cudaEventElapsedTime(&ms, start_.get(), stop_.get()));
      device_seconds_ = 1e-3 * ms;
    } catch (...) {
      error = std::current_exception();
    }
    comm_.agree(error);
  }

  int in_count() const { return in_.size(rank_); }
  int y_count() const { return rows_.size(rank_); }
  int out_count() const { return out_.size(rank_); }

  // Rank `from`'s piece for rank `to`: its offset in the sender's pack buffer, and where it
  // goes in the receiver's buffer (a 2D copy: `height` runs of `width` complex numbers,
  // contiguous in the piece, `pitch` apart in the receiver).
  struct Piece {
    std::size_t offset = 0, at = 0, width = 0, height = 0, pitch = 0;
    std::size_t size() const { return width * height; }
  };
  Piece piece(bool forward, int from, int to) const {
    Piece p;
    if (forward) {  // rows of `to`, planes of `from`, into spec[row][plane]
      p.width = std::size_t(in_.size(from)) * nh_;
      p.height = rows_.size(to);
      p.offset = std::size_t(rows_.first(to)) * p.width;
      p.at = std::size_t(in_.first(from)) * nh_;
      p.pitch = std::size_t(m_[2]) * nh_;
    } else {  // output planes of `to`, rows of `from`, into planes[plane][row]
      p.width = std::size_t(rows_.size(from)) * nh_;
      p.height = out_.size(to);
      p.offset = std::size_t(out_.first(to)) * p.width;
      p.at = std::size_t(rows_.first(from)) * nh_;
      p.pitch = std::size_t(m_[1]) * nh_;
    }
    return p;
  }

  void copy_piece(const Piece& p, const Complex* from, Complex* base) {
    if (p.size() == 0) return;
    TESSERA_CUDA_CHECK(cudaMemcpy2DAsync(base + p.at, p.pitch * sizeof(Complex), from,
                                         p.width * sizeof(Complex), p.width * sizeof(Complex),
                                         p.height, cudaMemcpyDefault, stream_.get()));
  }

  // A collective (every rank calls it, whatever `error` holds): forward, the planes' rows
  // into the ranks' spectra; backward, the spectra's output planes into the ranks' planes.
  // Throws the agreed error of any rank.
  void transpose(bool forward, std::exception_ptr& error) {
    cudaStream_t s = stream_.get();
    Complex* mine = forward ? spec_.get() : planes_.get();
    try {
      if (!error) {
        const long long count =
            forward ? (long long)in_count() * m_[1] * nh_ : (long long)out_.count * y_count() * nh_;
        if (count > 0) {
          if (forward)
            pack_rows<<<blocks_for(count), kThreads, 0, s>>>(planes_.get(), send_.get(), in_count(),
                                                             m_[1], nh_);
          else
            pack_planes<<<blocks_for(count), kThreads, 0, s>>>(
                spec_.get(), send_.get(), out_planes_.get(), out_.count, y_count(), m_[2], nh_);
          TESSERA_CUDA_CHECK(cudaGetLastError());
        }
        for (int q = 0; q < ranks_; ++q) {
          const Piece p = piece(forward, rank_, q);
          if (q == rank_ || peer_[q] || p.size() == 0) continue;
          TESSERA_CUDA_CHECK(cudaMemcpyAsync(h_send_.get() + p.offset, send_.get() + p.offset,
                                             p.size() * sizeof(Complex), cudaMemcpyDeviceToHost,
                                             s));
        }
        TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));
      }
    } catch (...) {
      error = std::current_exception();
    }
    comm_.agree(error);  // packed everywhere: the buffers written below are free
    std::vector<std::vector<double>> out(ranks_);
    try {
      for (int q = 0; q < ranks_; ++q) {
        const Piece p = piece(forward, rank_, q);
        if (p.size() == 0) continue;
        if (q == rank_) {
          copy_piece(p, send_.get() + p.offset, mine);
        } else if (peer_[q]) {
          copy_piece(p, send_.get() + p.offset, forward ? peer_spec_[q] : peer_planes_[q]);
          peer_bytes_ += double(p.size() * sizeof(Complex));
        } else {
          out[q] = parallel::bytes_as_doubles(h_send_.get() + p.offset, p.size() * sizeof(Complex));
          host_bytes_ += double(p.size() * sizeof(Complex));
        }
      }
    } catch (...) {
      error = std::current_exception();
    }
    const auto got = comm_.exchange(std::move(out));
    try {
      for (int q = 0; q < ranks_; ++q) {
        if (q == rank_ || got[q].empty()) continue;
        const Piece p = piece(forward, q, rank_);
        if (got[q].size() * sizeof(double) != p.size() * sizeof(Complex))
          throw Error(ErrorKind::kInternal,
                      strprintf("root FFT transpose: rank %d sent %zu values, %zu expected", q,
                                got[q].size(), 2 * p.size()));
        copy_piece(p, reinterpret_cast<const Complex*>(got[q].data()), mine);
      }
      TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));
    } catch (...) {
      error = std::current_exception();
    }
    comm_.agree(error);  // every piece has landed
  }

  // A collective: each pair of ranks learns how its pieces travel. Ranks that are processes
  // of one host map each other's spectrum and plane buffers (CUDA IPC) unless told to use
  // the host (mpi.device_exchange = "host"); "mpi" (a CUDA-aware library) takes the host
  // route here too: the transposes' pieces are few and large, and a GPU-to-GPU copy between
  // processes of one host needs no library.
  void choose_routes(const std::string& route) {
    const auto mapped = cuda::map_peer_buffers(comm_, {spec_.get(), planes_.get()}, route,
                                               "the root FFT's transposes");
    long long peers = 0, hosts = 0;
    std::exception_ptr error;
    try {
      for (int q = 0; q < ranks_; ++q) {
        if (q == rank_) continue;
        peer_spec_[q] = static_cast<Complex*>(mapped[q][0]);
        peer_planes_[q] = static_cast<Complex*>(mapped[q][1]);
        peer_[q] = peer_spec_[q] && peer_planes_[q];
        if (!peer_[q] && (send_size_ > 0) && !h_send_.get())
          h_send_ = PinnedBuffer<Complex>(send_size_);
        ++(peer_[q] ? peers : hosts);
      }
    } catch (...) {
      error = std::current_exception();
    }
    comm_.agree(error);
    // Pairs counted once per direction over all ranks.
    peers = comm_.sum(peers);
    hosts = comm_.sum(hosts);
    routes_ = ranks_ == 1 ? std::string("one rank")
                          : strprintf(
                                "transposes GPU to GPU (CUDA IPC) between %lld rank pairs, "
                                "through host memory between %lld",
                                peers / 2, hosts / 2);
  }

  std::array<int, 3> n_, m_;
  int nh_;
  bool periodic_;
  parallel::Comm& comm_;
  int rank_, ranks_;
  EvenPieces in_, rows_, out_;
  DeviceBuffer<double> real_;     // input planes, then output planes: [zc][m1][m0]
  DeviceBuffer<Complex> planes_;  // the planes' 2D transforms: [zc][m1][nh]
  DeviceBuffer<Complex> spec_;    // this rank's rows: [y_count][m2][nh]
  DeviceBuffer<double> mult_;     // the multipliers of spec_'s modes
  DeviceBuffer<Complex> send_;    // a transpose's pieces, in rank order
  std::size_t send_size_ = 0;
  PinnedBuffer<Complex> h_send_;          // the host route's pieces
  PinnedBuffer<double> h_rho_, h_ghost_;  // the density in, the ghosted potential out
  DeviceBuffer<double> rho_;              // the density planes
  DeviceBuffer<double> ghost_;            // the ghosted potential planes
  DeviceBuffer<int> out_planes_;          // the transform's planes behind every rank's ghosted ones
  Plan xy_forward_, xy_backward_, z_plan_;
  std::vector<Complex*> peer_spec_, peer_planes_;  // [rank]: its buffers, mapped (peer)
  std::vector<bool> peer_;
  Stream stream_;
  Event start_, stop_;
  double device_seconds_ = 0, peer_bytes_ = 0, host_bytes_ = 0;
  std::string routes_;
};

}  // namespace

std::unique_ptr<DeviceSlabSolve> make_device_slab_solve(const DeviceSlabSetup& setup,
                                                        const std::vector<double>& multipliers,
                                                        parallel::Comm& comm) {
  return std::make_unique<CudaSlabSolve>(setup, multipliers, comm);
}

}  // namespace tessera::gravity
