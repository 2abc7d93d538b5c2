// The reference workloads' definitions, costs and CPU references (CUDA-free, unit-tested in CI).
//
// Every GPU kernel under kernels/cuda has its meaning defined here: what it computes, how many
// bytes of device memory its fused and unfused versions move and how many FLOPs they do (the
// counts the NVTX annotations carry for the analyzer's roofline), and a CPU reference that the
// correctness check (tracegate-kernel-check) compares both versions with.
//
// Conventions:
// - Tensors are dense; element-wise operands have n elements; per-channel vectors (scale, bias)
//   have `channels` elements and element i uses channel i % channels (NHWC: C is innermost).
// - Bytes are what each kernel reads and writes in device memory, assuming perfect caching
//   within a kernel and none between kernels (that is exactly what fusion removes).
// - FLOPs count each add, multiply, max and erf as one; a GEMM or convolution multiply-add is two.
// - fp16 tensors are stored as binary16 and computed in fp32: a fused kernel rounds once (its
//   output); an unfused chain rounds every intermediate it stores. The references take
//   `Storage` to reproduce that rounding exactly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace tg::kernels {

enum class Precision { kFp32, kFp16, kInt8 };
std::string_view PrecisionName(Precision p);  // "fp32", "fp16", "int8"
std::optional<Precision> ParsePrecision(std::string_view name);
size_t ElementBytes(Precision p);  // 4, 2, 1

// ---- element-wise pairs ----------------------------------------------------------------------
enum class ElementwiseOp {
  kAddRelu,        // out = relu(a + b)                     unfused: add; relu           (seed 001 5.9)
  kMulRelu,        // out = relu(x * 2)                     unfused: mul; relu           (seed 002)
  kScaleBiasRelu,  // out = relu(x * scale[c] + bias[c])    unfused: scale; bias; relu   (BN folded)
  kBiasGelu,       // out = gelu(x + bias[c]), erf form     unfused: bias; gelu
};
inline constexpr ElementwiseOp kAllElementwiseOps[] = {ElementwiseOp::kAddRelu, ElementwiseOp::kMulRelu,
                                                       ElementwiseOp::kScaleBiasRelu, ElementwiseOp::kBiasGelu};

struct ElementwiseInfo {
  std::string_view name;     // "add_relu", "mul_relu", "scale_bias_relu", "bias_gelu"
  std::string_view formula;  // as in the comment above
  int tensor_inputs;         // inputs with n elements (add_relu: 2, others: 1)
  int channel_inputs;        // per-channel vectors (scale_bias_relu: 2, bias_gelu: 1, others: 0)
  int unfused_kernels;       // kernels of the unfused chain
};
const ElementwiseInfo& Info(ElementwiseOp op);
std::optional<ElementwiseOp> ParseElementwiseOp(std::string_view name);

struct Costs {
  uint64_t bytes = 0;  // device memory read + written, all kernels of the version
  uint64_t flops = 0;
  int kernels = 0;     // launches of the version
};
Costs ElementwiseCosts(ElementwiseOp op, Precision p, bool fused, size_t n, size_t channels);

// Inputs of an element-wise op: `a` (n), `b` (n, add_relu only), `scale` and `bias` (channels).
// Values must already be representable in the storage precision (see QuantizeTo).
struct ElementwiseInputs {
  std::span<const float> a, b, scale, bias;
  size_t channels = 1;
};
// The CPU reference. fused = true rounds once (the fused kernel), false rounds every stored
// intermediate (the unfused chain); for fp32 both are the same arithmetic in the same order.
void ElementwiseReference(ElementwiseOp op, Precision storage, bool fused, const ElementwiseInputs& in,
                          std::span<float> out);
float Gelu(float x);  // x * 0.5 * (1 + erf(x / sqrt(2))), in float as the device computes it

// ---- GEMM + bias + ReLU ------------------------------------------------------------------------
// out[m x n] = relu(A[m x k] * B[k x n] + bias[n]); all row-major. Unfused: GEMM; bias; relu.
struct GemmShape { size_t m = 0, n = 0, k = 0; };
Costs GemmBiasReluCosts(const GemmShape& s, Precision p, bool fused);
// Accumulates in double; `round_gemm` rounds the GEMM result to the storage precision before the
// bias (the unfused chain stores it), then the sum again, then the output.
void GemmBiasReluReference(const GemmShape& s, Precision storage, bool fused, std::span<const float> a,
                           std::span<const float> b, std::span<const float> bias, std::span<float> out);

// ---- Convolution + BN + Add + ReLU (ResNet-50 res3: 3x3, 128 -> 128, 28x28, NHWC) --------------
// y = relu(bn(conv(x, w)) + z) with bn(v)[k] = v * scale[k] + shift[k] (inference BN folded into
// a per-channel scale and shift). x: N x H x W x C, w: K x R x S x C (cuDNN's NHWC filter layout),
// z and y: N x P x Q x K. The fused version folds scale into the weights (w'[k] = w[k] * scale[k])
// and uses shift as the bias: one cuDNN call. Unfused: convolution; BN; add; ReLU.
struct ConvShape {
  size_t n = 1, h = 28, w = 28, c = 128, k = 128, r = 3, s = 3;
  size_t stride = 1, pad = 1;
  size_t p() const { return (h + 2 * pad - r) / stride + 1; }
  size_t q() const { return (w + 2 * pad - s) / stride + 1; }
  size_t x_elements() const { return n * h * w * c; }
  size_t w_elements() const { return k * r * s * c; }
  size_t y_elements() const { return n * p() * q() * k; }
};
ConvShape Res3Shape(size_t batch);  // the seed's block
// flops: the convolution's 2*N*P*Q*K*R*S*C plus 4 per output (BN multiply-add, add, max); the
// seed's TOPS are the convolution's operations over the time of the version.
Costs ConvBnAddReluCosts(const ConvShape& s, Precision p, bool fused);
uint64_t ConvOps(const ConvShape& s);  // 2*N*P*Q*K*R*S*C
// w * scale[k] per output channel, rounded to the storage precision (the fused version's filter).
std::vector<float> FoldBnIntoFilter(const ConvShape& s, Precision storage, std::span<const float> w,
                                    std::span<const float> scale);
// fused = true: relu(conv(x, folded_w) + shift + z) rounded once; false: conv(x, w) rounded,
// * scale + shift rounded, + z rounded, relu. Accumulates in double.
void ConvBnAddReluReference(const ConvShape& s, Precision storage, bool fused, std::span<const float> x,
                            std::span<const float> w, std::span<const float> scale, std::span<const float> shift,
                            std::span<const float> z, std::span<float> y);

// ---- int8 (quantised) tensors -----------------------------------------------------------------
// An int8 tensor holds q[i] in [-128, 127] and ONE float scale for the whole tensor: its value is
// scale * q[i]. Host spans of int8 tensors hold q (integers stored as float; RandomTensor and
// QuantizeTo(kInt8) give such values) and their scales travel beside them (Int8Scales). Per-channel
// vectors (BN scale and shift, biases) of int8 workloads are fp32 (4 bytes per element), as
// cuBLASLt's and cuDNN's int8 epilogues take them; the costs count them so.
// Requantising: QuantizeInt8(v) rounds to nearest, ties to even, then saturates to [-128, 127];
// NaN gives 0 (what the device's cvt.rni.sat.s8.f32 does). Every int8 kernel here stores with it.
float QuantizeInt8(float v);
// The precision of per-channel vectors: fp32 for int8 workloads, the tensors' precision otherwise.
Precision ChannelPrecision(Precision p);
// q = QuantizeInt8(v * (1 / scale)) for each value: a float tensor into int8 with `scale`.
std::vector<float> QuantizeTensor(std::span<const float> values, float scale);
// The scale that maps [-max_abs, max_abs] onto [-127, 127] (max_abs / 127; 1 when max_abs <= 0).
float Int8ScaleFor(float max_abs);

// Element-wise int8: a and b are int8 tensors with scales a and b; scale and bias (per channel)
// are fp32 vectors whose real values are vector * scale_unit and vector * bias_unit (1: the vector
// holds real values); out is int8 with scale out, and so is every intermediate an unfused chain
// stores. The arithmetic, in this order on the host and the device alike: dequantise each operand
// (q * its scale, one float multiply), the op exactly as in fp32 on those real values, then
// QuantizeInt8(v * (1 / out)) with 1 / out computed in float.
struct Int8Scales {
  float a = 1, b = 1, out = 1;
  float scale_unit = 1, bias_unit = 1;
};
// ElementwiseReference with int8 storage: out gets q of the output (fused: one requantisation;
// unfused: one per stored intermediate). Tolerance: 1 step, ElementwiseTolerance(op, kInt8).
void ElementwiseInt8Reference(ElementwiseOp op, bool fused, const ElementwiseInputs& in, const Int8Scales& scales,
                              std::span<float> out);

// int8 GEMM + bias + ReLU as cuBLASLt's IMMA path computes it. A (m x k, row-major) and B given
// TRANSPOSED, bt (n x k, row-major: both operands k-contiguous, cuBLASLt's "TN"), all int8 q; the
// product is accumulated exactly in int32; alpha = scale_a * scale_b / scale_out; bias (n floats)
// is in units of the output's scale (bias_real / scale_out), as the IMMA epilogue adds it after
// alpha. fused: out = QuantizeInt8(relu(alpha * acc + bias[j])) (one epilogue). unfused: the GEMM
// stores t = QuantizeInt8(alpha * acc) (same scale as out), a bias kernel t2 = QuantizeInt8(t +
// bias[j]), then ReLU. out holds q. Costs: GemmBiasReluCosts(s, kInt8, fused) (bias 4 bytes each).
void GemmBiasReluInt8Reference(const GemmShape& s, bool fused, float alpha, std::span<const float> a,
                               std::span<const float> bt, std::span<const float> bias, std::span<float> out);
// int32 sum over l of a[i * k + l] * bt[j * k + l] (exact: |a|, |bt| <= 128 and k < 2^17).
int64_t Int8Dot(std::span<const float> a, std::span<const float> bt, size_t k, size_t i, size_t j);

// int8 Conv + BN + Add + ReLU as cuDNN's INT8 configurations compute it: x (N,H,W,C), w and the
// folded filter (K,R,S,C), z and y (N,P,Q,K) int8 q, each with its per-tensor scale; C and K
// multiples of 4; acc is the exact int32 cross-correlation. BN scale is fp32 (unitless), shift
// fp32 in units of y's scale (shift_real / scale y), so the fused call's float bias is shift as is.
//   fused (cudnnConvolutionBiasActivationForward, INT8_CONFIG, one kernel):
//     y = QuantizeInt8(relu(alpha1 * acc(x, w_folded) + alpha2 * z + shift[k])),
//     alpha1 = x * w_folded / y, alpha2 = z / y (float).
//   unfused: cudnnConvolutionForward with an int8 output (INT8_CONFIG):
//     t = QuantizeInt8(alpha * acc(x, w)), alpha = x * w / tmp; then the int8 element-wise BN
//     (Int8Scales{a = tmp, out = y, bias_unit = y}), add (a = y, b = z, out = y) and ReLU
//     (a = y, out = y) kernels, each requantising its output.
// Tolerance: 1 step of y against the matching reference.
struct ConvInt8Scales {
  float x = 1, w = 1, w_folded = 1, z = 1, y = 1, tmp = 1;
};
// w_folded[k] = QuantizeInt8((w[k] * scale_w) * bn_scale[k] * (1 / scale_w_folded)).
std::vector<float> FoldBnIntoFilterInt8(const ConvShape& s, std::span<const float> w, float scale_w,
                                        std::span<const float> bn_scale, float scale_w_folded);
void ConvBnAddReluInt8Reference(const ConvShape& s, bool fused, const ConvInt8Scales& q, std::span<const float> x,
                                std::span<const float> w, std::span<const float> bn_scale,
                                std::span<const float> shift, std::span<const float> z, std::span<float> y);

// ---- tolerances -----------------------------------------------------------------------------
// |got - want| <= atol + rtol * |want| element by element; NaN matches only NaN.
struct Tolerance { double atol = 0, rtol = 0; };
// Fused vs unfused and either vs the CPU reference. Element-wise fp32 and the fp16 chains that
// round the same way (add_relu, mul_relu) are held to the seed's 1e-6; chains whose unfused
// version rounds an intermediate get fp16's half-ulp per rounding; GEMM and convolution get a
// bound that grows with the reduction length (accumulation order differs between libraries).
Tolerance ElementwiseTolerance(ElementwiseOp op, Precision p);
Tolerance ReductionTolerance(Precision p, size_t reduction_length);
struct CompareResult {
  size_t mismatches = 0;
  size_t first_mismatch = 0;  // index, valid when mismatches > 0
  double max_abs_error = 0;
  double max_rel_error = 0;
};
CompareResult CompareOutputs(std::span<const float> got, std::span<const float> want, Tolerance tol);

// ---- inputs ---------------------------------------------------------------------------------
// Deterministic uniform values in [lo, hi) from `seed` (splitmix64), already rounded to `storage`.
std::vector<float> RandomTensor(size_t n, uint64_t seed, float lo, float hi, Precision storage);
void QuantizeTo(Precision storage, std::span<float> values);  // fp16: RoundToHalf; fp32: nothing

// ---- the mini model's CPU stages -------------------------------------------------------------
// pre: 8-bit HWC RGB images -> normalised float NHWC with `channels` channels (RGB then zeros:
// padding keeps C a multiple of 8 for tensor cores), (v / 255 - mean[c]) / std[c].
void NormalizeImages(std::span<const uint8_t> images, size_t count, size_t height, size_t width,
                     size_t channels, std::span<float> out);
// post: indices of the k largest logits of one row, largest first; ties keep the lower index.
std::vector<int> TopK(std::span<const float> logits, size_t k);

}  // namespace tg::kernels
