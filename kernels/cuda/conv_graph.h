// int8 Conv (+ BN + Add + ReLU) through cuDNN's graph (backend) API, NHWC, so that cuDNN can
// choose its tensor-core (IMMA) engines on sm_90: the legacy cudnnConvolutionForward /
// cudnnConvolutionBiasActivationForward with INT8_CONFIG ran a non-tensor-core kernel on the
// H200 (17-18 TOPS against 300-670 for fp16; docs/gpu/2026-11-27-h200), and cuDNN 9.19's Hopper
// IMMA NHWC engines (CUDNN_CONVOLUTION_IMPLICIT_PRECOMPUTED_GEMM_XMMA_HOPPER_IMMA_*_NHWC_ENGINE,
// kernels sm90_xmma_fprop_implicit_gemm_i8i8_i8i32_f32_nhwckrsc_nhwc_*) are reached through it.
//
// The graphs compute exactly what the legacy calls do (ConvBnAddReluInt8Reference):
//   fused:   conv(x, w_folded) [int32 accumulation, float virtual] * alpha1[k]
//            (+ z * alpha2[k]) + shift[k], ReLU (or identity), stored as int8 y;
//   unfused: conv(x, w) * alpha[k], stored as int8 tmp (then the element-wise BN, add, ReLU).
// alpha vectors are K floats (1 x K x 1 x 1, like the bias) holding the per-tensor scale ratio.
//
// Engine choice: the heuristics' list (mode A, then the fallback mode), in order; the first
// configuration whose execution plan finalizes is used. Every configuration cuDNN refuses is
// logged on stderr with its status ("tracegate kernels: cuDNN graph refused engine 12 for int8
// fused res3 ...: CUDNN_STATUS_NOT_SUPPORTED"); when none builds, the constructor throws and the
// caller (conv.cu) says so and uses the legacy call: nothing is swapped silently.
#pragma once

#include <cudnn.h>

#include <memory>
#include <string>

#include "tracegate/kernels/reference.h"

namespace tg::kernels::cuda {

class ConvGraphInt8 {
 public:
  // add: z is read (fused only); relu: the activation (fused only). Throws CudaError naming
  // every refusal when no engine builds.
  ConvGraphInt8(cudnnHandle_t handle, const ConvShape& shape, bool fused, bool add, bool relu);
  ~ConvGraphInt8();
  ConvGraphInt8(const ConvGraphInt8&) = delete;
  ConvGraphInt8& operator=(const ConvGraphInt8&) = delete;

  // The per-tensor ratios (fused: alpha1 = x * w_folded / y, alpha2 = z / y; unfused: alpha1 =
  // x * w / tmp); uploaded once (synchronous).
  void SetAlphas(float alpha1, float alpha2);
  // fused: x, w (the folded filter), z (or nullptr without add), bias (K floats), y.
  // unfused: x, w, y = tmp; z and bias unused. Enqueued on the handle's stream.
  void Run(const void* x, const void* w, const void* z, const void* bias, void* y);
  // "graph engine 37, tensor cores" (the global engine index and whether cuDNN notes tensor cores).
  std::string Describe() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tg::kernels::cuda
