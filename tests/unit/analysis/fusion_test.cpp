#include "tracegate/analyzer/fusion.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <tuple>
#include <utility>
#include <vector>

#include "trace_builder.h"

namespace tg {
namespace {

using testing::AddKernel;

constexpr const char* kConv = "implicit_convolve_sgemm";
constexpr const char* kBn = "cudnn::bn_fw_inf_1C11_kernel_NCHW";
// PyTorch's relu: clamp_min in a vectorized elementwise kernel.
constexpr const char* kRelu =
    "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::clamp_min_scalar_kernel_"
    "impl(at::TensorIteratorBase&, c10::Scalar)::{lambda()#1}::operator()() const::{lambda(float)#1}, "
    "at::detail::Array<char*, 2> >(int, float, at::detail::Array<char*, 2>)";
constexpr const char* kGemm = "ampere_sgemm_128x64_nn";
constexpr const char* kAdd = "add_kernel";

std::vector<KernelClass> Classes(const Trace& t) {
  KernelClassifier k;
  EXPECT_TRUE(KernelClassifier::Create({}, &k).ok());
  return ClassifyKernels(t, k);
}

// One kept iteration [0, total) that every kernel row belongs to (set rows to -1 / 1 afterwards).
IterationAnalysis OneIteration(const Trace& t, TimeNs total) {
  IterationAnalysis a;
  Iteration it;
  it.start = 0;
  it.end = total;
  a.iterations.push_back(it);
  a.total_ns = total;
  a.kernel_iteration.assign(t.kernels.size(), 0);
  return a;
}

// conv 100 us, gap 2 us, bn 20 us, gap 2 us, relu 10 us, starting at `t0` (ns).
void ConvBnRelu(Trace& t, TimeNs t0, int64_t stream = 7) {
  AddKernel(t, kConv, t0, t0 + 100'000, 0, stream);
  AddKernel(t, kBn, t0 + 102'000, t0 + 122'000, 0, stream);
  AddKernel(t, kRelu, t0 + 124'000, t0 + 134'000, 0, stream);
}

TEST(Fusion, ThreeConvBnReluChainsAreOneCandidateWithTheModelsGain) {
  Trace t;
  ConvBnRelu(t, 0);
  ConvBnRelu(t, 300'000);                 // 166 us after the previous chain: too far to join
  AddKernel(t, kGemm, 434'000, 534'000);  // a gemm right after a relu is no follower...
  ConvBnRelu(t, 536'000);                 // ...and a conv right after the gemm is no follower
  IterationAnalysis it = OneIteration(t, 1'000'000);
  std::vector<FusionCandidate> c = FindFusionCandidates(t, it, Classes(t), FusionOptions{});
  ASSERT_EQ(c.size(), 1u);
  const FusionCandidate& f = c[0];
  ASSERT_EQ(f.names.size(), 3u);
  EXPECT_EQ(t.Name(f.names[0]), kConv);
  EXPECT_EQ(t.Name(f.names[1]), kBn);
  EXPECT_EQ(t.Name(f.names[2]), kRelu);
  EXPECT_EQ(f.classes,
            (std::vector<KernelClass>{KernelClass::kConv, KernelClass::kNormalization, KernelClass::kActivation}));
  EXPECT_EQ(f.occurrences, 3u);
  EXPECT_EQ(f.per_iteration, 3.0);
  // Per chain: head 100 us, followers 20 + 10 = 30 us, gaps 2 + 2 = 4 us, chain 134 us; x3.
  EXPECT_EQ(f.head_ns, 300'000);
  EXPECT_EQ(f.followers_ns, 90'000);
  EXPECT_EQ(f.gaps_ns, 12'000);
  EXPECT_EQ(f.chain_ns, 402'000);
  // saving = (1 - 0.25) x 90 us + 12 us = 67.5 + 12 = 79.5 us
  EXPECT_EQ(f.saving_ns, 79'500);
  // S = 402 / (402 - 79.5) = 402 / 322.5 = 1.24651...
  EXPECT_DOUBLE_EQ(f.local_speedup, 402'000.0 / 322'500.0);
  // P = 402 us / 1000 us = 0.402
  EXPECT_DOUBLE_EQ(f.share, 0.402);
  // overall = 1 / ((1 - 0.402) + 0.402 / S) = 1 / (0.598 + 0.3225) = 1 / 0.9205 = 1000 / 920.5 = 1.08637...
  EXPECT_DOUBLE_EQ(f.overall, 1'000'000.0 / 920'500.0);
  EXPECT_DOUBLE_EQ(f.overall, 1 / ((1 - f.share) + f.share / f.local_speedup));
  // upper bound = 1 / (1 - 0.402) = 1 / 0.598 = 1.67224...
  EXPECT_DOUBLE_EQ(f.upper_bound, 1 / 0.598);
  EXPECT_EQ(f.first_start_ns, 0);
  EXPECT_EQ(f.device, 0);
  EXPECT_EQ(f.stream, 7);
  EXPECT_EQ(f.first_rows, (std::vector<size_t>{0, 1, 2}));
}

TEST(Fusion, AFollowerAfterALongGapStartsNoChainButExactlyMaxGapJoins) {
  Trace t;
  AddKernel(t, kConv, 0, 100'000);
  AddKernel(t, kBn, 110'000, 120'000);    // 10 us gap = max_gap: joins
  AddKernel(t, kRelu, 130'001, 140'000);  // 10.001 us gap: does not join, and a lone relu is no chain
  IterationAnalysis it = OneIteration(t, 1'000'000);
  std::vector<FusionCandidate> c = FindFusionCandidates(t, it, Classes(t), FusionOptions{});
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].names.size(), 2u);
  EXPECT_EQ(c[0].first_rows, (std::vector<size_t>{0, 1}));
  EXPECT_EQ(c[0].gaps_ns, 10'000);
  EXPECT_EQ(c[0].saving_ns, 17'500);  // 0.75 x 10 us + 10 us
}

TEST(Fusion, AGemmBreaksTheChainAndHeadsTheNext) {
  Trace t;
  AddKernel(t, kConv, 0, 100'000);
  AddKernel(t, kBn, 101'000, 121'000);
  AddKernel(t, kGemm, 122'000, 222'000);
  AddKernel(t, kAdd, 223'000, 243'000);
  IterationAnalysis it = OneIteration(t, 1'000'000);
  std::vector<FusionCandidate> c = FindFusionCandidates(t, it, Classes(t), FusionOptions{});
  ASSERT_EQ(c.size(), 2u);
  // conv -> bn: 0.75 x 20 + 1 = 16 us; gemm -> add: 0.75 x 20 + 1 = 16 us; ties by first start.
  EXPECT_EQ(c[0].first_rows, (std::vector<size_t>{0, 1}));
  EXPECT_EQ(c[1].first_rows, (std::vector<size_t>{2, 3}));
  EXPECT_EQ(c[0].saving_ns, 16'000);
  EXPECT_EQ(c[1].saving_ns, 16'000);
}

TEST(Fusion, ChainsOnDifferentStreamsAreSeparate) {
  Trace t;
  AddKernel(t, kConv, 0, 100'000, 0, 7);
  AddKernel(t, kBn, 101'000, 121'000, 0, 8);  // right after, but on another stream
  ConvBnRelu(t, 200'000, 8);
  ConvBnRelu(t, 150'000, 9);  // the same chain on stream 9 starts first
  IterationAnalysis it = OneIteration(t, 1'000'000);
  std::vector<FusionCandidate> c = FindFusionCandidates(t, it, Classes(t), FusionOptions{});
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].occurrences, 2u);
  EXPECT_EQ(c[0].stream, 9);
  EXPECT_EQ(c[0].first_start_ns, 150'000);
  EXPECT_EQ(c[0].first_rows, (std::vector<size_t>{5, 6, 7}));
}

// Streams are told apart by (device, pid, stream), and more of them than the recent list of the
// grouping pass holds interleave row by row: each stream's chain is found, the occurrences'
// spans come stream by stream in key order, and the first occurrence is the earliest.
// Lanes of every (device 1 then 0, pid 200 then 100, stream of `streams`), their chains
// interleaved row by row; lane 17 starts first.
void CheckInterleavedLanes(const std::vector<int64_t>& streams) {
  Trace t;
  struct Lane {
    int32_t device;
    int64_t pid, stream;
    TimeNs t0;
  };
  std::vector<Lane> lanes;
  for (int32_t device : {1, 0})
    for (int64_t pid : {200, 100})
      for (int64_t stream : streams) lanes.push_back({device, pid, stream, 0});
  for (size_t i = 0; i < lanes.size(); ++i) lanes[i].t0 = static_cast<TimeNs>((i * 7) % lanes.size()) * 1000 + 5000;
  lanes[17].t0 = 1000;  // device 0, pid 200, stream 10: the earliest chain
  // Row by row across the lanes: conv of every lane, then bn of every lane, then relu.
  for (int step = 0; step < 3; ++step)
    for (const Lane& l : lanes) {
      const TimeNs s = l.t0 + (step == 0 ? 0 : step == 1 ? 102'000 : 124'000);
      const TimeNs e = s + (step == 0 ? 100'000 : step == 1 ? 20'000 : 10'000);
      Kernel k;
      k.start = s;
      k.end = e;
      k.name = t.strings.Intern(step == 0 ? kConv : step == 1 ? kBn : kRelu);
      k.device = l.device;
      k.pid = l.pid;
      k.stream = l.stream;
      t.kernels.Add(k);
    }
  IterationAnalysis it = OneIteration(t, 1'000'000);
  std::vector<FusionCandidate> c = FindFusionCandidates(t, it, Classes(t), FusionOptions{});
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].occurrences, lanes.size());
  EXPECT_EQ(c[0].first_start_ns, 1000);
  EXPECT_EQ(c[0].device, lanes[17].device);
  EXPECT_EQ(c[0].stream, lanes[17].stream);
  EXPECT_EQ(c[0].first_rows, (std::vector<size_t>{17, 17 + lanes.size(), 17 + 2 * lanes.size()}));
  // The spans in the walk's order: lanes sorted by (device, pid, stream).
  std::vector<size_t> order(lanes.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::tie(lanes[a].device, lanes[a].pid, lanes[a].stream) <
           std::tie(lanes[b].device, lanes[b].pid, lanes[b].stream);
  });
  ASSERT_EQ(c[0].spans.size(), lanes.size());
  for (size_t i = 0; i < order.size(); ++i)
    EXPECT_EQ(c[0].spans[i], (std::pair<TimeNs, TimeNs>{lanes[order[i]].t0, lanes[order[i]].t0 + 134'000})) << i;
}

TEST(Fusion, ManyInterleavedStreamsKeyedByDevicePidAndStream) {
  CheckInterleavedLanes({13, 7, 9, 8, 11, 10});  // lane 17: device 0, pid 200, stream 10
}

// Past 256 streams a row's stream no longer fits the byte SortedByStream keeps while it can.
TEST(Fusion, MoreThan256StreamsAreKeptApart) {
  std::vector<int64_t> streams;
  for (int64_t s = 0; s < 90; ++s) streams.push_back((s * 37) % 90 + 5);  // 360 lanes
  CheckInterleavedLanes(streams);
}

TEST(Fusion, AChainNeverCrossesAnIterationAndKernelsOutsideIterationsAreIgnored) {
  Trace t;
  ConvBnRelu(t, 0);        // rows 0-2: relu belongs to the next iteration
  ConvBnRelu(t, 200'000);  // rows 3-5: bn is outside every kept iteration
  ConvBnRelu(t, 400'000);  // rows 6-8: all outside
  IterationAnalysis it = OneIteration(t, 1'000'000);
  it.iterations.push_back(it.iterations[0]);
  it.kernel_iteration = {0, 0, 1, 1, -1, 1, -1, -1, -1};
  std::vector<FusionCandidate> c = FindFusionCandidates(t, it, Classes(t), FusionOptions{});
  ASSERT_EQ(c.size(), 1u);  // conv -> bn of rows 0-1; nothing else has two kernels
  EXPECT_EQ(c[0].first_rows, (std::vector<size_t>{0, 1}));
  EXPECT_EQ(c[0].occurrences, 1u);
  EXPECT_EQ(c[0].per_iteration, 0.5);
}

TEST(Fusion, MaxChainCutsLongChainsAndTopKeepsTheLargestSavings) {
  Trace t;
  // gemm then five adds, 1 us apart: with max_chain 3, gemm+add+add, then add+add+add.
  AddKernel(t, kGemm, 0, 10'000);
  for (int i = 0; i < 5; ++i) AddKernel(t, kAdd, 11'000 + i * 11'000, 21'000 + i * 11'000);
  IterationAnalysis it = OneIteration(t, 100'000);
  FusionOptions o;
  o.max_chain = 3;
  std::vector<FusionCandidate> c = FindFusionCandidates(t, it, Classes(t), o);
  ASSERT_EQ(c.size(), 2u);
  // add x3: followers 20 us -> 0.75 x 20 + 2 = 17 us; gemm+add+add: the same 17 us, later first start.
  EXPECT_EQ(c[0].first_rows, (std::vector<size_t>{0, 1, 2}));
  EXPECT_EQ(c[1].first_rows, (std::vector<size_t>{3, 4, 5}));
  EXPECT_EQ(c[0].saving_ns, 17'000);
  EXPECT_EQ(c[1].saving_ns, 17'000);
  o.top = 1;
  EXPECT_EQ(FindFusionCandidates(t, it, Classes(t), o).size(), 1u);
}

TEST(Fusion, NoIterationsMeansNoCandidates) {
  Trace t;
  ConvBnRelu(t, 0);
  IterationAnalysis none;
  EXPECT_TRUE(FindFusionCandidates(t, none, Classes(t), FusionOptions{}).empty());
}

}  // namespace
}  // namespace tg
