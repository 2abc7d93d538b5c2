// P measured from a trace for `tracegate predict` (predict.h), on hand-made traces.
#include "tracegate/analyzer/predict.h"

#include <gtest/gtest.h>

#include "trace_builder.h"

namespace tg {
namespace {

using testing::AddApi;
using testing::AddKernel;
using testing::AddRange;

// Two iterations of 1000 ns. In each, a stage range "res3 bytes=.. flops=.." launches kernels
// that run after the range has ended (asynchronous work), and one kernel is launched after it.
Trace StageTrace() {
  Trace t;
  AddRange(t, "iteration", 0, 1000);
  AddRange(t, "res3 bytes=100 flops=200", 100, 300, 100, 100, 1);
  AddRange(t, "inner", 140, 160, 100, 100, 2);  // nested inside res3
  AddApi(t, "cudaLaunchKernel", 150, 155, 1);
  AddApi(t, "cudaLaunchKernel", 250, 255, 2);
  AddApi(t, "cudaLaunchKernel", 350, 355, 3);  // after res3
  AddKernel(t, "conv", 400, 500, 0, 7, 1);     // 100 ns
  AddKernel(t, "bn", 500, 650, 0, 7, 2);       // 150 ns
  AddKernel(t, "head", 650, 700, 0, 7, 3);     // not res3's
  AddRange(t, "iteration", 1000, 2000);
  AddRange(t, "res3 bytes=100 flops=200", 1100, 1200, 100, 100, 1);
  AddApi(t, "cudaLaunchKernel", 1150, 1155, 4);
  AddApi(t, "cudaLaunchKernel", 1160, 1165, 5, 100, 200);  // another thread: not inside
  AddKernel(t, "conv", 1300, 1400, 0, 7, 4);               // 100 ns
  AddKernel(t, "other", 1400, 1450, 0, 7, 5);
  return t;
}

IterationAnalysis Iterations(const Trace& t) {
  IterationAnalysis it;
  Status s = AnalyzeIterations(t, IterationOptions{}, &it);
  EXPECT_TRUE(s.ok()) << s.message();
  return it;
}

// The share `measure` (MeasureLaunchedShare or MeasureRangeShare) finds in StageTrace().
template <typename Measure>
MeasuredShare ShareOfStageTrace(Measure measure, const std::string& regex) {
  Trace t = StageTrace();
  IterationAnalysis it = Iterations(t);
  MeasuredShare m;
  Status s = measure(t, it, regex, &m);
  EXPECT_TRUE(s.ok()) << s.message();
  return m;
}

TEST(MeasureLaunchedShare, SumsTheGpuTimeOfKernelsLaunchedInsideTheRanges) {
  MeasuredShare m = ShareOfStageTrace(MeasureLaunchedShare, "^res3( |$)");
  // conv 100 + bn 150 (iteration 1) + conv 100 (iteration 2) = 350 of 2 x 1000 ns.
  EXPECT_EQ(m.part_ns, 350);
  EXPECT_EQ(m.total_ns, 2000);
  EXPECT_EQ(m.matched, 3u);
  EXPECT_DOUBLE_EQ(m.share, 0.175);
}

TEST(MeasureLaunchedShare, CountsAKernelInNestedMatchingRangesOnce) {
  MeasuredShare m = ShareOfStageTrace(MeasureLaunchedShare, "res3|inner");
  EXPECT_EQ(m.part_ns, 350);  // conv (launched inside both) once
  EXPECT_EQ(m.matched, 3u);
}

TEST(MeasureLaunchedShare, HostRangeShareDiffersForAsynchronousWork) {
  // The same stage by --range: the host ranges' union, 200 + 100 ns = 300 of 2000.
  MeasuredShare m = ShareOfStageTrace(MeasureRangeShare, "^res3( |$)");
  EXPECT_EQ(m.part_ns, 300);
}

TEST(MeasureLaunchedShare, NamesWhatDidNotMatch) {
  Trace t = StageTrace();
  IterationAnalysis it = Iterations(t);
  MeasuredShare m;
  Status s = MeasureLaunchedShare(t, it, "^res9$", &m);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "--launched-in: no host range matches '^res9$'");
  s = MeasureLaunchedShare(t, it, "(", &m);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("--launched-in: invalid regular expression '('"), std::string::npos);
  // A range that launched nothing inside the iterations.
  AddRange(t, "empty", 10, 20);
  s = MeasureLaunchedShare(t, it, "^empty$", &m);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(),
            "--launched-in: no kernel of the analysed iterations was launched inside a range that matches '^empty$'");
}

}  // namespace
}  // namespace tg
