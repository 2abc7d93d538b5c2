// A job's ranks analysed as `tracegate analyze DIR` does: the worker pool loads, analyses and
// reduces each rank, then the cross-rank analysis builds the job report.
//   build/tracegate-bench --benchmark_filter=Job
// Arguments: ranks, events per rank (170,000 events: a 33.7 MB Kineto file per rank), and worker
// threads (0: every hardware thread, the CLI's default). The memory claims (peak RSS against the
// set's size) come from whole commands: tests/bench/compare_tools.sh --ranks (docs/PERFORMANCE.md).
#include <benchmark/benchmark.h>

#include <string>
#include <thread>
#include <vector>

#include "bench_files.h"
#include "tracegate/reports/job.h"

namespace {

using namespace tg::bench;

void BM_AnalyzeJob(benchmark::State& state) {
  const int world = static_cast<int>(state.range(0));
  const std::string dir = RanksDir(world, state.range(1));
  if (dir.empty()) return state.SkipWithError("cannot write the generated ranks");
  tg::StatusOr<std::vector<std::string>> files = tg::ListJobFiles({dir});
  if (!files.ok() || files.value().size() != static_cast<size_t>(world)) return state.SkipWithError("rank files");
  int64_t bytes = 0;
  for (const std::string& f : files.value()) bytes += static_cast<int64_t>(fs::file_size(f));
  tg::JobOptions options;
  options.jobs = static_cast<size_t>(state.range(2));
  options.progress = false;
  for (auto _ : state) {
    tg::StatusOr<nlohmann::json> job = tg::AnalyzeJob(files.value(), tg::AnalysisConfig{}, options);
    if (!job.ok()) return state.SkipWithError(job.status().message().c_str());
    benchmark::DoNotOptimize(job.value().size());
  }
  state.SetBytesProcessed(state.iterations() * bytes);
  state.counters["ranks"] = world;
  state.counters["set_mb"] = static_cast<double>(bytes) / 1e6;
  state.counters["workers"] = static_cast<double>(options.jobs ? options.jobs : std::thread::hardware_concurrency());
}
BENCHMARK(BM_AnalyzeJob)
    ->ArgNames({"ranks", "events", "jobs"})
    ->Args({8, 170000, 1})
    ->Args({8, 170000, 0})
    ->Args({64, 170000, 0})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
