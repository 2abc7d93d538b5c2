// PrintRecordSummary: what `tracegate record` prints when the trace is written. One screen: the
// processes are listed up to kProcessesShown, the incomplete-part notes up to kNotesShown.
#include <algorithm>

#include "collector/src/cupti_clients.h"
#include "tracegate/collector/record.h"
#include "tracegate/analyzer/strings.h"

namespace tg {

using internal::kCuptiRefusedKey;
using internal::kOtherCuptiClientsKey;
using internal::OtherCuptiClientLines;

namespace {

constexpr size_t kProcessesShown = 8;
constexpr size_t kNotesShown = 4;

std::string Size(uint64_t bytes) {
  if (bytes < 1024 * 1024) return StrFormat("%.1f KiB", static_cast<double>(bytes) / 1024.0);
  return StrFormat("%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
}

std::string MetaOr(const Trace& t, std::string_view key, const char* fallback) {
  auto it = t.metadata.find(key);
  return it == t.metadata.end() ? std::string(fallback) : it->second;
}

unsigned long long Count(size_t n) { return static_cast<unsigned long long>(n); }

}  // namespace

void PrintRecordSummary(std::ostream& out, const RecordResult& r) {
  const Trace& t = r.trace;
  out << "tracegate record: wrote " << r.output << " (" << Size(r.output_bytes) << ")\n";
  out << "  command:   " << MetaOr(t, record_meta::kCommand, "?") << " -> " << MetaOr(t, record_meta::kExit, "?")
      << StrFormat(" after %.3f s\n", static_cast<double>(r.duration_ns) / 1e9);
  out << "  processes: " << t.processes.size();
  for (size_t i = 0; i < std::min(kProcessesShown, t.processes.size()); ++i)
    out << (i ? ", " : " (") << "pid " << t.processes[i].pid
        << (t.processes[i].name.empty() ? "" : " " + t.processes[i].name);
  if (t.processes.size() > kProcessesShown) out << ", ... " << t.processes.size() - kProcessesShown << " more";
  out << (t.processes.empty() ? "" : ")") << "\n";
  size_t driver = static_cast<size_t>(std::count(t.api_calls.kind.begin(), t.api_calls.kind.end(), ApiKind::kDriver));
  out << StrFormat("  events:    %llu kernels, %llu memcpys, %llu memsets, %llu syncs, %llu runtime + %llu driver "
                   "calls, %llu ranges, %llu samples\n",
                   Count(t.kernels.size()), Count(t.memcpys.size()), Count(t.memsets.size()), Count(t.syncs.size()),
                   Count(t.api_calls.size() - driver), Count(driver), Count(t.ranges.size()), Count(t.samples.size()));
  uint64_t dropped = t.quality.Get(Quality::kSourceDroppedRecords);
  out << "  dropped:   " << dropped << " records"
      << (dropped ? " (ERROR: the trace is missing data; raise TRACEGATE_BUFFER_CAP_MB)" : "") << "\n";
  out << "  telemetry: " << MetaOr(t, record_meta::kTelemetry, "?") << "\n";
  // A profiler in the same process that CUPTI refused, or could have (cupti_clients.h): one line each.
  const std::vector<std::string> profilers = OtherCuptiClientLines(t.metadata);
  for (size_t i = 0; i < std::min(kProcessesShown, profilers.size()); ++i) out << "  profiler:  " << profilers[i] << "\n";
  if (profilers.size() > kProcessesShown)
    out << "  profiler:  ... " << profilers.size() - kProcessesShown << " more processes (metadata "
        << kOtherCuptiClientsKey << ", " << kCuptiRefusedKey << ")\n";
  if (uint64_t n = t.quality.Get(Quality::kTraceIncomplete); n > 0) {
    out << "  INCOMPLETE: " << n << " process" << (n == 1 ? "" : "es") << " did not finish recording:\n";
    for (size_t i = 0; i < std::min(kNotesShown, r.merge.notes.size()); ++i) out << "    " << r.merge.notes[i] << "\n";
    if (r.merge.notes.size() > kNotesShown) out << "    ... " << r.merge.notes.size() - kNotesShown << " more\n";
  }
  if (auto it = t.metadata.find(record_meta::kNoActivity); it != t.metadata.end())
    out << "  no CUDA activity recorded: " << it->second << "\n";
}

}  // namespace tg
