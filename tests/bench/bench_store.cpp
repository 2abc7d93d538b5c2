// SQLite benchmarks: nsys export import, store write, store read.
//   build/tracegate-bench --benchmark_filter='Nsys|Store'
#include <benchmark/benchmark.h>

#include <string>

#include "bench_files.h"
#include "tracegate/analyzer/import.h"
#include "tracegate/analyzer/store.h"

namespace {

using namespace tg::bench;

void ImportSqliteFile(benchmark::State& state, bool nsys) {
  std::string file = SqliteFile(state.range(0), nsys);
  if (file.empty()) return state.SkipWithError("cannot write the generated database");
  tg::Trace last;
  for (auto _ : state) {
    tg::Trace trace;
    if (!tg::ImportTrace(file, &trace).ok()) return state.SkipWithError("import failed");
    last = std::move(trace);
  }
  Report(state, file, last);
}

// An Nsight Systems export (the nsys tables and columns of the same rows) read into a Trace.
void BM_NsysImport(benchmark::State& state) { ImportSqliteFile(state, true); }
BENCHMARK(BM_NsysImport)->Apply(Sizes);

// A tracegate store read into a Trace (what `tracegate analyze x.db` starts with).
void BM_StoreRead(benchmark::State& state) { ImportSqliteFile(state, false); }
BENCHMARK(BM_StoreRead)->Apply(Sizes);

// WriteStore of a trace in memory: one Append of every row, the indexes, the rename.
void BM_StoreWrite(benchmark::State& state) {
  std::string json = KinetoFile(state.range(0));
  tg::Trace trace;
  if (json.empty() || !tg::ImportTrace(json, &trace).ok()) return state.SkipWithError("import failed");
  std::string out = (BenchDir() / ("write_" + std::to_string(state.range(0)) + ".db")).string();
  for (auto _ : state) {
    if (!tg::WriteStore(trace, out).ok()) return state.SkipWithError("write failed");
  }
  Report(state, out, trace);
  // Wall time per event (Sizes() measures real time).
  state.counters["per_record"] = benchmark::Counter(static_cast<double>(EventRows(trace)),
                                                    benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  fs::remove(out);
}
BENCHMARK(BM_StoreWrite)->Apply(Sizes);

}  // namespace
