// Import and analysis benchmarks on generated Kineto traces (docs/PERFORMANCE.md).
//   build/tracegate-bench --benchmark_filter=Kineto
// Files are generated once into $TRACEGATE_BENCH_DIR (default /tmp/tracegate-bench) and reused.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "gen_kineto.h"
#include "tracegate/analysis_report.h"
#include "tracegate/import.h"
#include "tracegate/summary.h"

namespace {

namespace fs = std::filesystem;

std::string KinetoFile(long long events) {
  const char* env = std::getenv("TRACEGATE_BENCH_DIR");
  fs::path dir = env ? env : "/tmp/tracegate-bench";
  fs::create_directories(dir);
  fs::path file = dir / ("kineto_" + std::to_string(events) + ".json");
  if (!fs::exists(file) && tg::bench::WriteKinetoTrace(file.c_str(), events, 4, 1) < 0) return "";
  return file.string();
}

double PeakRssMb() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

void Report(benchmark::State& state, const std::string& file, const tg::Trace& trace) {
  auto bytes = static_cast<int64_t>(fs::file_size(file));
  state.SetBytesProcessed(state.iterations() * bytes);
  size_t events = trace.GpuEventCount() + trace.api_calls.size() + trace.ranges.size();
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(events));
  state.counters["file_mb"] = static_cast<double>(bytes) / 1e6;
  state.counters["kept_events"] = static_cast<double>(events);
  state.counters["peak_rss_mb"] = PeakRssMb();
}

// Imports the generated file once per iteration, then runs `work` on the trace.
template <typename Work>
void RunOnKineto(benchmark::State& state, Work work) {
  std::string file = KinetoFile(state.range(0));
  if (file.empty()) return state.SkipWithError("cannot write the generated trace");
  tg::Trace last;
  for (auto _ : state) {
    tg::Trace trace;
    if (!tg::ImportTrace(file, trace).ok()) return state.SkipWithError("import failed");
    work(trace);
    last = std::move(trace);
  }
  Report(state, file, last);
}

void BM_KinetoImport(benchmark::State& state) {
  RunOnKineto(state, [](const tg::Trace& trace) { benchmark::DoNotOptimize(trace.kernels.size()); });
}
BENCHMARK(BM_KinetoImport)->Arg(100000)->Arg(1000000)->Unit(benchmark::kMillisecond)->UseRealTime();

// What `tracegate analyze FILE -o report.json` does: import, every analysis and rule, the report.
void BM_KinetoAnalyze(benchmark::State& state) {
  RunOnKineto(state, [&state](const tg::Trace& trace) {
    tg::AnalysisConfig config;
    tg::Analysis analysis;
    if (!tg::RunAnalysis(trace, config, &analysis).ok()) state.SkipWithError("analysis failed");
    benchmark::DoNotOptimize(tg::AnalysisToJson(trace, analysis, config).size());
  });
}
BENCHMARK(BM_KinetoAnalyze)->Arg(100000)->Arg(1000000)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
