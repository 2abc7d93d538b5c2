// The collector's CPU-side costs without a GPU (docs/PERFORMANCE.md, "Collector CPU per record"):
// synthetic CUPTI activity buffers (the real record structs of cupti_activity.h, packed one after
// another as CUPTI packs them, so CUPTI's own cuptiActivityGetNextRecord walks them) through the
// collector's buffer-completed path (collector/cupti/completed.h), and the converted rows through
// the store writer.
//   build/tracegate-bench --benchmark_filter='Convert|Cupti' --benchmark_repetitions=5
#include <benchmark/benchmark.h>
#include <cupti.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench_files.h"
#include "completed.h"
#include "tracegate/analyzer/store.h"

namespace {

using namespace tg::bench;

constexpr size_t kBufferBytes = size_t{8} << 20;  // RecordingOptions::buffer_mb's default
constexpr int64_t kPid = 4242;

// A mangled C++ function name of about `target` characters (Itanium ABI, as CUPTI reports kernel
// names): nested namespaces/classes of random identifiers, then parameter types.
std::string MangledName(std::mt19937_64& rng, size_t target) {
  static const char* kParams[] = {"Pf", "PKf", "i", "l", "m", "Ph", "PKh", "f", "d", "b", "Pi", "PKi"};
  std::string name = "_ZN";
  std::string params;
  for (int i = 0; i < 4; ++i) params += kParams[rng() % std::size(kParams)];
  while (name.size() + params.size() + 1 < target) {
    size_t len = 4 + rng() % 24;
    std::string id(len, 'a');
    for (char& c : id) c = static_cast<char>('a' + rng() % 26);
    name += std::to_string(len) + id;
  }
  return name + "E" + params;
}

// The kernel names one process shows CUPTI: each a string of its own (CUPTI's name pointer is one
// per kernel function), 100-400 characters. A few names are there twice under two pointers (the
// same kernel compiled into two modules).
struct KernelNames {
  std::vector<std::unique_ptr<std::string>> names;
  const char* At(size_t i) const { return names[i]->c_str(); }
  size_t Add(std::string s) {
    names.push_back(std::make_unique<std::string>(std::move(s)));
    return names.size() - 1;
  }
};

// Appends one record of type T (zeroed, then filled by `fill`) to the buffer.
template <typename T, typename Fill>
bool Put(std::vector<uint8_t>& buf, size_t& used, CUpti_ActivityKind kind, Fill fill) {
  if (used + sizeof(T) > buf.size()) return false;
  T r;
  std::memset(&r, 0, sizeof r);
  r.kind = kind;
  fill(r);
  std::memcpy(buf.data() + used, &r, sizeof r);
  used += sizeof r;
  return true;
}

// One full 8 MB activity buffer of a training step's activity, seed fixed: per launch a runtime
// cudaLaunchKernel, its driver cuLaunchKernel and the kernel; copies and memsets with their API
// calls; some other runtime calls (synchronisations, event records). Kernel names: 20 hot ones
// take 70% of launches, 600 warm ones 29%, and 1% are names seen only once.
struct SyntheticBuffer {
  KernelNames names;
  std::vector<uint8_t> bytes;
  size_t used = 0;
  size_t records = 0;
  size_t kernels = 0;

  SyntheticBuffer() : bytes(kBufferBytes, 0) {
    std::mt19937_64 rng(1);
    auto length = [&] { return 100 + rng() % 301; };
    for (int i = 0; i < 620; ++i) names.Add(MangledName(rng, length()));
    for (int i = 0; i < 5; ++i) names.Add(*names.names[20 + i]);  // same text, another pointer
    uint64_t t = 1'000'000'000;
    uint32_t correlation = 1;
    auto api = [&](CUpti_ActivityKind kind, uint32_t cbid) {
      return Put<CUpti_ActivityAPI>(bytes, used, kind, [&](CUpti_ActivityAPI& r) {
        r.cbid = cbid;
        r.start = t;
        r.end = t + 2'000;
        r.processId = kPid;
        r.threadId = 4243;
        r.correlationId = correlation;
      });
    };
    for (;;) {
      size_t before = used;
      const uint64_t pick = rng() % 100;
      bool ok = true;
      if (pick < 80) {  // a kernel launch
        const char* name;
        const uint64_t p = rng() % 100;
        if (p < 70) name = names.At(rng() % 20);
        else if (p < 99) name = names.At(20 + rng() % 605);  // 600 warm names, 5 of them twice
        else name = names.At(names.Add(MangledName(rng, length())));
        ok = api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000) &&
             api(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel) &&
             Put<CUpti_ActivityKernel10>(bytes, used, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, [&](CUpti_ActivityKernel10& r) {
               r.name = name;
               r.start = t + 5'000;
               r.end = t + 5'000 + 10'000 + rng() % 100'000;
               r.deviceId = 0;
               r.contextId = 1;
               r.streamId = 7;
               r.correlationId = correlation;
               r.gridX = 1024;
               r.gridY = r.gridZ = 1;
               r.blockX = 256;
               r.blockY = r.blockZ = 1;
               r.registersPerThread = 32;
               r.dynamicSharedMemory = 4096;
             });
        kernels += ok ? 1 : 0;
        records += ok ? 3 : 0;
      } else if (pick < 90) {  // an async copy
        ok = api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020) &&
             api(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync) &&
             Put<CUpti_ActivityMemcpy6>(bytes, used, CUPTI_ACTIVITY_KIND_MEMCPY, [&](CUpti_ActivityMemcpy6& r) {
               r.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
               r.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
               r.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
               r.bytes = 1 << 20;
               r.start = t + 5'000;
               r.end = t + 50'000;
               r.deviceId = 0;
               r.contextId = 1;
               r.streamId = 7;
               r.correlationId = correlation;
             });
        records += ok ? 3 : 0;
      } else if (pick < 97) {  // a memset
        ok = api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020) &&
             api(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async) &&
             Put<CUpti_ActivityMemset4>(bytes, used, CUPTI_ACTIVITY_KIND_MEMSET, [&](CUpti_ActivityMemset4& r) {
               r.value = 0;
               r.bytes = 4096;
               r.start = t + 5'000;
               r.end = t + 8'000;
               r.deviceId = 0;
               r.contextId = 1;
               r.streamId = 7;
               r.correlationId = correlation;
               r.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
             });
        records += ok ? 3 : 0;
      } else {  // other runtime calls
        const uint32_t cbid = pick < 99 ? CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020
                                        : CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020;
        ok = api(CUPTI_ACTIVITY_KIND_RUNTIME, cbid);
        records += ok ? 1 : 0;
      }
      if (!ok) {  // the buffer is full: drop the partly written group
        std::memset(bytes.data() + before, 0, used - before);
        used = before;
        break;
      }
      t += 20'000;
      ++correlation;
    }
  }
};

const SyntheticBuffer& Buffer() {
  static const SyntheticBuffer buffer;
  return buffer;
}

// The collector's lookup (collector.cpp's ApiNameFromCupti): CUPTI's own callback names.
std::string ApiName(tg::ApiKind kind, uint32_t cbid) {
  const char* name = nullptr;
  CUpti_CallbackDomain domain = kind == tg::ApiKind::kDriver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API;
  if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || !name) return {};
  return name;
}

// One completed buffer through the collector's path, as BufferCompleted runs it: CUPTI's walk,
// then conversion (the UUIDs and client-owned memory included). Per record: `per_record` (CPU
// time). Arg 0: one converter over every buffer (a recording's steady state: every kernel name
// seen before); 1: a new converter per buffer (each distinct name demangled once per buffer).
void BM_Convert(benchmark::State& state) {
  const SyntheticBuffer& b = Buffer();
  std::vector<uint8_t> buffer = b.bytes;  // CUPTI's cuptiActivityGetNextRecord takes it non-const
  const bool fresh = state.range(0) == 1;
  auto converter = std::make_unique<tg::cupti::ActivityConverter>(kPid, ApiName);
  size_t rows = 0;
  for (auto _ : state) {
    if (fresh) {
      state.PauseTiming();
      converter = std::make_unique<tg::cupti::ActivityConverter>(kPid, ApiName);
      state.ResumeTiming();
    }
    std::vector<const CUpti_Activity*> records;
    tg::cupti::WalkBuffer(buffer.data(), b.used, records);
    tg::Trace batch;
    std::vector<tg::cupti::DeviceUuid> uuids;
    size_t freed = 0;
    tg::cupti::ConvertBuffer(converter.get(), records, batch, uuids, &freed);
    if (records.size() != b.records) return state.SkipWithError("the walk did not find every record");
    rows = EventRows(batch);
    benchmark::DoNotOptimize(batch);
  }
  if (rows != b.records) return state.SkipWithError("a record was not converted");
  const auto n = static_cast<double>(b.records);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * b.records));
  state.counters["records"] = n;
  state.counters["kernels"] = static_cast<double>(b.kernels);
  state.counters["bytes_per_record"] = static_cast<double>(b.used) / n;
  state.counters["per_record"] =
      benchmark::Counter(n, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_Convert)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// The rows of kBatches completed buffers (one batch each, as the collector submits them).
constexpr int kBatches = 4;
const std::vector<tg::Trace>& ConvertedBatches() {
  static const std::vector<tg::Trace> batches = [] {
    std::vector<tg::Trace> out;
    std::vector<uint8_t> buffer = Buffer().bytes;
    tg::cupti::ActivityConverter converter(kPid, ApiName);
    for (int i = 0; i < kBatches; ++i) {
      std::vector<const CUpti_Activity*> records;
      tg::cupti::WalkBuffer(buffer.data(), Buffer().used, records);
      out.emplace_back();
      std::vector<tg::cupti::DeviceUuid> uuids;
      size_t freed = 0;
      tg::cupti::ConvertBuffer(&converter, records, out.back(), uuids, &freed);
    }
    return out;
  }();
  return batches;
}

void PerRecord(benchmark::State& state, size_t rows) {
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * rows));
  state.counters["records"] = static_cast<double>(rows);
  state.counters["per_record"] = benchmark::Counter(static_cast<double>(rows), benchmark::Counter::kIsIterationInvariantRate |
                                                                                   benchmark::Counter::kInvert);
}

// What the collector's PartWriter does in the background with converted buffers: an in-place
// store, the rows of kBatches buffers appended with the part's state in one transaction (one
// flush), then Finish. Per record: `per_record` (CPU time of this thread; SQLite runs on it).
void BM_StoreWriteCupti(benchmark::State& state) {
  const std::vector<tg::Trace>& batches = ConvertedBatches();
  size_t rows = 0;
  for (const tg::Trace& b : batches) rows += EventRows(b);
  const std::string out = (BenchDir() / "cupti_part.db").string();
  tg::Trace part_state;
  part_state.metadata["tracegate.part"] = "bench";
  for (auto _ : state) {
    std::unique_ptr<tg::StoreWriter> w;
    tg::StoreWriterOptions options;
    options.in_place = true;
    if (!tg::StoreWriter::Create(out, options, &w).ok() || !w->AppendWithState(batches, part_state).ok() ||
        !w->Finish(part_state).ok())
      return state.SkipWithError("write failed");
  }
  PerRecord(state, rows);
  fs::remove(out);
}
BENCHMARK(BM_StoreWriteCupti)->Unit(benchmark::kMillisecond);

}  // namespace
