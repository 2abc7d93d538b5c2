// The critical path against HTA's (HolisticTraceAnalysis, MIT) on its own end-to-end input
// (tests/fixtures/real/hta_critical_path, from ../shared/reference/hta_critical_path): HTA's
// CriticalPathAnalysis result overlaid on the trace marks every event of its path with
// args.critical = 1. HTA's set is read here by plain parsing of that JSON (zlib + nlohmann), not
// by tracegate's importer; events are matched by their correlation id.
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "tracegate/analyzer/critical_path.h"
#include "tracegate/analyzer/import.h"
#include "tracegate/analyzer/iterations.h"
#include "tracegate/analyzer/kernel_class.h"

namespace tg {
namespace {

const std::string kDir = std::string(TRACEGATE_FIXTURES_DIR) + "/real/hta_critical_path";

std::string Gunzip(const std::string& path) {
  std::string text;
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) return text;
  char buf[1 << 16];
  for (int n; (n = gzread(f, buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
  gzclose(f);
  return text;
}

// HTA's critical events: category -> correlation ids.
std::map<std::string, std::set<int64_t>> HtaCritical(const nlohmann::json& doc) {
  std::map<std::string, std::set<int64_t>> out;
  for (const auto& e : doc["traceEvents"]) {
    if (e.value("ph", "") != "X" || !e.contains("args")) continue;
    const auto& args = e["args"];
    if (!args.contains("critical") || args["critical"] != 1) continue;
    const std::string cat = e.value("cat", "");
    if (args.contains("correlation")) out[cat].insert(args["correlation"].get<int64_t>());
    else out[cat + " (no correlation)"].insert(0);
  }
  return out;
}

TEST(CriticalPathHta, SimpleAddGpuEventsAndRuntimeCallsAreOnThePath) {
  const nlohmann::json hta = nlohmann::json::parse(Gunzip(kDir + "/simple_add_overlaid_critical_path.json.gz"));
  const auto critical = HtaCritical(hta);
  ASSERT_EQ(critical.at("gpu_memcpy").size(), 16u);
  ASSERT_EQ(critical.at("kernel").size(), 5u);
  ASSERT_EQ(critical.at("gpu_memset").size(), 1u);
  ASSERT_EQ(critical.at("cuda_runtime").size(), 250u);

  Trace t;
  ASSERT_TRUE(ImportTrace(kDir + "/simple_add_input.json.gz", &t).ok());
  IterationOptions o;
  o.skip = 0;
  IterationAnalysis its;
  ASSERT_TRUE(AnalyzeIterations(t, o, &its).ok());
  ASSERT_EQ(its.iterations.size(), 1u);
  EXPECT_FALSE(its.from_markers);  // no ProfilerStep: the whole trace window is one iteration
  KernelClassifier classifier;
  ASSERT_TRUE(KernelClassifier::Create({}, &classifier).ok());
  std::map<std::string, std::set<int64_t>> ours;
  TimeNs first = INT64_MAX, last = 0;
  CriticalPathOptions options;
  options.on_segment = [&](const PathSegment& s) {
    const size_t row = static_cast<size_t>(s.row);
    const bool own = s.kind != PathKind::kLaunchDelay && s.kind != PathKind::kGpuGap;  // the activity's duration
    switch (s.table) {
      case PathSegment::Table::kKernel:
        if (own) ours["kernel"].insert(t.kernels.correlation[row]);
        break;
      case PathSegment::Table::kMemcpy:
        if (own) ours["gpu_memcpy"].insert(t.memcpys.correlation[row]);
        break;
      case PathSegment::Table::kMemset:
        if (own) ours["gpu_memset"].insert(t.memsets.correlation[row]);
        break;
      case PathSegment::Table::kApi:
        if (s.row >= 0) ours["cuda_runtime"].insert(t.api_calls.correlation[row]);
        break;
      case PathSegment::Table::kNone: break;
    }
    // A launch delay on the path puts its launch call's start there.
    if (s.kind == PathKind::kLaunchDelay && s.call >= 0)
      ours["cuda_runtime"].insert(t.api_calls.correlation[static_cast<size_t>(s.call)]);
    if (s.duration > 0) {
      first = std::min(first, s.start);
      last = std::max(last, s.start + s.duration);
    }
  };
  CriticalPathResult r;
  ASSERT_TRUE(AnalyzeCriticalPath(t, its, ClassifyKernels(t, classifier), nullptr, nullptr, options, &r).ok());
  TimeNs sum = 0;
  for (TimeNs ns : r.kind_ns) sum += ns;
  EXPECT_EQ(sum, its.iterations[0].latency_ns());

  // The GPU events: the same 5 kernels, 16 copies and 1 memset, and no other.
  for (const char* cat : {"kernel", "gpu_memcpy", "gpu_memset"}) EXPECT_EQ(ours[cat], critical.at(cat)) << cat;

  // The runtime calls. tracegate's iteration (no step markers: one span, from the first GPU
  // work's launch to the last GPU work's end) covers less than HTA's path, which runs from the
  // first host event to the last; HTA's calls inside the span are all on tracegate's path.
  const Iteration& span = its.iterations[0];
  std::map<int64_t, std::pair<double, double>> call_us;  // correlation -> (ts, dur) in us, as HTA read them
  for (const auto& e : hta["traceEvents"])
    if (e.value("cat", "") == "cuda_runtime" && e.contains("args") && e["args"].contains("correlation"))
      call_us[e["args"]["correlation"].get<int64_t>()] = {e["ts"].get<double>(), e["dur"].get<double>()};
  size_t matched = 0, outside = 0, zero_length = 0;
  for (int64_t c : critical.at("cuda_runtime")) {
    if (ours["cuda_runtime"].count(c)) {
      ++matched;
      continue;
    }
    // Difference 1: HTA's critical calls that tracegate leaves out lie wholly outside its span
    // (3 before the first GPU work's launch: cudaDeviceGetStreamPriorityRange, cudaStreamIsCapturing,
    // cudaMalloc; 11 after the last GPU work: the closing cudaDeviceSynchronize, cudaFree, ...).
    const auto [ts, dur] = call_us.at(c);
    const bool before = (ts + dur) * 1000 <= static_cast<double>(span.start);
    const bool after = ts * 1000 >= static_cast<double>(span.end);
    EXPECT_TRUE(before || after) << "HTA's critical call " << c << " at " << ts << " us is inside the span";
    ++outside;
  }
  for (int64_t c : ours["cuda_runtime"]) {
    if (critical.at("cuda_runtime").count(c)) continue;
    // Difference 2: tracegate's extra calls all last 0 us in the trace (cudaDeviceGetAttribute,
    // cudaStreamWaitEvent, cudaStreamGetPriority, ... between two critical calls of the thread):
    // every call is a node of its thread in tracegate's graph, while HTA's graph leaves zero-length
    // events out, so its path steps over them.
    ASSERT_TRUE(call_us.count(c)) << c;
    EXPECT_EQ(call_us.at(c).second, 0) << "tracegate's extra critical call " << c << " lasts " << call_us.at(c).second
                                       << " us";
    ++zero_length;
  }
  // The spans: HTA's path runs from its first critical event to its last (the whole program,
  // 41.6 s); tracegate's single marker-less iteration is the part with GPU work (16.0 s), inside it.
  double hta_first = 1e300, hta_last = 0;
  for (const auto& e : hta["traceEvents"])
    if (e.value("ph", "") == "X" && e.contains("args") && e["args"].contains("critical") &&
        e["args"]["critical"] == 1) {
      hta_first = std::min(hta_first, e["ts"].get<double>());
      hta_last = std::max(hta_last, e["ts"].get<double>() + e["dur"].get<double>());
    }
  EXPECT_LT(hta_first * 1000, static_cast<double>(span.start));
  EXPECT_GT(hta_last * 1000, static_cast<double>(span.end));
  EXPECT_EQ(first, span.start);  // tracegate's path covers its whole span
  EXPECT_EQ(last, span.end);
  EXPECT_EQ(matched, 236u);
  EXPECT_EQ(outside, 14u);
  EXPECT_EQ(zero_length, 74u);
  // Every nanosecond of the span is on the path, by kind.
  EXPECT_GT(r.kind_ns[static_cast<size_t>(PathKind::kKernelGemm)], 0);
  EXPECT_GT(r.kind_ns[static_cast<size_t>(PathKind::kCopy)], 0);
}

}  // namespace
}  // namespace tg
