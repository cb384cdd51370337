#include "tessera/gravity/slab_fft.hpp"

#include <fftw3.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <mutex>
#include <string>

#include "tessera/core/error.hpp"

namespace tessera::gravity {

namespace {

// FFTW's planner is not thread-safe (virtual ranks plan from several threads at once).
std::mutex& planner_mutex() {
  static std::mutex m;
  return m;
}

template <class T>
T* fft_alloc(std::size_t count) {
  return static_cast<T*>(fftw_malloc(sizeof(T) * std::max<std::size_t>(count, 1)));
}

}  // namespace

// One plan per pass and direction: x and y for the rows of one z-plane, z for the columns of
// one y-row; FFTW's new-array execute functions run them on any plane or row, from any
// thread.
struct SlabFft3d::Plans {
  fftw_plan x_forward = nullptr, x_backward = nullptr;
  fftw_plan y_forward = nullptr, y_backward = nullptr;
  fftw_plan z_forward = nullptr, z_backward = nullptr;
  ~Plans() {
    std::lock_guard lock(planner_mutex());
    for (fftw_plan p : {x_forward, x_backward, y_forward, y_backward, z_forward, z_backward})
      if (p) fftw_destroy_plan(p);
  }
};

SlabFft3d::SlabFft3d(std::array<int, 3> m, int data_planes, std::vector<int> out_planes,
                     parallel::Comm& comm)
    : m_(m),
      data_planes_(data_planes),
      out_planes_(std::move(out_planes)),
      comm_(comm),
      rank_(comm.rank()),
      ranks_(comm.size()) {
  for (int d = 0; d < 3; ++d)
    if (m[d] < 1)
      throw Error(ErrorKind::kInternal,
                  "FFT grid of " + std::to_string(m[d]) + " cells along axis " + std::to_string(d));
  if (data_planes < 0 || data_planes > m[2])
    throw Error(ErrorKind::kInternal, "FFT input of " + std::to_string(data_planes) +
                                          " planes on a grid of " + std::to_string(m[2]));
  for (const int z : out_planes_)
    if (z < 0 || z >= m[2])
      throw Error(ErrorKind::kInternal, "FFT output plane " + std::to_string(z) +
                                            " outside a grid of " + std::to_string(m[2]));
  in_ = {data_planes, ranks_};
  rows_ = {m[1], ranks_};
  out_ = {static_cast<int>(out_planes_.size()), ranks_};
  const int m0 = m[0], m1 = m[1], m2 = m[2], nh = half();
  const std::size_t plane = std::size_t(m1) * m0, cplane = std::size_t(m1) * nh;
  // Allocation may fail on some ranks only: agreed before the first exchange.
  std::exception_ptr error;
  input_ = fft_alloc<double>(in_count() * plane);
  output_ = fft_alloc<double>(out_count() * plane);
  planes_ = reinterpret_cast<std::complex<double>*>(
      fft_alloc<fftw_complex>(std::max(in_count(), out_count()) * cplane));
  spec_ = reinterpret_cast<std::complex<double>*>(fft_alloc<fftw_complex>(spectrum_size()));
  if (!input_ || !output_ || !planes_ || !spec_)
    error = std::make_exception_ptr(Error(
        ErrorKind::kResources,
        "out of memory for the root FFT's slabs (" +
            std::to_string((in_count() + out_count()) * plane * 8 +
                           (std::max(in_count(), out_count()) * cplane + spectrum_size()) * 16) +
            " bytes on this rank)"));
  plans_ = std::make_unique<Plans>();
  if (!error) {
    auto* pl = reinterpret_cast<fftw_complex*>(planes_);
    auto* sp = reinterpret_cast<fftw_complex*>(spec_);
    // Serial plans (one thread each: the OpenMP loops below run them on many planes at
    // once), estimated (no array is touched while planning) and unaligned (a plane's offset
    // need not keep FFTW's SIMD alignment).
    const unsigned flags = FFTW_ESTIMATE | FFTW_UNALIGNED;
    Plans& p = *plans_;
    std::lock_guard lock(planner_mutex());
    // x: the m1 rows of one z-plane, contiguous.
    p.x_forward =
        fftw_plan_many_dft_r2c(1, &m0, m1, input_, nullptr, 1, m0, pl, nullptr, 1, nh, flags);
    p.x_backward =
        fftw_plan_many_dft_c2r(1, &m0, m1, pl, nullptr, 1, nh, output_, nullptr, 1, m0, flags);
    // y: the nh columns of one z-plane, stride nh.
    p.y_forward =
        fftw_plan_many_dft(1, &m1, nh, pl, nullptr, nh, 1, pl, nullptr, nh, 1, FFTW_FORWARD, flags);
    p.y_backward = fftw_plan_many_dft(1, &m1, nh, pl, nullptr, nh, 1, pl, nullptr, nh, 1,
                                      FFTW_BACKWARD, flags);
    // z: the nh columns of one y-row [m2][nh], stride nh (the same on any rank count).
    p.z_forward =
        fftw_plan_many_dft(1, &m2, nh, sp, nullptr, nh, 1, sp, nullptr, nh, 1, FFTW_FORWARD, flags);
    p.z_backward = fftw_plan_many_dft(1, &m2, nh, sp, nullptr, nh, 1, sp, nullptr, nh, 1,
                                      FFTW_BACKWARD, flags);
    for (fftw_plan q :
         {p.x_forward, p.x_backward, p.y_forward, p.y_backward, p.z_forward, p.z_backward})
      if (!q)
        error = std::make_exception_ptr(
            Error(ErrorKind::kInternal, "FFTW could not plan the 3D transform passes"));
  }
  try {
    comm_.agree(error);
  } catch (...) {
    plans_.reset();
    fftw_free(input_), fftw_free(output_), fftw_free(planes_), fftw_free(spec_);
    throw;
  }
}

SlabFft3d::~SlabFft3d() {
  plans_.reset();
  fftw_free(input_);
  fftw_free(output_);
  fftw_free(planes_);
  fftw_free(spec_);
}

void SlabFft3d::forward(bool even_in_z) {
  if (even_in_z && 2 * data_planes_ <= m_[2])
    throw Error(ErrorKind::kInternal, "FFT of an even grid of " + std::to_string(m_[2]) +
                                          " planes from " + std::to_string(data_planes_));
  const int m1 = m_[1], m2 = m_[2], nh = half(), planes = in_count();
  const std::size_t cplane = std::size_t(m1) * nh;
  auto* pl = reinterpret_cast<fftw_complex*>(planes_);
  auto* sp = reinterpret_cast<fftw_complex*>(spec_);
  const Plans& p = *plans_;
#pragma omp parallel for schedule(static)
  for (int z = 0; z < planes; ++z) {
    fftw_execute_dft_r2c(p.x_forward, input_ + std::size_t(z) * m1 * m_[0], pl + z * cplane);
    fftw_execute_dft(p.y_forward, pl + z * cplane, pl + z * cplane);
  }
  // Transpose: to each other rank, the rows of its y-piece of every plane of mine (in plane
  // order); this rank's own rows are read from planes_ directly.
  const std::size_t width = 2 * std::size_t(nh);
  std::vector<std::vector<double>> send(ranks_);
  for (int q = 0; q < ranks_; ++q) {
    if (q == rank_) continue;
    const std::size_t rows = rows_.size(q);
    send[q].resize(std::size_t(planes) * rows * width);
    double* to = send[q].data();
#pragma omp parallel for schedule(static)
    for (int z = 0; z < planes; ++z)
      std::memcpy(to + z * rows * width, planes_ + z * cplane + std::size_t(rows_.first(q)) * nh,
                  rows * width * sizeof(double));
  }
  const auto got = comm_.exchange(std::move(send));
  const std::size_t row = std::size_t(m2) * nh;
#pragma omp parallel for schedule(static)
  for (int j = 0; j < y_count(); ++j) {
    std::complex<double>* to = spec_ + j * row;
    for (int q = 0; q < ranks_; ++q)
      for (int z = 0; z < in_.size(q); ++z) {
        const void* from =
            q == rank_
                ? static_cast<const void*>(planes_ + z * cplane + std::size_t(y_first() + j) * nh)
                : got[q].data() + (std::size_t(z) * y_count() + j) * width;
        std::memcpy(to + std::size_t(in_.first(q) + z) * nh, from, width * sizeof(double));
      }
    // Planes beyond the input: mirror images, or zero (never transformed: the transform of
    // zeros is zero).
    for (int z = data_planes_; z < m2; ++z)
      if (even_in_z)
        std::copy_n(to + std::size_t(m2 - z) * nh, nh, to + std::size_t(z) * nh);
      else
        std::fill_n(to + std::size_t(z) * nh, nh, std::complex<double>(0, 0));
    fftw_execute_dft(p.z_forward, sp + j * row, sp + j * row);
  }
}

void SlabFft3d::backward() {
  const int m1 = m_[1], m2 = m_[2], nh = half(), planes = out_count();
  const std::size_t cplane = std::size_t(m1) * nh, row = std::size_t(m2) * nh;
  auto* pl = reinterpret_cast<fftw_complex*>(planes_);
  auto* sp = reinterpret_cast<fftw_complex*>(spec_);
  const Plans& p = *plans_;
#pragma omp parallel for schedule(static)
  for (int j = 0; j < y_count(); ++j) fftw_execute_dft(p.z_backward, sp + j * row, sp + j * row);
  // Transpose back: to each other rank, my rows of each of its output planes (in its plane
  // order); this rank's own planes read spec_ directly.
  const std::size_t width = 2 * std::size_t(nh);
  std::vector<std::vector<double>> send(ranks_);
  for (int q = 0; q < ranks_; ++q) {
    if (q == rank_) continue;
    send[q].resize(std::size_t(out_.size(q)) * y_count() * width);
    double* to = send[q].data();
#pragma omp parallel for schedule(static)
    for (int t = 0; t < out_.size(q); ++t) {
      const int z = out_planes_[out_.first(q) + t];
      for (int j = 0; j < y_count(); ++j)
        std::memcpy(to + (std::size_t(t) * y_count() + j) * width,
                    spec_ + j * row + std::size_t(z) * nh, width * sizeof(double));
    }
  }
  const auto got = comm_.exchange(std::move(send));
#pragma omp parallel for schedule(static)
  for (int t = 0; t < planes; ++t) {
    std::complex<double>* to = planes_ + t * cplane;
    for (int q = 0; q < ranks_; ++q) {
      if (q != rank_) {
        std::memcpy(static_cast<void*>(to + std::size_t(rows_.first(q)) * nh),
                    got[q].data() + std::size_t(t) * rows_.size(q) * width,
                    std::size_t(rows_.size(q)) * width * sizeof(double));
        continue;
      }
      const int z = out_planes_[out_first() + t];
      for (int j = 0; j < y_count(); ++j)
        std::memcpy(to + std::size_t(y_first() + j) * nh, spec_ + j * row + std::size_t(z) * nh,
                    width * sizeof(double));
    }
    fftw_execute_dft(p.y_backward, pl + t * cplane, pl + t * cplane);
    fftw_execute_dft_c2r(p.x_backward, pl + t * cplane, output_ + std::size_t(t) * m1 * m_[0]);
  }
}

}  // namespace tessera::gravity
