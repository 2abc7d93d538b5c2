// Kineto JSON import and the whole `analyze` on it, full analysis and compare on imported traces.
//   build/tracegate-bench --benchmark_filter='Kineto|Analysis|Compare|WriteReport'
#include <benchmark/benchmark.h>

#include <string>

#include "bench_files.h"
#include "tracegate/analyzer/analysis.h"
#include "tracegate/reports/analysis_report.h"
#include "tracegate/reports/compare.h"
#include "tracegate/analyzer/import.h"

namespace {

using namespace tg::bench;

// Imports the generated file once per iteration, then runs `work` on the trace.
template <typename Work>
void RunOnKineto(benchmark::State& state, Work work) {
  std::string file = KinetoFile(state.range(0));
  if (file.empty()) return state.SkipWithError("cannot write the generated trace");
  tg::Trace last;
  for (auto _ : state) {
    tg::Trace trace;
    if (!tg::ImportTrace(file, &trace).ok()) return state.SkipWithError("import failed");
    work(trace);
    last = std::move(trace);
  }
  Report(state, file, last);
}

void BM_KinetoImport(benchmark::State& state) {
  RunOnKineto(state, [](const tg::Trace& trace) { benchmark::DoNotOptimize(trace.kernels.size()); });
}
BENCHMARK(BM_KinetoImport)->Apply(Sizes);

// The report document `tracegate analyze -o report.json` writes, for an imported trace.
// The whole report as a JSON document (what `compare` reads).
bool AnalyzeToJson(const tg::Trace& trace, nlohmann::json& report) {
  tg::AnalysisConfig config;
  tg::Analysis analysis;
  if (!tg::RunAnalysis(trace, config, &analysis).ok()) return false;
  report = tg::AnalysisToJson(trace, analysis, config);
  return true;
}

// What `tracegate analyze -o report.json` does after the import: every analysis and rule, then
// the report written as the CLI writes it (the iteration rows as text, WriteAnalysisJson).
bool AnalyzeToReportFile(const tg::Trace& trace) {
  tg::AnalysisConfig config;
  tg::Analysis analysis;
  if (!tg::RunAnalysis(trace, config, &analysis).ok()) return false;
  const nlohmann::json doc = tg::AnalysisToJson(trace, analysis, config, tg::IterationRows::kLeftOut);
  return tg::WriteAnalysisJson(doc, analysis.iterations, (BenchDir() / "bench_report.json").string()).ok();
}

// What `tracegate analyze FILE -o report.json` does: import, every analysis and rule, the report.
void BM_KinetoAnalyze(benchmark::State& state) {
  RunOnKineto(state, [&state](const tg::Trace& trace) {
    if (!AnalyzeToReportFile(trace)) state.SkipWithError("analysis failed");
  });
}
BENCHMARK(BM_KinetoAnalyze)->Apply(Sizes);

// Every analysis and rule plus the report file, on a trace already in memory.
void BM_FullAnalysis(benchmark::State& state) {
  std::string file = KinetoFile(state.range(0));
  tg::Trace trace;
  if (file.empty() || !tg::ImportTrace(file, &trace).ok()) return state.SkipWithError("import failed");
  for (auto _ : state) {
    if (!AnalyzeToReportFile(trace)) return state.SkipWithError("analysis failed");
  }
  Report(state, "", trace);
}
BENCHMARK(BM_FullAnalysis)->Apply(Sizes);

// The report file `analyze -o` writes (WriteAnalysisJson: the document, then its iteration rows
// as text) for the serving shape's analysis, a row per engine step: what the reports step of the
// shape matrix spends most of its time on (docs/PERFORMANCE.md, "A smaller host model, and report rows in parts").
void BM_WriteReport(benchmark::State& state) {
  const std::string file = ShapeFile(TraceShape::kServing, state.range(0));
  tg::Trace trace;
  if (file.empty() || !tg::ImportTrace(file, &trace).ok()) return state.SkipWithError("import failed");
  tg::AnalysisConfig config;
  tg::Analysis analysis;
  if (!tg::RunAnalysis(trace, config, &analysis).ok()) return state.SkipWithError("analysis failed");
  const nlohmann::json doc = tg::AnalysisToJson(trace, analysis, config, tg::IterationRows::kLeftOut);
  const std::string out = (BenchDir() / "bench_write_report.json").string();
  for (auto _ : state) {
    if (!tg::WriteAnalysisJson(doc, analysis.iterations, out).ok()) return state.SkipWithError("write failed");
  }
  const double bytes = static_cast<double>(fs::file_size(out));
  state.counters["rows"] = static_cast<double>(analysis.iterations.iterations.size());
  state.counters["report_mb"] = bytes / 1e6;
  state.SetBytesProcessed(static_cast<int64_t>(bytes) * state.iterations());
}
BENCHMARK(BM_WriteReport)->Arg(10000)->Unit(benchmark::kMillisecond)->UseRealTime();

// `tracegate compare` of two reports (seed 1 against seed 2 of the same shape), from parsed JSON.
void BM_CompareReports(benchmark::State& state) {
  nlohmann::json base, next;
  for (unsigned long long seed : {1ull, 2ull}) {
    std::string file = KinetoFile(state.range(0), seed);
    tg::Trace trace;
    if (file.empty() || !tg::ImportTrace(file, &trace).ok()) return state.SkipWithError("import failed");
    if (!AnalyzeToJson(trace, seed == 1 ? base : next)) return state.SkipWithError("analysis failed");
  }
  for (auto _ : state) {
    tg::Comparison c = tg::CompareReports(base, next, tg::CompareOptions{});
    benchmark::DoNotOptimize(tg::ComparisonToJson(c).size());
  }
  state.counters["report_kb"] = static_cast<double>(base.dump().size()) / 1e3;
  state.counters["peak_rss_mb"] = PeakRssMb();
}
BENCHMARK(BM_CompareReports)->Arg(100000)->Arg(1000000)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
