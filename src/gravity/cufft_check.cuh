// cuFFT errors as Tessera errors: out of memory is a resources error (the run says what to
// lower), anything else an internal one naming the call.
#pragma once

#include <cufft.h>

#include <string>

#include "tessera/core/error.hpp"

namespace tessera::gravity {

inline void check_cufft(cufftResult status, const char* call) {
  if (status == CUFFT_SUCCESS) return;
  if (status == CUFFT_ALLOC_FAILED)
    throw Error(ErrorKind::kResources,
                std::string("out of GPU memory for the Poisson solver's FFT: ") + call);
  throw Error(ErrorKind::kInternal, std::string("cuFFT call ") + call + " failed (status " +
                                        std::to_string(status) + ")");
}

}  // namespace tessera::gravity

#define TESSERA_CUFFT_CHECK(call) ::tessera::gravity::check_cufft((call), #call)
