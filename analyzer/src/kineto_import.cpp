// Kineto / Chrome-trace JSON importer: gz_reader -> json_stream (top-level walk, one event at a
// time) -> kineto_event (simdjson, per event) -> kineto_builder (Trace tables). Memory grows with
// the events kept, not with the file: only one event (plus a read buffer) is in memory at once.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>

#include "gz_reader.h"
#include "json_stream.h"
#include "kineto_builder.h"
#include "kineto_event.h"
#include "kineto_numbers.h"
#include "tracegate/import.h"

namespace tg {

namespace {

using internal::NumberStatus;

// Deeper limits are refused: validation recurses once per level.
constexpr int kMaxSupportedDepth = 10000;

class KinetoSink : public internal::JsonSink {
 public:
  KinetoSink(Trace& trace, int max_depth) : trace_(trace), parser_(max_depth), builder_(trace) {}

  Status OnEvent(std::string_view json, uint64_t offset) override {
    if (Status s = parser_.Parse(json, offset, event_); !s.ok()) return s;
    builder_.Add(event_);
    return Status::Ok();
  }

  Status OnMember(std::string_view key, std::string_view json, uint64_t offset) override;

  internal::KinetoBuilder& builder() { return builder_; }
  int64_t base_ns() const { return base_ns_; }

 private:
  Status Invalid(std::string_view key, uint64_t offset, const std::string& what) const {
    return InvalidInput("top-level member \"" + std::string(key) + "\" at byte " + std::to_string(offset) +
                        ": " + what);
  }
  void ReadDevices(const nlohmann::json& list);

  Trace& trace_;
  internal::EventParser parser_;
  internal::KinetoBuilder builder_;
  internal::RawEvent event_;
  std::string text_;
  int64_t base_ns_ = 0;
};

std::string ScalarText(const nlohmann::json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump();
}

Status KinetoSink::OnMember(std::string_view key, std::string_view json, uint64_t offset) {
  // Members other than traceEvents are small; each is still checked to be valid JSON.
  internal::RepairUtf8(json, text_);
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

}  // namespace

Status ImportKineto(const std::string& path, Trace& trace, const ImportOptions& options) {
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
  internal::StreamStats stats;
  if (Status s = internal::StreamTraceJson(in, scan, sink, stats); !s.ok()) return WithPath(path, s);

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
