// The element-wise kernels' index arithmetic and int8 bit tricks, CUDA-free so that CI checks
// them on the CPU (tests/unit/kernels/kernels_elementwise_plan_test.cpp); kernels/cuda/elementwise.cu
// uses the same functions on the device.
//
// Grid: each thread handles `unroll` 16-byte vectors per pass (vector v, v + T, ..., with T the
// grid's thread count), all loaded before the first is used, and strides by unroll * T. Element
// i of the tensor uses channel i % channels (NHWC). Thread t's vectors are t + k * T, so its
// elements' channels are (t * width + j + k * T * width) % channels: when T * width is a
// multiple of `channels`, they do not depend on k, and the thread loads its `width` per-channel
// values into registers once (ElementwiseGrid::fixed_channels). PlanElementwiseGrid chooses the
// block count so that this holds whenever it can.
//
// int8: a byte q becomes float(q) with one byte permute and one add (ByteToFloatBits), and a
// float is requantised (round to nearest even, saturate to [-128, 127], NaN -> 0: QuantizeInt8 of
// reference.h) with a NaN select, a clamp and one add (QuantizeInt8Bits), instead of the I2F
// and F2I conversions, which Hopper issues at 16 per SM per clock (an eighth of the fp32 rate).
#pragma once

#include <cstddef>
#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define TG_HOST_DEVICE __host__ __device__
#else
#define TG_HOST_DEVICE
#endif

namespace tg::kernels {

struct ElementwiseGrid {
  size_t blocks = 0;
  bool fixed_channels = false;  // every thread's channels are the same on every pass
};

// vectors: n / width; threads: per block; max_blocks: the blocks resident at once (one wave);
// per_channel: the op reads per-channel vectors. blocks is at least 1.
ElementwiseGrid PlanElementwiseGrid(size_t vectors, size_t width, size_t channels, bool per_channel, size_t threads,
                                    size_t unroll, size_t max_blocks);

// The channel of element j (0 <= j < width) of thread t's vectors under a fixed-channel grid.
TG_HOST_DEVICE inline size_t FixedChannel(size_t thread, size_t width, size_t j, size_t channels) {
  return (thread * width + j) % channels;
}

// CUDA's __byte_perm(x, y, s): byte k of the result is byte (s >> 4k) & 7 of the 8 bytes y:x.
TG_HOST_DEVICE inline uint32_t BytePerm(uint32_t x, uint32_t y, uint32_t s) {
#if defined(__CUDA_ARCH__)
  return __byte_perm(x, y, s);
#else
  const uint64_t both = (uint64_t(y) << 32) | x;
  uint32_t r = 0;
  for (int k = 0; k < 4; ++k) r |= uint32_t((both >> (8 * ((s >> (4 * k)) & 7))) & 0xFFu) << (8 * k);
  return r;
#endif
}

TG_HOST_DEVICE inline float BitsToFloat(uint32_t b) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(b);
#else
  float f;
  __builtin_memcpy(&f, &b, sizeof f);
  return f;
#endif
}
TG_HOST_DEVICE inline uint32_t FloatToBits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t b;
  __builtin_memcpy(&b, &f, sizeof b);
  return b;
#endif
}
// a + b rounded to nearest even, never contracted into an FMA.
TG_HOST_DEVICE inline float AddRn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}

// Byte j (0..3) of `biased` (a word of int8 values XOR 0x80808080, i.e. q + 128 as unsigned
// bytes) as float(q): 0x4B0000xx is 2^23 + xx exactly, and 2^23 + 128 is subtracted.
TG_HOST_DEVICE inline float ByteToFloatBits(uint32_t biased, uint32_t j) {
  return AddRn(BitsToFloat(BytePerm(biased, 0x4B000000u, 0x7650u | j)), -8388736.0f);
}

// QuantizeInt8(v) as the low byte of the result: NaN -> 0, clamp to [-128, 127] (clamping to
// integers commutes with rounding), then v + 1.5 * 2^23 lands in [2^23, 2^24), where the float
// spacing is 1, so the add rounds v to the nearest integer, ties to even, and the low byte of
// the sum's bits is that integer in two's complement.
TG_HOST_DEVICE inline uint32_t QuantizeInt8Bits(float v) {
  v = v == v ? v : 0.0f;
  v = fminf(fmaxf(v, -128.0f), 127.0f);  // FMNMX twice (no NaN left)
  return FloatToBits(AddRn(v, 12582912.0f));
}
// Four QuantizeInt8Bits results packed into one word, element 0 in the low byte.
TG_HOST_DEVICE inline uint32_t PackInt8x4(uint32_t q0, uint32_t q1, uint32_t q2, uint32_t q3) {
  return BytePerm(BytePerm(q0, q1, 0x0040u), BytePerm(q2, q3, 0x0040u), 0x5410u);
}

}  // namespace tg::kernels
