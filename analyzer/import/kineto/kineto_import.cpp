// Kineto / Chrome-trace JSON importer: gz_reader -> json_stream (top-level walk, one event at a
// time) -> kineto_event (simdjson, per event) -> kineto_builder (Trace tables). Memory grows with
// the events kept, not with the file: only one event (plus a read buffer) is in memory at once.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <system_error>
#include <thread>

#include "analyzer/import/kineto/gz_reader.h"
#include "analyzer/import/kineto/json_stream.h"
#include "analyzer/import/kineto/kineto_builder.h"
#include "analyzer/import/kineto/kineto_event.h"
#include "analyzer/import/kineto/kineto_fast.h"
#include "analyzer/import/kineto/kineto_numbers.h"
#include "analyzer/import/kineto/split_cost.h"
#include "tracegate/analyzer/import.h"
#include "tracegate/analyzer/strings.h"

namespace tg {

namespace {

using internal::NumberStatus;

// Deeper limits are refused: validation recurses once per level.
constexpr int kMaxSupportedDepth = 10000;

class KinetoSink : public internal::JsonSink {
 public:
  KinetoSink(Trace& trace, int max_depth)
      : trace_(trace), max_depth_(max_depth), parser_(max_depth), builder_(trace) {}

  Status OnEvent(std::string_view json, uint64_t offset) override {
    if (cancel_ && cancel_->load(std::memory_order_relaxed)) return Cancelled();
    if (offset >= reserve_at_) Reserve(offset);
    const uint64_t repaired = parser_.repaired_utf8();
    TG_RETURN_IF_ERROR(parser_.Parse(json, offset, event_));
    if (parser_.repaired_utf8() != repaired) trace_.quality.Add(Quality::kInvalidUtf8);
    builder_.Add(event_);
    return Status::Ok();
  }

  size_t OnEventInPlace(const char* p, const char* end, int depth, uint64_t offset) override {
    if (cancel_ && cancel_->load(std::memory_order_relaxed)) return 0;  // OnEvent stops it
    if (offset >= reserve_at_) Reserve(offset);
    size_t n = internal::FastParseEvent(p, end, max_depth_ - depth, event_, memo_);
    if (n) builder_.Add(event_);
    return n;
  }

  Status OnMember(std::string_view key, std::string_view json, uint64_t offset) override;

  bool OnSplit(uint64_t& resume, uint64_t& elements) override { return on_split_ && on_split_(resume, elements); }
  void set_on_split(std::function<bool(uint64_t&, uint64_t&)> f) { on_split_ = std::move(f); }
  // The second half of a parallel import stops with an error once `cancel` is set.
  void set_cancel(const std::atomic<bool>* cancel) { cancel_ = cancel; }
  // This sink's events span bytes [begin, begin + bytes) of a plain file (more rows may be
  // appended later, which `bytes` includes): after a sample, the tables are sized for all of it.
  void PlanReserve(uint64_t begin, uint64_t bytes) {
    if (bytes < 2 * kReserveSample) return;
    reserve_begin_ = begin;
    reserve_bytes_ = bytes;
    reserve_at_ = begin + kReserveSample;
  }

  // Room for a quarter more than an estimate of the rows this sink's tables will hold (reserved
  // pages never written cost no memory; a table that outgrows its room is copied whole). Only a
  // speed-up: no table is sized past one row per 16 bytes of `bytes`, and room that cannot be had
  // is left to the tables' own growth.
  void ReserveRows(internal::TableRows rows, uint64_t bytes) {
    for (uint64_t& r : rows) r = std::min(r + r / 4, bytes / 16);
    try {
      builder_.ReserveRows(rows);
    } catch (const std::bad_alloc&) {
    }
  }

  internal::KinetoBuilder& builder() { return builder_; }
  int64_t base_ns() const { return base_ns_; }

 private:
  Status Invalid(std::string_view key, uint64_t offset, const std::string& what) const {
    return InvalidInput("top-level member \"" + std::string(key) + "\" at byte " + std::to_string(offset) +
                        ": " + what);
  }
  void ReadDevices(const nlohmann::json& list);
  static Status Cancelled() { return InvalidInput("cancelled"); }
  void Reserve(uint64_t offset) {
    // Estimated again at 4, 16 and 64 MiB while under half the part is read (a table grows only
    // when the new estimate passes what it has): a trace's first megabytes (start-up, a first
    // step's host ops) need not hold what the rest does.
    const uint64_t read = offset - reserve_begin_;
    reserve_at_ = read < reserve_bytes_ / 8 ? reserve_begin_ + 4 * read : UINT64_MAX;
    // Half again over the estimate: reserved pages that are never written cost no memory, while a
    // table that outgrows its reserve is copied whole to a new one (the first thread's, when the
    // second's rows are appended to it: the generated dense shape's first 4 MiB, a step's ops and
    // its range ahead of the kernels, undercounted its kernels by 2% with 10% over).
    builder_.ReserveFor(1.5 * static_cast<double>(reserve_bytes_) / static_cast<double>(offset - reserve_begin_));
  }
  static constexpr uint64_t kReserveSample = uint64_t{4} << 20;

  Trace& trace_;
  int max_depth_;
  internal::EventParser parser_;
  internal::KinetoBuilder builder_;
  internal::RawEvent event_;
  internal::FastParseMemo memo_;
  std::string text_;
  int64_t base_ns_ = 0;
  std::function<bool(uint64_t&, uint64_t&)> on_split_;
  const std::atomic<bool>* cancel_ = nullptr;
  uint64_t reserve_begin_ = 0, reserve_bytes_ = 0, reserve_at_ = UINT64_MAX;
};

std::string ScalarText(const nlohmann::json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump();
}

Status KinetoSink::OnMember(std::string_view key, std::string_view json, uint64_t offset) {
  // Members other than traceEvents are small; each is still checked to be valid JSON.
  text_ = RepairUtf8(json);
  if (key == "baseTimeNanoseconds") {
    // Read from its text: a nanosecond epoch needs all 19 digits.
    int64_t base = 0;
    if (internal::DecimalToInt64(text_, 0, true, base) != NumberStatus::kOk) {
      return Invalid(key, offset, "not an integer number of nanoseconds");
    }
    base_ns_ = base;
    return Status::Ok();
  }
  static constexpr std::string_view kRead[] = {"schemaVersion", "deviceProperties", "distributedInfo", "traceName",
                                               "cupti_version", "cuda_runtime_version", "cuda_driver_version",
                                               "tracegateVersion"};
  if (std::find(std::begin(kRead), std::end(kRead), key) == std::end(kRead)) {
    if (!nlohmann::json::accept(text_)) return Invalid(key, offset, "invalid JSON");
    return Status::Ok();
  }
  nlohmann::json v = nlohmann::json::parse(text_, nullptr, /*allow_exceptions=*/false);
  if (v.is_discarded()) return Invalid(key, offset, "invalid JSON");
  if (key == "schemaVersion") {
    trace_.metadata[std::string(meta::kSourceVersion)] = ScalarText(v);
  } else if (key == "deviceProperties") {
    ReadDevices(v);
  } else if (key == "distributedInfo") {
    if (v.is_object()) {
      for (const char* k : {"rank", "world_size", "backend"}) {
        if (auto it = v.find(k); it != v.end() && it->is_primitive()) trace_.metadata[k] = ScalarText(*it);
      }
    }
  } else if (key == "traceName") {
    trace_.metadata["trace_name"] = ScalarText(v);
  } else if (key == "cupti_version") {
    trace_.metadata[std::string(meta::kCuptiVersion)] = ScalarText(v);
  } else if (key == "cuda_runtime_version") {
    trace_.metadata[std::string(meta::kCudaVersion)] = ScalarText(v);
  } else if (key == "cuda_driver_version") {
    trace_.metadata[std::string(meta::kDriverVersion)] = ScalarText(v);
  } else if (key == "tracegateVersion") {
    // Our own Chrome export: say so rather than claiming the PyTorch profiler wrote it.
    trace_.metadata[std::string(meta::kProducer)] = "tracegate export " + ScalarText(v);
  }
  return Status::Ok();
}

// Kineto's deviceProperties (CudaDeviceProperties.cpp): id, name, totalGlobalMem, computeMajor,
// computeMinor, numSms, ... A field of another type is left at its default.
void KinetoSink::ReadDevices(const nlohmann::json& list) {
  if (!list.is_array()) return;
  for (const auto& d : list) {
    if (!d.is_object()) continue;
    auto integer = [&](const char* k, int64_t& out) {
      auto it = d.find(k);
      if (it == d.end() || !it->is_number_integer()) return false;
      out = it->get<int64_t>();
      return true;
    };
    int64_t id = 0, value = 0;
    if (!integer("id", id) || id < 0 || id > INT32_MAX) continue;
    Device dev;
    dev.id = static_cast<int32_t>(id);
    if (auto it = d.find("name"); it != d.end() && it->is_string()) dev.name = it->get<std::string>();
    if (integer("numSms", value)) dev.sm_count = static_cast<int32_t>(value);
    if (integer("totalGlobalMem", value)) dev.memory_bytes = value;
    if (integer("computeMajor", value)) dev.compute_major = static_cast<int32_t>(value);
    if (integer("computeMinor", value)) dev.compute_minor = static_cast<int32_t>(value);
    auto same = [&](const Device& x) { return x.id == dev.id; };
    if (auto it = std::find_if(trace_.devices.begin(), trace_.devices.end(), same); it != trace_.devices.end()) {
      *it = dev;
    } else {
      trace_.devices.push_back(dev);
    }
  }
}

Status WithPath(const std::string& path, const Status& s) { return Status(s.code(), path + ": " + s.message()); }

// Plain files at least this large are read by two threads.
constexpr uint64_t kParallelMinBytes = uint64_t{16} << 20;

// Where the second thread starts: a byte near where half the cost of reading a plain file lies
// (split_cost.h) that looks like the start of an event ('{' after '}' and ',' with optional white
// space between), and the depth of the event array (2 in {"traceEvents": [...]}, 1 in a bare array). Only a guess: the
// first thread accepts the second's work only if it meets an element starting exactly there.
bool PlanSplit(const std::string& path, uint64_t size, uint64_t& at, int& depth, internal::TableRows& whole,
               internal::TableRows& tail) {
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) return false;
  // Under malloc's mmap threshold: freeing a larger block would raise the threshold, and the
  // tables' columns would then come from the heap, which does not give memory back as promptly.
  std::string buf(size_t{64} << 10, '\0');
  size_t n = std::fread(buf.data(), 1, 4096, f.get());
  size_t i = n >= 3 && buf.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
  while (i < n && internal::IsJsonSpace(buf[i])) ++i;
  if (i == n || (buf[i] != '{' && buf[i] != '[')) return false;
  depth = buf[i] == '{' ? 2 : 1;
  // Windows read evenly through the file (1 MiB in all) tell where half the cost of reading it lies
  // (split_cost.h); a file too small for them is split at its middle.
  constexpr size_t kWindows = 32, kWindow = size_t{32} << 10;
  std::array<uint64_t, kWindows> costs{};
  std::array<internal::TableRows, kWindows> rows{};
  if (size / kWindows >= kWindow) {
    for (size_t w = 0; w < kWindows; ++w) {
      const uint64_t from = size / kWindows * w + (size / kWindows - kWindow) / 2;
      if (std::fseek(f.get(), static_cast<long>(from), SEEK_SET) != 0) return false;
      const size_t got = std::fread(buf.data(), 1, kWindow, f.get());
      costs[w] = internal::EstimatedReadCost(std::string_view(buf.data(), got), nullptr, &rows[w]);
    }
  }
  const uint64_t middle = internal::CostMiddle(costs, kWindow, size);
  if (std::fseek(f.get(), static_cast<long>(middle), SEEK_SET) != 0) return false;
  n = std::fread(buf.data(), 1, buf.size(), f.get());
  auto space = [&](size_t k) { return k < n && internal::IsJsonSpace(buf[k]); };
  for (size_t k = 0; k < n; ++k) {
    if (buf[k] != '}') continue;
    size_t j = k + 1;
    while (space(j)) ++j;
    if (j >= n || buf[j] != ',') continue;
    ++j;
    while (space(j)) ++j;
    if (j < n && buf[j] == '{') {
      at = middle + j;
      // The rows each thread's tables will hold (the first's: the whole file's, the second's
      // appended), from the same windows.
      whole = internal::EstimatedRows(rows, kWindow, size, 0);
      tail = internal::EstimatedRows(rows, kWindow, size, at);
      return true;
    }
  }
  return false;
}

// The second half of a two-thread import: events from `at` to the end of their array, parsed
// into a trace of its own while the first thread reads the first half.
class TailPart {
 public:
  TailPart(const std::string& path, uint64_t size, uint64_t at, int depth, const internal::ScanOptions& scan,
           int max_depth, const internal::TableRows& rows) {
    // Everything the part needs is made on its own thread, while the first one starts reading.
    thread_ = std::thread([this, path, size, at, depth, scan, max_depth, rows] {
      try {
        KinetoSink& sink = sink_.emplace(trace_, max_depth);
        sink.set_cancel(&cancel_);
        sink.ReserveRows(rows, size - at);
        sink.PlanReserve(at, size - at);
        internal::GzReader in;
        status_ = in.Open(path);
        if (status_.ok()) status_ = in.Seek(at);
        if (status_.ok()) status_ = internal::StreamArrayTail(in, at, depth, scan, sink, stats_, end_);
      } catch (const std::bad_alloc&) {
        status_ = IoError("out of memory");  // the first thread then reads this part itself
      }
    });
  }
  ~TailPart() { Stop(); }
  void Stop() {
    cancel_ = true;
    if (thread_.joinable()) thread_.join();
  }
  // Called by the first thread when it reaches `at`: hands over the events when they are good.
  bool MergeInto(internal::KinetoBuilder& builder, uint64_t& resume, uint64_t& elements) {
    if (thread_.joinable()) thread_.join();
    if (!status_.ok() || !builder.Append(sink_->builder())) return false;
    resume = end_;
    elements = stats_.elements;
    return true;
  }

 private:
  Trace trace_;
  std::optional<KinetoSink> sink_;
  std::atomic<bool> cancel_{false};
  Status status_;
  internal::StreamStats stats_;
  uint64_t end_ = 0;
  std::thread thread_;
};

}  // namespace

Status ImportKineto(const std::string& path, const ImportOptions& options, Trace* out) {
  Trace& trace = *out;
  if (options.max_json_depth < 1 || options.max_json_depth > kMaxSupportedDepth) {
    return InvalidInput(path + ": max_json_depth must be between 1 and " + std::to_string(kMaxSupportedDepth));
  }
  internal::GzReader in;
  if (Status s = in.Open(path); !s.ok()) return WithPath(path, s);

  // Filled aside and moved into `trace` only on success: an error never leaves half a trace.
  Trace result;
  KinetoSink sink(result, options.max_json_depth);
  internal::ScanOptions scan;
  scan.max_depth = options.max_json_depth;

  std::unique_ptr<TailPart> tail;
  std::error_code size_error;
  const uint64_t size = in.gzipped() ? 0 : std::filesystem::file_size(path, size_error);
  const int threads = options.threads > 0 ? options.threads : std::thread::hardware_concurrency() >= 2 ? 2 : 1;
  uint64_t split_at = 0;
  int depth = 0;
  internal::TableRows whole_rows{}, tail_rows{};
  if (threads >= 2 && !in.gzipped() && !size_error && (size >= kParallelMinBytes || options.threads >= 2) &&
      PlanSplit(path, size, split_at, depth, whole_rows, tail_rows)) {
    try {
      sink.ReserveRows(whole_rows, size);
      tail = std::make_unique<TailPart>(path, size, split_at, depth, scan, options.max_json_depth, tail_rows);
      scan.split_at = split_at;
      sink.set_on_split([&](uint64_t& resume, uint64_t& elements) {
        return tail->MergeInto(sink.builder(), resume, elements);
      });
    } catch (const std::system_error&) {
      tail.reset();  // no thread to be had: read it all on this one
    }
  }
  if (!in.gzipped() && !size_error) sink.PlanReserve(0, size);
  if (in.gzipped() && threads >= 2) in.ReadAhead();  // inflate on the second core
  internal::StreamStats stats;
  Status streamed = internal::StreamTraceJson(in, scan, sink, stats);
  tail.reset();  // stops the second thread when the first never reached its start
  if (!streamed.ok()) return WithPath(path, streamed);

  if (stats.elements == 0) {
    if (!stats.top_level_array && !stats.saw_trace_events) {
      return InvalidInput(path + ": no trace events (the JSON object has no \"traceEvents\" member)");
    }
    return InvalidInput(path + ": no trace events (the event array is empty)");
  }
  if (sink.builder().kept() == 0) {
    return InvalidInput(path + ": no trace events: none of the " + std::to_string(stats.elements) +
                        " entries is a kernel, copy, memset, sync, CUDA API call or range");
  }
  sink.builder().Finish(sink.base_ns());

  result.metadata[std::string(meta::kSourceFormat)] = "kineto_json";
  // Every category the builder keeps is Kineto's vocabulary (see kineto_builder.h).
  result.metadata.emplace(std::string(meta::kProducer), "PyTorch profiler (Kineto)");
  trace = std::move(result);
  return Status::Ok();
}

}  // namespace tg
