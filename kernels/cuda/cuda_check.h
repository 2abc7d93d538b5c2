// Error checks for the reference workloads: a failed CUDA, cuBLASLt or cuDNN call throws
// CudaError naming the call and the library's message; the tools print it as one line and exit 1.
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace tg::kernels::cuda {

struct CudaError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] inline void ThrowCudaError(const char* call, const std::string& message) {
  throw CudaError(std::string(call) + " failed: " + message);
}

// cudaSetDevice with an error that says what to check.
inline void SelectDevice(int device) {
  const cudaError_t err = cudaSetDevice(device);
  if (err != cudaSuccess)
    throw CudaError("CUDA device " + std::to_string(device) + " is not usable: " + cudaGetErrorString(err) +
                    " (is an NVIDIA GPU with a driver for CUDA 13 present? nvidia-smi tells)");
}

}  // namespace tg::kernels::cuda

#define TG_CUDA_CHECK(call)                                                       \
  do {                                                                            \
    cudaError_t tg_err_ = (call);                                                 \
    if (tg_err_ != cudaSuccess)                                                   \
      ::tg::kernels::cuda::ThrowCudaError(#call, cudaGetErrorString(tg_err_));    \
  } while (0)

// Checks the last launch (kernel launches return nothing).
#define TG_CUDA_CHECK_LAUNCH() TG_CUDA_CHECK(cudaGetLastError())
