// The report's memory_peak_mb from a recording: the collector's peak of CUDA allocations (part
// metadata, collector.h) wins over NVML's memory_used samples, and says where it came from.
#include <gtest/gtest.h>

#include "collector.h"
#include "trace_builder.h"
#include "tracegate/reports/report_provenance.h"
#include "collector/src/parts.h"

namespace tg {
namespace {

// One NVML sample tick of device 0 with `used_mb` of memory in use.
void AddMemorySample(Trace& t, double used_mb) {
  Sample s;
  s.time = 1'500;
  s.device = 0;
  s.memory_used_mb = used_mb;
  t.samples.Add(s);
}

nlohmann::json Report(const Trace& t) {
  nlohmann::json doc;
  AddProvenanceJson(doc, t, Analysis{}, AnalysisConfig{});
  return doc;
}

TEST(CuptiMemoryPeakReport, CollectorAllocationsWinOverNvmlSamples) {
  Trace t;
  testing::AddKernel(t, "k", 1'000, 2'000);
  AddMemorySample(t, 3000);
  t.metadata[std::string(meta::kMemoryPeakMb)] = "512.0";
  t.metadata[std::string(meta::kMemoryPeakMbSource)] = cupti::kMemoryPeakSource;
  nlohmann::json r = Report(t);
  EXPECT_EQ(r["memory_peak_mb"], 512.0);
  EXPECT_EQ(r["memory_peak_mb_source"], "cupti allocations");
  EXPECT_FALSE(r.contains("memory_peak_mb_reason"));
}

TEST(CuptiMemoryPeakReport, NvmlSamplesWhenTheCollectorSawNoAllocation) {
  Trace t;
  testing::AddKernel(t, "k", 1'000, 2'000);
  AddMemorySample(t, 3000);
  t.metadata[std::string(meta::kMemoryPeakMb)] = "not a number";  // ignored
  nlohmann::json r = Report(t);
  EXPECT_EQ(r["memory_peak_mb"], 3000.0);
  EXPECT_EQ(r["memory_peak_mb_source"], "nvml samples");
}

}  // namespace
}  // namespace tg
