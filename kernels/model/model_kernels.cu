#include "model_kernels.h"

#include <cuda_fp16.h>

#include "cuda_check.h"
#include "quantize.cuh"

namespace tg::kernels::cuda {
namespace {

__device__ inline float Load(const float* p, size_t i) { return p[i]; }
__device__ inline float Load(const __half* p, size_t i) { return __half2float(p[i]); }
__device__ inline float Load(const int8_t* p, size_t i) { return float(p[i]); }

// One thread per (image, channel); consecutive threads read consecutive channels (coalesced).
// scale: 1, or the int8 scale (the mean of q times the scale is the mean of the values).
template <typename T>
__global__ void GlobalAvgPoolKernel(const T* x, float* pooled, size_t batch, size_t hw, size_t channels, float scale) {
  const size_t i = size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i >= batch * channels) return;
  const size_t n = i / channels, c = i % channels;
  const T* base = x + n * hw * channels + c;
  float sum = 0.f;
  for (size_t pos = 0; pos < hw; ++pos) sum += Load(base, pos * channels);
  pooled[i] = sum / float(hw) * scale;
}

// One thread per (image, class); consecutive threads read consecutive weight columns.
__global__ void FullyConnectedKernel(const float* pooled, const float* weight, const float* bias, float* logits,
                                     size_t batch, size_t channels, size_t classes) {
  const size_t i = size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i >= batch * classes) return;
  const size_t n = i / classes, j = i % classes;
  float sum = bias[j];
  for (size_t c = 0; c < channels; ++c) sum += pooled[n * channels + c] * weight[c * classes + j];
  logits[i] = sum;
}

// ImageNet statistics, as tg::kernels::NormalizeImages.
__constant__ float kMean[3] = {0.485f, 0.456f, 0.406f};
__constant__ float kStd[3] = {0.229f, 0.224f, 0.225f};

// inv_scale: 1 / the int8 scale (unused for float and half).
template <typename T> __device__ inline T Store(float v, float inv_scale);
template <> __device__ inline float Store<float>(float v, float) { return v; }
template <> __device__ inline __half Store<__half>(float v, float) { return __float2half_rn(v); }
template <> __device__ inline int8_t Store<int8_t>(float v, float inv_scale) {
  return QuantizeInt8Device(__fmul_rn(v, inv_scale));
}

// One thread per pixel.
template <typename T>
__global__ void NormalizeKernel(const uint8_t* images, T* x, size_t pixels, size_t channels, float inv_scale) {
  const size_t i = size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i >= pixels) return;
  for (size_t c = 0; c < channels; ++c) {
    const float v = c < 3 ? __fdiv_rn(__fsub_rn(__fdiv_rn(float(images[i * 3 + c]), 255.f), kMean[c]), kStd[c]) : 0.f;
    x[i * channels + c] = Store<T>(v, inv_scale);
  }
}

unsigned Blocks(size_t threads) { return unsigned((threads + 255) / 256); }

}  // namespace

void LaunchNormalize(Precision p, const uint8_t* images, void* x, size_t pixels, size_t channels, cudaStream_t stream,
                     float int8_scale) {
  if (pixels == 0) return;
  const float inv = 1.0f / int8_scale;
  if (p == Precision::kFp32)
    NormalizeKernel<<<Blocks(pixels), 256, 0, stream>>>(images, static_cast<float*>(x), pixels, channels, inv);
  else if (p == Precision::kFp16)
    NormalizeKernel<<<Blocks(pixels), 256, 0, stream>>>(images, static_cast<__half*>(x), pixels, channels, inv);
  else
    NormalizeKernel<<<Blocks(pixels), 256, 0, stream>>>(images, static_cast<int8_t*>(x), pixels, channels, inv);
  TG_CUDA_CHECK_LAUNCH();
}

void LaunchGlobalAvgPool(Precision p, const void* x, float* pooled, size_t batch, size_t hw, size_t channels,
                         cudaStream_t stream, float int8_scale) {
  const size_t threads = batch * channels;
  if (threads == 0) return;
  const unsigned blocks = Blocks(threads);
  if (p == Precision::kFp32)
    GlobalAvgPoolKernel<<<blocks, 256, 0, stream>>>(static_cast<const float*>(x), pooled, batch, hw, channels, 1.0f);
  else if (p == Precision::kFp16)
    GlobalAvgPoolKernel<<<blocks, 256, 0, stream>>>(static_cast<const __half*>(x), pooled, batch, hw, channels, 1.0f);
  else
    GlobalAvgPoolKernel<<<blocks, 256, 0, stream>>>(static_cast<const int8_t*>(x), pooled, batch, hw, channels,
                                                    int8_scale);
  TG_CUDA_CHECK_LAUNCH();
}

void LaunchFullyConnected(const float* pooled, const float* weight, const float* bias, float* logits, size_t batch,
                          size_t channels, size_t classes, cudaStream_t stream) {
  const size_t threads = batch * classes;
  if (threads == 0) return;
  FullyConnectedKernel<<<Blocks(threads), 256, 0, stream>>>(pooled, weight, bias, logits, batch, channels, classes);
  TG_CUDA_CHECK_LAUNCH();
}

}  // namespace tg::kernels::cuda
