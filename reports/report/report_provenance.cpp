// The report's provenance keys; see tracegate/report_provenance.h.
#include "tracegate/reports/report_provenance.h"
#include "reports/document/report_keys.h"

#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

namespace tg {

namespace keys = internal::keys;

namespace {

using nlohmann::json;

// [2000-01-01, 2100-01-01) in Unix-epoch ns: traces whose clock starts at process or session
// start (Nsight Systems, relative Kineto timestamps) fall far below it.
constexpr TimeNs kEpoch2000Ns = 946'684'800LL * 1'000'000'000;
constexpr TimeNs kEpoch2100Ns = 4'102'444'800LL * 1'000'000'000;

// The sampled values of one NVML column (NaN and negative mean "not sampled").
std::vector<double> Sampled(const std::vector<double>& column) {
  std::vector<double> out;
  for (double v : column)
    if (std::isfinite(v) && v >= 0) out.push_back(v);
  return out;
}

const char* NoSamplesReason(const Trace& t, const char* what) {
  if (t.samples.size() == 0) return "the trace has no NVML samples";
  return what;
}

}  // namespace

bool GitHead(std::string* commit, std::string* reason) {
  // Prints "true" then the hash inside a work tree; fails outside one or before the first commit.
  FILE* p = ::popen("git rev-parse --is-inside-work-tree HEAD 2>/dev/null", "r");
  if (!p) {
    *reason = "cannot run git; pass --commit";
    return false;
  }
  std::string out;
  char buf[256];
  while (size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  int status = ::pclose(p);
  int code = status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  size_t nl = out.find('\n');
  std::string first = out.substr(0, nl);
  std::string hash = nl == std::string::npos ? "" : out.substr(nl + 1, out.find('\n', nl + 1) - nl - 1);
  bool hex = !hash.empty() && hash.find_first_not_of("0123456789abcdef") == std::string::npos;
  if (code == 0 && first == "true" && hex && (hash.size() == 40 || hash.size() == 64)) {
    *commit = hash;
    return true;
  }
  if (code == 127) *reason = "not given (--commit) and git is not installed";
  else if (first == "true") *reason = "not given (--commit) and the git work tree has no commit yet";
  else *reason = "not given (--commit) and the current directory is not in a git work tree";
  return false;
}

bool EpochNsToIso(TimeNs t, std::string* out) {
  if (t < kEpoch2000Ns || t >= kEpoch2100Ns) return false;
  std::time_t seconds = static_cast<std::time_t>(t / 1'000'000'000);
  std::tm utc{};
  if (!gmtime_r(&seconds, &utc)) return false;
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &utc);
  *out = buf;
  return true;
}

void AddProvenanceJson(json& doc, const Trace& trace, const Analysis& analysis, const AnalysisConfig& config) {
  if (!config.commit.empty()) {
    doc["commit"] = config.commit;
  } else {
    doc["commit"] = nullptr;
    doc["commit_reason"] = config.commit_reason.empty() ? "not given (--commit)" : config.commit_reason;
  }

  // A recording's collector counts what the program allocated through CUDA (metadata written by
  // collector/cupti); NVML's memory_used also counts the driver's reservations and other
  // processes, so the collector's figure comes first.
  std::vector<double> memory = Sampled(trace.samples.memory_used_mb);
  double allocated = -1;
  if (auto it = trace.metadata.find(meta::kMemoryPeakMb); it != trace.metadata.end()) {
    char* end = nullptr;
    allocated = std::strtod(it->second.c_str(), &end);
    if (end == it->second.c_str() || *end != '\0' || !std::isfinite(allocated)) allocated = -1;
  }
  if (allocated >= 0) {
    doc[keys::kMemoryPeakMb.name] = allocated;
    auto source = trace.metadata.find(meta::kMemoryPeakMbSource);
    doc[keys::kMemoryPeakMbSource.name] = source != trace.metadata.end() ? source->second : "trace metadata";
  } else if (!memory.empty()) {
    doc[keys::kMemoryPeakMb.name] = *std::max_element(memory.begin(), memory.end());
    doc[keys::kMemoryPeakMbSource.name] = "nvml samples";
  } else {
    doc[keys::kMemoryPeakMb.name] = nullptr;
    doc[keys::ReasonKey(keys::kMemoryPeakMb.name)] = NoSamplesReason(trace, "the NVML samples have no memory_used_mb");
  }

  std::vector<double> temps = Sampled(trace.samples.temperature_c);
  if (!temps.empty()) {
    auto [lo, hi] = std::minmax_element(temps.begin(), temps.end());
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.0f-%.0f", *lo, *hi);
    doc[keys::kTemperatureRange.name] = buf;
  } else {
    doc[keys::kTemperatureRange.name] = nullptr;
    doc[keys::ReasonKey(keys::kTemperatureRange.name)] =
        NoSamplesReason(trace, "the NVML samples have no temperature_c");
  }

  const TimeNs start = analysis.summary.start_ns;
  std::string date;
  if (EpochNsToIso(start, &date)) {
    doc["profiling_date"] = date;
  } else {
    doc["profiling_date"] = nullptr;
    doc["profiling_date_reason"] =
        start == 0 && analysis.summary.end_ns == 0
            ? std::string("the trace is empty")
            : "the trace's times are not Unix-epoch nanoseconds (it starts at " + std::to_string(start) +
                  " ns), so its wall-clock date is unknown";
  }
}

}  // namespace tg
