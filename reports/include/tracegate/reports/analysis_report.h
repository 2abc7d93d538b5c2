// The `tracegate analyze` outputs: the report JSON document and the human summary.
//
// The report document (schema "tracegate.report/v1") is declared in three places that tests keep
// in step: the headline keys and the iteration rows in reports/document/report_keys.h, every key
// with its type in the schema `tracegate schema` prints (reports/include/tracegate/reports/report_schema.h), and what
// each section means in docs/REPORTS.md ("Key reference").
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <string_view>

#include "tracegate/analyzer/analysis.h"
#include "tracegate/analyzer/model.h"

namespace tg {

inline constexpr const char* kReportSchema = "tracegate.report/v1";

// The analysis as the report JSON document (schema "tracegate.report/v1"; stable snake_case keys,
// units in key names). See the key list above.
// With IterationRows::kLeftOut, "iteration_table" is an empty array: WriteAnalysisJson fills it
// in as it writes (a trace of thousands of iterations would otherwise hold a large JSON tree).
enum class IterationRows : uint8_t { kInTree, kLeftOut };
nlohmann::json AnalysisToJson(const Trace& trace, const Analysis& analysis, const AnalysisConfig& config,
                              IterationRows rows = IterationRows::kInTree);

// The report's "iteration_table" rows of `iterations` (what kInTree puts in the document).
nlohmann::json IterationTableJson(const IterationAnalysis& iterations);

// Writes the report `doc` (from AnalysisToJson with IterationRows::kLeftOut) to `path`
// atomically, rendering the rows of `iterations` into its "iteration_table" one at a time. The
// file is byte for byte what WriteJsonFile would write for the kInTree document.
[[nodiscard]] Status WriteAnalysisJson(const nlohmann::json& doc, const IterationAnalysis& iterations,
                                       const std::string& path);

// A trace's report: the document (schema tracegate.report/v1) and its iteration rows, made once
// from an analysis (AnalyzeFile in tracegate/reports/api.h, or the constructor) or taken whole
// (a report file, a job's). Nobody patches it afterwards: the rows are kept aside and rendered into
// "iteration_table" only where a reader needs them (Document(), the JSON file), since a trace of
// thousands of iterations would otherwise hold a large JSON tree that most outputs never read.
// Copies share the rows. Not thread-safe: the first Document() of a report made from an analysis
// fills its rows in.
class Report {
 public:
  Report() = default;
  // The report of `analysis` on `trace` under `config`; the rows are moved out of the analysis.
  Report(const Trace& trace, Analysis&& analysis, const AnalysisConfig& config);
  // A whole document (rows included), as read from a file or made by a job's reduce.
  explicit Report(nlohmann::json doc);

  // The whole document, iteration rows included.
  const nlohmann::json& Document() const;
  // The document with "iteration_table" still empty when the rows are kept aside: what the text
  // and Markdown summaries and a job's reduce read (none of them reads the rows).
  const nlohmann::json& Head() const { return doc_; }
  // The whole document, moved out.
  nlohmann::json TakeDocument() &&;
  // Head(), moved out (a job keeps its ranks' documents without their rows).
  nlohmann::json TakeHead() && { return std::move(doc_); }
  // Writes the JSON report to `path` atomically, the rows streamed into it (byte for byte what
  // WriteJsonFile(path, Document()) writes).
  [[nodiscard]] Status WriteJson(const std::string& path) const;

  // The analysed trace's metadata (Trace::metadata): what a caller may need of the trace after it
  // is gone (a job's "rank", a recording's record.no_cuda_activity). Empty for a whole document.
  const std::map<std::string, std::string, std::less<>>& trace_metadata() const { return metadata_; }
  // metadata[key], or "" when the trace had none.
  std::string_view TraceMetadata(std::string_view key) const;

 private:
  mutable nlohmann::json doc_ = nlohmann::json::object();
  mutable std::shared_ptr<const IterationAnalysis> rows_;  // kept aside until Document()
  std::map<std::string, std::string, std::less<>> metadata_;
};

// The human summary printed by `tracegate analyze` (fits one screen for a typical trace), from the
// report document as the Markdown and HTML reports are. `no_activity_reason`: why a recording
// holds no GPU work (its record.no_cuda_activity metadata, which the report does not carry).
void PrintAnalysis(std::ostream& out, const nlohmann::json& report, std::string_view no_activity_reason = {});

}  // namespace tg
