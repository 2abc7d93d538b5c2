#include "tracegate/kernels/reference.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "tracegate/kernels/half.h"

namespace tg::kernels {
namespace {

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// ---- binary16 ---------------------------------------------------------------------------------

TEST(KernelsHalf, KnownBitPatterns) {
  EXPECT_EQ(FloatToHalfBits(1.0f), 0x3C00);
  EXPECT_EQ(FloatToHalfBits(-2.0f), 0xC000);
  EXPECT_EQ(FloatToHalfBits(65504.0f), 0x7BFF);               // the largest finite half
  EXPECT_EQ(FloatToHalfBits(std::ldexp(1.0f, -14)), 0x0400);  // the smallest normal
  EXPECT_EQ(FloatToHalfBits(std::ldexp(1.0f, -24)), 0x0001);  // the smallest subnormal
  EXPECT_EQ(FloatToHalfBits(1023 * std::ldexp(1.0f, -24)), 0x03FF);
  EXPECT_EQ(FloatToHalfBits(0.1f), 0x2E66);        // 0.1 = 1.6 * 2^-4: exponent 11, mantissa 0.6 * 1024 = 614.4 -> 614
  EXPECT_EQ(RoundToHalf(0.1f), 0.0999755859375f);  // 1638 / 16384
  EXPECT_EQ(HalfBitsToFloat(0x3C00), 1.0f);
  EXPECT_EQ(HalfBitsToFloat(0x7BFF), 65504.0f);
  EXPECT_EQ(HalfBitsToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(HalfBitsToFloat(0x03FF), 1023 * std::ldexp(1.0f, -24));
  EXPECT_EQ(HalfBitsToFloat(0xC000), -2.0f);
}

TEST(KernelsHalf, OverflowGoesToInfinity) {
  // 65520 is halfway between 65504 (odd mantissa 0x3FF) and 2^16: ties to even = infinity.
  EXPECT_EQ(FloatToHalfBits(65520.0f), 0x7C00);
  EXPECT_EQ(FloatToHalfBits(-65520.0f), 0xFC00);
  EXPECT_EQ(FloatToHalfBits(std::nextafter(65520.0f, 0.0f)), 0x7BFF);
  EXPECT_EQ(FloatToHalfBits(1e10f), 0x7C00);
  EXPECT_EQ(FloatToHalfBits(kInf), 0x7C00);
  EXPECT_EQ(FloatToHalfBits(-kInf), 0xFC00);
  EXPECT_EQ(HalfBitsToFloat(0x7C00), kInf);
  EXPECT_EQ(HalfBitsToFloat(0xFC00), -kInf);
}

TEST(KernelsHalf, TiesRoundToEven) {
  const float ulp1 = std::ldexp(1.0f, -10);                           // the spacing of halves in [1, 2)
  EXPECT_EQ(FloatToHalfBits(1.0f + ulp1 / 2), 0x3C00);                // between 0x3C00 and 0x3C01: even 0x3C00
  EXPECT_EQ(FloatToHalfBits(1.0f + 3 * ulp1 / 2), 0x3C02);            // between 0x3C01 and 0x3C02: even 0x3C02
  EXPECT_EQ(FloatToHalfBits(1.0f + ulp1 / 2 + ulp1 / 1024), 0x3C01);  // just above the tie
  EXPECT_EQ(FloatToHalfBits(2049.0f), 0x6800);                        // 2048 and 2050: even 2048
  EXPECT_EQ(FloatToHalfBits(2051.0f), 0x6802);                        // 2050 and 2052: even 2052
  // Subnormals: the unit is 2^-24; 2^-25 is halfway between 0 and 0x0001.
  const float sub = std::ldexp(1.0f, -25);
  EXPECT_EQ(FloatToHalfBits(sub), 0x0000);
  EXPECT_EQ(FloatToHalfBits(1.5f * sub), 0x0001);
  EXPECT_EQ(FloatToHalfBits(3 * sub), 0x0002);  // 1.5 units: even 2
  EXPECT_EQ(FloatToHalfBits(5 * sub), 0x0002);  // 2.5 units: even 2
  EXPECT_EQ(FloatToHalfBits(std::ldexp(1.0f, -30)), 0x0000);
  // 1023.5 units is halfway between 0x03FF and the smallest normal 0x0400 (even).
  EXPECT_EQ(FloatToHalfBits(2047 * sub), 0x0400);
  EXPECT_EQ(FloatToHalfBits(-(1.5f * sub)), 0x8001);
}

TEST(KernelsHalf, SignedZeroAndNan) {
  EXPECT_EQ(FloatToHalfBits(0.0f), 0x0000);
  EXPECT_EQ(FloatToHalfBits(-0.0f), 0x8000);
  EXPECT_TRUE(std::signbit(HalfBitsToFloat(0x8000)));
  EXPECT_EQ(HalfBitsToFloat(0x8000), 0.0f);
  EXPECT_EQ(FloatToHalfBits(kNan), 0x7FFF);  // CUDA's canonical NaN
  EXPECT_EQ(FloatToHalfBits(-kNan), 0x7FFF);
  EXPECT_TRUE(std::isnan(HalfBitsToFloat(0x7E00)));
  EXPECT_TRUE(std::isnan(HalfBitsToFloat(0xFC01)));
  EXPECT_TRUE(std::isnan(RoundToHalf(kNan)));
}

TEST(KernelsHalf, EveryHalfRoundTrips) {
  for (uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
    const float f = HalfBitsToFloat(static_cast<uint16_t>(bits));
    if (std::isnan(f)) continue;
    ASSERT_EQ(FloatToHalfBits(f), bits) << std::hex << bits;
  }
}

// ---- names --------------------------------------------------------------------------------------

TEST(KernelsReference, NamesParseBack) {
  for (Precision p : {Precision::kFp32, Precision::kFp16, Precision::kInt8})
    EXPECT_EQ(ParsePrecision(PrecisionName(p)), p);
  EXPECT_FALSE(ParsePrecision("bf16").has_value());
  EXPECT_EQ(ElementBytes(Precision::kFp32), 4u);
  EXPECT_EQ(ElementBytes(Precision::kFp16), 2u);
  EXPECT_EQ(ElementBytes(Precision::kInt8), 1u);
  for (ElementwiseOp op : kAllElementwiseOps) EXPECT_EQ(ParseElementwiseOp(Info(op).name), op);
  EXPECT_FALSE(ParseElementwiseOp("gelu").has_value());
  EXPECT_EQ(Info(ElementwiseOp::kScaleBiasRelu).unfused_kernels, 3);
  EXPECT_EQ(Info(ElementwiseOp::kAddRelu).tensor_inputs, 2);
  EXPECT_EQ(Info(ElementwiseOp::kBiasGelu).channel_inputs, 1);
}

// ---- element-wise references ------------------------------------------------------------------

std::vector<float> RunElementwise(ElementwiseOp op, Precision p, bool fused, const ElementwiseInputs& in, size_t n) {
  std::vector<float> out(n);
  ElementwiseReference(op, p, fused, in, out);
  return out;
}

TEST(KernelsReference, AddReluAndMulRelu) {
  const std::vector<float> a = {1, -2, 0.5f, 3}, b = {2, 1, -0.75f, -3};
  ElementwiseInputs in;
  in.a = a;
  in.b = b;
  // sums 3, -1, -0.25, 0 -> relu 3, 0, 0, 0
  for (bool fused : {true, false}) {
    EXPECT_EQ(RunElementwise(ElementwiseOp::kAddRelu, Precision::kFp32, fused, in, 4),
              (std::vector<float>{3, 0, 0, 0}));
  }
  // x * 2 of 1, -2, 0.5, 3 = 2, -4, 1, 6 -> 2, 0, 1, 6
  EXPECT_EQ(RunElementwise(ElementwiseOp::kMulRelu, Precision::kFp16, false, in, 4), (std::vector<float>{2, 0, 1, 6}));
  // fp16 overflow: 40000 * 2 = 80000 > 65520 -> inf
  const std::vector<float> big = {40000};
  in.a = big;
  EXPECT_EQ(RunElementwise(ElementwiseOp::kMulRelu, Precision::kFp16, true, in, 1)[0], kInf);
}

TEST(KernelsReference, ScaleBiasReluUsesChannelOfEachElement) {
  const std::vector<float> x = {1, 8, -1, 4}, scale = {2, 0.5f}, bias = {1, -3};
  ElementwiseInputs in;
  in.a = x;
  in.scale = scale;
  in.bias = bias;
  in.channels = 2;
  // c0: 1*2+1 = 3; c1: 8*0.5-3 = 1; c0: -1*2+1 = -1 -> 0; c1: 4*0.5-3 = -1 -> 0
  for (bool fused : {true, false}) {
    EXPECT_EQ(RunElementwise(ElementwiseOp::kScaleBiasRelu, Precision::kFp16, fused, in, 4),
              (std::vector<float>{3, 1, 0, 0}));
  }
}

TEST(KernelsReference, BiasGeluErfForm) {
  // gelu(1) = 0.5 * (1 + erf(1/sqrt 2)) = 0.5 * 1.682689492 = 0.841344746; gelu(-1) = -0.158655254.
  EXPECT_NEAR(Gelu(1.0f), 0.841344746, 1e-6);
  EXPECT_NEAR(Gelu(-1.0f), -0.158655254, 1e-6);
  EXPECT_EQ(Gelu(0.0f), 0.0f);
  const std::vector<float> x = {0.5f, -0.5f}, bias = {0.5f};
  ElementwiseInputs in;
  in.a = x;
  in.bias = bias;
  const std::vector<float> out = RunElementwise(ElementwiseOp::kBiasGelu, Precision::kFp32, true, in, 2);
  EXPECT_NEAR(out[0], 0.841344746, 1e-6);  // gelu(0.5 + 0.5)
  EXPECT_EQ(out[1], 0.0f);                 // gelu(-0.5 + 0.5)
}

TEST(KernelsReference, ScaleBiasReluFusedRoundsOnceInFp16) {
  // x = 45, scale = 45.5, bias = -2047 (all exact in fp16). x * scale = 2047.5, halfway between
  // the halves 2047 and 2048: the unfused chain stores 2048 (even), then 2048 - 2047 = 1; the fused
  // kernel keeps 2047.5 in float: 2047.5 - 2047 = 0.5.
  const std::vector<float> x = {45}, scale = {45.5f}, bias = {-2047};
  ElementwiseInputs in;
  in.a = x;
  in.scale = scale;
  in.bias = bias;
  EXPECT_EQ(RunElementwise(ElementwiseOp::kScaleBiasRelu, Precision::kFp16, true, in, 1)[0], 0.5f);
  EXPECT_EQ(RunElementwise(ElementwiseOp::kScaleBiasRelu, Precision::kFp16, false, in, 1)[0], 1.0f);
  // In fp32 both versions are the same arithmetic.
  EXPECT_EQ(RunElementwise(ElementwiseOp::kScaleBiasRelu, Precision::kFp32, false, in, 1)[0], 0.5f);
}

TEST(KernelsReference, BiasGeluFusedRoundsOnceInFp16) {
  // x + bias = 1 + 2^-11 is halfway between the halves 1 and 1 + 2^-10: the unfused chain stores 1.
  const std::vector<float> x = {1}, bias = {std::ldexp(1.0f, -11)};
  ElementwiseInputs in;
  in.a = x;
  in.bias = bias;
  const float fused = RunElementwise(ElementwiseOp::kBiasGelu, Precision::kFp16, true, in, 1)[0];
  const float unfused = RunElementwise(ElementwiseOp::kBiasGelu, Precision::kFp16, false, in, 1)[0];
  // gelu(1) = 0.841345 = 1723.07 * 2^-11 -> 1723 * 2^-11; gelu(1 + 2^-11) = 0.841345 + 1.0833 * 2^-11
  // = 1724.16 * 2^-11 -> 1724 * 2^-11: one ulp apart, inside the fp16 tolerance.
  EXPECT_EQ(unfused, 1723 * std::ldexp(1.0f, -11));
  EXPECT_EQ(fused, 1724 * std::ldexp(1.0f, -11));
  const std::vector<float> got = {fused}, want = {unfused};
  EXPECT_EQ(CompareOutputs(got, want, ElementwiseTolerance(ElementwiseOp::kBiasGelu, Precision::kFp16)).mismatches, 0u);
}

// Fused and unfused agree within the tolerance on random inputs of the documented ranges, and a
// chain that forgets its bias or its ReLU does not.
TEST(KernelsReference, ElementwiseTolerancesHoldOnRandomInputs) {
  constexpr size_t kN = 4096, kChannels = 64;
  for (Precision p : {Precision::kFp32, Precision::kFp16}) {
    const std::vector<float> a = RandomTensor(kN, 1, -1, 1, p), b = RandomTensor(kN, 2, -1, 1, p);
    const std::vector<float> scale = RandomTensor(kChannels, 3, 0.5f, 2, p),
                             bias = RandomTensor(kChannels, 4, -1, 1, p);
    const std::vector<float> zeros(kChannels, 0.0f);
    ElementwiseInputs in{a, b, scale, bias, kChannels};
    for (ElementwiseOp op : kAllElementwiseOps) {
      const Tolerance tol = ElementwiseTolerance(op, p);
      const std::vector<float> fused = RunElementwise(op, p, true, in, kN);
      EXPECT_EQ(CompareOutputs(fused, RunElementwise(op, p, false, in, kN), tol).mismatches, 0u) << Info(op).name;
      if (Info(op).channel_inputs > 0) {
        ElementwiseInputs no_bias = in;
        no_bias.bias = zeros;
        EXPECT_GT(CompareOutputs(RunElementwise(op, p, true, no_bias, kN), fused, tol).mismatches, 0u);
      }
    }
    // relu(a + b) against a + b: every negative sum is a mismatch.
    std::vector<float> no_relu(kN);
    for (size_t i = 0; i < kN; ++i) no_relu[i] = a[i] + b[i];
    QuantizeTo(p, no_relu);
    EXPECT_GT(CompareOutputs(no_relu, RunElementwise(ElementwiseOp::kAddRelu, p, true, in, kN),
                             ElementwiseTolerance(ElementwiseOp::kAddRelu, p))
                  .mismatches,
              kN / 4);
  }
}

// ---- costs --------------------------------------------------------------------------------------

void ExpectCosts(const Costs& c, uint64_t bytes, uint64_t flops, int kernels) {
  EXPECT_EQ(c.bytes, bytes);
  EXPECT_EQ(c.flops, flops);
  EXPECT_EQ(c.kernels, kernels);
}

TEST(KernelsCosts, Elementwise) {
  constexpr size_t n = 1000, c = 10;
  // add_relu fp32: fused reads a, b, writes out: 3n * 4; unfused + tmp written and read: 5n * 4.
  ExpectCosts(ElementwiseCosts(ElementwiseOp::kAddRelu, Precision::kFp32, true, n, c), 12000, 2000, 1);
  ExpectCosts(ElementwiseCosts(ElementwiseOp::kAddRelu, Precision::kFp32, false, n, c), 20000, 2000, 2);
  ExpectCosts(ElementwiseCosts(ElementwiseOp::kAddRelu, Precision::kInt8, true, n, c), 3000, 2000, 1);
  // mul_relu fp16: 2n * 2 and 4n * 2; 2 FLOPs per element.
  ExpectCosts(ElementwiseCosts(ElementwiseOp::kMulRelu, Precision::kFp16, true, n, c), 4000, 2000, 1);
  ExpectCosts(ElementwiseCosts(ElementwiseOp::kMulRelu, Precision::kFp16, false, n, c), 8000, 2000, 2);
  // scale_bias_relu fp16: (2n + 2c) * 2 = 4040; (6n + 2c) * 2 = 12040; 3 FLOPs per element.
  ExpectCosts(ElementwiseCosts(ElementwiseOp::kScaleBiasRelu, Precision::kFp16, true, n, c), 4040, 3000, 1);
  ExpectCosts(ElementwiseCosts(ElementwiseOp::kScaleBiasRelu, Precision::kFp16, false, n, c), 12040, 3000, 3);
  // bias_gelu fp32: (2n + c) * 4 = 8040; (4n + c) * 4 = 16040; 6 FLOPs per element.
  ExpectCosts(ElementwiseCosts(ElementwiseOp::kBiasGelu, Precision::kFp32, true, n, c), 8040, 6000, 1);
  ExpectCosts(ElementwiseCosts(ElementwiseOp::kBiasGelu, Precision::kFp32, false, n, c), 16040, 6000, 2);
}

TEST(KernelsCosts, GemmBiasRelu) {
  const GemmShape s{64, 32, 16};  // m, n, k
  // fused: mk 1024 + kn 512 + bias 32 + mn 2048 = 3616 halves; unfused: 1024 + 512 + 32 + 5 * 2048
  // = 11808. FLOPs: 2 * 64 * 32 * 16 = 65536 + 2 * 2048 = 69632.
  ExpectCosts(GemmBiasReluCosts(s, Precision::kFp16, true), 7232, 69632, 1);
  ExpectCosts(GemmBiasReluCosts(s, Precision::kFp16, false), 23616, 69632, 3);
  ExpectCosts(GemmBiasReluCosts(s, Precision::kFp32, true), 14464, 69632, 1);
}

TEST(KernelsCosts, ConvBnAddReluRes3) {
  const ConvShape s = Res3Shape(1);
  EXPECT_EQ(s.p(), 28u);
  EXPECT_EQ(s.q(), 28u);
  // X = Y = 28 * 28 * 128 = 100352, W = 128 * 3 * 3 * 128 = 147456, K = 128.
  // ops: 2 * 784 * 147456 = 231211008; FLOPs + 4Y = 231612416.
  EXPECT_EQ(ConvOps(s), 231211008u);
  EXPECT_EQ(ConvOps(Res3Shape(2048)), 473520144384u);  // 2048 times that
  // fused: X + W + K + 2Y = 448640 halves; unfused: X + W + 8Y + 2K = 1050880 halves.
  ExpectCosts(ConvBnAddReluCosts(s, Precision::kFp16, true), 897280, 231612416, 1);
  ExpectCosts(ConvBnAddReluCosts(s, Precision::kFp16, false), 2101760, 231612416, 4);
}

// ---- GEMM and convolution references ------------------------------------------------------------

TEST(KernelsReference, GemmBiasReluByHand) {
  const GemmShape s{2, 2, 3};
  const std::vector<float> a = {1, 2, 3, 4, 5, 6};   // 2 x 3
  const std::vector<float> b = {1, -1, 0, 1, 2, 0};  // 3 x 2
  const std::vector<float> bias = {-8, 0.5f};
  // A*B = [1+0+6, -1+2+0; 4+0+12, -4+5+0] = [7, 1; 16, 1]; + bias = [-1, 1.5; 8, 1.5]; relu.
  for (Precision p : {Precision::kFp32, Precision::kFp16}) {
    for (bool fused : {true, false}) {
      std::vector<float> out(4);
      GemmBiasReluReference(s, p, fused, a, b, bias, out);
      EXPECT_EQ(out, (std::vector<float>{0, 1.5f, 8, 1.5f}));
    }
  }
}

TEST(KernelsReference, GemmUnfusedRoundsTheProductInFp16) {
  const GemmShape s{1, 1, 2};
  const std::vector<float> a = {2048, 1}, b = {1, 1}, bias = {1};
  // A*B = 2049; fused: 2049 + 1 = 2050 (a half); unfused: 2049 -> 2048 (tie to even), + 1 = 2049 -> 2048.
  std::vector<float> out(1);
  GemmBiasReluReference(s, Precision::kFp16, true, a, b, bias, out);
  EXPECT_EQ(out[0], 2050.0f);
  GemmBiasReluReference(s, Precision::kFp16, false, a, b, bias, out);
  EXPECT_EQ(out[0], 2048.0f);
}

ConvShape TinyConv() {
  ConvShape s;  // 1 x 3 x 3 x 1 input, one 3x3 filter, pad 1: 3 x 3 output
  s.n = 1;
  s.h = s.w = 3;
  s.c = s.k = 1;
  return s;
}

std::vector<float> RunConv(const ConvShape& s, Precision p, bool fused, const std::vector<float>& x,
                           const std::vector<float>& w, const std::vector<float>& scale,
                           const std::vector<float>& shift, const std::vector<float>& z) {
  std::vector<float> y(s.y_elements());
  ConvBnAddReluReference(s, p, fused, x, w, scale, shift, z, y);
  return y;
}

TEST(KernelsReference, ConvBnAddReluByHand) {
  const ConvShape s = TinyConv();
  const std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  const std::vector<float> ones(9, 1.0f), z(9, 1.0f);
  // Sums of each 3x3 neighbourhood: 12 21 16 / 27 45 33 / 24 39 28; * 0.5 - 10:
  // -4 0.5 -2 / 3.5 12.5 6.5 / 2 9.5 4; + 1: -3 1.5 -1 / 4.5 13.5 7.5 / 3 10.5 5; relu.
  const std::vector<float> want = {0, 1.5f, 0, 4.5f, 13.5f, 7.5f, 3, 10.5f, 5};
  for (Precision p : {Precision::kFp32, Precision::kFp16}) {
    for (bool fused : {true, false}) EXPECT_EQ(RunConv(s, p, fused, x, ones, {0.5f}, {-10}, z), want);
  }
  // Cross-correlation, not a flipped convolution: the only weight at (r 1, s 2) gives y = x[p][q + 1].
  std::vector<float> shift_right(9, 0.0f);
  shift_right[1 * 3 + 2] = 1;
  EXPECT_EQ(RunConv(s, Precision::kFp32, true, x, shift_right, {1}, {0}, std::vector<float>(9, 0.0f)),
            (std::vector<float>{2, 3, 0, 5, 6, 0, 8, 9, 0}));
}

TEST(KernelsReference, ConvStrideAndChannelsNhwc) {
  ConvShape s;  // 2x2 input of 2 channels, 1x1 stride-2 filter to 2 channels: 1x1 output
  s.n = 1;
  s.h = s.w = 2;
  s.c = s.k = 2;
  s.r = s.s = 1;
  s.stride = 2;
  s.pad = 0;
  ASSERT_EQ(s.y_elements(), 2u);
  const std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8};  // only pixel (0,0) = [1, 2] is read
  const std::vector<float> w = {1, 1, 2, -1};             // k0 = [1, 1], k1 = [2, -1]
  // k0: 1 + 2 = 3; k1: 2 - 2 = 0; + z [0, 0.5]
  EXPECT_EQ(RunConv(s, Precision::kFp32, false, x, w, {1, 1}, {0, 0}, {0, 0.5f}), (std::vector<float>{3, 0.5f}));
}

TEST(KernelsReference, ConvFusedRoundsOnceInFp16) {
  ConvShape s;  // one pixel, one channel, 1x1 filter
  s.n = s.h = s.w = s.c = s.k = s.r = s.s = 1;
  s.pad = 0;
  // conv = 45 * 45.5 = 2047.5: unfused stores 2048, BN 2048 - 2047 = 1; fused 2047.5 - 2047 = 0.5.
  EXPECT_EQ(RunConv(s, Precision::kFp16, true, {45}, {45.5f}, {1}, {-2047}, {0}), (std::vector<float>{0.5f}));
  EXPECT_EQ(RunConv(s, Precision::kFp16, false, {45}, {45.5f}, {1}, {-2047}, {0}), (std::vector<float>{1}));
}

TEST(KernelsReference, FoldBnIntoFilter) {
  ConvShape s;
  s.k = s.c = 2;
  s.r = s.s = 1;
  const std::vector<float> w = {1, 2, 3, 4}, scale = {0.5f, 3};
  // filter k0 = [1, 2] * 0.5, k1 = [3, 4] * 3
  EXPECT_EQ(FoldBnIntoFilter(s, Precision::kFp32, w, scale), (std::vector<float>{0.5f, 1, 9, 12}));
  ConvShape one = s;
  one.k = one.c = 1;
  EXPECT_EQ(FoldBnIntoFilter(one, Precision::kFp16, std::vector<float>{1}, std::vector<float>{0.1f}),
            (std::vector<float>{0.0999755859375f}));  // 0.1 stored as a half
}

TEST(KernelsReference, ReductionTolerancesHoldOnRandomInputs) {
  for (Precision p : {Precision::kFp32, Precision::kFp16}) {
    const GemmShape g{16, 16, 256};
    const std::vector<float> a = RandomTensor(g.m * g.k, 5, -1, 1, p), b = RandomTensor(g.k * g.n, 6, -1, 1, p);
    const std::vector<float> bias = RandomTensor(g.n, 7, -1, 1, p), zero_bias(g.n, 0.0f);
    std::vector<float> fused(g.m * g.n), unfused(g.m * g.n), no_bias(g.m * g.n);
    GemmBiasReluReference(g, p, true, a, b, bias, fused);
    GemmBiasReluReference(g, p, false, a, b, bias, unfused);
    GemmBiasReluReference(g, p, true, a, b, zero_bias, no_bias);
    const Tolerance tol = ReductionTolerance(p, g.k);
    EXPECT_EQ(CompareOutputs(fused, unfused, tol).mismatches, 0u);
    EXPECT_GT(CompareOutputs(no_bias, fused, tol).mismatches, 0u);

    ConvShape c;
    c.h = c.w = 6;
    c.c = c.k = 16;
    const std::vector<float> x = RandomTensor(c.x_elements(), 8, -1, 1, p),
                             w = RandomTensor(c.w_elements(), 9, -1, 1, p);
    const std::vector<float> scale = RandomTensor(c.k, 10, 0.5f, 1.5f, p), shift = RandomTensor(c.k, 11, -1, 1, p);
    const std::vector<float> z = RandomTensor(c.y_elements(), 12, -1, 1, p);
    const Tolerance conv_tol = ReductionTolerance(p, c.r * c.s * c.c);
    const std::vector<float> conv_fused = RunConv(c, p, true, x, w, scale, shift, z);
    EXPECT_EQ(CompareOutputs(conv_fused, RunConv(c, p, false, x, w, scale, shift, z), conv_tol).mismatches, 0u);
    EXPECT_GT(CompareOutputs(RunConv(c, p, true, x, w, scale, shift, std::vector<float>(z.size(), 0.0f)), conv_fused,
                             conv_tol)
                  .mismatches,
              0u);
  }
}

// ---- tolerances and comparison ------------------------------------------------------------------

TEST(KernelsReference, ToleranceValues) {
  const Tolerance sbr = ElementwiseTolerance(ElementwiseOp::kScaleBiasRelu, Precision::kFp16);
  EXPECT_EQ(sbr.atol, std::ldexp(1.0, -10));  // 2 roundings of half an ulp (2^-11) of |x*scale| <= 2
  EXPECT_EQ(sbr.rtol, 3 * std::ldexp(1.0, -11));
  EXPECT_EQ(ElementwiseTolerance(ElementwiseOp::kAddRelu, Precision::kFp16).atol, 1e-6);
  EXPECT_EQ(ElementwiseTolerance(ElementwiseOp::kBiasGelu, Precision::kFp16).atol, std::ldexp(1.0, -9));
  EXPECT_EQ(ElementwiseTolerance(ElementwiseOp::kMulRelu, Precision::kFp32).rtol, 1e-6);
  // fp16: 2^-8 * sqrt(64) = 2^-5; fp32: 1e-4 * sqrt(100) = 1e-3.
  EXPECT_EQ(ReductionTolerance(Precision::kFp16, 64).atol, 0.03125);
  EXPECT_EQ(ReductionTolerance(Precision::kFp16, 64).rtol, 1e-2);
  EXPECT_DOUBLE_EQ(ReductionTolerance(Precision::kFp32, 100).atol, 1e-3);
  EXPECT_EQ(ReductionTolerance(Precision::kFp32, 0).atol, 1e-4);  // length 0 counts as 1
}

TEST(KernelsReference, CompareOutputsAbsoluteRelativeAndNan) {
  const std::vector<float> got = {1, 2, kNan, 4, 5.0001f, kInf};
  const std::vector<float> want = {1, 2.5f, kNan, kNan, 5, kInf};
  // |2 - 2.5| = 0.5 > 0.1: mismatch; NaN vs NaN: match; 4 vs NaN: mismatch; 1e-4 <= 0.1; inf == inf.
  CompareResult r = CompareOutputs(got, want, {0.1, 0});
  EXPECT_EQ(r.mismatches, 2u);
  EXPECT_EQ(r.first_mismatch, 1u);
  EXPECT_EQ(r.max_abs_error, std::numeric_limits<double>::infinity());
  // rtol: |110 - 100| = 10 <= 0.1 * 100; |111 - 100| = 11 > 10.
  r = CompareOutputs(std::vector<float>{110, 111}, std::vector<float>{100, 100}, {0, 0.1});
  EXPECT_EQ(r.mismatches, 1u);
  EXPECT_EQ(r.first_mismatch, 1u);
  EXPECT_DOUBLE_EQ(r.max_abs_error, 11);
  EXPECT_DOUBLE_EQ(r.max_rel_error, 0.11);
  // A length difference is a mismatch at the first missing index.
  r = CompareOutputs(std::vector<float>{1, 2, 3}, std::vector<float>{1, 2}, {1, 1});
  EXPECT_EQ(r.mismatches, 1u);
  EXPECT_EQ(r.first_mismatch, 2u);
}

// ---- inputs and the model's CPU stages -----------------------------------------------------------

TEST(KernelsReference, RandomTensorIsDeterministicInRangeAndStored) {
  EXPECT_EQ(RandomTensor(100, 42, -1, 1, Precision::kFp32), RandomTensor(100, 42, -1, 1, Precision::kFp32));
  EXPECT_NE(RandomTensor(100, 42, -1, 1, Precision::kFp32), RandomTensor(100, 43, -1, 1, Precision::kFp32));
  constexpr size_t kN = 100000;  // enough draws that some round up to hi before the step down
  for (Precision p : {Precision::kFp32, Precision::kFp16, Precision::kInt8}) {
    const float lo = p == Precision::kInt8 ? -4.0f : -1.0f, hi = -lo;
    const std::vector<float> v = RandomTensor(kN, 7, lo, hi, p);
    double sum = 0;
    for (float f : v) {
      ASSERT_GE(f, lo);
      ASSERT_LT(f, hi);
      std::vector<float> stored = {f};
      QuantizeTo(p, stored);
      ASSERT_EQ(stored[0], f);
      sum += f;
    }
    // uniform on [-1, 1): mean 0, standard error 0.58 / sqrt(1e5) = 0.0018; int8 {-4..3}: mean -0.5
    EXPECT_NEAR(sum / kN, p == Precision::kInt8 ? -0.5 : 0.0, 0.02);
  }
}

TEST(KernelsReference, QuantizeTo) {
  std::vector<float> v = {0.1f, 65520, 1};
  QuantizeTo(Precision::kFp16, v);
  EXPECT_EQ(v, (std::vector<float>{0.0999755859375f, kInf, 1}));
  std::vector<float> i8 = {2.5f, -200, 3.5f, 0.4f};
  QuantizeTo(Precision::kInt8, i8);  // nearest even, saturated
  EXPECT_EQ(i8, (std::vector<float>{2, -128, 4, 0}));
  std::vector<float> f32 = {0.1f};
  QuantizeTo(Precision::kFp32, f32);
  EXPECT_EQ(f32[0], 0.1f);
}

TEST(KernelsReference, NormalizeImagesImageNetStatistics) {
  const std::vector<uint8_t> image = {255, 0, 128, 0, 255, 51};  // one 1x2 RGB image
  std::vector<float> out(8, -99.0f);
  NormalizeImages(image, 1, 1, 2, 4, out);
  // (1 - 0.485) / 0.229, (0 - 0.456) / 0.224, (128/255 - 0.406) / 0.225, pad 0;
  // (0 - 0.485) / 0.229, (1 - 0.456) / 0.224, (0.2 - 0.406) / 0.225, pad 0.
  const std::vector<double> want = {2.2489083, -2.0357143, 0.4264924, 0, -2.1179039, 2.4285714, -0.9155556, 0};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(out[i], want[i], 1e-5) << i;
  std::vector<float> rgb(6);
  NormalizeImages(image, 1, 1, 2, 3, rgb);
  EXPECT_NEAR(rgb[3], -2.1179039, 1e-5);
}

TEST(KernelsReference, TopKKeepsLowerIndexOnTies) {
  const std::vector<float> logits = {1, 5, 3, 5, 2, 5};
  EXPECT_EQ(TopK(logits, 3), (std::vector<int>{1, 3, 5}));
  EXPECT_EQ(TopK(logits, 4), (std::vector<int>{1, 3, 5, 2}));
  EXPECT_EQ(TopK(logits, 10), (std::vector<int>{1, 3, 5, 2, 4, 0}));
  EXPECT_EQ(TopK(std::vector<float>{kNan, 1, 2}, 2), (std::vector<int>{2, 1}));
  EXPECT_TRUE(TopK(logits, 0).empty());
}

}  // namespace
}  // namespace tg::kernels
