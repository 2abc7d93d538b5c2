// Convolution + BN + Add + ReLU on the GPU with cuDNN, NHWC: fused = one
// cudnnConvolutionBiasActivationForward call (y = relu(conv(x, w') + z + shift), the BN scale
// folded into w'); unfused = cudnnConvolutionForward then separate BN, add and ReLU kernels.
// Semantics as ConvBnAddReluReference; fp32 and fp16 (fp32 accumulation). int8 (cuDNN
// INT8_CONFIG, int32 accumulation) as ConvBnAddReluInt8Reference: x, w, w_folded, z, tmp and y
// int8 with per-tensor scales (SetInt8Scales), C and K multiples of 4, scale and shift fp32
// (shift in units of y's scale). cuDNN types stay in conv.cu.
#pragma once

#include <cuda_runtime.h>

#include <memory>
#include <string>

#include "tracegate/kernels/reference.h"

namespace tg::kernels::cuda {

class ConvBnAddRelu {
 public:
  // Creates the cuDNN handle and descriptors, chooses the fastest algorithm the heuristics
  // offer for each version (cudnnGetConvolutionForwardAlgorithm_v7, first usable one), and a
  // workspace; throws CudaError when cuDNN supports none. `relu` = false drops the activation
  // (the fused call then uses CUDNN_ACTIVATION_IDENTITY) and `add` = false the residual, so the
  // model's transitions (conv + BN + ReLU) use the same class.
  ConvBnAddRelu(const ConvShape& shape, Precision p, bool add = true, bool relu = true);
  ~ConvBnAddRelu();
  ConvBnAddRelu(const ConvBnAddRelu&) = delete;
  ConvBnAddRelu& operator=(const ConvBnAddRelu&) = delete;

  // Device pointers in the storage precision (int8: scale and shift are float*): x (N,H,W,C), w
  // (K,R,S,C) the original filter,
  // w_folded (K,R,S,C) = FoldBnIntoFilter(w, scale), scale and shift (K), z (N,P,Q,K; ignored
  // when add = false), tmp (N,P,Q,K) for the unfused chain's intermediate, y (N,P,Q,K).
  // The fused version reads w_folded and shift; the unfused one w, scale and shift.
  struct Tensors {
    const void* x = nullptr;
    const void* w = nullptr;
    const void* w_folded = nullptr;
    const void* scale = nullptr;
    const void* shift = nullptr;
    const void* z = nullptr;
    void* tmp = nullptr;
    void* y = nullptr;
  };
  void Run(bool fused, const Tensors& t, cudaStream_t stream);

  // int8 only: the tensors' scales (ConvInt8Scales, reference.h); default all 1.
  void SetInt8Scales(const ConvInt8Scales& scales);

  // The algorithms chosen, e.g. "fused: IMPLICIT_PRECOMP_GEMM, unfused: IMPLICIT_GEMM", for the
  // benchmark's notes.
  std::string Describe() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tg::kernels::cuda
