// The mini model's own kernels: the input normalisation (8-bit RGB to the network's NHWC tensor,
// as NormalizeImages does on the CPU), global average pooling and the fully connected classifier.
// Plain CUDA kernels: a small share of the model; the fusion experiments are in the blocks.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "tracegate/kernels/reference.h"

namespace tg::kernels::cuda {

// x[n][y][x][c] = (images[n][y][x][c] / 255 - mean[c]) / std[c] for c < 3, 0 for 3 <= c < channels
// (channels 4 or 8), in storage precision p; images 8-bit HWC RGB. int8: x is quantised with
// int8_scale, QuantizeInt8(v * (1 / int8_scale)).
void LaunchNormalize(Precision p, const uint8_t* images, void* x, size_t pixels, size_t channels, cudaStream_t stream,
                     float int8_scale = 1.0f);
// pooled[n][c] = mean over the hw positions of x[n][pos][c]; x NHWC in storage precision p,
// pooled fp32. int8: x is dequantised, pooled = mean(q) * int8_scale.
void LaunchGlobalAvgPool(Precision p, const void* x, float* pooled, size_t batch, size_t hw, size_t channels,
                         cudaStream_t stream, float int8_scale = 1.0f);
// logits[n][j] = sum_c pooled[n][c] * weight[c][j] + bias[j], all fp32.
void LaunchFullyConnected(const float* pooled, const float* weight, const float* bias, float* logits, size_t batch,
                          size_t channels, size_t classes, cudaStream_t stream);

}  // namespace tg::kernels::cuda
