#include "tracegate/kernels/model_spec.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace tg::kernels {
namespace {

TEST(KernelsModelSpec, StagesOf224) {
  const std::vector<StageSpec> stages = ModelStages(224);
  ASSERT_EQ(stages.size(), 4u);
  // name, channels, size (224 / 4, / 8, / 16, / 32), blocks, transition input channels
  const StageSpec want[] = {
      {"res2", 64, 56, 3, 0}, {"res3", 128, 28, 4, 64}, {"res4", 256, 14, 6, 128}, {"res5", 512, 7, 3, 256}};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(stages[i].name, want[i].name);
    EXPECT_EQ(stages[i].channels, want[i].channels);
    EXPECT_EQ(stages[i].size, want[i].size);
    EXPECT_EQ(stages[i].blocks, want[i].blocks);
    EXPECT_EQ(stages[i].in_channels, want[i].in_channels);
  }
  EXPECT_EQ(ModelStages(512)[0].size, 128u);
  EXPECT_EQ(ModelStages(512)[3].size, 16u);
}

// res2 3 blocks, res3 1 + 4, res4 1 + 6, res5 1 + 3: 19 busy-waits per stream and iteration.
TEST(KernelsModelSpec, HostGapSites) {
  ModelOptions o;
  EXPECT_EQ(HostGapSitesPerIteration(o), 19u);
  o.streams = 4;
  EXPECT_EQ(HostGapSitesPerIteration(o), 76u);
}

TEST(KernelsModelSpec, Res3BlockIsTheSeedsShape) {
  const ConvShape s = StageBlockShape(ModelStages(224)[1], 8);
  const ConvShape seed = Res3Shape(8);
  EXPECT_EQ(s.n, 8u);
  EXPECT_EQ(s.h, seed.h);
  EXPECT_EQ(s.w, seed.w);
  EXPECT_EQ(s.c, seed.c);
  EXPECT_EQ(s.k, seed.k);
  EXPECT_EQ(s.r, 3u);
  EXPECT_EQ(s.s, 3u);
  EXPECT_EQ(s.p(), 28u);
  EXPECT_EQ(s.q(), 28u);
  EXPECT_EQ(ConvOps(s), ConvOps(seed));
  const ConvShape res5 = StageBlockShape(ModelStages(224)[3], 2);
  EXPECT_EQ(res5.y_elements(), 2u * 7 * 7 * 512);
}

TEST(KernelsModelSpec, TransitionHalvesTheSizeIntoTheStagesChannels) {
  // res3's transition: 56x56x64 -> 28x28x128, 1x1 stride 2, no padding.
  const ConvShape t = StageTransitionShape(ModelStages(224)[1], 4);
  EXPECT_EQ(t.n, 4u);
  EXPECT_EQ(t.h, 56u);
  EXPECT_EQ(t.c, 64u);
  EXPECT_EQ(t.k, 128u);
  EXPECT_EQ(t.r, 1u);
  EXPECT_EQ(t.stride, 2u);
  EXPECT_EQ(t.pad, 0u);
  EXPECT_EQ(t.p(), 28u);  // (56 - 1) / 2 + 1
  EXPECT_EQ(t.y_elements(), 4u * 28 * 28 * 128);
}

TEST(KernelsModelSpec, Res3CostsByHand) {
  const StageSpec res3 = ModelStages(224)[1];
  // Block (Res3Shape(1), fp16): fused 897280 bytes, 231612416 FLOPs; unfused 2101760 bytes (see
  // KernelsCosts.ConvBnAddReluRes3). Transition 56x56x64 -> 28x28x128, 1x1 stride 2:
  // X = 200704, W = 8192, K = 128, Y = 100352: (X + W + K + Y) * 2 = 618752 bytes;
  // 2 * 784 * 128 * 64 = 12845056 ops + 3Y = 13146112 FLOPs.
  // Fused: 4 * 897280 + 618752 = 4207872 bytes; 4 * 231612416 + 13146112 = 939595776 FLOPs; 5 kernels.
  Costs fused = StageCosts(res3, 1, Precision::kFp16, true);
  EXPECT_EQ(fused.bytes, 4207872u);
  EXPECT_EQ(fused.flops, 939595776u);
  EXPECT_EQ(fused.kernels, 5);
  // Unfused: 4 * 2101760 + 618752 = 9025792 bytes; 4 * 4 + 1 = 17 kernels.
  Costs unfused = StageCosts(res3, 1, Precision::kFp16, false);
  EXPECT_EQ(unfused.bytes, 9025792u);
  EXPECT_EQ(unfused.flops, 939595776u);
  EXPECT_EQ(unfused.kernels, 17);
}

TEST(KernelsModelSpec, Res2HasNoTransition) {
  // Batch 2, 56x56x64 fp32: X = Y = 401408, W = 36864, K = 64; fused (X + W + K + 2Y) * 4 = 4964608
  // per block; ops 2 * 2 * 3136 * 36864 = 462422016 + 4Y = 464027648 per block; three blocks.
  Costs c = StageCosts(ModelStages(224)[0], 2, Precision::kFp32, true);
  EXPECT_EQ(c.bytes, 3u * 4964608);
  EXPECT_EQ(c.flops, 3u * 464027648);
  EXPECT_EQ(c.kernels, 3);
}

TEST(KernelsModelSpec, DefaultsAreValid) {
  ModelOptions o;
  EXPECT_EQ(ValidateModelOptions(o), "");
  EXPECT_TRUE(o.fuse.empty());
}

std::string Check(void (*change)(ModelOptions&)) {
  ModelOptions o;
  change(o);
  return ValidateModelOptions(o);
}

TEST(KernelsModelSpec, ValidationNamesTheFlag) {
  EXPECT_EQ(Check([](ModelOptions& o) { o.batch = 0; }), "--batch must be at least 1");
  EXPECT_EQ(Check([](ModelOptions& o) { o.precision = Precision::kInt8; }), "");  // cuDNN INT8_CONFIG
  EXPECT_EQ(Check([](ModelOptions& o) { o.image = 200; }), "--image must be a positive multiple of 32 (e.g. 224)");
  EXPECT_EQ(Check([](ModelOptions& o) { o.image = 0; }), "--image must be a positive multiple of 32 (e.g. 224)");
  EXPECT_EQ(Check([](ModelOptions& o) { o.classes = 0; }), "--classes must be at least 1");
  EXPECT_EQ(Check([](ModelOptions& o) { o.top_k = 1001; }), "--top-k must be between 1 and --classes");
  EXPECT_EQ(Check([](ModelOptions& o) { o.top_k = 0; }), "--top-k must be between 1 and --classes");
  EXPECT_EQ(Check([](ModelOptions& o) { o.iterations = 0; }), "--iterations must be at least 1");
  EXPECT_EQ(Check([](ModelOptions& o) { o.warmup = -1; }), "--warmup must be at least 0");
  EXPECT_EQ(Check([](ModelOptions& o) { o.host_gap_us = -5; }), "--host-gap-us must be between 0 and 1000000");
  EXPECT_EQ(Check([](ModelOptions& o) { o.split_h2d = 0; }), "--split-h2d must be between 1 and 4096");
  EXPECT_EQ(Check([](ModelOptions& o) { o.split_h2d = 4097; }), "--split-h2d must be between 1 and 4096");
  EXPECT_EQ(Check([](ModelOptions& o) { o.post_ms = -1; }), "--post-ms must be between 0 and 10000");
  EXPECT_EQ(Check([](ModelOptions& o) { o.post_ms = std::numeric_limits<double>::quiet_NaN(); }),
            "--post-ms must be between 0 and 10000");
  EXPECT_EQ(Check([](ModelOptions& o) { o.streams = 3; }), "--streams must be between 1 and 16 and divide --batch");
  EXPECT_EQ(Check([](ModelOptions& o) { o.streams = 0; }), "--streams must be between 1 and 16 and divide --batch");
  EXPECT_EQ(Check([](ModelOptions& o) { o.batch = 32, o.streams = 32; }),
            "--streams must be between 1 and 16 and divide --batch");
  EXPECT_EQ(Check([](ModelOptions& o) { o.device = -1; }), "--device must be at least 0");
  EXPECT_EQ(Check([](ModelOptions& o) { o.fuse = {"res7"}; }),
            "--fuse: unknown stage 'res7' (stages: res2, res3, res4, res5, all, none)");
  EXPECT_EQ(Check([](ModelOptions& o) {
              o.fuse = {"none", "res3"};
            }),
            "--fuse: 'none' cannot be combined with other stages");
  // Knobs in range pass.
  EXPECT_EQ(Check([](ModelOptions& o) { o.streams = 4, o.split_h2d = 64, o.post_ms = 5, o.host_gap_us = 50; }), "");
}

TEST(KernelsModelSpec, FuseExpandsAndDedupes) {
  ModelOptions o;
  o.fuse = SplitList("res4, res2,res4");
  ASSERT_EQ(ValidateModelOptions(o), "");
  EXPECT_EQ(o.fuse, (std::vector<std::string>{"res2", "res4"}));  // stage order, once each
  EXPECT_TRUE(StageFused(o, "res2"));
  EXPECT_FALSE(StageFused(o, "res3"));
  o.fuse = {"res3", "all"};
  ASSERT_EQ(ValidateModelOptions(o), "");
  EXPECT_EQ(o.fuse, (std::vector<std::string>{"res2", "res3", "res4", "res5"}));
  o.fuse = {"none"};
  ASSERT_EQ(ValidateModelOptions(o), "");
  EXPECT_TRUE(o.fuse.empty());
}

TEST(KernelsModelSpec, SplitListTrimsAndDropsEmpty) {
  EXPECT_EQ(SplitList("res3, res4,,"), (std::vector<std::string>{"res3", "res4"}));
  EXPECT_EQ(SplitList(" all "), (std::vector<std::string>{"all"}));
  EXPECT_TRUE(SplitList("").empty());
  EXPECT_TRUE(SplitList(" , ").empty());
}

// --slow res4=1.5: 6 blocks get round(6 x 0.5) = 3 extra runs, one every other block from the first;
// the repeats of every block sum to round(blocks x (F - 1)) for any factor.
TEST(KernelsModelSpec, SlowSpreadsTheExtraRuns) {
  std::vector<size_t> res4;
  for (size_t b = 0; b < 6; ++b) res4.push_back(SlowRepeats(1.5, 6, b));
  EXPECT_EQ(res4, (std::vector<size_t>{1, 0, 1, 0, 1, 0}));
  for (double f : {1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 8.0})
    for (size_t blocks : {3u, 4u, 6u}) {
      size_t extra = 0;
      for (size_t b = 0; b < blocks; ++b) extra += SlowRepeats(f, blocks, b);
      EXPECT_EQ(extra, static_cast<size_t>(std::floor(static_cast<double>(blocks) * (f - 1) + 0.5)))
          << f << " x " << blocks;
    }
  EXPECT_EQ(SlowRepeats(2.0, 4, 4), 0u);  // past the last block
}

TEST(KernelsModelSpec, SlowParsesAndNamesTheProblem) {
  ModelOptions o;
  EXPECT_EQ(ParseSlow("res4=1.5, res2=2", o), "");
  ASSERT_EQ(o.slow.size(), 2u);
  EXPECT_EQ(SlowFactor(o, "res4"), 1.5);
  EXPECT_EQ(SlowFactor(o, "res2"), 2.0);
  EXPECT_EQ(SlowFactor(o, "res3"), 1.0);
  EXPECT_EQ(ParseSlow("", o), "");
  EXPECT_TRUE(o.slow.empty());
  EXPECT_NE(ParseSlow("res7=2", o).find("res2, res3, res4 or res5"), std::string::npos);
  EXPECT_NE(ParseSlow("res4", o).find("STAGE=FACTOR"), std::string::npos);
  EXPECT_NE(ParseSlow("res4=0.5", o).find("between 1 and 8"), std::string::npos);
  EXPECT_NE(ParseSlow("res4=x", o).find("between 1 and 8"), std::string::npos);
  EXPECT_NE(ParseSlow("res4=2,res4=3", o).find("given twice"), std::string::npos);
}

}  // namespace
}  // namespace tg::kernels
