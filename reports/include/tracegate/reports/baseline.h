// Baselines: stored reports a new run is gated against, and a history of saved and gated
// reports for trends. Layout of a baseline directory (default "baselines", in git):
//   <dir>/<NAME>.json     the report saved as NAME (written atomically: temp + fsync + rename)
//   <dir>/history.db      SQLite: one row per save and per gate (name, kind, time, commit,
//                         avg/p95 latency, throughput, verdict, report path)
// NAME: 1-100 characters from [A-Za-z0-9._-], not starting with '.'; never a path.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "tracegate/analyzer/status.h"
#include "tracegate/reports/report_read.h"  // CheckReport, which SaveBaseline and LoadBaseline make

namespace tg {

struct BaselineInfo {
  std::string name;
  std::string path;
  std::string model, precision, commit, profiling_date;  // "" when the report has none
  double avg_latency_ms = 0;
  bool has_avg_latency = false;
  std::string error;  // ListBaselines: why the file could not be read as a report ("" when fine)
};

struct HistoryRow {
  int64_t id = 0;
  std::string name;
  std::string kind;          // "saved" or "gated"
  std::string recorded_at;   // ISO-8601 UTC
  std::string commit;
  double avg_latency_ms = 0, p95_latency_ms = 0, throughput_fps = 0;  // NaN-free: 0 when absent
  std::string verdict;       // "" for saves; "pass", "regression", "cannot_judge" for gates
  std::string source;        // the report or trace path given
};

// InvalidInput naming the rule when the name is not allowed.
Status ValidateBaselineName(const std::string& name);

// Validates `report` as a tracegate report (schema check of the keys the gate needs), writes
// <dir>/<name>.json atomically (creating dir), then appends a "saved" history row. A failed
// write leaves any existing baseline untouched.
Status SaveBaseline(const std::string& dir, const std::string& name, const nlohmann::json& report,
                    const std::string& source);
Status ListBaselines(const std::string& dir, std::vector<BaselineInfo>* out);
// Reads <dir>/<name>.json, or, when name_or_file names an existing file (contains '/' or ends
// in .json), that file. Errors name the file: missing, not JSON, not a tracegate report.
Status LoadBaseline(const std::string& dir, const std::string& name_or_file, nlohmann::json* report,
                    std::string* resolved_path);
Status AppendHistory(const std::string& dir, const HistoryRow& row);
Status ReadHistory(const std::string& dir, const std::string& name, std::vector<HistoryRow>* out);

// <dir>/<name>.json and <dir>/history.db.
std::string BaselinePath(const std::string& dir, const std::string& name);
std::string HistoryPath(const std::string& dir);

// A history row for `report` (kind "saved" or "gated"): its commit, avg/p95 latency and
// throughput (0 when null), recorded_at = now (UTC). verdict is left "" for the caller.
HistoryRow HistoryRowFor(const std::string& name, const std::string& kind, const nlohmann::json& report,
                         const std::string& source);

// The texts `tracegate baseline` prints (baseline_text.cpp). Saved: "saved baseline 'NAME' to
// PATH: avg latency ..., commit ...". List: one row per baseline, columns as wide as their
// longest entry. Show: a stored report's run, headline, data quality and top 5 findings, "-" for
// what it lacks. History: one row per save and gate with the change of avg latency from the
// first row, and an ASCII trend line.
std::string BaselineSavedText(const std::string& name, const std::string& path, const nlohmann::json& report);
std::string BaselineListText(const std::string& dir, const std::vector<BaselineInfo>& list);
std::string BaselineShowText(const std::string& name, const std::string& path, const nlohmann::json& report);
std::string BaselineHistoryText(const std::string& name, const std::string& dir, const std::vector<HistoryRow>& rows);

// `path` as a report: a tracegate report JSON is read and checked (CheckReport); any other file
// is imported as a trace and analyzed with default options (RunAnalysis + AnalysisToJson, commit
// = the git HEAD of the current directory). Which one it is: ClassifyInput (compare.h). Errors
// name the file. In report_source.cpp.
// `skip`: the trace's --skip (unset: auto, the warm-up rule); a report keeps the iterations it has.
Status ReadReportOrTrace(const std::string& path, nlohmann::json* report, std::optional<size_t> skip = std::nullopt);

}  // namespace tg
