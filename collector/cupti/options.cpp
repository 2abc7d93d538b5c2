// The collector's environment; see options.h.
#include "options.h"

#include <cerrno>
#include <cstdlib>

#include "collector/src/parts.h"
#include "tracegate/analyzer/strings.h"

namespace tg::cupti {

using internal::ParseCaptureRange;
using internal::ParseIterations;

namespace {

// Positive integer up to `max`, else the default with a warning.
void ReadPositive(const GetEnv& getenv, const char* name, int64_t max, int64_t* value,
                  std::vector<std::string>* warnings) {
  const char* text = getenv(name);
  if (!text || !*text) return;
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(text, &end, 10);
  if (errno == 0 && *end == '\0' && v > 0 && v <= max) {
    *value = v;
    return;
  }
  warnings->push_back(StrFormat("%s=%s is not an integer from 1 to %lld; using %lld", name, text,
                                static_cast<long long>(max), static_cast<long long>(*value)));
}

}  // namespace

CollectorOptions ReadCollectorOptions(const GetEnv& getenv, std::vector<std::string>* warnings) {
  CollectorOptions o;
  if (const char* dir = getenv(internal::kPartsDir)) o.parts_dir = dir;
  ReadPositive(getenv, internal::kFlushMs, 3'600'000, &o.recording.flush_ms, warnings);
  ReadPositive(getenv, internal::kBufferMb, 1024, &o.recording.buffer_mb, warnings);
  ReadPositive(getenv, internal::kBufferCapMb, 1 << 20, &o.recording.buffer_cap_mb, warnings);
  if (const char* d = getenv(internal::kDriverApi); d && *d) {
    std::string v(d);
    if (v == "0") o.recording.driver_api = false;
    else if (v != "1")
      warnings->push_back(StrFormat("%s=%s is neither 0 nor 1; recording driver API calls", internal::kDriverApi, d));
  }
  if (const char* a = getenv(internal::kApi); a && *a) {
    std::string v(a);
    if (v == "all") o.recording.api = ApiRecording::kAll;
    else if (v != "default")
      warnings->push_back(StrFormat("%s=%s is neither default nor all; recording the default API calls", internal::kApi, a));
  }
  if (const char* g = getenv(internal::kGraphTrace); g && *g) {
    std::string v(g);
    if (v == "graph") o.recording.graph_trace = GraphTrace::kGraph;
    else if (v != "node")
      warnings->push_back(StrFormat("%s=%s is neither node nor graph; recording every graph node", internal::kGraphTrace, g));
  }
  if (const char* c = getenv(internal::kCaptureRange); c && *c) {
    if (Status s = ParseCaptureRange(c, &o.recording.capture_nvtx); !s.ok())
      warnings->push_back(StrFormat("%s=%s: %s; recording the whole run", internal::kCaptureRange, c, s.message().c_str()));
  }
  if (const char* i = getenv(internal::kIterations); i && *i) {
    int64_t skip = 0, count = 0;
    if (Status s = ParseIterations(i, &skip, &count); !s.ok())
      warnings->push_back(StrFormat("%s=%s: %s; recording every range", internal::kIterations, i, s.message().c_str()));
    else if (o.recording.capture_nvtx.empty())
      warnings->push_back(StrFormat("%s=%s counts the ranges of %s, which is not set; recording the whole run",
                                    internal::kIterations, i, internal::kCaptureRange));
    else
      o.recording.skip_ranges = skip, o.recording.record_ranges = count;
  }
  if (o.recording.buffer_cap_mb < o.recording.buffer_mb) {
    warnings->push_back(StrFormat("%s=%lld is below %s=%lld; the pool holds one buffer", internal::kBufferCapMb,
                                  static_cast<long long>(o.recording.buffer_cap_mb), internal::kBufferMb,
                                  static_cast<long long>(o.recording.buffer_mb)));
  }
  return o;
}

}  // namespace tg::cupti
