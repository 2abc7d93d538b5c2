// Data-quality counters: every kind of bad or missing trace data, declared once with a severity.
// Importers count instead of guessing; every report prints the non-zero counters, and an
// error-level counter makes the gate refuse to pass (see docs/RULES.md).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tg {

enum class Severity : uint8_t { kInfo, kWarning, kError };

constexpr std::string_view SeverityName(Severity s) {
  switch (s) {
    case Severity::kInfo: return "info";
    case Severity::kWarning: return "warning";
    case Severity::kError: return "error";
  }
  return "unknown";
}

// kQualityInfo below describes each, indexed by this enum (a static_assert checks its order).
enum class Quality : uint16_t {
  kSourceDroppedRecords,    // the producer says it lost records (CUPTI dropped, buffer cap)
  kTraceIncomplete,         // the recording did not finish (crash, kill)
  kNegativeDuration,        // end < start; event dropped
  kMissingTimestamp,        // no start/ts; event dropped
  kMalformedEvent,          // wrong field types in an event we would otherwise keep; dropped
  kUnknownCategorySkipped,  // event category/table we do not model; skipped
  kUnmatchedCorrelation,    // GPU activity whose correlation id has no launching API call
  kUnmatchedRangeEnd,       // NVTX/annotation end without a start (or range never closed)
  kUnknownCopyKind,         // memcpy whose direction could not be determined
  kClockJump,               // timestamps that go backwards within one stream by more than 1 ms
  kDuplicateEvent,          // exact duplicate GPU record (same stream, start, end, name)
  kTimestampOverflow,       // timestamp that does not fit int64 nanoseconds; dropped
  kNegativeTimestamp,       // start (or sample time) before 0 ns; dropped
  kOverlappingRanges,       // ranges on one thread that overlap without nesting; kept
  kInvalidUtf8,             // names with bytes that are not UTF-8; repaired with U+FFFD, kept
  kUnresolvedName,          // SQLite name ids missing from StringIds; kept with a placeholder name
  kDuplicateKey,            // JSON event with a member it uses given twice; the last one wins, kept
  kUnmatchedLaunch,         // kernel/graph launch call with no GPU record of its correlation id
  kInexactTimestamp,        // SQLite REAL time that is no exact int64 nanosecond value; dropped
  kDeviceBacklog,           // GPU work queued long on an idle device: it ran work the trace lacks (analysis)
  kStartBeforeLaunch,       // GPU work that starts before its launch call does (analysis)
  kCount
};

struct QualityInfo {
  Quality id;
  std::string_view key;  // stable identifier used in JSON and the store
  Severity severity;
  std::string_view description;
};

inline constexpr std::array<QualityInfo, static_cast<size_t>(Quality::kCount)> kQualityInfo{{
    {Quality::kSourceDroppedRecords, "source_dropped_records", Severity::kError,
     "records the producer reports as lost (CUPTI dropped records, buffer cap reached)"},
    {Quality::kTraceIncomplete, "trace_incomplete", Severity::kError,
     "the recording did not finish cleanly; the trace ends early"},
    {Quality::kNegativeDuration, "negative_duration", Severity::kWarning,
     "events whose end precedes their start; dropped"},
    {Quality::kMissingTimestamp, "missing_timestamp", Severity::kWarning, "events without a usable timestamp; dropped"},
    {Quality::kMalformedEvent, "malformed_event", Severity::kWarning, "events with fields of the wrong type; dropped"},
    {Quality::kUnknownCategorySkipped, "unknown_category_skipped", Severity::kInfo,
     "events of a category tracegate does not model; skipped"},
    {Quality::kUnmatchedCorrelation, "unmatched_correlation", Severity::kWarning,
     "GPU activities whose correlation id matches no runtime/driver call in the trace"},
    {Quality::kUnmatchedRangeEnd, "unmatched_range_end", Severity::kWarning,
     "range ends without a start, or ranges never closed"},
    {Quality::kUnknownCopyKind, "unknown_copy_kind", Severity::kInfo, "memory copies whose direction is unknown"},
    {Quality::kClockJump, "clock_jump", Severity::kWarning,
     "GPU timestamps going backwards on one stream by more than 1 ms"},
    {Quality::kDuplicateEvent, "duplicate_event", Severity::kInfo, "exact duplicate GPU records; kept once"},
    {Quality::kTimestampOverflow, "timestamp_overflow", Severity::kWarning,
     "timestamps that do not fit 64-bit nanoseconds; dropped"},
    {Quality::kNegativeTimestamp, "negative_timestamp", Severity::kWarning,
     "events that start before 0 ns (no profiler's clock does; any span between two kept events "
     "then fits 64-bit nanoseconds); dropped"},
    {Quality::kOverlappingRanges, "overlapping_ranges", Severity::kWarning,
     "ranges on one thread that overlap without nesting (a push/pop or annotation error); kept, one "
     "level deeper than the range they overlap"},
    {Quality::kInvalidUtf8, "invalid_utf8", Severity::kWarning,
     "names holding bytes that are not UTF-8 (JSON: per event, SQLite: per distinct name); each "
     "bad byte is replaced by U+FFFD and the event is kept"},
    {Quality::kUnresolvedName, "unresolved_name", Severity::kWarning,
     "events whose name id is missing from the SQLite StringIds table; kept, named "
     "\"<StringIds id N missing>\""},
    {Quality::kDuplicateKey, "duplicate_key", Severity::kWarning,
     "JSON events with a member tracegate reads (ts, dur, name, args.stream, ...) given twice; the "
     "last occurrence wins, as JavaScript's JSON.parse and Python's json read it; kept"},
    {Quality::kUnmatchedLaunch, "unmatched_launch", Severity::kError,
     "kernel and graph launch calls (cudaLaunchKernel, cuLaunchKernel, cudaGraphLaunch, ...) that "
     "returned success but whose correlation id matches no kernel, memcpy or memset of their process, "
     "while that process later issued recorded GPU work or returned from a device sync, or the trace "
     "has no GPU record at all: GPU records were lost. Launches after the last recorded GPU work of "
     "their process are the capture's tail and not counted"},
    {Quality::kInexactTimestamp, "inexact_timestamp", Severity::kError,
     "SQLite rows whose start or end is a REAL that is not a whole number of nanoseconds below "
     "2^53 (whole numbers below 2^53 are read exactly); the exact time is lost, so the row is dropped"},
    {Quality::kDeviceBacklog, "device_backlog", Severity::kWarning,
     "GPU activities that started at least the backlog threshold (1 ms by default) after their launch call "
     "returned while the device had no recorded work: the device was running work the trace does not hold "
     "(queued before the trace began, or another process's). That time is device_backlog, not idle, and no "
     "finding claims it (counted by the analysis)"},
    {Quality::kStartBeforeLaunch, "start_before_launch", Severity::kWarning,
     "GPU activities that start more than 1 us before the API call that launched them starts: the host and device "
     "clocks "
     "disagree, so every launch-to-start lag and idle cause read from them is suspect (counted by the analysis)"},
}};

// InfoOf indexes kQualityInfo by the enum, and QualityFromKey looks keys up: entry i must describe
// Quality(i), and every key must be set and unique.
constexpr bool QualityInfoMatchesEnum() {
  for (size_t i = 0; i < kQualityInfo.size(); ++i) {
    if (static_cast<size_t>(kQualityInfo[i].id) != i || kQualityInfo[i].key.empty()) return false;
    for (size_t j = 0; j < i; ++j)
      if (kQualityInfo[j].key == kQualityInfo[i].key) return false;
  }
  return true;
}
static_assert(QualityInfoMatchesEnum(), "kQualityInfo must list every Quality once, in the enum's order");

constexpr const QualityInfo& InfoOf(Quality q) { return kQualityInfo[static_cast<size_t>(q)]; }

// Returns Quality::kCount when the key is unknown.
Quality QualityFromKey(std::string_view key);

class QualityCounters {
 public:
  void Add(Quality q, uint64_t n = 1) { counts_[static_cast<size_t>(q)] += n; }
  void Set(Quality q, uint64_t n) { counts_[static_cast<size_t>(q)] = n; }
  uint64_t Get(Quality q) const { return counts_[static_cast<size_t>(q)]; }
  bool HasErrors() const;
  uint64_t Total() const;

 private:
  std::array<uint64_t, static_cast<size_t>(Quality::kCount)> counts_{};
};

}  // namespace tg
