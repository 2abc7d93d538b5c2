// The element-wise pairs on the GPU, fused (one kernel) and unfused (the chain of
// Info(op).unfused_kernels kernels), fp32, fp16 and int8, with 16-byte vector loads (4 floats, 8
// halves, 16 int8). Semantics and costs: tracegate/kernels/reference.h (int8: "int8 (quantised)
// tensors": per-tensor scales in Int8Scales, per-channel vectors fp32, ElementwiseInt8Reference).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "tracegate/kernels/reference.h"

namespace tg::kernels::cuda {

// Device pointers in the storage precision (float*, __half* or int8_t*; for int8 the per-channel
// scale and bias are float*). b is used by add_relu only;
// scale by scale_bias_relu; bias by scale_bias_relu and bias_gelu; tmp (n elements) by the
// unfused chains for their intermediate, which they write and read back.
struct ElementwiseArgs {
  const void* a = nullptr;
  const void* b = nullptr;
  const void* scale = nullptr;
  const void* bias = nullptr;
  void* tmp = nullptr;
  void* out = nullptr;
  size_t n = 0;
  size_t channels = 1;
};

// Launches the version on `stream` (asynchronous; launch errors throw CudaError). `int8` holds the
// int8 tensors' scales (ignored for fp32 and fp16).
void LaunchElementwise(ElementwiseOp op, Precision p, bool fused, const ElementwiseArgs& args, cudaStream_t stream,
                       const Int8Scales& int8 = {});

// Device-to-device copy kernel used as the bandwidth yardstick next to cudaMemcpyAsync D2D:
// out = in, n elements of 4 bytes, 16-byte vector loads.
void LaunchCopyKernel(const void* in, void* out, size_t n_floats, cudaStream_t stream);

// A kernel that keeps the stream busy for `ns` nanoseconds (the GPU's global timer): queued before
// a timed region's start event, it lets the host enqueue the region's work (library calls spend
// host time before their first kernel) while the GPU waits, so the event pair times only the GPU.
void LaunchSpin(uint64_t ns, cudaStream_t stream);

// Separate element-wise kernels the unfused convolution chain and the model use, NHWC with
// `channels` innermost, storage precision p: y = x * scale[c] + shift[c]; y = a + b; y = relu(x)
// (in place allowed: y == x). int8: x (or a) and b are dequantised with int8.a and int8.b, scale
// and shift are fp32 times int8.scale_unit and int8.bias_unit, y is requantised with int8.out.
void LaunchBatchNorm(Precision p, const void* x, const void* scale, const void* shift, void* y, size_t n,
                     size_t channels, cudaStream_t stream, const Int8Scales& int8 = {});
void LaunchAdd(Precision p, const void* a, const void* b, void* y, size_t n, cudaStream_t stream,
               const Int8Scales& int8 = {});
void LaunchRelu(Precision p, const void* x, void* y, size_t n, cudaStream_t stream, const Int8Scales& int8 = {});
// y[c] = x[c] + bias[c % channels] (bias add, unfused GEMM chain: n = rows * channels).
void LaunchBiasAdd(Precision p, const void* x, const void* bias, void* y, size_t n, size_t channels,
                   cudaStream_t stream, const Int8Scales& int8 = {});

}  // namespace tg::kernels::cuda
