// The one reader of report documents (schema tracegate.report/v1, see
// tracegate/reports/analysis_report.h): loading a report file, the schema check, and the tolerant
// typed accessors every reader of a report uses (the gate, compare, the baseline texts, the
// reference run, and the text, Markdown and HTML renderers). Internal to the reports library.
//
// A reader takes any JSON: a stored baseline from an older tool, a hand-edited file, `{}`. The
// accessors check presence and type and never throw; what is absent or of another type reads as
// "", nullopt, 0, false or an empty array/object. Nested members are read by chaining Object():
// Number(Object(doc, "kernels"), "total_ms").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "tracegate/analyzer/status.h"

namespace tg::internal {

using nlohmann::json;

// Reads `path` as JSON: NotFound "<path>: cannot open the <what>" or InvalidInput "<path>: not
// valid JSON (...)". No schema check (CheckReportDocument).
Status LoadReportFile(const std::string& path, const char* what, json* doc);

// What a reader needs of a document beyond the schema.
struct ReportNeeds {
  // The keys a gate reads, with their types: avg_latency_ms, p95_latency_ms, throughput_fps
  // (number or null), latency_samples_ms (array of numbers), devices (array), data_quality
  // ({has_errors, counters[]}).
  bool gate_keys = false;
  // avg_latency_ms a positive number (a run to compare against or scale by).
  bool positive_latency = false;
};

// The first problem of a document as a report; each caller words it for its own command.
enum class ReportFault : uint8_t {
  kNone,
  kNotObject,    // not a JSON object
  kNoSchema,     // no "schema", or not a string
  kOtherSchema,  // a schema other than kReportSchema (ReportCheck::schema)
  kMissingKey,   // a gate key is absent (ReportCheck::key)
  kWrongType,    // a gate key has another type (ReportCheck::key, ReportCheck::expected)
  kNoLatency,    // avg_latency_ms is not a positive number
};
struct ReportCheck {
  ReportFault fault = ReportFault::kNone;
  std::string schema;         // kOtherSchema: the schema the document names
  std::string_view key;       // kMissingKey, kWrongType
  const char* expected = "";  // kWrongType: "a number or null", ...
  bool ok() const { return fault == ReportFault::kNone; }
};
// Checks in this order: object, schema, the gate keys (when needed), avg_latency_ms (when needed).
ReportCheck CheckReportDocument(const json& doc, ReportNeeds needs);

// doc[key] when doc is an object that has the key, else nullptr.
const json* Find(const json& doc, std::string_view key);
// doc[key] when it is a finite number (an in-memory document may hold NaN, which a written
// report has as null: both read as missing).
std::optional<double> Number(const json& doc, std::string_view key);
// doc[key] when it is a number, rounded to an integer; `fallback` otherwise.
int64_t Int(const json& doc, std::string_view key, int64_t fallback = 0);
// doc[key] when it is a string, else "".
std::string Text(const json& doc, std::string_view key);
// doc[key] when it is true.
bool Flag(const json& doc, std::string_view key);
// doc[key] when it is an array, else an empty array.
const json& Array(const json& doc, std::string_view key);
// doc[key] when it is an object, else an empty object.
const json& Object(const json& doc, std::string_view key);

// A job report (tracegate/reports/job.h): the slowest rank's report with the job's keys, ranks[]
// (one object per rank, by rank: rank, file, avg_latency_ms, ... clock_offset_ns, wait_ms),
// slowest_rank and job{ranks, built_from, shared_collectives, matched_by}. A trace's report may
// carry ranks[] too (its one rank); only a job report has job{}.
bool IsJobReport(const json& doc);

// A gap's neighbours (devices[].gaps.largest[], idle_causes.*.largest[]): the work that ends where
// the gap begins and the work that starts where it ends. Earlier v1 reports named them "before"
// and "after" (the activity before the gap and the one after it); both spellings read.
std::string GapPrevious(const json& gap);
std::string GapNext(const json& gap);

}  // namespace tg::internal
