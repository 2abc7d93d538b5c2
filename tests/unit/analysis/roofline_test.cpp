#include "tracegate/analyzer/roofline.h"

#include <gtest/gtest.h>

#include <fstream>

#include "temp_file.h"
#include "trace_builder.h"

namespace tg {
namespace {

using testing::AddApi;
using testing::AddKernel;
using testing::AddRange;

std::string WriteTemp(const std::string& name, const std::string& content) {
  return ::tg::testing::WriteTempFile(name, content);
}

std::vector<KernelCost> Costs(const std::string& json) {
  std::vector<KernelCost> costs;
  Status s = LoadKernelCosts(WriteTemp("costs.json", json), &costs);
  EXPECT_TRUE(s.ok()) << s.message();
  return costs;
}

PeakRates H200() {
  PeakRates p;
  p.has_bandwidth = p.has_flops = true;
  p.bandwidth_gbs = 4800;
  p.tflops = 989;
  return p;
}

// Two launches of 10 us, each moving 8388608 bytes and doing 1048576 FLOPs.
void ExpectTwoAddReluLaunches(const RooflineItem& it, const char* label, const char* source) {
  EXPECT_EQ(it.label, label);
  EXPECT_EQ(it.source, source);
  EXPECT_EQ(it.launches, 2u);
  EXPECT_EQ(it.time_ns, 20'000);
  EXPECT_EQ(it.bytes, 16'777'216);  // 2 x 8388608
  EXPECT_EQ(it.flops, 2'097'152);
  EXPECT_DOUBLE_EQ(it.achieved_gbs, 838.8608);      // 16777216 B / 20000 ns
  EXPECT_DOUBLE_EQ(it.achieved_tflops, 0.1048576);  // 2097152 / 20000 / 1000
  EXPECT_DOUBLE_EQ(it.intensity, 0.125);            // 1048576 / 8388608
}

TEST(Roofline, LoadsCostsWithOptionalFlops) {
  std::vector<KernelCost> c = Costs(R"([{"kernel": "add_relu", "bytes": 8388608, "flops": 1048576},
                                        {"kernel": "^gemm", "bytes": 1.5e9}])");
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].pattern, "add_relu");
  EXPECT_EQ(c[0].bytes, 8388608);
  EXPECT_EQ(c[0].flops, 1048576);
  EXPECT_EQ(c[1].bytes, 1.5e9);
  EXPECT_EQ(c[1].flops, 0);
}

TEST(Roofline, CostsFileErrorsNameThePathAndTheEntry) {
  std::vector<KernelCost> c;
  std::string missing = ::tg::testing::TempPath("no_such.json");
  Status s = LoadKernelCosts(missing, &c);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.message(), missing + ": cannot open the costs file");

  struct Bad {
    const char* json;
    const char* message;  // after "<path>: "
  };
  const Bad bad[] = {
      {"[{", "not valid JSON"},
      {R"({"kernel": "a", "bytes": 1})", "a costs file is a JSON array"},
      {R"([{"kernel": "a", "bytes": 1}, {"kernel": "b", "bytes": -1}])",
       "entry 2: 'bytes' must be a non-negative number"},
      {R"([{"kernel": "a", "bytes": "8"}])", "entry 1: 'bytes' must be a non-negative number"},
      {R"([{"kernel": "a"}])", "entry 1: 'bytes' is missing"},
      {R"([{"kernel": "a", "bytes": 1, "flops": -2}])", "entry 1: 'flops' must be a non-negative number"},
      {R"([{"kernel": "a(", "bytes": 1}])", "entry 1: invalid regular expression 'a('"},
      {R"([{"kernel": "a", "bytes": 1, "byte": 2}])", "entry 1: unknown key 'byte'"},
      {R"([{"bytes": 1}])", "entry 1: 'kernel' must be a non-empty regular expression string"},
      {R"([3])", "entry 1: expected an object"},
  };
  for (const Bad& b : bad) {
    std::string path = WriteTemp("bad.json", b.json);
    s = LoadKernelCosts(path, &c);
    EXPECT_EQ(s.code(), StatusCode::kInvalidInput) << b.json;
    EXPECT_EQ(s.message().rfind(path + ": " + b.message, 0), 0u) << s.message();
  }
}

TEST(Roofline, CostsGroupKernelsByTheFirstMatchingPattern) {
  Trace t;
  AddKernel(t, "add_relu_fused", 0, 10'000);
  AddKernel(t, "gemm_big", 10'000, 50'000);
  AddKernel(t, "add_relu_fused", 50'000, 60'000);
  AddKernel(t, "add_relu_fused", 60'000, 70'000);  // left out below
  // "add" would match too, but "add_relu" comes first; "gemm" matches nothing in the costs.
  std::vector<KernelCost> costs = Costs(R"([{"kernel": "add_relu", "bytes": 8388608, "flops": 1048576},
                                            {"kernel": "add", "bytes": 1}])");
  std::vector<RooflineItem> items = BuildRoofline(t, costs, H200(), {1, 1, 1, 0});
  ASSERT_EQ(items.size(), 1u);
  const RooflineItem& it = items[0];
  ExpectTwoAddReluLaunches(it, "add_relu", "costs");
  ASSERT_TRUE(it.has_peak);
  EXPECT_DOUBLE_EQ(it.bandwidth_share, 838.8608 / 4800);
  EXPECT_DOUBLE_EQ(it.flops_share, 0.1048576 / 989);
  EXPECT_TRUE(it.memory_bound);  // 0.125 < ridge 989000 / 4800 = 206 FLOP/B
  EXPECT_EQ(it.kernel_rows, (std::vector<size_t>{0, 2}));
}

TEST(Roofline, WithoutPeaksNothingIsMemoryBoundAndFlopsOnlyItemsHaveNoIntensity) {
  Trace t;
  AddKernel(t, "gemm", 0, 1000);
  AddKernel(t, "copy", 1000, 2000);
  std::vector<KernelCost> costs = Costs(R"([{"kernel": "gemm", "bytes": 0, "flops": 1e6},
                                            {"kernel": "copy", "bytes": 1e6}])");
  std::vector<RooflineItem> items = BuildRoofline(t, costs, PeakRates{}, {});
  ASSERT_EQ(items.size(), 2u);
  EXPECT_FALSE(items[1].has_peak);
  EXPECT_FALSE(items[1].memory_bound);
  items = BuildRoofline(t, costs, H200(), {});
  EXPECT_EQ(items[0].intensity, 0);
  EXPECT_FALSE(items[0].memory_bound);              // no bytes: nothing to be bound by
  EXPECT_DOUBLE_EQ(items[0].achieved_tflops, 1.0);  // 1e6 FLOP / 1000 ns = 1000 GFLOP/s
  EXPECT_TRUE(items[1].memory_bound);
}

// A launch: the API call on (pid 100, tid `tid`) at `api_start`, its kernel at [k_start, k_end).
size_t Launch(Trace& t, const char* kernel, int64_t corr, TimeNs api_start, TimeNs k_start, TimeNs k_end,
              int64_t tid = 100) {
  AddApi(t, "cudaLaunchKernel", api_start, api_start + 5, corr, 100, tid);
  return AddKernel(t, kernel, k_start, k_end, 0, 7, corr);
}

TEST(Roofline, AnnotatedRangesCountTheKernelsTheirThreadLaunchedInsideThem) {
  Trace t;
  AddRange(t, "add_relu_fused bytes=8388608 flops=1048576", 1000, 2000);
  Launch(t, "add_relu_fused", 1, 1500, 3000, 13'000);
  AddRange(t, "add_relu_fused  bytes=8388608 flops=1048576 ", 20'000, 21'000);  // same label
  Launch(t, "add_relu_fused", 2, 20'500, 22'000, 32'000);
  Launch(t, "add_relu_fused", 3, 20'600, 32'000, 42'000, /*tid=*/101);  // another thread: not inside
  Launch(t, "add_relu_fused", 4, 21'000, 42'000, 52'000);               // launched at the range's end
  std::vector<RooflineItem> items = BuildRoofline(t, {}, H200(), {});
  ASSERT_EQ(items.size(), 1u);
  const RooflineItem& it = items[0];
  ExpectTwoAddReluLaunches(it, "add_relu_fused", "nvtx");
  EXPECT_EQ(it.kernel_rows, (std::vector<size_t>{0, 1}));
}

TEST(Roofline, NestedRangesEachCountAllTheirKernels) {
  Trace t;
  AddRange(t, "block bytes=300", 0, 1000, 100, 100, 0);
  AddRange(t, "op flops=50 bytes=100", 100, 200, 100, 100, 1);
  Launch(t, "k1", 1, 150, 1000, 1100);
  Launch(t, "k2", 2, 500, 1100, 1300);
  std::vector<RooflineItem> items = BuildRoofline(t, {}, PeakRates{}, {});
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0].label, "block");
  EXPECT_EQ(items[0].launches, 2u);
  EXPECT_EQ(items[0].time_ns, 300);
  EXPECT_DOUBLE_EQ(items[0].achieved_gbs, 1.0);  // 300 B / 300 ns
  EXPECT_EQ(items[1].label, "op");
  EXPECT_EQ(items[1].launches, 1u);
  EXPECT_EQ(items[1].flops, 50);
  EXPECT_DOUBLE_EQ(items[1].intensity, 0.5);
}

TEST(Roofline, ARangeWithACostedOrLeftOutKernelCountsNothing) {
  Trace t;
  AddRange(t, "pair bytes=1000", 0, 100);
  Launch(t, "add_relu_fused", 1, 10, 1000, 2000);
  Launch(t, "other", 2, 20, 2000, 3000);
  AddRange(t, "solo bytes=1000", 200, 300);
  Launch(t, "solo", 3, 210, 3000, 4000);
  std::vector<KernelCost> costs = Costs(R"([{"kernel": "add_relu", "bytes": 500}])");
  std::vector<RooflineItem> items = BuildRoofline(t, costs, PeakRates{}, {});
  ASSERT_EQ(items.size(), 2u);  // the costs item and "solo"; "pair" is partly costed
  EXPECT_EQ(items[0].source, "costs");
  EXPECT_EQ(items[0].kernel_rows, (std::vector<size_t>{0}));
  EXPECT_EQ(items[1].label, "solo");
  items = BuildRoofline(t, {}, PeakRates{}, {1, 1, 0});  // "solo"'s only kernel is left out
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].label, "pair");
  EXPECT_EQ(items[0].launches, 2u);
}

TEST(Roofline, AReusedCorrelationIdFindsTheKernelsOwnProcess) {
  Trace t;
  AddRange(t, "op bytes=100", 0, 100);                 // pid 100
  AddApi(t, "cudaLaunchKernel", 10, 20, 1, 100, 100);  // pid 100, inside the range
  AddApi(t, "cudaLaunchKernel", 10, 20, 1, 200, 100);  // pid 200 reuses correlation 1
  size_t own = AddKernel(t, "a", 1000, 1100, 0, 7, 1);
  size_t other = AddKernel(t, "b", 2000, 2100, 0, 7, 1);
  t.kernels.pid.set(own, 100);
  t.kernels.pid.set(other, 200);  // launched by pid 200: not inside pid 100's range
  std::vector<RooflineItem> items = BuildRoofline(t, {}, PeakRates{}, {});
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].kernel_rows, (std::vector<size_t>{own}));
}

TEST(Roofline, OnlyWellFormedTokensAreCounts) {
  Trace t;
  AddRange(t, "bytes=64", 0, 100);  // nothing left for a label: the whole name
  Launch(t, "a", 1, 10, 1000, 1064);
  AddRange(t, "odd bytes=12x flops=abc bytes=8", 200, 300);
  Launch(t, "b", 2, 210, 2000, 2008);
  AddRange(t, "plain range", 400, 500);
  Launch(t, "c", 3, 410, 3000, 3010);
  std::vector<RooflineItem> items = BuildRoofline(t, {}, PeakRates{}, {});
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0].label, "bytes=64");
  EXPECT_EQ(items[0].bytes, 64);
  EXPECT_EQ(items[1].label, "odd bytes=12x flops=abc");
  EXPECT_EQ(items[1].bytes, 8);
  EXPECT_EQ(items[1].flops, 0);
}

}  // namespace
}  // namespace tg
