// The contract between kernels/ and the analyzer: the NVTX range names the reference workloads
// write (CostAnnotation, with the costs of reference.h / model_spec.h) are read back by the
// roofline with the same label, bytes and FLOPs, and predict --launched-in finds a model stage's
// kernels by its range.
#include <gtest/gtest.h>

#include "trace_builder.h"
#include "tracegate/analyzer/predict.h"
#include "tracegate/analyzer/roofline.h"
#include "tracegate/collector/cost_annotation.h"
#include "tracegate/kernels/model_spec.h"
#include "tracegate/kernels/reference.h"

namespace tg {
namespace {

using testing::AddApi;
using testing::AddKernel;
using testing::AddRange;

TEST(KernelsAnnotation, TheRooflineReadsWhatTheBenchmarkWrites) {
  // One timed run of the fused fp16 add+ReLU pair on 2^24 elements, as tracegate-kernel-bench
  // names it: 3 x 2^24 x 2 bytes, 2 FLOPs per element.
  const kernels::Costs c = kernels::ElementwiseCosts(kernels::ElementwiseOp::kAddRelu, kernels::Precision::kFp16,
                                                     /*fused=*/true, size_t{1} << 24, 1);
  ASSERT_EQ(c.bytes, 100'663'296u);
  ASSERT_EQ(c.flops, 33'554'432u);
  Trace t;
  AddRange(t, CostAnnotation("add_relu fp16 fused", c.bytes, c.flops), 0, 100);
  AddApi(t, "cudaLaunchKernel", 10, 20, 1);
  AddKernel(t, "MapKernel<__half, true, false, false, AddReluOp>", 200, 50'200, 0, 7, 1);  // 50 us
  std::vector<RooflineItem> items = BuildRoofline(t, {}, PeakRates{}, {});
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].label, "add_relu fp16 fused");
  EXPECT_EQ(items[0].source, "nvtx");
  EXPECT_EQ(items[0].bytes, 100'663'296);
  EXPECT_EQ(items[0].flops, 33'554'432);
  EXPECT_DOUBLE_EQ(items[0].achieved_gbs, 2013.26592);  // 100663296 B / 50000 ns
}

TEST(KernelsAnnotation, AModelStageRangeGivesItsCostsAndItsShare) {
  // res3 of tracegate-model at batch 32, fp16, unfused: the range name the model writes.
  const std::vector<kernels::StageSpec> stages = kernels::ModelStages(224);
  ASSERT_EQ(stages[1].name, "res3");
  const kernels::Costs c = kernels::StageCosts(stages[1], 32, kernels::Precision::kFp16, /*fused=*/false);
  const std::string range = CostAnnotation("res3", c.bytes, c.flops);
  Trace t;
  AddRange(t, "iteration", 0, 10'000);
  AddRange(t, "infer", 1'000, 2'000, 100, 100, 1);
  AddRange(t, range, 1'100, 1'500, 100, 100, 2);
  AddApi(t, "cudaLaunchKernel", 1'200, 1'210, 1);
  AddApi(t, "cudaLaunchKernel", 1'300, 1'310, 2);
  AddApi(t, "cudaLaunchKernel", 1'600, 1'610, 3);  // res4's, after the range
  AddKernel(t, "implicit_convolve_sgemm", 2'000, 4'000, 0, 7, 1);
  AddKernel(t, "MapKernel<__half, false, true, true, ScaleShiftOp>", 4'000, 5'000, 0, 7, 2);
  AddKernel(t, "implicit_convolve_sgemm", 5'000, 7'000, 0, 7, 3);
  std::vector<RooflineItem> items = BuildRoofline(t, {}, PeakRates{}, {});
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].label, "res3");
  EXPECT_EQ(items[0].bytes, static_cast<double>(c.bytes));
  EXPECT_EQ(items[0].flops, static_cast<double>(c.flops));
  EXPECT_EQ(items[0].launches, 2u);
  // P of res3: its two kernels' 2000 + 1000 ns of the 10000 ns iteration.
  IterationAnalysis it;
  ASSERT_TRUE(AnalyzeIterations(t, IterationOptions{}, &it).ok());
  MeasuredShare m;
  ASSERT_TRUE(MeasureLaunchedShare(t, it, "^res3( |$)", &m).ok());
  EXPECT_EQ(m.part_ns, 3'000);
  EXPECT_DOUBLE_EQ(m.share, 0.3);
}

}  // namespace
}  // namespace tg
