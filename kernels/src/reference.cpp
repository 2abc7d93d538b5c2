// CPU references, costs and tolerances of the reference workloads (definitions: reference.h).
#include "tracegate/kernels/reference.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "tracegate/kernels/half.h"

namespace tg::kernels {
namespace {

constexpr float kInvSqrt2 = 0.707106781186547524f;
constexpr double kFp16Unit = 0x1.0p-11;  // binary16's unit roundoff: half an ulp, relative

// The value a tensor of `storage` holds for `v`. int8 (used by the GEMM only) is round to
// nearest even with saturation, as cuBLASLt's int8 outputs are.
float Store(Precision storage, float v) {
  switch (storage) {
    case Precision::kFp32:
      return v;
    case Precision::kFp16:
      return RoundToHalf(v);
    case Precision::kInt8:
      return std::isnan(v) ? v : QuantizeInt8(v);
  }
  return v;
}

// relu as the kernels write it (fmaxf): NaN becomes 0. Exact, so it never needs a rounding.
float Relu(float v) { return std::fmax(v, 0.0f); }

uint64_t U(size_t v) { return static_cast<uint64_t>(v); }

// Bytes per element of a per-channel vector (scale, shift, bias): int8 workloads keep them fp32.
uint64_t ChannelBytes(Precision p) { return ElementBytes(ChannelPrecision(p)); }

// The largest value of `storage` below `v` (RandomTensor keeps its values under `hi`).
float StoredBelow(Precision storage, float v) {
  switch (storage) {
    case Precision::kFp32:
      return std::nextafter(v, -std::numeric_limits<float>::infinity());
    case Precision::kFp16: {
      float h = RoundToHalf(v);
      if (h < v) return h;
      uint16_t bits = FloatToHalfBits(h);
      if (bits == 0) return HalfBitsToFloat(0x8001u);  // +0 -> -2^-24
      return HalfBitsToFloat(static_cast<uint16_t>((bits & 0x8000u) != 0 ? bits + 1 : bits - 1));
    }
    case Precision::kInt8:
      return std::ceil(v) - 1.0f;
  }
  return v;
}

struct SplitMix64 {  // Steele, Lea, Flood 2014: the same sequence on every platform
  uint64_t state;
  uint64_t Next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
};

// sum over r, s, c of x[n, p*stride - pad + r, q*stride - pad + s, c] * w[k, r, s, c] (a
// cross-correlation, as cuDNN's CUDNN_CROSS_CORRELATION mode and every framework compute it).
double ConvAt(const ConvShape& sh, std::span<const float> x, std::span<const float> w, size_t n, size_t p, size_t q,
              size_t k) {
  double acc = 0;
  for (size_t r = 0; r < sh.r; ++r) {
    size_t hh = p * sh.stride + r;  // row in the padded input
    if (hh < sh.pad || hh - sh.pad >= sh.h) continue;
    for (size_t s = 0; s < sh.s; ++s) {
      size_t ww = q * sh.stride + s;
      if (ww < sh.pad || ww - sh.pad >= sh.w) continue;
      const float* xv = &x[((n * sh.h + (hh - sh.pad)) * sh.w + (ww - sh.pad)) * sh.c];
      const float* wv = &w[((k * sh.r + r) * sh.s + s) * sh.c];
      for (size_t c = 0; c < sh.c; ++c) acc += static_cast<double>(xv[c]) * static_cast<double>(wv[c]);
    }
  }
  return acc;
}

// Calls fn(n, p, q, k, i) for every output element, i its NHWC index (N x P x Q x K).
template <typename Fn>
void ForEachOutput(const ConvShape& s, Fn fn) {
  const size_t p_size = s.p(), q_size = s.q();
  for (size_t n = 0; n < s.n; ++n)
    for (size_t p = 0; p < p_size; ++p)
      for (size_t q = 0; q < q_size; ++q)
        for (size_t k = 0; k < s.k; ++k) fn(n, p, q, k, ((n * p_size + p) * q_size + q) * s.k + k);
}

}  // namespace

std::string_view PrecisionName(Precision p) {
  switch (p) {
    case Precision::kFp32:
      return "fp32";
    case Precision::kFp16:
      return "fp16";
    case Precision::kInt8:
      return "int8";
  }
  return "?";
}

std::optional<Precision> ParsePrecision(std::string_view name) {
  for (Precision p : {Precision::kFp32, Precision::kFp16, Precision::kInt8}) {
    if (PrecisionName(p) == name) return p;
  }
  return std::nullopt;
}

size_t ElementBytes(Precision p) {
  switch (p) {
    case Precision::kFp32:
      return 4;
    case Precision::kFp16:
      return 2;
    case Precision::kInt8:
      return 1;
  }
  return 4;
}

// ---- element-wise pairs ----------------------------------------------------------------------

const ElementwiseInfo& Info(ElementwiseOp op) {
  static const ElementwiseInfo kInfos[] = {
      {"add_relu", "relu(a + b)", 2, 0, 2},
      {"mul_relu", "relu(x * 2)", 1, 0, 2},
      {"scale_bias_relu", "relu(x * scale[c] + bias[c])", 1, 2, 3},
      {"bias_gelu", "gelu(x + bias[c])", 1, 1, 2},
  };
  return kInfos[static_cast<size_t>(op)];
}

std::optional<ElementwiseOp> ParseElementwiseOp(std::string_view name) {
  for (ElementwiseOp op : kAllElementwiseOps) {
    if (Info(op).name == name) return op;
  }
  return std::nullopt;
}

// Bytes, in elements of the storage precision:
//   fused:   every input once, the output once: (tensor_inputs + 1) * n + channel_inputs * channels
//            (add_relu 3n, mul_relu 2n, scale_bias_relu 2n + 2c, bias_gelu 2n + c).
//   unfused: the same plus, for each kernel after the first, the n-element intermediate written by
//            the kernel before it and read back: + 2n * (unfused_kernels - 1)
//            (add_relu 5n, mul_relu 4n, scale_bias_relu 6n + 2c, bias_gelu 4n + c). Every
//            per-channel vector is read by exactly one kernel of the chain.
// FLOPs per element, the same for both versions (fusion removes traffic, not arithmetic):
//   add_relu 2 (add, max), mul_relu 2 (mul, max), scale_bias_relu 3 (mul, add, max),
//   bias_gelu 6 (add; gelu: x / sqrt(2), erf, 1 +, * 0.5, * x).
// int8: the n-element tensors are 1 byte per element, the per-channel vectors fp32 (4 bytes).
Costs ElementwiseCosts(ElementwiseOp op, Precision p, bool fused, size_t n, size_t channels) {
  static constexpr uint64_t kFlopsPerElement[] = {2, 2, 3, 6};
  const ElementwiseInfo& info = Info(op);
  int kernels = fused ? 1 : info.unfused_kernels;
  const uint64_t tensor_elements = U(info.tensor_inputs + 1) * U(n) + 2 * U(n) * U(kernels - 1);
  const uint64_t channel_elements = U(info.channel_inputs) * U(channels);
  return {tensor_elements * ElementBytes(p) + channel_elements * ChannelBytes(p),
          kFlopsPerElement[static_cast<size_t>(op)] * U(n), kernels};
}

float Gelu(float x) { return x * 0.5f * (1.0f + std::erf(x * kInvSqrt2)); }

// Every operation is done in float, as the kernels do; `fused` = false stores (rounds) each
// intermediate the unfused chain writes to memory. fp16 products of two binary16 values are exact
// in float, so the device's FMA and this multiply-then-add agree bit for bit in fp16.
void ElementwiseReference(ElementwiseOp op, Precision storage, bool fused, const ElementwiseInputs& in,
                          std::span<float> out) {
  const size_t channels = std::max<size_t>(in.channels, 1);
  auto stored = [&](float v) { return fused ? v : Store(storage, v); };  // an unfused intermediate
  for (size_t i = 0; i < out.size(); ++i) {
    const size_t c = i % channels;
    float v = 0;
    switch (op) {
      case ElementwiseOp::kAddRelu:
        v = Relu(stored(in.a[i] + in.b[i]));
        break;
      case ElementwiseOp::kMulRelu:
        v = Relu(stored(in.a[i] * 2.0f));
        break;
      case ElementwiseOp::kScaleBiasRelu:
        v = Relu(stored(stored(in.a[i] * in.scale[c]) + in.bias[c]));
        break;
      case ElementwiseOp::kBiasGelu:
        v = Gelu(stored(in.a[i] + in.bias[c]));
        break;
    }
    out[i] = Store(storage, v);
  }
}

// ---- GEMM + bias + ReLU ------------------------------------------------------------------------

// Bytes, in elements: fused reads A (mk), B (kn) and bias (n) and writes out (mn). Unfused: the
// GEMM reads A and B and writes its result (mn); the bias kernel reads it and bias and writes
// (2mn + n); ReLU reads and writes (2mn): mk + kn + 5mn + n. FLOPs: 2mnk + 2mn (bias add, max).
// int8: the matrices 1 byte per element, the bias fp32 (4 bytes per element).
Costs GemmBiasReluCosts(const GemmShape& s, Precision p, bool fused) {
  const uint64_t m = s.m, n = s.n, k = s.k;
  uint64_t elements = m * k + k * n + (fused ? m * n : 5 * m * n);
  return {elements * ElementBytes(p) + n * ChannelBytes(p), 2 * m * n * k + 2 * m * n, fused ? 1 : 3};
}

void GemmBiasReluReference(const GemmShape& s, Precision storage, bool fused, std::span<const float> a,
                           std::span<const float> b, std::span<const float> bias, std::span<float> out) {
  for (size_t i = 0; i < s.m; ++i) {
    for (size_t j = 0; j < s.n; ++j) {
      double acc = 0;
      for (size_t l = 0; l < s.k; ++l) acc += static_cast<double>(a[i * s.k + l]) * static_cast<double>(b[l * s.n + j]);
      float v = fused ? static_cast<float>(acc + static_cast<double>(bias[j]))
                      : Store(storage, Store(storage, static_cast<float>(acc)) + bias[j]);
      out[i * s.n + j] = Store(storage, Relu(v));
    }
  }
}

// ---- Convolution + BN + Add + ReLU --------------------------------------------------------------

ConvShape Res3Shape(size_t batch) {
  ConvShape s;  // the defaults are the res3 block
  s.n = batch;
  return s;
}

uint64_t ConvOps(const ConvShape& s) {
  return 2 * U(s.n) * U(s.p()) * U(s.q()) * U(s.k) * U(s.r) * U(s.s) * U(s.c);
}

// Bytes, in elements (X, W, Y the tensors' sizes, K output channels): fused reads x, the folded
// filter, shift and z and writes y: X + W + K + 2Y. Unfused: convolution X + W + Y; BN reads
// its input, scale and shift and writes (2Y + 2K); add reads two and writes (3Y); ReLU (2Y):
// X + W + 8Y + 2K. FLOPs: ConvOps + 4Y (BN multiply and add, residual add, max) for both.
// int8: the tensors 1 byte per element, the K-element vectors fp32 (4 bytes per element).
Costs ConvBnAddReluCosts(const ConvShape& s, Precision p, bool fused) {
  const uint64_t x = s.x_elements(), w = s.w_elements(), y = s.y_elements(), k = s.k;
  const uint64_t elements = fused ? x + w + 2 * y : x + w + 8 * y;
  const uint64_t channel_elements = fused ? k : 2 * k;
  return {elements * ElementBytes(p) + channel_elements * ChannelBytes(p), ConvOps(s) + 4 * y, fused ? 1 : 4};
}

std::vector<float> FoldBnIntoFilter(const ConvShape& s, Precision storage, std::span<const float> w,
                                    std::span<const float> scale) {
  std::vector<float> folded(s.w_elements());
  const size_t per_filter = s.r * s.s * s.c;
  for (size_t i = 0; i < folded.size(); ++i) folded[i] = Store(storage, w[i] * scale[i / per_filter]);
  return folded;
}

void ConvBnAddReluReference(const ConvShape& s, Precision storage, bool fused, std::span<const float> x,
                            std::span<const float> w, std::span<const float> scale, std::span<const float> shift,
                            std::span<const float> z, std::span<float> y) {
  std::vector<float> folded;
  if (fused) folded = FoldBnIntoFilter(s, storage, w, scale);
  ForEachOutput(s, [&](size_t n, size_t p, size_t q, size_t k, size_t i) {
    float v;
    if (fused) {
      v = static_cast<float>(ConvAt(s, x, folded, n, p, q, k) + static_cast<double>(shift[k]) +
                             static_cast<double>(z[i]));
    } else {
      float conv = Store(storage, static_cast<float>(ConvAt(s, x, w, n, p, q, k)));
      v = Store(storage, Store(storage, conv * scale[k] + shift[k]) + z[i]);
    }
    y[i] = Store(storage, Relu(v));
  });
}

// ---- int8 (quantised) tensors -----------------------------------------------------------------

// nearbyint rounds in the current mode, round to nearest even (never changed here); the clamp
// after it is exact. NaN -> 0 as cvt.rni.sat.s8.f32 does on the device.
float QuantizeInt8(float v) {
  if (std::isnan(v)) return 0.0f;
  return std::clamp(std::nearbyint(v), -128.0f, 127.0f);
}

Precision ChannelPrecision(Precision p) { return p == Precision::kInt8 ? Precision::kFp32 : p; }

std::vector<float> QuantizeTensor(std::span<const float> values, float scale) {
  const float inv = 1.0f / scale;
  std::vector<float> q(values.size());
  for (size_t i = 0; i < values.size(); ++i) q[i] = QuantizeInt8(values[i] * inv);
  return q;
}

float Int8ScaleFor(float max_abs) { return max_abs > 0 ? max_abs / 127.0f : 1.0f; }

// The device's order (elementwise.cu): dequantise, the fp32 op, requantise with v * (1 / out);
// an unfused chain stores each intermediate with the output's scale and dequantises it again.
void ElementwiseInt8Reference(ElementwiseOp op, bool fused, const ElementwiseInputs& in, const Int8Scales& scales,
                              std::span<float> out) {
  const size_t channels = std::max<size_t>(in.channels, 1);
  const float inv_out = 1.0f / scales.out;
  auto requantize = [&](float v) { return QuantizeInt8(v * inv_out); };
  auto stored = [&](float v) { return fused ? v : requantize(v) * scales.out; };  // an unfused intermediate
  for (size_t i = 0; i < out.size(); ++i) {
    const size_t c = i % channels;
    const float a = in.a[i] * scales.a;
    float v = 0;
    switch (op) {
      case ElementwiseOp::kAddRelu:
        v = Relu(stored(a + in.b[i] * scales.b));
        break;
      case ElementwiseOp::kMulRelu:
        v = Relu(stored(a * 2.0f));
        break;
      case ElementwiseOp::kScaleBiasRelu:
        v = Relu(stored(stored(a * (in.scale[c] * scales.scale_unit)) + in.bias[c] * scales.bias_unit));
        break;
      case ElementwiseOp::kBiasGelu:
        v = Gelu(stored(a + in.bias[c] * scales.bias_unit));
        break;
    }
    out[i] = requantize(v);
  }
}

int64_t Int8Dot(std::span<const float> a, std::span<const float> bt, size_t k, size_t i, size_t j) {
  int64_t acc = 0;
  for (size_t l = 0; l < k; ++l) acc += static_cast<int64_t>(a[i * k + l]) * static_cast<int64_t>(bt[j * k + l]);
  return acc;
}

// alpha * acc in float (acc converted to float first, exact below 2^24), then the bias.
void GemmBiasReluInt8Reference(const GemmShape& s, bool fused, float alpha, std::span<const float> a,
                               std::span<const float> bt, std::span<const float> bias, std::span<float> out) {
  for (size_t i = 0; i < s.m; ++i) {
    for (size_t j = 0; j < s.n; ++j) {
      const float scaled = alpha * static_cast<float>(Int8Dot(a, bt, s.k, i, j));
      out[i * s.n + j] = fused ? QuantizeInt8(Relu(scaled + bias[j]))
                               : Relu(QuantizeInt8(QuantizeInt8(scaled) + bias[j]));
    }
  }
}

std::vector<float> FoldBnIntoFilterInt8(const ConvShape& s, std::span<const float> w, float scale_w,
                                        std::span<const float> bn_scale, float scale_w_folded) {
  std::vector<float> folded(s.w_elements());
  const size_t per_filter = s.r * s.s * s.c;
  const float inv = 1.0f / scale_w_folded;
  for (size_t i = 0; i < folded.size(); ++i) folded[i] = QuantizeInt8(w[i] * scale_w * bn_scale[i / per_filter] * inv);
  return folded;
}

// ConvAt sums integer products in double: exact (|acc| < 2^53). The float conversion of acc
// rounds to nearest even above 2^24, as an int32-to-float conversion on the device does.
void ConvBnAddReluInt8Reference(const ConvShape& s, bool fused, const ConvInt8Scales& q, std::span<const float> x,
                                std::span<const float> w, std::span<const float> bn_scale,
                                std::span<const float> shift, std::span<const float> z, std::span<float> y) {
  std::vector<float> folded;
  if (fused) folded = FoldBnIntoFilterInt8(s, w, q.w, bn_scale, q.w_folded);
  const float alpha1 = fused ? q.x * q.w_folded / q.y : q.x * q.w / q.tmp;
  const float alpha2 = q.z / q.y, inv_y = 1.0f / q.y;
  ForEachOutput(s, [&](size_t n, size_t p, size_t qq, size_t k, size_t i) {
    const float acc = static_cast<float>(ConvAt(s, x, fused ? std::span<const float>(folded) : w, n, p, qq, k));
    if (fused) {
      y[i] = QuantizeInt8(Relu(alpha1 * acc + alpha2 * z[i] + shift[k]));
      return;
    }
    // The element-wise kernels' order: dequantise, compute, QuantizeInt8(v * (1 / out)).
    const float t = QuantizeInt8(alpha1 * acc);
    const float bn = QuantizeInt8((t * q.tmp * bn_scale[k] + shift[k] * q.y) * inv_y);
    const float sum = QuantizeInt8((bn * q.y + z[i] * q.z) * inv_y);
    y[i] = QuantizeInt8(Relu(sum * q.y) * inv_y);
  });
}

// ---- tolerances -----------------------------------------------------------------------------

// u = 2^-11 is binary16's half-ulp (relative). Inputs are assumed in [-1, 1] (scale up to 2).
// - fp32, and fp16 add_relu / mul_relu: 1e-6 absolute and relative (the seed's). In fp16 both
//   versions round the same float value once (relu commutes with rounding), so they agree exactly.
// - fp16 scale_bias_relu: the unfused chain rounds x*scale (|x*scale| <= 2: error <= 2u) and the
//   sum; the fused kernel rounds its output once: |fused - unfused| <= 2u + 2u|y|. Held to
//   atol 2u = 2^-10 (9.8e-4), rtol 3u (1.5e-3), one rounding of margin.
// - fp16 bias_gelu: the rounded x + bias (|v| <= 2, error <= 2u) moves gelu by at most
//   max|gelu'| (1.13) times that, 2.3u; erff may differ by an ulp between host and device.
//   atol 4u = 2^-9 (2.0e-3), rtol 3u.
// - fp32 bias_gelu: erff differs by a few ulp between libraries and 1 + erf cancels for negative
//   inputs: atol 1e-6, rtol 1e-5.
// - int8: one quantisation step.
Tolerance ElementwiseTolerance(ElementwiseOp op, Precision p) {
  if (p == Precision::kInt8) return {1.0, 0.0};
  if (p == Precision::kFp32) return {1e-6, op == ElementwiseOp::kBiasGelu ? 1e-5 : 1e-6};
  switch (op) {
    case ElementwiseOp::kAddRelu:
    case ElementwiseOp::kMulRelu:
      return {1e-6, 1e-6};
    case ElementwiseOp::kScaleBiasRelu:
      return {2 * kFp16Unit, 3 * kFp16Unit};
    case ElementwiseOp::kBiasGelu:
      return {4 * kFp16Unit, 3 * kFp16Unit};
  }
  return {1e-6, 1e-6};
}

// For inputs in [-1, 1] a dot product of length L has magnitude ~ sqrt(L) / 3 (a few times that
// at most), so absolute bounds grow with sqrt(L):
// - fp16 (fp32 accumulation): the unfused chains round up to three intermediates of that size
//   (u = 2^-11 each), the fused one its output once; atol 2^-8 * sqrt(L) (3.9e-3 sqrt(L); res3's
//   L = 1152: 0.13), rtol 1e-2. A missing bias, shift, residual or ReLU is off by ~0.5 or more.
// - fp32 (TF32 off): summation order (split-K, Winograd) differs between libraries; atol
//   1e-4 * sqrt(L), rtol 1e-4. TF32 convolutions would need fp16's bound: conv.cu sets FMA math.
// - int8 (int32 accumulation, exact): one quantisation step of the output.
Tolerance ReductionTolerance(Precision p, size_t reduction_length) {
  const double root = std::sqrt(static_cast<double>(std::max<size_t>(reduction_length, 1)));
  switch (p) {
    case Precision::kFp32:
      return {1e-4 * root, 1e-4};
    case Precision::kFp16:
      return {0x1.0p-8 * root, 1e-2};
    case Precision::kInt8:
      return {1.0, 0.0};
  }
  return {1e-4 * root, 1e-4};
}

// Equal values (infinities included) and NaN against NaN match; NaN against a number does not and
// records an infinite absolute error. Elements beyond the shorter span are mismatches.
CompareResult CompareOutputs(std::span<const float> got, std::span<const float> want, Tolerance tol) {
  CompareResult r;
  auto mismatch = [&r](size_t i) {
    if (r.mismatches++ == 0) r.first_mismatch = i;
  };
  const size_t common = std::min(got.size(), want.size());
  for (size_t i = 0; i < common; ++i) {
    const double g = got[i], w = want[i];
    if (g == w || (std::isnan(g) && std::isnan(w))) continue;
    const double abs_error = std::fabs(g - w);  // NaN or infinite when one side is
    if (std::isnan(abs_error) || std::isinf(abs_error)) {
      r.max_abs_error = std::numeric_limits<double>::infinity();
      mismatch(i);
      continue;
    }
    r.max_abs_error = std::max(r.max_abs_error, abs_error);
    if (w != 0) r.max_rel_error = std::max(r.max_rel_error, abs_error / std::fabs(w));
    if (!(abs_error <= tol.atol + tol.rtol * std::fabs(w))) mismatch(i);
  }
  for (size_t i = common; i < std::max(got.size(), want.size()); ++i) mismatch(i);
  return r;
}

// ---- inputs ---------------------------------------------------------------------------------

// u = the top 24 bits of each draw / 2^24, exactly uniform on a grid in [0, 1); v = lo + (hi - lo)
// * u in double, stored (int8: floored first); a value the rounding carried up to hi steps one
// stored value down. lo and hi are expected to be representable in `storage`.
std::vector<float> RandomTensor(size_t n, uint64_t seed, float lo, float hi, Precision storage) {
  SplitMix64 rng{seed};
  std::vector<float> values(n);
  const float below_hi = StoredBelow(storage, hi);
  for (float& v : values) {
    const double u = static_cast<double>(rng.Next() >> 40) * 0x1.0p-24;
    double raw = static_cast<double>(lo) + (static_cast<double>(hi) - lo) * u;
    if (storage == Precision::kInt8) raw = std::floor(raw);  // integers lo..hi-1 equally often
    v = Store(storage, static_cast<float>(raw));
    if (v >= hi) v = std::max(below_hi, Store(storage, lo));
  }
  return values;
}

void QuantizeTo(Precision storage, std::span<float> values) {
  for (float& v : values) v = Store(storage, v);
}

// ---- the mini model's CPU stages -------------------------------------------------------------

void NormalizeImages(std::span<const uint8_t> images, size_t count, size_t height, size_t width, size_t channels,
                     std::span<float> out) {
  static constexpr float kMean[3] = {0.485f, 0.456f, 0.406f};
  static constexpr float kStd[3] = {0.229f, 0.224f, 0.225f};
  const size_t pixels = count * height * width;
  const size_t rgb = std::min<size_t>(channels, 3);
  for (size_t i = 0; i < pixels; ++i) {
    float* o = &out[i * channels];
    for (size_t c = 0; c < rgb; ++c) o[c] = (static_cast<float>(images[i * 3 + c]) / 255.0f - kMean[c]) / kStd[c];
    std::fill(o + rgb, o + channels, 0.0f);
  }
}

// NaN ranks below every number, so a broken row's NaNs never crowd out real classes.
std::vector<int> TopK(std::span<const float> logits, size_t k) {
  std::vector<int> idx(logits.size());
  std::iota(idx.begin(), idx.end(), 0);
  k = std::min(k, idx.size());
  auto before = [&logits](int x, int y) {
    const float a = logits[static_cast<size_t>(x)], b = logits[static_cast<size_t>(y)];
    if (std::isnan(a) != std::isnan(b)) return std::isnan(b);
    if (a != b && !std::isnan(a)) return a > b;
    return x < y;
  };
  std::partial_sort(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(k), idx.end(), before);
  idx.resize(k);
  return idx;
}

}  // namespace tg::kernels
