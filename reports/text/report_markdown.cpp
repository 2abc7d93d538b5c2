// MarkdownReport: the report document as GitHub-flavoured Markdown for a pull-request comment or
// a CI step summary. Short by design (about 4 KB for a typical run): a bold one-line summary
// first, the caveats, the run, the key figures, the top findings and kernels with short names;
// the rest in <details> (full kernel names only there), each table once.
#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>
#include <string_view>

#include "analyzer/util/fileio.h"
#include "reports/document/report_keys.h"
#include "reports/view/report_view.h"
#include "tracegate/analyzer/kernel_class.h"
#include "tracegate/reports/report_html.h"

namespace tg {

namespace keys = internal::keys;

using internal::WriteFileAtomic;

namespace {

using namespace internal;

constexpr size_t kBudget = 4000;      // bytes: the folded sections that do not fit are left out
constexpr size_t kFindingsShown = 3;  // in the comment itself; the rest folded
constexpr size_t kKernelsShown = 5;
constexpr size_t kKernelsFolded = 5;
constexpr size_t kMaxEvidence = 3;
constexpr size_t kMaxNameChars = 60;    // a short name in a table
constexpr size_t kMaxTitleChars = 120;  // a finding's title (a fusion chain's lists every kernel class)
constexpr size_t kFullNameChars = 300;  // a full name in <details>; the JSON report has it whole
constexpr double kUnstableCv = 0.15;

std::string Md(const std::string& s) { return MarkdownEscape(s); }

std::string Folded(const std::string& title, const std::string& body) {
  return body.empty() ? "" : "\n<details><summary>" + title + "</summary>\n\n" + body + "\n</details>\n";
}

// Words longer than a table name (300-character hipBLASLt / Tensile kernel names such as
// "Cijk_Alik_Bljk_..." have no spaces) cut in the middle: prose in a PR comment stays readable and
// the JSON report has every name whole.
std::string ShortWords(const std::string& text) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    const size_t space = text.find(' ', i);
    const size_t end = space == std::string::npos ? text.size() : space;
    out += CutMiddle(text.substr(i, end - i), kMaxNameChars);
    if (space == std::string::npos) break;
    out += ' ';
    i = space + 1;
  }
  return out;
}

std::string ShortTitle(const std::string& title) { return CutMiddle(ShortWords(title), kMaxTitleChars); }

// "resnet50: 6.290 ms per iteration (p95 10.685 ms, 29 iterations); GPU idle 21.8%; top finding:
// Device idle between GPU work, +12.2% (1.122x overall, at most 1.279x)".
std::string SummaryLine(const json& doc) {
  std::string model = Text(doc, "model");
  std::string line = model.empty() ? "" : model + ": ";
  if (Number(doc, keys::kAvgLatencyMs.name))
    line += ShowInline(Show(doc, keys::kAvgLatencyMs.name, Unit::kMs)) + " per iteration (p95 " +
            ShowInline(Show(doc, keys::kP95LatencyMs.name, Unit::kMs)) + ", " +
            ShowInline(Show(doc, keys::kIterations.name, Unit::kCount)) + " iterations)";
  else line += "no latency: " + ShowInline(Show(doc, keys::kAvgLatencyMs.name, Unit::kMs));
  if (const auto idle = Number(doc, keys::kIdleRatio.name)) line += "; GPU idle " + FormatValue(*idle, Unit::kPercent);
  const json& findings = Array(doc, "findings");
  if (!findings.empty())
    line += "; top finding: " + ShortTitle(Text(findings[0], "title")) + ", " + GainText(findings[0]);
  else if (Find(doc, "findings")) line += "; no finding";
  return line;
}

void Caveats(std::ostream& out, const json& doc) {
  std::vector<std::string> items;
  if (Text(doc, "schema").empty()) items.push_back("**Not a tracegate report**: no `schema` key; values are n/a");
  const std::string quality = QualityVerdict(doc);
  std::string counters;
  for (const json* c : NonZeroCounters(doc))
    if (Text(*c, "severity") != "info")
      counters +=
          (counters.empty() ? "" : ", ") + Md(Text(*c, "key")) + " = " + ShowInline(Show(*c, "count", Unit::kCount));
  if (quality == "errors") items.push_back("**Data quality errors**: the numbers may be wrong (" + counters + ")");
  else if (quality == "warnings") items.push_back("**Data quality warnings**: " + counters);
  else if (quality == "n/a") items.push_back("No data\\_quality section: the data cannot be checked");
  const std::string warmup = Text(Object(Object(doc, "iteration_source"), "warmup"), "summary");
  if (!warmup.empty() && Int(Object(doc, "iteration_source"), "skipped") > 0)
    items.push_back("**Warm-up** " + Md(warmup));
  if (const std::string capture = Text(doc, "graph_capture"); !capture.empty())
    items.push_back("**Graph capture**: " + Md(capture));
  if (const auto cv = Number(doc, keys::kLatencyCv.name); cv && *cv > kUnstableCv)
    items.push_back(StrFormat("**Unstable**: latency CV %.3f &gt; 0.15, so compare runs with care", *cv));
  if (const auto n = Number(doc, keys::kIterations.name); n && *n > 0 && *n < 10)
    items.push_back(StrFormat("Only %.0f iteration%s: the percentiles and the gate's significance test need more", *n,
                              *n == 1 ? "" : "s"));
  if (items.empty()) return;
  out << "Caveats:\n";
  for (const std::string& i : items) out << "- " << i << "\n";
  out << "\n";
}

bool IsMainFact(const std::string& label) {
  return label == "Model" || label == "Precision" || label == "Batch" || label == "Device" || label == "Commit";
}

// Model, precision, batch, device and commit in one line (the warm-up is a caveat); with
// main = false, the other facts (where the numbers come from).
std::string Facts(const json& doc, bool main) {
  std::string line;
  for (const auto& [label, value] : RunFacts(doc))
    if (label != "Warm-up" && IsMainFact(label) == main)
      line += (line.empty() ? "" : " · ") + std::string("**") + label + "** " + Md(value);
  return line.empty() ? "" : line + "\n";
}

bool IsKeyHeadline(const HeadlineRow& r) { return (r.key->shown & keys::kKeyFigure) != 0; }

// The key figures in one row.
void HeadlineSection(std::ostream& out, const json& doc) {
  std::string head, rule, values;
  for (const HeadlineRow& r : Headline(doc))
    if (IsKeyHeadline(r) && r.value.present) {
      head.append(" ").append(r.label).append(" |");  // appends: GCC 12 -O3 misreads " " + s (-Wrestrict)
      rule += "--:|";
      values.append(" ").append(Md(r.value.text)).append(" |");
    }
  if (!head.empty()) out << "|" << head << "\n|" << rule << "\n|" << values << "\n\n";
}

// The headline metrics the row leaves out: missing ones with their reason, shares of 0 left out.
std::string OtherHeadline(const json& doc) {
  std::string rows;
  for (const HeadlineRow& r : Headline(doc)) {
    if (IsKeyHeadline(r) && r.value.present) continue;
    if (r.key == &keys::kIdleRatio && Number(doc, keys::kIdleRatio.name) == 0.0) continue;
    if (r.value.present && r.value.text == "0.0%") continue;
    rows += "| " + r.label + " | " + Md(ShowInline(r.value)) + " |\n";
  }
  return rows.empty() ? "" : "| Metric | Value |\n|---|---:|\n" + rows;
}

// Up to the end of the first sentence (". " before a capital letter); the JSON has the rest.
std::string FirstSentence(const std::string& text) {
  for (size_t i = text.find(". "); i != std::string::npos; i = text.find(". ", i + 1))
    if (i + 2 < text.size() && std::isupper(static_cast<unsigned char>(text[i + 2]))) return text.substr(0, i + 1);
  return text;
}

void OneFinding(std::ostream& out, size_t n, const json& f, bool full) {
  out << n << ". **[" << Md(Text(f, "priority")) << "] " << Md(ShortTitle(Text(f, "title"))) << "**, predicted "
      << Md(GainText(f));
  const std::string assumption = Text(Object(f, "amdahl"), "assumption");
  if (full && !assumption.empty()) out << " if " << Md(ShortWords(assumption));
  if (full && !Text(f, "summary").empty()) out << ": " << Md(ShortWords(FirstSentence(Text(f, "summary"))));
  out << "\n";
  const json& strategies = Array(f, "strategies");
  if (full && !strategies.empty() && strategies[0].is_string())
    out << "   - Try: " << Md(ShortWords(strategies[0].get<std::string>())) << "\n";
}

void FindingsSection(std::ostream& out, const json& doc) {
  const json& findings = Array(doc, "findings");
  out << "**Findings** (" << findings.size() << ", most important first)";
  if (std::string why = EmptyListReason(doc, "findings", "no rule matched"); !why.empty()) {
    out << ": none, " << Md(why) << ".\n\n";
    return;
  }
  out << ":\n\n";
  for (size_t i = 0; i < findings.size() && i < kFindingsShown; ++i) OneFinding(out, i + 1, findings[i], true);
  out << "\n";
}

std::string MoreFindings(const json& doc) {
  std::ostringstream out;
  const json& findings = Array(doc, "findings");
  for (size_t i = kFindingsShown; i < findings.size(); ++i) OneFinding(out, i + 1, findings[i], false);
  return out.str();
}

std::string Evidence(const json& doc) {
  std::ostringstream out;
  const json& findings = Array(doc, "findings");
  for (size_t i = 0; i < findings.size(); ++i) {
    const json& evidence = Array(findings[i], "evidence");
    std::string line;
    for (size_t e = 0; e < evidence.size() && e < kMaxEvidence; ++e)
      line += (e ? "; " : "") + Md(EvidenceText(evidence[e]));
    if (!line.empty()) out << i + 1 << ". " << line << "\n";
  }
  return out.str();
}

// A kernel's name in a table: its label (the analyze page's "short ‹hint›"), cut in the middle.
std::string TableName(const std::map<std::string, KernelLabel>& labels, const std::string& name) {
  return KernelLabelFit(labels, name, kMaxNameChars);
}

using Labels = std::map<std::string, KernelLabel>;  // ReportKernelLabels, computed once a report

void KernelRows(std::ostream& out, const json& doc, const Labels& labels, size_t from, size_t to) {
  const json& kernels = Array(doc, "top_kernels");
  out << "| # | Kernel | Calls | Total | Mean | Share |\n|--:|---|--:|--:|--:|--:|\n";
  for (size_t i = from; i < kernels.size() && i < to; ++i) {
    const json& k = kernels[i];
    auto mean_ns = Number(k, "mean_ns");
    out << "| " << i + 1 << " | " << Md(TableName(labels, Text(k, "name"))) << " | "
        << ShowInline(Show(k, "count", Unit::kCount)) << " | " << ShowInline(Show(k, "total_ms", Unit::kMs)) << " | "
        << (mean_ns ? FormatValue(*mean_ns / 1e6, Unit::kMs) : "n/a") << " | "
        << ShowInline(Show(k, "share_ratio", Unit::kPercent)) << " |\n";
  }
}

void TopKernelsSection(std::ostream& out, const json& doc, const Labels& labels) {
  out << "**Top kernels**";
  if (const std::string note = WholeTraceNote(doc); !note.empty()) out << " (of the " << note << ")";
  if (std::string why = EmptyListReason(doc, "top_kernels", "the trace has no kernels"); !why.empty()) {
    out << ": none, " << Md(why) << ".\n\n";
    return;
  }
  out << ":\n\n";
  KernelRows(out, doc, labels, 0, kKernelsShown);
  out << "\n";
}

// The full names of the kernels in the table, where the short one leaves something out.
std::string KernelNames(const json& doc, const Labels& labels) {
  std::string out;
  const json& kernels = Array(doc, "top_kernels");
  for (size_t i = 0; i < kernels.size() && i < kKernelsShown; ++i) {
    const std::string name = Text(kernels[i], "name");
    if (name != TableName(labels, name))
      out += "- " + std::to_string(i + 1) + ": " + Md(Cut(name, kFullNameChars)) + "\n";
  }
  return out;
}

std::string MoreKernels(const json& doc, const Labels& labels) {
  const json& kernels = Array(doc, "top_kernels");
  if (kernels.size() <= kKernelsShown) return "";
  std::ostringstream out;
  KernelRows(out, doc, labels, kKernelsShown, kKernelsShown + kKernelsFolded);
  if (kernels.size() > kKernelsShown + kKernelsFolded)
    out << "\n" << kernels.size() - kKernelsShown - kKernelsFolded << " more in the JSON report.\n";
  return out.str();
}

// Only for traces with collectives.
std::string Collectives(const json& doc) {
  const std::vector<CollectiveCells> rows = CollectiveTable(doc);
  if (rows.empty()) return "";
  std::ostringstream out;
  if (std::string rank = RankCommunicationText(doc); !rank.empty()) out << Md(rank) << ".\n\n";
  out << "| Collective | Dtype | Message | Group | Calls | Total | Mean | Alg bw | Bus bw |\n"
         "|---|---|--:|--:|--:|--:|--:|--:|--:|\n";
  for (const CollectiveCells& r : rows)
    out << "| " << Md(CutMiddle(r.collective, kMaxNameChars)) << " | " << Md(r.dtype) << " | " << r.message << " | "
        << r.group << " | " << r.calls << " | " << r.total << " | " << r.mean << " | " << r.algbw << " | " << r.busbw
        << " |\n";
  return out.str();
}

void QualityLine(std::ostream& out, const json& doc) {
  out << "Data quality: " << QualityVerdict(doc);
  if (NonZeroCounters(doc).empty())
    out << (Find(doc, "data_quality") ? ", every counter is zero.\n" : " (not in this report).\n");
  else out << ".\n";
}

std::string CounterTable(const json& doc) {
  std::vector<const json*> counters = NonZeroCounters(doc);
  if (counters.empty()) return "";
  std::ostringstream out;
  out << "| Counter | Severity | Count | Meaning |\n|---|---|--:|---|\n";
  for (const json* c : counters)
    out << "| " << Md(Text(*c, "key")) << " | " << Md(Text(*c, "severity")) << " | "
        << ShowInline(Show(*c, "count", Unit::kCount)) << " | " << Md(Text(*c, "description")) << " |\n";
  return out.str();
}

// The serving section (docs/SERVING.md) as a table of the step groups and one line on graph
// replays; empty when the report has no serving section.
std::string ServingTable(const json& doc) {
  const json& sv = Object(doc, "serving");
  if (!sv.is_object()) return "";
  std::ostringstream out;
  const json& groups = Array(sv, "groups");
  if (!groups.empty()) {
    out << Int(sv, "steps") << " " << Md(Text(sv, "step_form")) << (Int(sv, "steps") == 1 ? " step" : " steps")
        << " by kind and tokens:\n\n"
        << "| Kind | Tokens | Steps | p50 | p95 | p99 | ms/token | tokens/s |\n|---|--:|--:|--:|--:|--:|--:|--:|\n";
    auto num = [](const json& g, std::string_view key, const char* format) {
      const auto v = Number(g, key);
      return v ? StrFormat(format, *v) : std::string("n/a");
    };
    for (const json& g : groups) {
      const auto lo = Number(g, "token_bucket_min"), hi = Number(g, "token_bucket_max");
      out << "| " << Md(Text(g, "kind")) << " | "
          << (lo && hi ? StrFormat("%.0f-%.0f", *lo, *hi - 1) : std::string("n/a")) << " | " << Int(g, "count") << " | "
          << num(g, keys::kP50LatencyMs.name, "%.3f ms") << " | " << num(g, keys::kP95LatencyMs.name, "%.3f ms")
          << " | " << num(g, keys::kP99LatencyMs.name, "%.3f ms") << " | " << num(g, "ms_per_token", "%.4f") << " | "
          << num(g, "tokens_per_s", "%.0f") << " |\n";
    }
  }
  const json& graph = Object(sv, "graph_replay");
  if (const auto ratio = Number(graph, "kernel_time_ratio"); ratio && Int(graph, "launches") > 0)
    out << (groups.empty() ? "" : "\n")
        << StrFormat("Graph replays: %.1f%% of kernel time (%lld kernels from %lld graph launch%s).\n", *ratio * 100,
                     static_cast<long long>(Int(graph, "kernels")), static_cast<long long>(Int(graph, "launches")),
                     Int(graph, "launches") == 1 ? "" : "es");
  if (const int64_t captures = Int(sv, "capture_steps"); captures > 0)
    out << StrFormat("%lld graph capture annotation%s, not serving steps.\n", static_cast<long long>(captures),
                     captures == 1 ? "" : "s");
  return out.str();
}

// The critical path (docs/PREDICTION.md): its kinds with time on the path as a table, the
// largest first, and its longest segments; empty when the report has none.
std::string CriticalPathTable(const json& doc) {
  const json* found = Find(doc, "critical_path");
  if (!found || !found->is_object()) return "";
  const json& cp = *found;
  std::ostringstream out;
  const int64_t n = Int(cp, keys::kIterations.name);
  out << StrFormat("The path through %lld %s (mean step %.3f ms), by kind:\n\n", static_cast<long long>(n),
                   n == 1 ? "iteration" : "iterations", Number(cp, "step_mean_ms").value_or(0))
      << "| Kind | Share | Mean per step |\n|---|--:|--:|\n";
  for (const std::string& name : CriticalPathKinds(cp)) {
    const json& k = Object(Object(cp, "kinds"), name);
    out << "| " << Md(name) << " | " << StrFormat("%.1f%%", Number(k, "share").value_or(0) * 100) << " | "
        << StrFormat("%.3f ms", Number(k, "mean_ms").value_or(0)) << " |\n";
  }
  const json& top = Array(cp, "top_segments");
  if (!top.empty()) out << "\nLongest segments:\n\n";
  size_t shown = 0;
  for (const json& s : top) {
    if (shown++ == 5) break;
    const std::string name = Text(s, "name");
    out << "- " << StrFormat("%.3f ms", static_cast<double>(Int(s, "duration_ns")) / 1e6) << " " << Md(Text(s, "kind"))
        << (name.empty() ? "" : ": " + Md(internal::CutMiddle(name, kMaxTitleChars))) << " (iteration "
        << Int(s, "iteration") << ")\n";
  }
  return out.str();
}

}  // namespace

std::string MarkdownEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  // Punctuation that starts emphasis, code, links, tables, strikethrough or headings.
  constexpr std::string_view kSpecial = "\\`*_[]|~#";
  for (char ch : text) {
    const char* entity = ch == '"' || ch == '\'' ? nullptr : HtmlEntity(ch);  // quotes are plain text
    if (entity) out += entity;
    else if (static_cast<unsigned char>(ch) < 0x20) out += ' ';  // newlines would end the cell
    else out += kSpecial.find(ch) == std::string_view::npos ? std::string(1, ch) : std::string{'\\', ch};
  }
  return out;
}

std::string internal::CutMiddle(const std::string& s, size_t max) {
  if (s.size() <= max) return s;
  auto boundary = [&](size_t i) {  // back to the start of a UTF-8 sequence
    while (i > 0 && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) --i;
    return i;
  };
  const size_t head = boundary((max - 3) / 2), tail = boundary(s.size() - (max - 3 - (max - 3) / 2));
  return s.substr(0, head) + "..." + s.substr(tail);
}

void internal::AppendWithinBudget(std::string& out, const std::vector<std::pair<std::string, std::string>>& sections,
                                  size_t budget) {
  constexpr size_t kReserve = 160;  // for the line naming what was left out
  std::string left;
  for (const auto& [title, text] : sections) {
    if (text.empty()) continue;
    if (out.size() + text.size() + kReserve <= budget) out += text;
    else left += (left.empty() ? "" : ", ") + title;
  }
  if (!left.empty()) out += "\nLeft out to keep this short: " + left + " (the JSON and HTML outputs have them).\n";
}

std::string MarkdownReport(const nlohmann::json& report) {
  const json doc = ValidUtf8(report);
  const Labels labels = ReportKernelLabels(doc);
  std::ostringstream out;
  out << "**" << Md(SummaryLine(doc)) << "**\n\n";
  Caveats(out, doc);
  if (std::string facts = Facts(doc, true); !facts.empty()) out << facts << "\n";
  HeadlineSection(out, doc);
  FindingsSection(out, doc);
  TopKernelsSection(out, doc, labels);
  QualityLine(out, doc);
  std::string text = out.str();
  const size_t findings = Array(doc, "findings").size();
  AppendWithinBudget(
      text,
      {{"data-quality counters", Folded("Data-quality counters", CounterTable(doc))},
       {"more findings",
        Folded(StrFormat("%zu more findings", findings - std::min(findings, kFindingsShown)), MoreFindings(doc))},
       {"kernel names", Folded("Kernel names", KernelNames(doc, labels))},
       {"more kernels", Folded("More kernels", MoreKernels(doc, labels))},
       {"serving steps", Folded("Serving steps", ServingTable(doc))},
       {"critical path", Folded("Critical path", CriticalPathTable(doc))},
       {"collectives", Folded("Collectives", Collectives(doc))},
       {"evidence", Folded("Evidence", Evidence(doc))},
       {"other headline metrics", Folded("Other headline metrics", OtherHeadline(doc))},
       {"run details", Folded("Run", Facts(doc, false))},
       {"combined estimate", Folded("Combined estimate", Md(CombinedText(doc)))}},
      kBudget);
  return text;
}

Status WriteMarkdownReport(const nlohmann::json& report, const std::string& path) {
  return WriteFileAtomic(path, MarkdownReport(report));
}

}  // namespace tg
