// tracegate-kernel-bench: the reference fused / unfused pairs on Google Benchmark, timed with
// CUDA events the way seed 001 (5.8) evaluates a custom operator: 3 warm-up runs, then 50 timed
// runs; mean and p95 per version, bytes and FLOPs from tracegate/kernels/reference.h, achieved
// GB/s against the device-to-device copy bandwidth measured in the same run (also a mean, so both
// sides of the ratio are one statistic), and the seed's table (version, size, mean us, p95 us,
// memory traffic, speedup, notes).
//
// Every timed run is cold and GPU-only, as nvbench's cold measurement: before its start event the
// L2 is flushed (a memset of twice its size: small inputs would otherwise stay L2-resident between
// runs, 50 MB on an H100, 60 MB on an H200) and a spin kernel keeps the stream busy while the host
// enqueues the work, so host-side library time (cuDNN, cuBLASLt) falls outside the event pair.
//
//   tracegate-kernel-bench [--table FILE.md] [--quick] [--device N] [google benchmark flags]
//   tracegate-kernel-bench --benchmark_filter='elementwise/add_relu'
//       --benchmark_format=json --benchmark_out=bench.json   (one command line)
//
// Every timed run sits in an NVTX range "<group> <version> bytes=N flops=N", so a recording of
// this program (tracegate record -- tracegate-kernel-bench) places each kernel on the roofline.
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "conv.h"
#include "cuda_check.h"
#include "device_buffer.h"
#include "elementwise.h"
#include "gemm.h"
#include "tensor_io.h"
#include "tracegate/kernels/reference.h"
#include "tracegate/collector/nvtx_range.h"

namespace tg::kernels::cuda {
namespace {

constexpr int kWarmup = 3;     // seed 001 5.8
constexpr int kTimedRuns = 50;

struct Options {
  std::string table_path;
  bool quick = false;
  int device = 0;
};
Options g_options;
double g_copy_gbs = 0;  // device-to-device copy bandwidth measured at start (read + write)

// One row of the seed's table.
struct Row {
  std::string group;    // e.g. "add_relu fp16", the pair's name
  std::string version;  // "unfused", "fused", "merged", ...
  std::string size;     // input size in words
  double mean_us = 0, p95_us = 0;
  uint64_t bytes = 0, flops = 0;
  int kernels = 0;
  std::string notes;
};
std::vector<Row> g_rows;

double Percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = q * double(v.size() - 1);
  const size_t lo = size_t(pos);
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - double(lo));
}

// Longer than the host needs to enqueue one run of any version (a few library calls).
constexpr uint64_t kSpinNs = 500'000;

// Twice the L2 of the current device, allocated once; memset before each timed run.
void FlushL2(cudaStream_t stream) {
  static DeviceBuffer* buffer = nullptr;
  if (!buffer) {
    int device = 0, l2 = 0;
    TG_CUDA_CHECK(cudaGetDevice(&device));
    TG_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
    buffer = new DeviceBuffer(std::max<size_t>(2 * size_t(l2), 1));  // lives as long as the program
  }
  TG_CUDA_CHECK(cudaMemsetAsync(buffer->get(), 0, buffer->bytes(), stream));
}

class EventTimer {
 public:
  EventTimer() {
    TG_CUDA_CHECK(cudaEventCreate(&start_));
    TG_CUDA_CHECK(cudaEventCreate(&stop_));
  }
  ~EventTimer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;
  // Seconds `work` takes on `stream`, between two events, from a flushed L2, with the host's
  // enqueueing hidden behind a spin kernel (see the top of this file).
  double Time(cudaStream_t stream, const std::function<void()>& work) {
    FlushL2(stream);
    LaunchSpin(kSpinNs, stream);
    TG_CUDA_CHECK(cudaEventRecord(start_, stream));
    work();
    TG_CUDA_CHECK(cudaEventRecord(stop_, stream));
    TG_CUDA_CHECK(cudaEventSynchronize(stop_));
    float ms = 0;
    TG_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return ms / 1e3;
  }

 private:
  cudaEvent_t start_{}, stop_{};
};

std::string Elements(size_t n) {
  if (n % (size_t{1} << 20) == 0) return std::to_string(n >> 20) + "Mi";
  if (n % (size_t{1} << 10) == 0) return std::to_string(n >> 10) + "Ki";
  return std::to_string(n);
}
std::string Bytes(uint64_t b) {
  char buf[32];
  if (b >= (uint64_t{1} << 30)) std::snprintf(buf, sizeof buf, "%.2f GiB", double(b) / double(uint64_t{1} << 30));
  else if (b >= (uint64_t{1} << 20)) std::snprintf(buf, sizeof buf, "%.2f MiB", double(b) / double(1 << 20));
  else std::snprintf(buf, sizeof buf, "%.1f KiB", double(b) / 1024.0);
  return buf;
}

// Runs `launch` kWarmup times, then once per benchmark iteration (kTimedRuns), each inside the
// NVTX range and timed with CUDA events (or the host clock when host_clock: copies that block
// the host); sets the counters and appends the table row.
void TimeVersion(benchmark::State& state, Row row, cudaStream_t stream, const std::function<void()>& launch,
                 bool host_clock = false) {
  const std::string annotation = CostAnnotation(row.group + " " + row.version, row.bytes, row.flops);
  EventTimer timer;
  auto run = [&]() -> double {
    NvtxRange range(annotation);
    if (!host_clock) return timer.Time(stream, launch);
    const auto t0 = std::chrono::steady_clock::now();
    launch();
    TG_CUDA_CHECK(cudaStreamSynchronize(stream));
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  for (int i = 0; i < kWarmup; ++i) run();
  std::vector<double> seconds;
  seconds.reserve(kTimedRuns);
  for (auto _ : state) {
    const double s = run();
    seconds.push_back(s);
    state.SetIterationTime(s);
  }
  const double mean = std::accumulate(seconds.begin(), seconds.end(), 0.0) / double(std::max<size_t>(seconds.size(), 1));
  row.mean_us = mean * 1e6;
  row.p95_us = Percentile(seconds, 0.95) * 1e6;
  const double gbs = mean > 0 ? double(row.bytes) / mean / 1e9 : 0;
  state.counters["mean_us"] = row.mean_us;
  state.counters["p95_us"] = row.p95_us;
  state.counters["GB/s"] = gbs;
  state.counters["TFLOP/s"] = mean > 0 ? double(row.flops) / mean / 1e12 : 0;
  state.counters["copy_bw_share"] = g_copy_gbs > 0 ? gbs / g_copy_gbs : 0;
  state.counters["kernels"] = row.kernels;
  state.SetLabel(row.group + " " + row.version);
  g_rows.push_back(std::move(row));
}

// The device-to-device copy bandwidth the element-wise kernels are held to: cudaMemcpyAsync of
// 1 GiB, the mean of 10 after 3 warm-ups (the kernels' statistic), counting the read and the write.
double MeasureCopyBandwidth() {
  const size_t bytes = size_t{1} << 30;
  DeviceBuffer a(bytes), b(bytes);
  TG_CUDA_CHECK(cudaMemset(a.get(), 1, bytes));
  Stream stream;
  EventTimer timer;
  double total_s = 0;
  constexpr int kRuns = 10;
  for (int i = 0; i < kWarmup + kRuns; ++i) {
    const double s = timer.Time(stream.get(), [&] {
      TG_CUDA_CHECK(cudaMemcpyAsync(b.get(), a.get(), bytes, cudaMemcpyDeviceToDevice, stream.get()));
    });
    if (i >= kWarmup) total_s += s;
  }
  return total_s > 0 ? 2.0 * double(bytes) * kRuns / total_s / 1e9 : 0;
}

// ---- element-wise pairs --------------------------------------------------------------------
// int8: q in [-64, 64) with scales 2 / 64 (values in [-2, 2) as for fp32 and fp16), fp32
// per-channel vectors, output scale 4 / 127.
void BenchElementwise(benchmark::State& state, ElementwiseOp op, Precision p, bool fused, size_t n) {
  constexpr size_t kChannels = 256;
  const ElementwiseInfo& info = Info(op);
  const Precision cp = ChannelPrecision(p);
  const float range = p == Precision::kInt8 ? 64.f : 2.f;
  const DeviceBuffer a = Upload(RandomTensor(n, 1, -range, range, p), p);
  const DeviceBuffer b = Upload(RandomTensor(info.tensor_inputs > 1 ? n : 0, 2, -range, range, p), p);
  const DeviceBuffer scale = Upload(RandomTensor(kChannels, 3, 0.5f, 1.5f, cp), cp);
  const DeviceBuffer bias = Upload(RandomTensor(kChannels, 4, -0.5f, 0.5f, cp), cp);
  Int8Scales q;
  q.a = q.b = 2.f / 64.f, q.out = 4.f / 127.f;
  DeviceBuffer tmp(fused ? 0 : n * ElementBytes(p)), out(n * ElementBytes(p));
  Stream stream;
  const ElementwiseArgs args{a.get(), b.get(), scale.get(), bias.get(), tmp.get(), out.get(), n, kChannels};
  const Costs c = ElementwiseCosts(op, p, fused, n, kChannels);
  Row row{std::string(info.name) + " " + std::string(PrecisionName(p)), fused ? "fused" : "unfused",
          Elements(n) + " elements", 0, 0, c.bytes, c.flops, c.kernels, std::string(info.formula)};
  TimeVersion(state, std::move(row), stream.get(), [&] { LaunchElementwise(op, p, fused, args, stream.get(), q); });
}

// The copy kernel next to cudaMemcpy D2D: the yardstick itself, as a row of the table.
void BenchCopy(benchmark::State& state, bool kernel, size_t n_floats) {
  DeviceBuffer in(n_floats * 4), out(n_floats * 4);
  TG_CUDA_CHECK(cudaMemset(in.get(), 0, n_floats * 4));
  Stream stream;
  Row row{"copy d2d fp32", kernel ? "kernel" : "cudaMemcpy", Elements(n_floats) + " elements", 0, 0, 8 * n_floats, 0,
          kernel ? 1 : 0, "the bandwidth yardstick (read + write)"};
  TimeVersion(state, std::move(row), stream.get(), [&] {
    if (kernel) LaunchCopyKernel(in.get(), out.get(), n_floats, stream.get());
    else TG_CUDA_CHECK(cudaMemcpyAsync(out.get(), in.get(), n_floats * 4, cudaMemcpyDeviceToDevice, stream.get()));
  });
}

// ---- GEMM + bias + ReLU ---------------------------------------------------------------------
// int8: q in [-128, 128), b given transposed (n x k; random, so the same data), float bias,
// alpha 1 / (16 * k) keeps most outputs inside int8.
void BenchGemm(benchmark::State& state, GemmShape shape, Precision p, bool fused) {
  const bool int8 = p == Precision::kInt8;
  const float range = int8 ? 128.f : 1.f;
  const DeviceBuffer a = Upload(RandomTensor(shape.m * shape.k, 11, -range, range, p), p);
  const DeviceBuffer b = Upload(RandomTensor(shape.k * shape.n, 12, -range, range, p), p);
  const DeviceBuffer bias = Upload(RandomTensor(shape.n, 13, -1.f, 1.f, ChannelPrecision(p)), ChannelPrecision(p));
  DeviceBuffer tmp(fused ? 0 : shape.m * shape.n * ElementBytes(p)), out(shape.m * shape.n * ElementBytes(p));
  Stream stream;
  GemmBiasRelu gemm(shape, p);
  if (int8) gemm.SetInt8Alpha(1.f / (16.f * float(shape.k)));
  const Costs c = GemmBiasReluCosts(shape, p, fused);
  const std::string size = std::to_string(shape.m) + "x" + std::to_string(shape.n) + "x" + std::to_string(shape.k);
  Row row{"gemm_bias_relu " + std::string(PrecisionName(p)) + " " + size, fused ? "fused (cuBLASLt epilogue)" : "unfused",
          "m x n x k = " + size, 0, 0, c.bytes, c.flops, c.kernels,
          std::string(fused ? "CUBLASLT_EPILOGUE_RELU_BIAS" : "cuBLASLt GEMM; bias kernel; ReLU kernel") +
              (int8 ? " (int8 IMMA, TN, int32 accumulation)" : "")};
  TimeVersion(state, std::move(row), stream.get(),
              [&] { gemm.Run(fused, a.get(), b.get(), bias.get(), tmp.get(), out.get(), stream.get()); });
}

// ---- Conv + BN + Add + ReLU (res3) ----------------------------------------------------------
// int8: the check's scales (CheckConv in check_kernels.cpp has the reasoning): x, z q in
// [-128, 128) at 1/128, w q in [-32, 32) at 1/128, folded at 1.5/128, tmp and y at 1/8.
void BenchConv(benchmark::State& state, size_t batch, Precision p, bool fused) {
  const ConvShape s = Res3Shape(batch);
  const bool int8 = p == Precision::kInt8;
  const Precision cp = ChannelPrecision(p);
  const float unit = int8 ? 128.f : 1.f;  // int8: q = value * 128
  ConvInt8Scales q;
  q.x = q.w = q.z = 1.f / 128.f, q.w_folded = 1.5f / 128.f, q.tmp = q.y = 1.f / 8.f;
  const std::vector<float> w = RandomTensor(s.w_elements(), 21, -0.25f * unit, 0.25f * unit, p);
  const std::vector<float> scale = RandomTensor(s.k, 22, 0.5f, 1.5f, cp);
  const DeviceBuffer x = Upload(RandomTensor(s.x_elements(), 20, -unit, unit, p), p);
  const DeviceBuffer dw = Upload(w, p);
  const DeviceBuffer dw_folded =
      Upload(int8 ? FoldBnIntoFilterInt8(s, w, q.w, scale, q.w_folded) : FoldBnIntoFilter(s, p, w, scale), p);
  const DeviceBuffer dscale = Upload(scale, cp);
  const DeviceBuffer dshift = Upload(RandomTensor(s.k, 23, -0.5f, 0.5f, cp), cp);
  const DeviceBuffer z = Upload(RandomTensor(s.y_elements(), 24, -unit, unit, p), p);
  DeviceBuffer tmp(fused ? 0 : s.y_elements() * ElementBytes(p)), y(s.y_elements() * ElementBytes(p));
  Stream stream;
  ConvBnAddRelu conv(s, p);
  conv.SetInt8Scales(q);
  const ConvBnAddRelu::Tensors t{x.get(), dw.get(), dw_folded.get(), dscale.get(), dshift.get(), z.get(), tmp.get(), y.get()};
  const Costs c = ConvBnAddReluCosts(s, p, fused);
  Row row{"conv_bn_add_relu res3 " + std::string(PrecisionName(p)) + " batch " + std::to_string(batch),
          fused ? "fused (cuDNN conv-bias-add-act)" : "unfused", "N=" + std::to_string(batch) + " 28x28x128 -> 128, 3x3",
          0, 0, c.bytes, c.flops, c.kernels, ""};
  TimeVersion(state, std::move(row), stream.get(), [&] { conv.Run(fused, t, stream.get()); });
  g_rows.back().notes = "cuDNN " + conv.Describe();  // after the runs: a refused algorithm has moved on
  const double mean_us = g_rows.back().mean_us;
  const double tops = mean_us > 0 ? double(ConvOps(s)) / (mean_us * 1e-6) / 1e12 : 0;
  state.counters["conv_TOPS"] = tops;
  char note[64];
  std::snprintf(note, sizeof note, "; %.1f conv TOPS", tops);
  g_rows.back().notes += note;
}

// ---- copy patterns (seed task 2) ------------------------------------------------------------
enum class CopyPattern { kThreeSmall, kMerged, kPageable, kPinned, kSyncSerial, kAsyncOverlap };

const char* Name(CopyPattern c) {
  switch (c) {
    case CopyPattern::kThreeSmall: return "3 small copies";
    case CopyPattern::kMerged: return "1 merged copy";
    case CopyPattern::kPageable: return "pageable";
    case CopyPattern::kPinned: return "pinned";
    case CopyPattern::kSyncSerial: return "sync copy then kernel";
    case CopyPattern::kAsyncOverlap: return "async copy || kernel";
  }
  return "?";
}

// 3 small vs merged: three H2D copies of `bytes` / 3 from pinned memory vs one of `bytes`.
// Pageable vs pinned: one H2D copy of `bytes` from ordinary vs page-locked memory (cudaMemcpyAsync
// from pageable memory is staged and synchronous to the host, so the host clock times both).
// Sync vs async: an H2D copy and an independent kernel over a device tensor of the same size;
// sync = cudaMemcpy (host waits) then the kernel, async = the copy on one stream overlapping the
// kernel on another.
void BenchCopyPattern(benchmark::State& state, const char* group, CopyPattern pattern, size_t bytes) {
  const bool pinned = pattern != CopyPattern::kPageable;
  HostBuffer host(bytes, pinned);
  std::memset(host.get(), 1, bytes);
  DeviceBuffer dev(bytes), work_in(bytes), work_out(bytes);
  TG_CUDA_CHECK(cudaMemset(work_in.get(), 0, bytes));
  Stream stream, other;
  cudaEvent_t joined{};
  TG_CUDA_CHECK(cudaEventCreateWithFlags(&joined, cudaEventDisableTiming));
  const size_t third = bytes / 3 / 16 * 16;
  uint64_t traffic = bytes;
  int kernels = 0;
  std::function<void()> launch;
  switch (pattern) {
    case CopyPattern::kThreeSmall:
      traffic = 3 * third;
      launch = [&] {
        for (int i = 0; i < 3; ++i)
          TG_CUDA_CHECK(cudaMemcpyAsync(dev.as<char>() + i * third, host.as<char>() + i * third, third,
                                        cudaMemcpyHostToDevice, stream.get()));
      };
      break;
    case CopyPattern::kMerged:
      traffic = 3 * third;
      launch = [&] {
        TG_CUDA_CHECK(cudaMemcpyAsync(dev.get(), host.get(), 3 * third, cudaMemcpyHostToDevice, stream.get()));
      };
      break;
    case CopyPattern::kPageable:
    case CopyPattern::kPinned:
      launch = [&] { TG_CUDA_CHECK(cudaMemcpyAsync(dev.get(), host.get(), bytes, cudaMemcpyHostToDevice, stream.get())); };
      break;
    case CopyPattern::kSyncSerial:
      kernels = 1;
      traffic = 3 * bytes;  // the copy, and the kernel's read and write
      launch = [&] {
        TG_CUDA_CHECK(cudaMemcpy(dev.get(), host.get(), bytes, cudaMemcpyHostToDevice));
        LaunchCopyKernel(work_in.get(), work_out.get(), bytes / 4, stream.get());
      };
      break;
    case CopyPattern::kAsyncOverlap:
      kernels = 1;
      traffic = 3 * bytes;
      launch = [&] {
        TG_CUDA_CHECK(cudaMemcpyAsync(dev.get(), host.get(), bytes, cudaMemcpyHostToDevice, other.get()));
        LaunchCopyKernel(work_in.get(), work_out.get(), bytes / 4, stream.get());
        TG_CUDA_CHECK(cudaEventRecord(joined, other.get()));
        TG_CUDA_CHECK(cudaStreamWaitEvent(stream.get(), joined, 0));
      };
      break;
  }
  Row row{group, Name(pattern), Bytes(bytes), 0, 0, traffic, 0, kernels, pinned ? "pinned host memory" : "pageable host memory"};
  TimeVersion(state, std::move(row), stream.get(), launch, /*host_clock=*/true);
  cudaEventDestroy(joined);
}

// ---- registration and the table --------------------------------------------------------------
// A CUDA, cuBLASLt or cuDNN error skips that benchmark (named in the JSON's error_message and on
// stderr) instead of ending the run: an unattended GPU session keeps every other row.
template <typename Body>
void Guarded(benchmark::State& state, Body body) {
  try {
    body();
  } catch (const CudaError& e) {
    std::fprintf(stderr, "tracegate-kernel-bench: skipped a benchmark: %s\n", e.what());
    state.SkipWithError(e.what());
  }
}

// 3 warm-ups run inside each function; then exactly 50 timed runs, each timed by CUDA events.
void Configure(benchmark::internal::Benchmark* b) {
  b->UseManualTime()->Iterations(kTimedRuns)->Unit(benchmark::kMicrosecond);
}

void Register() {
  const size_t n = g_options.quick ? size_t{1} << 22 : size_t{1} << 26;
  for (bool kernel : {false, true})
    Configure(benchmark::RegisterBenchmark(kernel ? "copy/d2d_kernel" : "copy/d2d_memcpy",
                                 [=](benchmark::State& s) { Guarded(s, [&] { BenchCopy(s, kernel, n); }); }));
  for (ElementwiseOp op : kAllElementwiseOps)
    for (Precision p : {Precision::kFp32, Precision::kFp16, Precision::kInt8})
      for (bool fused : {false, true}) {
        const std::string name = "elementwise/" + std::string(Info(op).name) + "/" + std::string(PrecisionName(p)) +
                                 (fused ? "/fused" : "/unfused");
        Configure(benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& s) { Guarded(s, [&] { BenchElementwise(s, op, p, fused, n); }); }));
      }
  const std::vector<GemmShape> gemms = g_options.quick ? std::vector<GemmShape>{{1024, 1024, 1024}}
                                                       : std::vector<GemmShape>{{8192, 4096, 1024}, {4096, 4096, 4096}};
  for (const GemmShape& g : gemms)
    for (Precision p : {Precision::kFp32, Precision::kFp16, Precision::kInt8})
      for (bool fused : {false, true}) {
        const std::string name = "gemm_bias_relu/" + std::to_string(g.m) + "x" + std::to_string(g.n) + "x" +
                                 std::to_string(g.k) + "/" + std::string(PrecisionName(p)) + (fused ? "/fused" : "/unfused");
        Configure(benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& s) { Guarded(s, [&] { BenchGemm(s, g, p, fused); }); }));
      }
  const std::vector<size_t> batches = g_options.quick ? std::vector<size_t>{32} : std::vector<size_t>{32, 256, 1024, 2048};
  for (size_t batch : batches)
    for (Precision p : {Precision::kFp16, Precision::kInt8})
      for (bool fused : {false, true}) {
        const std::string name = "conv_bn_add_relu/res3/batch" + std::to_string(batch) + "/" +
                                 std::string(PrecisionName(p)) + (fused ? "/fused" : "/unfused");
        Configure(benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& s) { Guarded(s, [&] { BenchConv(s, batch, p, fused); }); }));
      }
  const size_t small = 3 * 224 * 224 * 4;  // one 224x224 RGB fp32 image
  const size_t large = size_t{64} << 20;
  const std::pair<CopyPattern, size_t> patterns[] = {
      {CopyPattern::kThreeSmall, small}, {CopyPattern::kMerged, small},       {CopyPattern::kPageable, large},
      {CopyPattern::kPinned, large},     {CopyPattern::kSyncSerial, large},   {CopyPattern::kAsyncOverlap, large}};
  for (const auto& [pattern, bytes] : patterns) {
    const char* group = pattern == CopyPattern::kThreeSmall || pattern == CopyPattern::kMerged ? "h2d split vs merged"
                        : pattern == CopyPattern::kPageable || pattern == CopyPattern::kPinned ? "h2d pageable vs pinned"
                                                                                               : "h2d sync vs async";
    const std::string name = std::string("copies/") + Name(pattern);
    const CopyPattern pat = pattern;
    const size_t size = bytes;
    Configure(benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& s) { Guarded(s, [&] { BenchCopyPattern(s, group, pat, size); }); }));
  }
}

// The seed's table: one row per version; speedup = the group's first (baseline) version's
// mean over this version's.
std::string Table() {
  std::string out;
  char buf[512];
  std::snprintf(buf, sizeof buf, "Device-to-device copy bandwidth measured at start: %.0f GB/s (read + write)\n\n", g_copy_gbs);
  out += buf;
  out += "| pair | version | input size | mean (us) | p95 (us) | memory traffic | kernels | GB/s | copy bw share | speedup | notes |\n";
  out += "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n";
  std::map<std::string, double> baseline;
  for (const Row& r : g_rows) {
    const auto [it, first] = baseline.emplace(r.group, r.mean_us);
    const double gbs = r.mean_us > 0 ? double(r.bytes) / (r.mean_us * 1e-6) / 1e9 : 0;
    std::snprintf(buf, sizeof buf, "| %s | %s | %s | %.1f | %.1f | %s | %d | %.0f | %.0f%% | %s | %s |\n", r.group.c_str(),
                  r.version.c_str(), r.size.c_str(), r.mean_us, r.p95_us, Bytes(r.bytes).c_str(), r.kernels, gbs,
                  g_copy_gbs > 0 ? 100.0 * gbs / g_copy_gbs : 0.0,
                  first ? "1.00x (base)" : (std::to_string(it->second / std::max(r.mean_us, 1e-9)).substr(0, 4) + "x").c_str(),
                  r.notes.c_str());
    out += buf;
  }
  return out;
}

// Takes tracegate's own flags out of argv before Google Benchmark sees it; "" or an error line.
std::string ParseOwnFlags(int* argc, char** argv) {
  int kept = 1;
  for (int i = 1; i < *argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const char* flag) -> std::optional<std::string> {
      const std::string f = flag;
      if (a == f && i + 1 < *argc) return std::string(argv[++i]);
      if (a.rfind(f + "=", 0) == 0) return a.substr(f.size() + 1);
      return std::nullopt;
    };
    if (a == "--quick") g_options.quick = true;
    else if (auto v = value("--table")) g_options.table_path = *v;
    else if (auto d = value("--device")) {
      char* end = nullptr;
      const long dev = std::strtol(d->c_str(), &end, 10);
      if (d->empty() || *end != '\0' || dev < 0) return "--device: expected a device index, got '" + *d + "'";
      g_options.device = int(dev);
    } else if (a == "--table" || a == "--device") return a + " needs a value";
    else argv[kept++] = argv[i];
  }
  *argc = kept;
  argv[kept] = nullptr;
  return "";
}

}  // namespace
}  // namespace tg::kernels::cuda

int main(int argc, char** argv) {
  using namespace tg::kernels::cuda;
  if (std::string err = ParseOwnFlags(&argc, argv); !err.empty()) {
    std::fprintf(stderr, "tracegate-kernel-bench: %s\n", err.c_str());
    return 2;
  }
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::printf(
          "tracegate-kernel-bench: the reference fused / unfused pairs, 3 warm-up + 50 timed runs each (CUDA events)\n"
          "  --table FILE   also write the seed's table (markdown) to FILE\n"
          "  --quick        small sizes (a smoke run)\n"
          "  --device N     the CUDA device (default 0)\n"
          "  and Google Benchmark's flags, e.g. --benchmark_filter=REGEX --benchmark_format=json\n"
          "  --benchmark_out=FILE --benchmark_list_tests\n");
      return 0;
    }
  bool list_only = false;  // --benchmark_list_tests needs no GPU
  for (int i = 1; i < argc; ++i)
    list_only = list_only || std::strcmp(argv[i], "--benchmark_list_tests") == 0 ||
                std::strcmp(argv[i], "--benchmark_list_tests=true") == 0;
  try {
    if (!list_only) SelectDevice(g_options.device);
    cudaDeviceProp prop{};
    if (!list_only) TG_CUDA_CHECK(cudaGetDeviceProperties(&prop, g_options.device));
    if (!list_only) g_copy_gbs = MeasureCopyBandwidth();
    benchmark::AddCustomContext("device", prop.name);
    benchmark::AddCustomContext("d2d_copy_GBps", std::to_string(g_copy_gbs));
    benchmark::AddCustomContext("warmup_runs", std::to_string(kWarmup));
    benchmark::AddCustomContext("timed_runs", std::to_string(kTimedRuns));
  } catch (const CudaError& e) {
    std::fprintf(stderr, "tracegate-kernel-bench: %s\n", e.what());
    return 1;
  }
  Register();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  try {
    benchmark::RunSpecifiedBenchmarks();
  } catch (const CudaError& e) {
    std::fprintf(stderr, "tracegate-kernel-bench: %s\n", e.what());
    return 1;
  }
  benchmark::Shutdown();
  if (list_only) return 0;
  const std::string table = Table();
  std::fputs(table.c_str(), stdout);
  if (!g_options.table_path.empty()) {
    const std::string tmp = g_options.table_path + ".tmp";
    std::ofstream f(tmp);
    f << table;
    f.close();
    if (!f || std::rename(tmp.c_str(), g_options.table_path.c_str()) != 0) {
      std::fprintf(stderr, "tracegate-kernel-bench: %s: cannot write the table\n", g_options.table_path.c_str());
      return 1;
    }
  }
  return 0;
}
