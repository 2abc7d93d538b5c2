// The int8 quantisation contract and the int8 CPU references (reference.h, "int8 (quantised)
// tensors"): hand arithmetic on tiny shapes, exact (the references are the device's arithmetic).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "tracegate/kernels/model_spec.h"
#include "tracegate/kernels/reference.h"

namespace tg::kernels {
namespace {

TEST(KernelsInt8, QuantizeRoundsToNearestEvenAndSaturates) {
  EXPECT_EQ(QuantizeInt8(2.5f), 2.0f);  // tie: to even
  EXPECT_EQ(QuantizeInt8(3.5f), 4.0f);
  EXPECT_EQ(QuantizeInt8(-2.5f), -2.0f);
  EXPECT_EQ(QuantizeInt8(0.49f), 0.0f);
  EXPECT_EQ(QuantizeInt8(-0.51f), -1.0f);
  EXPECT_EQ(QuantizeInt8(127.5f), 127.0f);    // rounds to 128, saturates to 127
  EXPECT_EQ(QuantizeInt8(-128.5f), -128.0f);  // tie to even: -128
  EXPECT_EQ(QuantizeInt8(-200.0f), -128.0f);
  EXPECT_EQ(QuantizeInt8(1e30f), 127.0f);
  EXPECT_EQ(QuantizeInt8(std::numeric_limits<float>::quiet_NaN()), 0.0f);  // cvt.rni.sat: NaN -> 0
}

TEST(KernelsInt8, QuantizeTensorWithAScale) {
  // scale 0.5: q = v * 2: 1 -> 2, -0.75 -> -1.5 -> -2 (tie to even), 100 -> 200 -> 127.
  const std::vector<float> v = {1.0f, -0.75f, 100.0f};
  EXPECT_EQ(QuantizeTensor(v, 0.5f), (std::vector<float>{2, -2, 127}));
  EXPECT_EQ(Int8ScaleFor(127.0f), 1.0f);
  EXPECT_EQ(Int8ScaleFor(12.7f), 12.7f / 127.0f);
  EXPECT_EQ(Int8ScaleFor(0.0f), 1.0f);
}

TEST(KernelsInt8, ElementwiseAddRelu) {
  // scales a 0.5, b 0.25, out 0.5 (1 / out = 2): real a = {2, -2, 1.5}, b = {0.5, 0.5, 0.25};
  // sums 2.5, -1.5, 1.75; relu 2.5, 0, 1.75; * 2: 5, 0, 3.5 -> 4 (tie to even).
  // Unfused: the sum is stored (q 5, -3, 4 -> real 2.5, -1.5, 2), relu, requantised: 5, 0, 4.
  const std::vector<float> a = {4, -4, 3}, b = {2, 2, 1};
  ElementwiseInputs in{a, b, {}, {}, 1};
  Int8Scales q;
  q.a = 0.5f, q.b = 0.25f, q.out = 0.5f;
  std::vector<float> out(3);
  ElementwiseInt8Reference(ElementwiseOp::kAddRelu, true, in, q, out);
  EXPECT_EQ(out, (std::vector<float>{5, 0, 4}));
  ElementwiseInt8Reference(ElementwiseOp::kAddRelu, false, in, q, out);
  EXPECT_EQ(out, (std::vector<float>{5, 0, 4}));
}

TEST(KernelsInt8, ElementwiseMulReluSaturates) {
  // scales 1: -3 * 2 = -6 -> 0; 70 * 2 = 140 -> 127; 10 * 2 = 20.
  const std::vector<float> a = {-3, 70, 10};
  std::vector<float> out(3);
  ElementwiseInt8Reference(ElementwiseOp::kMulRelu, true, {a, {}, {}, {}, 1}, Int8Scales{}, out);
  EXPECT_EQ(out, (std::vector<float>{0, 127, 20}));
}

TEST(KernelsInt8, ElementwiseScaleBiasReluUnfusedRoundsEachIntermediate) {
  // scales 1, per-channel scale 0.5 and bias 0.25 (real values, units 1); x = {3, 5}:
  // fused: 3 * 0.5 + 0.25 = 1.75 -> 2; 5 * 0.5 + 0.25 = 2.75 -> 3.
  // unfused: x * 0.5 stored: 1.5 -> 2, 2.5 -> 2 (tie to even); + 0.25: 2.25 -> 2, 2.25 -> 2.
  const std::vector<float> a = {3, 5}, scale = {0.5f}, bias = {0.25f};
  std::vector<float> out(2);
  ElementwiseInt8Reference(ElementwiseOp::kScaleBiasRelu, true, {a, {}, scale, bias, 1}, Int8Scales{}, out);
  EXPECT_EQ(out, (std::vector<float>{2, 3}));
  ElementwiseInt8Reference(ElementwiseOp::kScaleBiasRelu, false, {a, {}, scale, bias, 1}, Int8Scales{}, out);
  EXPECT_EQ(out, (std::vector<float>{2, 2}));  // one step from fused: ElementwiseTolerance(int8)
  EXPECT_EQ(ElementwiseTolerance(ElementwiseOp::kScaleBiasRelu, Precision::kInt8).atol, 1.0);
}

TEST(KernelsInt8, ElementwiseBiasGeluInRealUnits) {
  // a 10 with scale 0.1: 0.1f * 10 rounds to 1.0f; bias 0; gelu(1) = 0.8413; out scale 0.01:
  // 0.8413 * 100 = 84.13 -> 84. bias_unit 0.5 with bias vector 2: x = 1 + 1 = 2, gelu(2) =
  // 1.9545 -> 195.
  const std::vector<float> a = {10, 10}, bias = {0.0f, 2.0f};
  Int8Scales q;
  q.a = 0.1f, q.out = 0.01f, q.bias_unit = 0.5f;
  std::vector<float> out(2);
  ElementwiseInt8Reference(ElementwiseOp::kBiasGelu, true, {a, {}, {}, bias, 2}, q, out);
  EXPECT_EQ(out[0], 84.0f);
  EXPECT_EQ(out[1], 127.0f);  // 195 saturates
}

TEST(KernelsInt8, GemmBiasReluFusedAndUnfused) {
  // m 1, n 2, k 4; a = {1, 2, 3, 4}; bt rows {1, 1, 1, 1} and {-1, 0, 2, -3}:
  // acc = 10 and -1 + 0 + 6 - 12 = -7. alpha = 0.5 * 1 / 2 = 0.25: 2.5 and -1.75.
  // bias (output units) {0.5, 3}: fused relu(3.0) -> 3, relu(1.25) -> 1.
  // unfused: GEMM stores 2.5 -> 2 and -1.75 -> -2; + bias: 2.5 -> 2, 1 -> 1; relu: 2, 1.
  const GemmShape s{1, 2, 4};
  const std::vector<float> a = {1, 2, 3, 4}, bt = {1, 1, 1, 1, -1, 0, 2, -3}, bias = {0.5f, 3.0f};
  EXPECT_EQ(Int8Dot(a, bt, 4, 0, 0), 10);
  EXPECT_EQ(Int8Dot(a, bt, 4, 0, 1), -7);
  std::vector<float> out(2);
  GemmBiasReluInt8Reference(s, true, 0.5f * 1.0f / 2.0f, a, bt, bias, out);
  EXPECT_EQ(out, (std::vector<float>{3, 1}));
  GemmBiasReluInt8Reference(s, false, 0.25f, a, bt, bias, out);
  EXPECT_EQ(out, (std::vector<float>{2, 1}));
}

TEST(KernelsInt8, GemmAccumulatesExactlyAndSaturates) {
  // k 8 of -128 * -128 = 16384 each: acc 131072 (exact in int32); alpha 1: saturates to 127;
  // relu of a negative acc is 0.
  const GemmShape s{1, 2, 8};
  std::vector<float> a(8, -128), bt(16, -128);
  for (size_t l = 8; l < 16; ++l) bt[l] = 127;  // row 1: -128 * 127 * 8 = -130048
  EXPECT_EQ(Int8Dot(a, bt, 8, 0, 0), 131072);
  EXPECT_EQ(Int8Dot(a, bt, 8, 0, 1), -130048);
  std::vector<float> out(2);
  GemmBiasReluInt8Reference(s, true, 1.0f, a, bt, std::vector<float>{0, 0}, out);
  EXPECT_EQ(out, (std::vector<float>{127, 0}));
}

TEST(KernelsInt8, ConvBnAddReluFusedAndUnfused) {
  // One output: 1x1 input, C 4, K 1, 1x1 filter. x = {1, 2, 3, 4}, w = {1, -1, 2, 0}: acc 5.
  // Scales x 0.5, w 0.5, w_folded 0.25, tmp 0.5, z 1, y 1; BN scale 2, shift 0.25 (y units), z -1.
  // Folded: w * 0.5 * 2 * (1 / 0.25) = w * 4 = {4, -4, 8, 0}; acc 4 - 8 + 24 = 20;
  //   fused: alpha1 = 0.5 * 0.25 / 1 = 0.125: 2.5 + 1 * -1 + 0.25 = 1.75 -> 2.
  // Unfused: alpha = 0.5 * 0.5 / 0.5 = 0.5: t = 2.5 -> 2; BN (2 * 0.5 * 2 + 0.25 * 1) = 2.25 -> 2;
  //   add 2 * 1 + -1 * 1 = 1; relu 1.
  ConvShape s;
  s.n = 1, s.h = 1, s.w = 1, s.c = 4, s.k = 1, s.r = 1, s.s = 1, s.pad = 0;
  ConvInt8Scales q;
  q.x = 0.5f, q.w = 0.5f, q.w_folded = 0.25f, q.tmp = 0.5f, q.z = 1, q.y = 1;
  const std::vector<float> x = {1, 2, 3, 4}, w = {1, -1, 2, 0}, bn = {2.0f}, shift = {0.25f}, z = {-1};
  EXPECT_EQ(FoldBnIntoFilterInt8(s, w, q.w, bn, q.w_folded), (std::vector<float>{4, -4, 8, 0}));
  std::vector<float> y(1);
  ConvBnAddReluInt8Reference(s, true, q, x, w, bn, shift, z, y);
  EXPECT_EQ(y[0], 2.0f);
  ConvBnAddReluInt8Reference(s, false, q, x, w, bn, shift, z, y);
  EXPECT_EQ(y[0], 1.0f);
}

TEST(KernelsInt8, ConvPaddingAndNegativeOutputs) {
  // Input 1 x 2 x 1 x 4 (rows x0 = {1, 1, 1, 1}, x1 = {2, 0, 0, 0}), filter 3 x 1 (rows w0 = {9,
  // 9, 9, 9}, w1 = {1, 1, 1, 1}, w2 = {-3, 0, 0, 0}), pad 1: P = (2 + 2 - 3) + 1 = 2, Q = (1 + 2 -
  // 1) + 1 = 3. Columns q = 0 and 2 see only padding: 0. Column 1: row p = 0 uses w1 . x0 + w2 .
  // x1 = 4 - 6 = -2 (w0 on padding); p = 1 uses w0 . x0 + w1 . x1 = 36 + 2 = 38 (w2 on padding).
  // Scales 1, BN 1, shift 0, z 0: relu -> 0 and 38, fused and unfused alike (integers throughout).
  ConvShape s;
  s.n = 1, s.h = 2, s.w = 1, s.c = 4, s.k = 1, s.r = 3, s.s = 1, s.pad = 1;
  ASSERT_EQ(s.p(), 2u);
  ASSERT_EQ(s.q(), 3u);
  const std::vector<float> x = {1, 1, 1, 1, 2, 0, 0, 0};
  const std::vector<float> w = {9, 9, 9, 9, 1, 1, 1, 1, -3, 0, 0, 0};
  const std::vector<float> bn = {1.0f}, shift = {0.0f}, z(6, 0.0f);
  std::vector<float> y(6);
  ConvBnAddReluInt8Reference(s, true, ConvInt8Scales{}, x, w, bn, shift, z, y);
  EXPECT_EQ(y, (std::vector<float>{0, 0, 0, 0, 38, 0}));
  ConvBnAddReluInt8Reference(s, false, ConvInt8Scales{}, x, w, bn, shift, z, y);
  EXPECT_EQ(y, (std::vector<float>{0, 0, 0, 0, 38, 0}));
}

TEST(KernelsInt8, Costs) {
  // Element-wise scale_bias_relu int8, n 1000, c 10: tensors 1 byte, vectors fp32:
  // fused 2n * 1 + 2c * 4 = 2080; unfused 6n * 1 + 2c * 4 = 6080.
  EXPECT_EQ(ElementwiseCosts(ElementwiseOp::kScaleBiasRelu, Precision::kInt8, true, 1000, 10).bytes, 2080u);
  EXPECT_EQ(ElementwiseCosts(ElementwiseOp::kScaleBiasRelu, Precision::kInt8, false, 1000, 10).bytes, 6080u);
  // GEMM 2 x 3 x 4 int8: fused mk 8 + kn 12 + mn 6 + bias 3 * 4 = 38; unfused 8 + 12 + 5 * 6 + 12
  // = 62; FLOPs 2 * 2 * 3 * 4 + 2 * 6 = 60.
  const Costs g_f = GemmBiasReluCosts({2, 3, 4}, Precision::kInt8, true);
  const Costs g_u = GemmBiasReluCosts({2, 3, 4}, Precision::kInt8, false);
  EXPECT_EQ(g_f.bytes, 38u);
  EXPECT_EQ(g_u.bytes, 62u);
  EXPECT_EQ(g_f.flops, 60u);
  EXPECT_EQ(g_u.kernels, 3);
  // res3 batch 1 int8: X = Y = 28 * 28 * 128 = 100352, W = 128 * 9 * 128 = 147456, K = 128:
  // fused X + W + 2Y + K * 4 = 449024; unfused X + W + 8Y + 2K * 4 = 1051648.
  EXPECT_EQ(ConvBnAddReluCosts(Res3Shape(1), Precision::kInt8, true).bytes, 449024u);
  EXPECT_EQ(ConvBnAddReluCosts(Res3Shape(1), Precision::kInt8, false).bytes, 1051648u);
}

TEST(KernelsInt8, ModelStageCosts) {
  // res3 int8, batch 1, fused: 4 blocks of 449024 bytes (KernelsInt8.Costs) = 1796096, plus the
  // transition (1x1 stride 2, 64 -> 128, 56x56 -> 28x28): X = 56 * 56 * 64 = 200704, W = 128 * 64
  // = 8192, Y = 28 * 28 * 128 = 100352, K = 128: X + W + Y (no residual read) + K * 4 = 309760.
  const StageSpec res3 = ModelStages(224)[1];
  EXPECT_EQ(StageCosts(res3, 1, Precision::kInt8, true).bytes, 1796096u + 309760u);
}

}  // namespace
}  // namespace tg::kernels
