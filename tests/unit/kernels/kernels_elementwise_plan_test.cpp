// The element-wise kernels' grid and int8 bit tricks (elementwise_plan.h), checked on the CPU
// against brute force and against reference.h's QuantizeInt8: the device runs the same code.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <vector>

#include "tracegate/kernels/elementwise_plan.h"
#include "tracegate/kernels/reference.h"

namespace tg::kernels {
namespace {

float FromBits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

int8_t LowByte(uint32_t w) { return static_cast<int8_t>(w & 0xFFu); }

TEST(KernelsElementwisePlan, BytePermMatchesCudaSemantics) {
  // Selector nibbles 0-3 pick x's bytes, 4-7 y's.
  EXPECT_EQ(BytePerm(0x44332211u, 0x88776655u, 0x3210u), 0x44332211u);
  EXPECT_EQ(BytePerm(0x44332211u, 0x88776655u, 0x7654u), 0x88776655u);
  EXPECT_EQ(BytePerm(0x44332211u, 0x88776655u, 0x0040u), 0x11115511u);
  EXPECT_EQ(BytePerm(0x44332211u, 0x88776655u, 0x5410u), 0x66552211u);
}

TEST(KernelsElementwisePlan, ByteToFloatIsExactForEveryInt8) {
  for (int q = -128; q <= 127; ++q) {
    const uint32_t byte = static_cast<uint8_t>(static_cast<int8_t>(q));
    for (uint32_t j = 0; j < 4; ++j) {
      const uint32_t word = (byte << (8 * j)) ^ 0x80808080u;  // other bytes: q = 0
      EXPECT_EQ(ByteToFloatBits(word, j), float(q)) << "q " << q << " byte " << j;
      EXPECT_EQ(ByteToFloatBits(word, (j + 1) % 4), 0.0f);
    }
  }
}

// QuantizeInt8Bits must be QuantizeInt8 bit for bit: every tie, the saturation edges, signed
// zeros, infinities, NaNs, and a sweep over all float exponents.
TEST(KernelsElementwisePlan, QuantizeBitsIsQuantizeInt8) {
  std::vector<float> values = {0.0f,
                               -0.0f,
                               0.5f,
                               -0.5f,
                               1.5f,
                               2.5f,
                               -2.5f,
                               126.5f,
                               127.0f,
                               127.49f,
                               127.5f,
                               128.0f,
                               -127.5f,
                               -128.0f,
                               -128.5f,
                               -128.51f,
                               -129.0f,
                               1e30f,
                               -1e30f,
                               std::numeric_limits<float>::infinity(),
                               -std::numeric_limits<float>::infinity(),
                               std::numeric_limits<float>::quiet_NaN(),
                               -std::numeric_limits<float>::quiet_NaN(),
                               std::numeric_limits<float>::denorm_min(),
                               std::numeric_limits<float>::max()};
  for (int t = -260; t <= 260; ++t) values.push_back(float(t) * 0.5f);  // every tie in range and beyond
  for (uint64_t b = 0; b < (uint64_t{1} << 32); b += 4099) values.push_back(FromBits(static_cast<uint32_t>(b)));
  for (float v : values) {
    const float want = QuantizeInt8(v);
    EXPECT_EQ(float(LowByte(QuantizeInt8Bits(v))), want) << "v " << v;
    if (HasFailure()) return;
  }
}

TEST(KernelsElementwisePlan, PackPutsElementZeroInTheLowByte) {
  EXPECT_EQ(
      PackInt8x4(QuantizeInt8Bits(1.0f), QuantizeInt8Bits(-1.0f), QuantizeInt8Bits(127.0f), QuantizeInt8Bits(-128.0f)),
      0x807FFF01u);
}

// Brute force: under a grid with fixed_channels, every vector a thread handles on any pass has
// the channels FixedChannel gives for the thread.
void ExpectFixedChannelsHold(size_t vectors, size_t width, size_t channels, size_t threads, size_t unroll,
                             size_t max_blocks) {
  const ElementwiseGrid g = PlanElementwiseGrid(vectors, width, channels, true, threads, unroll, max_blocks);
  ASSERT_GE(g.blocks, 1u);
  ASSERT_LE(g.blocks, std::max<size_t>(max_blocks, 1));
  if (!g.fixed_channels) return;
  const size_t total = g.blocks * threads;
  for (size_t v = 0; v < vectors; ++v) {
    const size_t t = v % total;
    for (size_t j = 0; j < width; ++j)
      ASSERT_EQ((v * width + j) % channels, FixedChannel(t, width, j, channels))
          << "vectors " << vectors << " width " << width << " channels " << channels << " v " << v;
  }
}

TEST(KernelsElementwisePlan, FixedChannelGridsKeepEveryThreadsChannels) {
  for (size_t width : {4, 8, 16})
    for (size_t channels : {1, 3, 48, 64, 256, 1000, 4099})
      for (size_t vectors : {1, 5, 1000, 16397, 100000})
        for (size_t max_blocks : {1, 7, 64, 528}) ExpectFixedChannelsHold(vectors, width, channels, 32, 2, max_blocks);
}

TEST(KernelsElementwisePlan, GridChoices) {
  // The benchmark's shape: 64Mi fp16 elements, 256 channels, 256 threads x 4 vectors, one wave
  // of 528 blocks: capped, and 256 * 8 is a multiple of 256.
  ElementwiseGrid g = PlanElementwiseGrid((size_t{1} << 26) / 8, 8, 256, true, 256, 4, 528);
  EXPECT_EQ(g.blocks, 528u);
  EXPECT_TRUE(g.fixed_channels);
  // The check's shape: 65589 fp32 elements, 48 channels: 256 * 4 = 1024 = 16 * 64, so blocks
  // come in threes; 16397 vectors need 17 blocks, rounded up to 18.
  g = PlanElementwiseGrid(65589 / 4, 4, 48, true, 256, 4, 528);
  EXPECT_EQ(g.blocks, 18u);
  EXPECT_TRUE(g.fixed_channels);
  // Capped grid rounded down to a multiple of 3.
  g = PlanElementwiseGrid(size_t{1} << 24, 4, 48, true, 256, 4, 529);
  EXPECT_EQ(g.blocks, 528u);
  EXPECT_TRUE(g.fixed_channels);
  // A prime channel count beyond one wave: channels computed per vector.
  g = PlanElementwiseGrid(size_t{1} << 24, 4, 4099, true, 256, 4, 528);
  EXPECT_EQ(g.blocks, 528u);
  EXPECT_FALSE(g.fixed_channels);
  // No per-channel operand: the plain grid.
  g = PlanElementwiseGrid(10, 16, 4099, false, 256, 4, 528);
  EXPECT_EQ(g.blocks, 1u);
  EXPECT_TRUE(g.fixed_channels);
}

}  // namespace
}  // namespace tg::kernels
