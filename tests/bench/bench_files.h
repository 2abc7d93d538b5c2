// Inputs and counters shared by the benchmarks (docs/PERFORMANCE.md). Files are generated once
// into $TRACEGATE_BENCH_DIR/gen<N> (default /tmp/tracegate-bench/gen<N>, N = kGeneratorVersion) and
// reused: same arguments, same bytes.
#pragma once

#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "gen_kineto.h"
#include "gen_store.h"
#include "tracegate/analyzer/model.h"

namespace tg::bench {

namespace fs = std::filesystem;

// $TRACEGATE_BENCH_DIR (default /tmp/tracegate-bench)/gen<kGeneratorVersion>.
inline fs::path BenchDir() {
  const char* env = std::getenv("TRACEGATE_BENCH_DIR");
  fs::path dir = fs::path(env ? env : "/tmp/tracegate-bench") / ("gen" + std::to_string(kGeneratorVersion));
  fs::create_directories(dir);
  return dir;
}

// kineto_<events>.json (seed 1) or kineto_<events>_seed<seed>.json; "" when it cannot be written.
inline std::string KinetoFile(long long events, unsigned long long seed = 1) {
  std::string stem = "kineto_" + std::to_string(events) + (seed == 1 ? "" : "_seed" + std::to_string(seed));
  fs::path file = BenchDir() / (stem + ".json");
  if (!fs::exists(file) && WriteKinetoTrace(file.c_str(), events, 4, seed) < 0) return "";
  return file.string();
}

// shapes<kShapeVersion>/<shape>_<steps>.json (WriteKinetoShape, seed 1, 4 streams: the files
// compare_shapes.sh writes); "" when it cannot be written.
inline std::string ShapeFile(TraceShape shape, long long steps) {
  const fs::path dir = BenchDir() / ("shapes" + std::to_string(kShapeVersion));
  fs::create_directories(dir);
  const fs::path file = dir / (std::string(ShapeName(shape)) + "_" + std::to_string(steps) + ".json");
  if (!fs::exists(file) && WriteKinetoShape(file.c_str(), shape, steps, 4, 1) < 0) return "";
  return file.string();
}

// store_<events>.db or nsys_<events>.sqlite, from KinetoFile(events).
inline std::string SqliteFile(long long events, bool nsys) {
  std::string json = KinetoFile(events);
  if (json.empty()) return "";
  fs::path file = BenchDir() / ((nsys ? "nsys_" : "store_") + std::to_string(events) + (nsys ? ".sqlite" : ".db"));
  if (!fs::exists(file) &&
      !WriteStoreAndNsys(json, nsys ? "" : file.string(), nsys ? file.string() : "").empty()) {
    return "";
  }
  return file.string();
}

// ranks<world>_<events>/rank-<r>.json: one job of `world` ranks (WriteKinetoRanks, seed 1); ""
// when it cannot be written.
inline std::string RanksDir(int world, long long events) {
  fs::path dir = BenchDir() / ("ranks" + std::to_string(world) + "_" + std::to_string(events));
  if (fs::exists(dir / ("rank-" + std::to_string(world - 1) + ".json"))) return dir.string();
  fs::create_directories(dir);
  if (WriteKinetoRanks(dir.string(), world, events, 4, 1) < 0) return "";
  return dir.string();
}

inline double PeakRssMb() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

inline size_t EventRows(const Trace& trace) {
  return trace.GpuEventCount() + trace.api_calls.size() + trace.ranges.size() + trace.samples.size();
}

// Bytes (of `file`, when given) and events per second, plus file size, rows and peak RSS.
inline void Report(benchmark::State& state, const std::string& file, const Trace& trace) {
  auto events = static_cast<int64_t>(EventRows(trace));
  state.SetItemsProcessed(state.iterations() * events);
  state.counters["kept_events"] = static_cast<double>(events);
  if (!file.empty()) {
    auto bytes = static_cast<int64_t>(fs::file_size(file));
    state.SetBytesProcessed(state.iterations() * bytes);
    state.counters["file_mb"] = static_cast<double>(bytes) / 1e6;
    state.counters["bytes_per_event"] = static_cast<double>(bytes) / static_cast<double>(events);
  }
  state.counters["peak_rss_mb"] = PeakRssMb();
}

// 10^5 and 10^6 events; 10^7 (a 2 GB JSON file) only with TRACEGATE_BENCH_HUGE=1.
inline void Sizes(benchmark::internal::Benchmark* b) {
  b->Arg(100000)->Arg(1000000);
  if (const char* huge = std::getenv("TRACEGATE_BENCH_HUGE"); huge && std::string(huge) == "1") b->Arg(10000000);
  b->Unit(benchmark::kMillisecond)->UseRealTime();
}

}  // namespace tg::bench
