#include "tracegate/analyzer/gpu_specs.h"

#include <gtest/gtest.h>

#include "trace_builder.h"

namespace tg {
namespace {

using testing::AddCopy;
using testing::AddKernel;

void AddDevice(Trace& t, int32_t id, const char* name, double peak_gbs = 0) {
  Device d;
  d.id = id;
  d.name = name;
  d.peak_bandwidth_gbs = peak_gbs;
  t.devices.push_back(d);
}

TEST(GpuSpecs, FindsTheSpecificVariantBeforeItsFamily) {
  struct Case {
    const char* device;  // as CUDA / NVML name the device
    double gbs, fp32, fp16;
  };
  const Case cases[] = {
      {"NVIDIA H200", 4800, 67, 989},
      {"NVIDIA H200 NVL", 4800, 60, 835},
      {"NVIDIA H100 80GB HBM3", 3350, 67, 989},
      {"NVIDIA H100 PCIe", 2000, 51, 756},
      {"NVIDIA A100-SXM4-80GB", 2039, 19.5, 312},  // SPEC.md's A100
      {"NVIDIA A100-SXM4-40GB", 1555, 19.5, 312},
      {"NVIDIA A100-PCIE-40GB", 1555, 19.5, 312},
      {"NVIDIA A100 80GB PCIe", 1935, 19.5, 312},
      {"NVIDIA A10", 600, 31.2, 125},
      {"NVIDIA A10G", 600, 31.2, 125},
      {"Tesla V100-SXM2-16GB", 900, 15.7, 125},
      {"Tesla V100-PCIE-32GB", 900, 14, 112},
      {"NVIDIA RTX A6000", 768, 38, 150},  // SPEC.md's figures, not the datasheet's 38.7 / 154.8
      {"NVIDIA GeForce RTX 3090 Ti", 1008, 40, 160},
      {"NVIDIA L40S", 864, 91.6, 362},
      {"NVIDIA L40", 864, 90.5, 181},
      {"NVIDIA L4", 300, 30.3, 121},
      {"Tesla T4", 320, 8.1, 65},
  };
  for (const Case& c : cases) {
    const GpuSpec* g = FindGpuSpec(c.device);
    ASSERT_NE(g, nullptr) << c.device;
    EXPECT_EQ(g->bandwidth_gbs, c.gbs) << c.device;
    EXPECT_EQ(g->fp32_tflops, c.fp32) << c.device;
    EXPECT_EQ(g->fp16_tflops, c.fp16) << c.device;
  }
}

TEST(GpuSpecs, MatchesWholeTokensOnly) {
  EXPECT_EQ(FindGpuSpec("NVIDIA RTX A1000"), nullptr);         // not an A10
  EXPECT_EQ(FindGpuSpec("NVIDIA GeForce RTX 3090"), nullptr);  // only the Ti is in the table
  EXPECT_EQ(FindGpuSpec("AMD Instinct MI300X"), nullptr);
  EXPECT_EQ(FindGpuSpec(""), nullptr);
}

TEST(GpuSpecs, EveryEntryIsReachableAndCitesItsSource) {
  for (const GpuSpec& g : KnownGpus()) {
    EXPECT_EQ(FindGpuSpec(g.match), &g) << g.match << " is shadowed by an earlier entry";
    EXPECT_NE(std::string(g.source), "") << g.name;
    EXPECT_GT(g.bandwidth_gbs, 0) << g.name;
    EXPECT_GT(g.fp16_tflops, g.fp32_tflops) << g.name;
  }
}

// Device 0 a T4, device 1 an H200, one kernel on each.
Trace T4AndH200() {
  Trace t;
  AddDevice(t, 0, "Tesla T4");
  AddDevice(t, 1, "NVIDIA H200");
  AddKernel(t, "a", 0, 10, 1);
  AddKernel(t, "b", 0, 10, 0);
  return t;
}

TEST(GpuSpecs, TiesGoToTheLowestDeviceId) { EXPECT_EQ(ResolvePeakRates(T4AndH200(), {}).device_name, "Tesla T4"); }

TEST(GpuSpecs, BusiestDeviceComesFromTheTable) {
  Trace t = T4AndH200();
  AddCopy(t, CopyKind::kHtoD, 64, 10, 20, MemKind::kPinned, MemKind::kDevice, 1);  // device 1: 2 events, device 0: 1
  PeakRates r = ResolvePeakRates(t, {});
  EXPECT_EQ(r.device_name, "NVIDIA H200");
  ASSERT_TRUE(r.has_bandwidth && r.has_flops);
  EXPECT_EQ(r.bandwidth_gbs, 4800);
  EXPECT_EQ(r.tflops, 989);  // FP16 tensor, dense
  EXPECT_EQ(r.source.rfind("table: NVIDIA H200 (NVIDIA H200 Tensor Core GPU datasheet", 0), 0u) << r.source;
}

TEST(GpuSpecs, OverridesWinPerField) {
  Trace t;
  AddDevice(t, 0, "NVIDIA H200");
  AddKernel(t, "a", 0, 10);
  PeakRates r = ResolvePeakRates(t, {.bandwidth_gbs = 4000, .tflops = 0});
  EXPECT_EQ(r.bandwidth_gbs, 4000);
  EXPECT_EQ(r.tflops, 989);
  EXPECT_EQ(r.source.rfind("bandwidth: override; FLOP/s: table: NVIDIA H200", 0), 0u) << r.source;
  r = ResolvePeakRates(t, {.bandwidth_gbs = 4000, .tflops = 500});
  EXPECT_EQ(r.tflops, 500);
  EXPECT_EQ(r.source, "override");
}

TEST(GpuSpecs, UnknownDeviceFallsBackToTheTracesBandwidthAndSaysWhatIsMissing) {
  Trace t;
  AddDevice(t, 0, "Mystery GPU", 555);
  AddKernel(t, "a", 0, 10);
  PeakRates r = ResolvePeakRates(t, {});
  EXPECT_TRUE(r.has_bandwidth);
  EXPECT_EQ(r.bandwidth_gbs, 555);
  EXPECT_FALSE(r.has_flops);
  EXPECT_EQ(r.source, "bandwidth: trace; FLOP/s: unknown ('Mystery GPU' is not in the GPU table; pass --peak-tflops)");
}

TEST(GpuSpecs, NoDeviceNameMeansNoRates) {
  Trace t;
  AddKernel(t, "a", 0, 10);
  PeakRates r = ResolvePeakRates(t, {});
  EXPECT_FALSE(r.has_bandwidth);
  EXPECT_FALSE(r.has_flops);
  EXPECT_EQ(r.device_name, "");
  EXPECT_EQ(r.source, "no device name in the trace; pass --peak-gbs/--peak-tflops");
}

TEST(GpuSpecs, ATraceWithOneDeviceAndNoWorkStillNamesIt) {
  Trace t;
  AddDevice(t, 3, "NVIDIA L4");
  PeakRates r = ResolvePeakRates(t, {});
  EXPECT_EQ(r.device_name, "NVIDIA L4");
  EXPECT_EQ(r.bandwidth_gbs, 300);
}

}  // namespace
}  // namespace tg
