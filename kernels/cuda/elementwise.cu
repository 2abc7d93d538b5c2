// Element-wise kernels, fused and unfused (semantics and costs: tracegate/kernels/reference.h).
//
// One kernel template serves every op: each thread loads kUnroll 16-byte vectors (4 floats, 8
// halves or 16 int8) per operand before it uses the first, in a grid of one wave that strides
// over the tensor, then the last n % width elements one by one. Per-channel operands (scale[c],
// bias[c], c = i % channels) are loaded into registers once per thread when the grid lets every
// thread keep its channels on every pass (elementwise_plan.h), else once per element with one
// 32-bit remainder per vector. Values are computed in fp32 and stored in the storage type.
// Multiplies and adds use __fmul_rn / __fadd_rn so nvcc does not contract them into FMAs: the
// fused and unfused versions and the CPU reference then do the same fp32 arithmetic and differ
// only where the unfused chain rounds a stored fp16 intermediate.
//
// int8 (reference.h, "int8 (quantised) tensors"): each operand is dequantised with one float
// multiply (q * its tensor's scale; per-channel vectors are fp32, times their unit), the op runs
// as in fp32, and the result is stored as QuantizeInt8(v * (1 / out)): round to nearest even,
// saturate, NaN -> 0. ElementwiseInt8Reference is that arithmetic in the same order, so the
// kernels match it exactly (erff aside: it may differ by an ulp from the host's erf).
#include "elementwise.h"

#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "cuda_check.h"
#include "quantize.cuh"
#include "tracegate/kernels/elementwise_plan.h"

namespace tg::kernels::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kMinBlocks = 4;  // __launch_bounds__: at most 64 registers, 1024 threads per SM

template <typename T> struct VecTraits;
// kWidth: elements per 16-byte vector; kUnroll: vectors per operand in flight per thread (int8
// keeps two: its 16 elements per vector and 16 per-channel registers per operand fill the 64
// registers that four resident blocks allow).
template <> struct VecTraits<float> { static constexpr int kWidth = 4, kUnroll = 4; };
template <> struct VecTraits<__half> { static constexpr int kWidth = 8, kUnroll = 4; };
template <> struct VecTraits<int8_t> { static constexpr int kWidth = 16, kUnroll = 2; };

template <typename T> inline constexpr bool kInt8 = std::is_same_v<T, int8_t>;
// Per-channel vectors: the storage type, except fp32 for int8 tensors.
template <typename T> using ChannelT = std::conditional_t<kInt8<T>, float, T>;

// int8 multipliers: a, b (tensor operands) and p0, p1 (per-channel operands) dequantise; inv_out
// requantises. Unused (all 1) for fp32 and fp16.
struct Quant {
  float a = 1, b = 1, p0 = 1, p1 = 1, inv_out = 1;
};

__device__ inline float ToFloat(float v) { return v; }
__device__ inline float ToFloat(__half v) { return __half2float(v); }
__device__ inline float ToFloat(int8_t v) { return float(v); }
template <typename T> __device__ inline T FromFloat(float v);
template <> __device__ inline float FromFloat<float>(float v) { return v; }
template <> __device__ inline __half FromFloat<__half>(float v) { return __float2half_rn(v); }
template <> __device__ inline int8_t FromFloat<int8_t>(float v) { return QuantizeInt8Device(v); }

// Dequantise (int8: one multiply) and requantise (int8: times 1 / out, then FromFloat).
template <typename T> __device__ inline float Scaled(float v, float m) {
  if constexpr (kInt8<T>) return __fmul_rn(v, m);
  else return v;
}

// 16-byte load of the vector at element i (a multiple of the width). A plain load, not __ldg:
// the chains run some kernels in place (out == a), which the read-only path must not assume away.
template <typename T>
__device__ inline uint4 LoadRaw(const T* p, size_t i) { return *reinterpret_cast<const uint4*>(p + i); }

// The vector's elements as floats. int8: a byte permute and an add per element
// (ByteToFloatBits), not an I2F conversion; fp16: one conversion per element.
template <typename T>
__device__ inline void Unpack(const uint4& raw, float* v) {
  if constexpr (kInt8<T>) {
    const uint32_t w[4] = {raw.x ^ 0x80808080u, raw.y ^ 0x80808080u, raw.z ^ 0x80808080u, raw.w ^ 0x80808080u};
#pragma unroll
    for (int k = 0; k < 16; ++k) v[k] = ByteToFloatBits(w[k / 4], uint32_t(k % 4));
  } else {
    const T* e = reinterpret_cast<const T*>(&raw);
#pragma unroll
    for (int j = 0; j < VecTraits<T>::kWidth; ++j) v[j] = ToFloat(e[j]);
  }
}
// Stores the vector (int8: times inv_out, requantised with QuantizeInt8Bits and packed with byte
// permutes; fp16: two elements per conversion).
template <typename T>
__device__ inline void StoreVec(T* p, size_t i, const float* v, float inv_out) {
  uint4 raw;
  uint32_t* w = reinterpret_cast<uint32_t*>(&raw);
  if constexpr (kInt8<T>) {
#pragma unroll
    for (int k = 0; k < 4; ++k)
      w[k] = PackInt8x4(QuantizeInt8Bits(__fmul_rn(v[4 * k], inv_out)), QuantizeInt8Bits(__fmul_rn(v[4 * k + 1], inv_out)),
                        QuantizeInt8Bits(__fmul_rn(v[4 * k + 2], inv_out)), QuantizeInt8Bits(__fmul_rn(v[4 * k + 3], inv_out)));
  } else if constexpr (std::is_same_v<T, __half>) {
    __half2* h = reinterpret_cast<__half2*>(&raw);
#pragma unroll
    for (int k = 0; k < 4; ++k) h[k] = __floats2half2_rn(v[2 * k], v[2 * k + 1]);
  } else {
#pragma unroll
    for (int k = 0; k < 4; ++k) w[k] = __float_as_uint(v[k]);
  }
  *reinterpret_cast<uint4*>(p + i) = raw;
}

template <typename T>
__device__ inline float LoadScalar(const T* p, size_t i) { return ToFloat(p[i]); }
// Per-channel vectors are never written by the kernels that read them.
template <typename T>
__device__ inline float LoadChannel(const T* p, size_t c) { return ToFloat(__ldg(p + c)); }

// i % channels, in 32 bits when both fit (a 64-bit division costs several times more).
__device__ inline size_t ChannelOf(size_t i, size_t channels) {
  if ((i | channels) <= 0xffffffffu) return static_cast<uint32_t>(i) % static_cast<uint32_t>(channels);
  return i % channels;
}

// The ops: out = F(a, b, p0[c], p1[c]) with c = i % channels. Unused operands are 0.
struct AddReluOp { __device__ float operator()(float a, float b, float, float) const { return fmaxf(__fadd_rn(a, b), 0.f); } };
struct AddOp { __device__ float operator()(float a, float b, float, float) const { return __fadd_rn(a, b); } };
struct ReluOp { __device__ float operator()(float a, float, float, float) const { return fmaxf(a, 0.f); } };
struct MulReluOp { __device__ float operator()(float a, float, float, float) const { return fmaxf(__fmul_rn(a, 2.f), 0.f); } };
struct Mul2Op { __device__ float operator()(float a, float, float, float) const { return __fmul_rn(a, 2.f); } };
struct ScaleBiasReluOp {
  __device__ float operator()(float a, float, float s, float b) const { return fmaxf(__fadd_rn(__fmul_rn(a, s), b), 0.f); }
};
struct ScaleOp { __device__ float operator()(float a, float, float s, float) const { return __fmul_rn(a, s); } };
struct ScaleShiftOp {  // BN folded: x * scale + shift
  __device__ float operator()(float a, float, float s, float b) const { return __fadd_rn(__fmul_rn(a, s), b); }
};
struct BiasOp { __device__ float operator()(float a, float, float, float b) const { return __fadd_rn(a, b); } };
// gelu(x) = x * 0.5 * (1 + erf(x * (1 / sqrt(2)))), the order of tg::kernels::Gelu.
__device__ inline float GeluDevice(float x) {
  return __fmul_rn(__fmul_rn(x, 0.5f), __fadd_rn(1.f, erff(__fmul_rn(x, 0.70710678118654752f))));
}
struct GeluOp { __device__ float operator()(float a, float, float, float) const { return GeluDevice(a); } };
struct BiasGeluOp { __device__ float operator()(float a, float, float, float b) const { return GeluDevice(__fadd_rn(a, b)); } };

// The per-channel values of elements i .. i + W - 1 (first channel c0), dequantised.
template <typename T, bool kP0, bool kP1>
__device__ inline void LoadChannels(const ChannelT<T>* p0, const ChannelT<T>* p1, size_t c0, size_t channels,
                                    const Quant& q, float* s, float* t) {
  size_t c = c0;
#pragma unroll
  for (int j = 0; j < VecTraits<T>::kWidth; ++j) {
    if constexpr (kP0) s[j] = Scaled<T>(LoadChannel(p0, c), q.p0);
    if constexpr (kP1) t[j] = Scaled<T>(LoadChannel(p1, c), q.p1);
    c = (c + 1 == channels) ? 0 : c + 1;
  }
}

// kB: b is read; kP0 / kP1: per-channel p0 / p1 are read; kFixed: the grid keeps every thread's
// channels on every pass (PlanElementwiseGrid), so they are loaded once. out may be a or b (in
// place): each element is read and written by the same thread, so no __restrict__ on the tensors.
template <typename T, bool kB, bool kP0, bool kP1, bool kFixed, typename F>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    MapKernel(const T* a, const T* b, const ChannelT<T>* __restrict__ p0, const ChannelT<T>* __restrict__ p1, T* out,
              size_t n, size_t channels, F f, Quant q) {
  constexpr int W = VecTraits<T>::kWidth, kUnroll = VecTraits<T>::kUnroll;
  constexpr bool kChannels = kP0 || kP1;
  const size_t vectors = n / W;
  const size_t total = size_t{gridDim.x} * blockDim.x;
  const size_t thread = size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  float s[W] = {}, t[W] = {};
  if constexpr (kChannels && kFixed) LoadChannels<T, kP0, kP1>(p0, p1, ChannelOf(thread * W, channels), channels, q, s, t);
  for (size_t first = thread; first < vectors; first += total * kUnroll) {
    uint4 ra[kUnroll], rb[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const size_t v = first + u * total;
      if (v < vectors) {
        ra[u] = LoadRaw(a, v * W);
        if constexpr (kB) rb[u] = LoadRaw(b, v * W);
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const size_t v = first + u * total;
      if (v >= vectors) break;
      if constexpr (kChannels && !kFixed) LoadChannels<T, kP0, kP1>(p0, p1, ChannelOf(v * W, channels), channels, q, s, t);
      float x[W], y[W];
      Unpack<T>(ra[u], x);
      if constexpr (kB) Unpack<T>(rb[u], y);
#pragma unroll
      for (int j = 0; j < W; ++j) x[j] = f(Scaled<T>(x[j], q.a), kB ? Scaled<T>(y[j], q.b) : 0.f, s[j], t[j]);
      StoreVec(out, v * W, x, q.inv_out);
    }
  }
  // The tail: fewer than W elements, one per thread of the first block.
  const size_t i = vectors * W + size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (blockIdx.x == 0 && i < n) {
    float bv = 0.f, sv = 0.f, tv = 0.f;
    if constexpr (kB) bv = Scaled<T>(LoadScalar(b, i), q.b);
    if constexpr (kP0) sv = Scaled<T>(LoadChannel(p0, ChannelOf(i, channels)), q.p0);
    if constexpr (kP1) tv = Scaled<T>(LoadChannel(p1, ChannelOf(i, channels)), q.p1);
    out[i] = FromFloat<T>(Scaled<T>(f(Scaled<T>(LoadScalar(a, i), q.a), bv, sv, tv), q.inv_out));
  }
}

int SmCount() {
  int device = 0;
  TG_CUDA_CHECK(cudaGetDevice(&device));
  static int cached[64] = {};
  if (device >= 0 && device < 64 && cached[device] > 0) return cached[device];
  int sms = 0;
  TG_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  if (device >= 0 && device < 64) cached[device] = sms;
  return sms;
}

// Blocks of `kernel` resident at once on the device: one wave, the persistent grid's size.
template <typename Kernel>
size_t OneWave(Kernel kernel) {
  int per_sm = 0;
  TG_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, 0));
  return size_t(std::max(per_sm, 1)) * size_t(SmCount());
}

// 16-byte vector accesses need 16-byte aligned pointers (cudaMalloc gives 256).
bool Aligned(const void* p) { return p == nullptr || reinterpret_cast<uintptr_t>(p) % 16 == 0; }

template <typename T, bool kB, bool kP0, bool kP1, bool kFixed, typename F>
void LaunchMap(size_t blocks, const void* a, const void* b, const void* p0, const void* p1, void* out, size_t n,
               size_t channels, cudaStream_t stream, F f, const Quant& q) {
  MapKernel<T, kB, kP0, kP1, kFixed><<<unsigned(blocks), kThreads, 0, stream>>>(
      static_cast<const T*>(a), static_cast<const T*>(b), static_cast<const ChannelT<T>*>(p0),
      static_cast<const ChannelT<T>*>(p1), static_cast<T*>(out), n, channels, f, q);
  TG_CUDA_CHECK_LAUNCH();
}

template <typename T, bool kB, bool kP0, bool kP1, typename F>
void Map(const void* a, const void* b, const void* p0, const void* p1, void* out, size_t n, size_t channels,
         cudaStream_t stream, F f, const Quant& q = {}) {
  if (n == 0) return;
  if (!Aligned(a) || !Aligned(b) || !Aligned(out))
    ThrowCudaError("element-wise launch", "tensors must be 16-byte aligned for vector loads");
  if ((kP0 || kP1) && channels == 0) ThrowCudaError("element-wise launch", "channels must be at least 1");
  constexpr size_t W = VecTraits<T>::kWidth, kUnroll = VecTraits<T>::kUnroll;
  // One wave of the fixed-channel kernel (both variants use the same registers, near enough).
  static const size_t wave = OneWave(MapKernel<T, kB, kP0, kP1, true, F>);
  const ElementwiseGrid grid = PlanElementwiseGrid(n / W, W, channels, kP0 || kP1, kThreads, kUnroll, wave);
  if (grid.fixed_channels) LaunchMap<T, kB, kP0, kP1, true>(grid.blocks, a, b, p0, p1, out, n, channels, stream, f, q);
  else LaunchMap<T, kB, kP0, kP1, false>(grid.blocks, a, b, p0, p1, out, n, channels, stream, f, q);
}

// The multipliers of a chain's first kernel (it reads the op's inputs) and of the later ones (they
// read the intermediate, stored with the output's scale).
Quant FirstQuant(const Int8Scales& q) { return {q.a, q.b, q.scale_unit, q.bias_unit, 1.0f / q.out}; }
Quant ChainedQuant(const Int8Scales& q) {
  Quant c = FirstQuant(q);
  c.a = q.out;
  return c;
}

template <typename T>
void LaunchTyped(ElementwiseOp op, bool fused, const ElementwiseArgs& g, cudaStream_t s, const Int8Scales& q8) {
  const size_t n = g.n, c = g.channels;
  const Quant q = FirstQuant(q8), qc = ChainedQuant(q8);
  switch (op) {
    case ElementwiseOp::kAddRelu:
      if (fused) return Map<T, true, false, false>(g.a, g.b, nullptr, nullptr, g.out, n, c, s, AddReluOp{}, q);
      Map<T, true, false, false>(g.a, g.b, nullptr, nullptr, g.tmp, n, c, s, AddOp{}, q);
      return Map<T, false, false, false>(g.tmp, nullptr, nullptr, nullptr, g.out, n, c, s, ReluOp{}, qc);
    case ElementwiseOp::kMulRelu:
      if (fused) return Map<T, false, false, false>(g.a, nullptr, nullptr, nullptr, g.out, n, c, s, MulReluOp{}, q);
      Map<T, false, false, false>(g.a, nullptr, nullptr, nullptr, g.tmp, n, c, s, Mul2Op{}, q);
      return Map<T, false, false, false>(g.tmp, nullptr, nullptr, nullptr, g.out, n, c, s, ReluOp{}, qc);
    case ElementwiseOp::kScaleBiasRelu:
      if (fused) return Map<T, false, true, true>(g.a, nullptr, g.scale, g.bias, g.out, n, c, s, ScaleBiasReluOp{}, q);
      Map<T, false, true, false>(g.a, nullptr, g.scale, nullptr, g.tmp, n, c, s, ScaleOp{}, q);
      Map<T, false, false, true>(g.tmp, nullptr, nullptr, g.bias, g.tmp, n, c, s, BiasOp{}, qc);
      return Map<T, false, false, false>(g.tmp, nullptr, nullptr, nullptr, g.out, n, c, s, ReluOp{}, qc);
    case ElementwiseOp::kBiasGelu:
      if (fused) return Map<T, false, false, true>(g.a, nullptr, nullptr, g.bias, g.out, n, c, s, BiasGeluOp{}, q);
      Map<T, false, false, true>(g.a, nullptr, nullptr, g.bias, g.tmp, n, c, s, BiasOp{}, q);
      return Map<T, false, false, false>(g.tmp, nullptr, nullptr, nullptr, g.out, n, c, s, GeluOp{}, qc);
  }
}

// Dispatch on the storage precision.
template <typename Fn>
void ByPrecision(Precision p, Fn fn) {
  switch (p) {
    case Precision::kFp32: return fn(float{});
    case Precision::kFp16: return fn(__half{});
    case Precision::kInt8: return fn(int8_t{});
  }
}

__global__ void __launch_bounds__(kThreads) CopyKernel(const float4* __restrict__ in, float4* out, size_t vectors) {
  const size_t stride = size_t{gridDim.x} * blockDim.x;
  for (size_t v = size_t{blockIdx.x} * blockDim.x + threadIdx.x; v < vectors; v += stride) out[v] = in[v];
}
__global__ void SpinKernel(uint64_t ns) {
  uint64_t start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}

__global__ void CopyTail(const float* in, float* out, size_t from, size_t n) {
  const size_t i = from + threadIdx.x;
  if (i < n) out[i] = in[i];
}

}  // namespace

void LaunchElementwise(ElementwiseOp op, Precision p, bool fused, const ElementwiseArgs& args, cudaStream_t stream,
                       const Int8Scales& int8) {
  if (!fused && args.tmp == nullptr) ThrowCudaError("LaunchElementwise", "the unfused chain needs a tmp tensor");
  ByPrecision(p, [&](auto t) { LaunchTyped<decltype(t)>(op, fused, args, stream, int8); });
}

void LaunchCopyKernel(const void* in, void* out, size_t n_floats, cudaStream_t stream) {
  if (n_floats == 0) return;
  if (!Aligned(in) || !Aligned(out)) ThrowCudaError("LaunchCopyKernel", "tensors must be 16-byte aligned");
  const size_t vectors = n_floats / 4;
  if (vectors > 0) {
    const size_t max_blocks = size_t(SmCount()) * 16;
    const unsigned blocks = unsigned(std::min((vectors + kThreads - 1) / kThreads, max_blocks));
    CopyKernel<<<blocks, kThreads, 0, stream>>>(static_cast<const float4*>(in), static_cast<float4*>(out), vectors);
    TG_CUDA_CHECK_LAUNCH();
  }
  if (n_floats % 4 != 0) {
    CopyTail<<<1, 4, 0, stream>>>(static_cast<const float*>(in), static_cast<float*>(out), vectors * 4, n_floats);
    TG_CUDA_CHECK_LAUNCH();
  }
}

void LaunchSpin(uint64_t ns, cudaStream_t stream) {
  SpinKernel<<<1, 1, 0, stream>>>(ns);
  TG_CUDA_CHECK_LAUNCH();
}

void LaunchBatchNorm(Precision p, const void* x, const void* scale, const void* shift, void* y, size_t n,
                     size_t channels, cudaStream_t stream, const Int8Scales& int8) {
  ByPrecision(p, [&](auto t) {
    Map<decltype(t), false, true, true>(x, nullptr, scale, shift, y, n, channels, stream, ScaleShiftOp{},
                                        FirstQuant(int8));
  });
}

void LaunchAdd(Precision p, const void* a, const void* b, void* y, size_t n, cudaStream_t stream,
               const Int8Scales& int8) {
  ByPrecision(p, [&](auto t) {
    Map<decltype(t), true, false, false>(a, b, nullptr, nullptr, y, n, 1, stream, AddOp{}, FirstQuant(int8));
  });
}

void LaunchRelu(Precision p, const void* x, void* y, size_t n, cudaStream_t stream, const Int8Scales& int8) {
  ByPrecision(p, [&](auto t) {
    Map<decltype(t), false, false, false>(x, nullptr, nullptr, nullptr, y, n, 1, stream, ReluOp{}, FirstQuant(int8));
  });
}

void LaunchBiasAdd(Precision p, const void* x, const void* bias, void* y, size_t n, size_t channels,
                   cudaStream_t stream, const Int8Scales& int8) {
  ByPrecision(p, [&](auto t) {
    Map<decltype(t), false, false, true>(x, nullptr, nullptr, bias, y, n, channels, stream, BiasOp{},
                                         FirstQuant(int8));
  });
}

}  // namespace tg::kernels::cuda
