// The collector's environment; see options.h.
#include "options.h"

#include <cerrno>
#include <cstdlib>

#include "collector/src/parts.h"
#include "tracegate/analyzer/strings.h"

namespace tg::cupti {

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
  if (o.recording.buffer_cap_mb < o.recording.buffer_mb) {
    warnings->push_back(StrFormat("%s=%lld is below %s=%lld; the pool holds one buffer", internal::kBufferCapMb,
                                  static_cast<long long>(o.recording.buffer_cap_mb), internal::kBufferMb,
                                  static_cast<long long>(o.recording.buffer_mb)));
  }
  return o;
}

}  // namespace tg::cupti
