// What the human renderers (Markdown, HTML) show of a report document, read with the document
// reader's accessors (reports/document/report_document.h). Internal to the reports library. The
// renderers take any JSON, including a stored baseline from an older tool or `{}`: a missing or
// null value becomes "n/a" with the report's "<key>_reason" when it has one.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/document/report_document.h"
#include "reports/document/report_keys.h"
#include "tracegate/analyzer/kernel_class.h"
#include "tracegate/analyzer/strings.h"

namespace tg::internal {

using nlohmann::json;

// A copy of `doc` whose strings are valid UTF-8 (bad bytes become U+FFFD): a report built in
// memory from a trace may carry raw bytes that a browser or a Markdown renderer would mangle.
json ValidUtf8(const json& doc);

// HtmlEscape (tracegate/reports/report_html.h).
std::string HtmlEscapeText(std::string_view text);
// The character reference of & < > " ' (nullptr for any other character).
const char* HtmlEntity(char ch);
// C0 control characters that neither HTML text nor XML 1.0 may carry (all but tab, LF, CR).
constexpr bool IsBadControl(char ch) {
  return static_cast<unsigned char>(ch) < 0x20 && ch != '\t' && ch != '\n' && ch != '\r';
}

// `s` cut to at most `max` bytes with "..." (never inside a UTF-8 sequence); max >= 4.
std::string Cut(const std::string& s, size_t max);

// Markdown for a pull-request comment: appends each (title, folded section) of `sections` that
// still fits under `budget` bytes with `out`, in order, and a line naming those left out.
void AppendWithinBudget(std::string& out, const std::vector<std::pair<std::string, std::string>>& sections,
                        size_t budget);
// A name cut to at most `max` bytes (>= 8) in the middle ("triton_poi_fused_...add_relu_*"): kernel
// names differ at their end (the fused ops, the functor, the tile) as much as at their start.
std::string CutMiddle(const std::string& s, size_t max);

// How a number is shown.
using keys::Unit;
std::string FormatValue(double v, Unit unit);

// A value as text, or why it is missing.
struct Shown {
  bool present = false;
  std::string text;    // the formatted value, or "n/a"
  std::string reason;  // for n/a: the report's <key>_reason, or "not in this report"
};
// doc[key] formatted; a string value (e.g. "54-58") is shown as it is.
Shown Show(const json& doc, std::string_view key, Unit unit);
// "text" or "n/a (reason)".
std::string ShowInline(const Shown& s);

// The headline metrics, in the order both renderers list them.
struct HeadlineRow {
  const keys::Key* key = nullptr;
  std::string label;
  Shown value;
};
std::vector<HeadlineRow> Headline(const json& doc);

// What was run, as (label, value) pairs, unescaped: model, precision, batch, device, commit,
// profiling date, trace, tool, how iterations were found. Absent values are left out.
std::vector<std::pair<std::string, std::string>> RunFacts(const json& doc);

// Why a list shows nothing: "" when doc[key] is a non-empty array, else `if_empty` when the
// report has the key and "not in this report" when it does not.
std::string EmptyListReason(const json& doc, std::string_view key, const char* if_empty);
// "whole trace, the N dropped warm-up iteration(s) included" when warm-up was dropped, else "":
// for the sections that cover the whole trace (devices, top kernels, copies, streams), while the
// findings and the kernel table judge the kept iterations.
std::string WholeTraceNote(const json& doc);

// A finding's predicted gain from its "amdahl" object: "+12.3% (1.123x overall, at most 1.50x)";
// with the replay's estimate (analyze --replay-findings) that one first, Amdahl's as its bound:
// "+4.1% by the replay (1.041x overall; Amdahl's bound +12.3%, 1.123x overall, at most 1.50x)".
std::string GainText(const json& finding);
// The replay's estimate of a finding or of combined_estimate (analyze --replay-findings): its gain
// and overall speedup, or why it has no figure ("no figure: ..."); "" when the report has none.
std::string ReplayText(const json& obj);
// "claims time that memory_bound, transform_kernels also claim: the gains do not add", or "" when
// the finding lists no overlaps (or the report predates them).
std::string OverlapText(const json& finding);
// "+14.2% (1.142x overall) over disjoint parts: memory_bound P = 0.380 S = 1.30, ...; left out:
// unstable (the run as a whole)", or "" when the report has no combined_estimate.
std::string CombinedText(const json& doc);
// "idle_ratio = 0.35 (> 0.2)" for one evidence entry.
std::string EvidenceText(const json& evidence);

// The report's "collectives" table as text cells, one row per entry, for every renderer; a null
// value is "n/a" (its reason is in the JSON report). Empty when the report has none.
struct CollectiveCells {
  std::string collective, dtype, message, group, calls, total, mean, algbw, busbw;
};
std::vector<CollectiveCells> CollectiveTable(const json& doc);
// The rank's communication in one line ("communication 1.234 ms / iteration, compute 5.678 ms,
// overlap 12.3%"), from the first entry of "ranks"; "" without one.
std::string RankCommunicationText(const json& doc);

// The report's kernel labels (tracegate/analyzer/kernel_class.h's KernelLabels over the names of
// "top_kernels" and the first kKernelRows of "kernel_table"): every renderer labels a kernel with
// these, so the text, the Markdown and the pages tell the same kernels apart the same way.
inline constexpr size_t kKernelRows = 300;
std::map<std::string, KernelLabel> ReportKernelLabels(const json& doc);
// The label of `name` in `labels` ("short ‹hint›"); its short name when it is not there.
std::string KernelLabelText(const std::map<std::string, KernelLabel>& labels, const std::string& name);
// How many characters (UTF-8 sequences) `s` holds: a label's brackets are 3 bytes each.
size_t Utf8Chars(const std::string& s);
// The same label in at most `max` characters, for tables and charts: the short name's leading
// namespaces dropped first, then the hint's end, then the middle of what is left.
std::string KernelLabelFit(const std::map<std::string, KernelLabel>& labels, const std::string& name, size_t max);

// Counters of data_quality with count > 0 ("key", "severity", count, "description").
std::vector<const json*> NonZeroCounters(const json& doc);

// The quality verdict: "errors" (has_errors), "warnings" (a warning-level counter is non-zero),
// else "ok" (info-level counts may be non-zero); "n/a" without the section.
std::string QualityVerdict(const json& doc);

// The kinds of a critical_path section with time on the path (kinds[].total_ns > 0), the largest
// first, ties in the document's order.
std::vector<std::string> CriticalPathKinds(const json& critical_path);

}  // namespace tg::internal
