// The `tracegate analyze` outputs: the report JSON document and the human summary.
//
// The report document (schema "tracegate.report/v1") is declared in three places that tests keep
// in step: the headline keys and the iteration rows in reports/document/report_keys.h, every key
// with its type in reports/schema/tracegate.report.v1.schema.json, and what each section means in
// docs/REPORTS.md ("Key reference").
#pragma once

#include <nlohmann/json.hpp>
#include <cstdint>
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
[[nodiscard]] Status WriteAnalysisJson(const std::string& path, const nlohmann::json& doc,
                                       const IterationAnalysis& iterations);

// The human summary printed by `tracegate analyze` (fits one screen for a typical trace), from the
// report document as the Markdown and HTML reports are. `no_activity_reason`: why a recording
// holds no GPU work (its record.no_cuda_activity metadata, which the report does not carry).
void PrintAnalysis(std::ostream& out, const nlohmann::json& report, std::string_view no_activity_reason = {});

}  // namespace tg
