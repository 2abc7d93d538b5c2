// CUDA / HIP graphs traced back to their ops (tracegate/analyzer/graph_capture.h) on hand-made
// traces: what bounds a capture, the caller's frame, and how a replay is matched (the shared vLLM
// pair and the CLI's cases are in tests/cli/analyze/graph_capture.py).
#include "tracegate/analyzer/graph_capture.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analyzer/analysis/correlation.h"
#include "trace_builder.h"

namespace tg {
namespace {

using testing::AddApi;
using testing::AddKernel;
using testing::AddRange;
using testing::AddRangeIn;

// One launch inside op `op` at `at`, with a cudaLaunchKernel call.
void Launch(Trace& t, std::string_view op, TimeNs at, int64_t correlation) {
  AddRangeIn(t, "cpu_op", op, at, at + 50);
  AddApi(t, "cudaLaunchKernel", at + 5, at + 10, correlation);
}

std::vector<std::string> Ops(const CapturedGraph& g) {
  std::vector<std::string> out;
  for (const CapturedLaunch& l : g.launches) out.push_back(l.op);
  return out;
}

TEST(GraphCapture, BeginAndEndCallsBoundEachCapture) {
  Trace t;
  Launch(t, "aten::before", 0, 1);  // not captured: it ran
  AddRange(t, "capture_8_FULL", 90, 1000);
  AddApi(t, "cudaStreamBeginCapture", 100, 101, 2);
  Launch(t, "aten::mm", 200, 3);
  AddApi(t, "cudaStreamBeginCapture", 250, 251, 4);  // nested: still the one capture
  Launch(t, "aten::add", 300, 5);
  AddApi(t, "cudaStreamEndCapture", 350, 351, 6);
  Launch(t, "aten::relu", 400, 7);
  AddApi(t, "cudaStreamEndCapture_v10000", 500, 501, 8);
  Launch(t, "aten::after", 600, 9);
  AddApi(t, "cudaStreamBeginCapture_ptsz", 2000, 2001, 10);
  Launch(t, "aten::gelu", 2100, 11);
  AddApi(t, "cudaStreamEndCapture", 2200, 2201, 12);
  const std::vector<CapturedGraph> g = ExtractCapturedGraphs(t, "cap.json");
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(Ops(g[0]), (std::vector<std::string>{"aten::mm", "aten::add", "aten::relu"}));
  EXPECT_EQ(g[0].annotation, "capture_8_FULL");
  EXPECT_EQ(g[0].size, 8);
  EXPECT_EQ(g[0].source, "cap.json");
  EXPECT_EQ(Ops(g[1]), (std::vector<std::string>{"aten::gelu"}));
  EXPECT_EQ(g[1].size, -1);  // no annotation around it
}

TEST(GraphCapture, AnnotationsBoundCapturesWithoutBeginEndCalls) {
  Trace t;
  AddRange(t, "capture_4_PIECEWISE", 100, 1000);
  Launch(t, "aten::mm", 200, 1);
  Launch(t, "aten::add", 300, 2);
  Launch(t, "aten::outside", 1200, 3);
  const std::vector<CapturedGraph> g = ExtractCapturedGraphs(t, "cap.json");
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(Ops(g[0]), (std::vector<std::string>{"aten::mm", "aten::add"}));
  EXPECT_EQ(g[0].size, 4);
}

TEST(GraphCapture, CallerFrameSkipsTheFrameworkAndBuiltins) {
  Trace t;
  AddApi(t, "hipStreamBeginCapture", 10, 11, 1);
  AddRangeIn(t, "python_function", "model.py(12): forward", 100, 400);
  AddRangeIn(t, "python_function", "/opt/venv/lib/site-packages/torch/nn/functional.py(3): linear", 110, 390);
  AddRangeIn(t, "python_function", "<built-in function linear>", 120, 380);
  AddRangeIn(t, "python_function", "mytorch/ops.py(1): run", 500, 700);  // "mytorch/" is not torch/
  Launch(t, "aten::linear", 200, 2);
  Launch(t, "aten::add", 550, 3);
  Launch(t, "aten::mul", 800, 4);  // no frame holds it
  AddApi(t, "hipStreamEndCapture", 900, 901, 5);
  const std::vector<CapturedGraph> g = ExtractCapturedGraphs(t, "cap.json");
  ASSERT_EQ(g.size(), 1u);
  ASSERT_EQ(g[0].launches.size(), 3u);
  EXPECT_EQ(g[0].launches[0].frame, "model.py(12): forward");
  EXPECT_EQ(g[0].launches[1].frame, "mytorch/ops.py(1): run");
  EXPECT_EQ(g[0].launches[2].frame, "");
}

// A replay: one cudaGraphLaunch of `kernels` kernels inside a step annotation of `tokens` (none
// when negative).
Trace Replay(size_t kernels, int64_t tokens) {
  Trace t;
  AddRangeIn(t, "cpu_op", "aten::empty", 0, 10);
  if (tokens >= 0)
    AddRange(t, "execute_" + std::to_string(tokens) + "_context_0_generation_" + std::to_string(tokens), 100, 5000);
  AddApi(t, "cudaGraphLaunch", 200, 220, 77);
  for (size_t i = 0; i < kernels; ++i)
    AddKernel(t, "k" + std::to_string(i), 1000 + 100 * static_cast<TimeNs>(i), 1050 + 100 * static_cast<TimeNs>(i), 0,
              7, 77);
  return t;
}

CapturedGraph Graph(int64_t size, std::vector<std::string> ops) {
  CapturedGraph g;
  g.source = "cap.json";
  g.size = size;
  for (std::string& op : ops) g.launches.push_back({op, "model.py(1): f"});
  return g;
}

GraphCaptureMapping Map(const Trace& t, const std::vector<CapturedGraph>& graphs, OpLinks* links) {
  internal::ApiIndex index(t.api_calls);
  *links = LinkOps(t, index);
  return MapGraphKernels(t, index, graphs, links);
}

TEST(GraphCapture, SameOpsAtEverySizeMatchByCount) {
  const Trace t = Replay(2, -1);
  OpLinks links;
  const GraphCaptureMapping m =
      Map(t, {Graph(8, {"aten::mm", "aten::add"}), Graph(16, {"aten::mm", "aten::add"})}, &links);
  EXPECT_EQ(m.by_count, 1u);
  EXPECT_EQ(m.kernels_mapped, 2u);
  EXPECT_EQ(links.Name(t, links.kernels[0]), "aten::mm");
  EXPECT_EQ(links.Name(t, links.kernels[1]), "aten::add");
  EXPECT_EQ(links.kernel_launch_found[0], OpLinks::kGraphLaunched);
  ASSERT_EQ(m.ops.size(), 2u);
  EXPECT_EQ(m.ops[0].kernel_ns, 50);
}

TEST(GraphCapture, OtherOpsAreToldApartByTheStepsTokens) {
  const std::vector<CapturedGraph> graphs = {Graph(8, {"aten::mm", "aten::add"}),
                                             Graph(16, {"aten::bmm", "aten::relu"}),
                                             Graph(32, {"aten::addmm", "aten::gelu"})};
  OpLinks links;
  Trace t = Replay(2, 12);  // the smallest size holding 12 tokens: 16
  GraphCaptureMapping m = Map(t, graphs, &links);
  EXPECT_EQ(m.by_size, 1u);
  EXPECT_EQ(links.Name(t, links.kernels[0]), "aten::bmm");
  t = Replay(2, -1);  // no step: ambiguous, nothing mapped
  m = Map(t, graphs, &links);
  EXPECT_EQ(m.ambiguous, 1u);
  EXPECT_EQ(m.kernels_mapped, 0u);
  EXPECT_EQ(links.kernels[0], StringTable::kEmpty);
  t = Replay(2, 64);  // more tokens than any capture holds
  m = Map(t, graphs, &links);
  EXPECT_EQ(m.ambiguous, 1u);
  t = Replay(3, 12);  // no graph of three launches
  m = Map(t, graphs, &links);
  EXPECT_EQ(m.no_match, 1u);
  EXPECT_EQ(m.launches, 1u);
  EXPECT_EQ(m.kernels, 3u);
}

}  // namespace
}  // namespace tg
