// The human reports of `tracegate analyze --md FILE --html FILE`, built from the report JSON
// document alone (schema tracegate.report/v1), so a stored baseline renders the same way as a
// fresh run. Any JSON is accepted: a missing or null value shows as "n/a" with the report's
// "<key>_reason", a missing section is said to be missing.
//
// Markdown: fits a pull-request comment or a CI step summary (GitHub-flavoured tables): the run,
// a headline table, findings (priority, evidence, predicted gain, first strategy), the top
// kernels and data quality.
// HTML: one self-contained page (inline CSS and SVG, one inline script allowed by its hash, no
// network; reports/html/): a one-sentence summary (where the time goes, what to try first), the
// findings, the headline cards that have a value, a zoomable timeline (an overview of the whole
// trace, the median iteration's host calls and ranges and GPU streams coloured by class, the
// device-idle gaps shaded and numbered as the findings cite them), the step time of each
// iteration by phase (from "iteration_table"), the kernels (bars and a sortable, filterable table
// with names told apart), the latency histogram (from 10 iterations), collectives, data quality.
// Every string taken from the report is escaped for the output's language.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "tracegate/analyzer/status.h"

namespace tg {

struct HistoryRow;  // tracegate/reports/baseline.h

std::string MarkdownReport(const nlohmann::json& report);
std::string HtmlReport(const nlohmann::json& report);

// Write the text above atomically (the file appears whole or not at all).
[[nodiscard]] Status WriteMarkdownReport(const nlohmann::json& report, const std::string& path);
[[nodiscard]] Status WriteHtmlReport(const nlohmann::json& report, const std::string& path);

// `tracegate baseline history NAME --html`: the rows of <dir>/history.db for NAME (oldest first)
// as a page with the latency trend (avg and p95, a dot per save or gate coloured by its verdict),
// the throughput trend and the table.
std::string BaselineHistoryHtml(const std::string& name, const std::string& dir, const std::vector<HistoryRow>& rows);

// & < > " ' as character references and C0 controls other than tab/LF/CR dropped: safe in HTML
// and SVG text and quoted attribute values, and valid XML 1.0 (JUnit files, for one).
std::string HtmlEscape(std::string_view text);
// Text for a Markdown paragraph or table cell: Markdown punctuation backslash-escaped, < > &
// as character references (no raw HTML reaches the renderer), newlines as spaces, so a name
// like "a|b" or "__init__" stays one cell and literal.
std::string MarkdownEscape(std::string_view text);

}  // namespace tg
