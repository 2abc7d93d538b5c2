// GEMM + bias + ReLU on the GPU: cuBLASLt with the fused CUBLASLT_EPILOGUE_RELU_BIAS epilogue
// (one kernel) vs the same cuBLASLt GEMM with the default epilogue followed by separate bias and
// ReLU kernels. Row-major semantics as GemmBiasReluReference; fp32 (TF32 tensor cores off) and
// fp16 (fp32 accumulation). int8 (IMMA, int32 accumulation) as GemmBiasReluInt8Reference: b is
// given TRANSPOSED (n x k), the bias is n floats in units of the output's scale, n and k must be
// multiples of 4, and SetInt8Alpha sets scale_a * scale_b / scale_out. cuBLASLt types stay
// inside gemm.cu.
#pragma once

#include <cuda_runtime.h>

#include <memory>

#include "tracegate/kernels/reference.h"

namespace tg::kernels::cuda {

class GemmBiasRelu {
 public:
  // Creates the cuBLASLt handle, descriptors and a 32 MiB workspace, and picks the heuristic's
  // best algorithm for each version; throws CudaError when cuBLASLt has none for the shape.
  GemmBiasRelu(const GemmShape& shape, Precision p);
  ~GemmBiasRelu();
  GemmBiasRelu(const GemmBiasRelu&) = delete;
  GemmBiasRelu& operator=(const GemmBiasRelu&) = delete;

  // a (m x k), b (k x n; int8: n x k, B transposed), bias (n; int8: float), out (m x n) device
  // pointers in the storage precision; tmp (m x n) holds the unfused chain's GEMM result.
  // Asynchronous on `stream`.
  void Run(bool fused, const void* a, const void* b, const void* bias, void* tmp, void* out, cudaStream_t stream);
  // int8 only: alpha = scale_a * scale_b / scale_out (default 1), used by both versions.
  void SetInt8Alpha(float alpha);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tg::kernels::cuda
