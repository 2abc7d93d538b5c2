#include "reports/view/report_view.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tg::internal {

json ValidUtf8(const json& doc) {
  // nlohmann's `replace` handler writes U+FFFD for bad bytes; parsing the text back gives a
  // document whose strings are all valid. Reports are small enough that the copy is cheap.
  return json::parse(doc.dump(-1, ' ', false, json::error_handler_t::replace), nullptr, false);
}

std::string HtmlEscapeText(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    if (const char* entity = HtmlEntity(ch)) out += entity;
    else if (!IsBadControl(ch)) out += ch;
  }
  return out;
}

const char* HtmlEntity(char ch) {
  switch (ch) {
    case '&': return "&amp;";
    case '<': return "&lt;";
    case '>': return "&gt;";
    case '"': return "&quot;";
    case '\'': return "&#39;";
    default: return nullptr;
  }
}

std::string Cut(const std::string& s, size_t max) {
  if (s.size() <= max) return s;
  size_t cut = max - 3;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return s.substr(0, cut) + "...";
}

std::string FormatValue(double v, Unit unit) {
  switch (unit) {
    case Unit::kMs: return StrFormat("%.3f ms", v);
    case Unit::kPercent: return StrFormat("%.1f%%", v * 100.0);
    case Unit::kCount: return StrFormat("%.0f", v);
    case Unit::kFps: {
      // Two significant digits below 1/s, three up to 100/s: 0.023/s, 3.27/s, 34.7/s, 1234/s (never "0.0").
      const int digits = v < 1 ? 1 : 2;
      const int decimals =
          v > 0 && v < 100 ? std::clamp(digits - static_cast<int>(std::floor(std::log10(v))), 0, 9) : 0;
      return StrFormat("%.*f/s", decimals, v);
    }
    case Unit::kMb: return StrFormat("%.0f MB", v);
    case Unit::kPlain: break;
  }
  return StrFormat("%.4g", v);
}

Shown Show(const json& doc, std::string_view key, Unit unit) {
  Shown s;
  const json* v = Find(doc, key);
  if (v && v->is_number()) {
    s.present = true;
    s.text = FormatValue(v->get<double>(), unit);
  } else if (v && v->is_string()) {
    s.present = true;
    s.text = v->get<std::string>();
  } else {
    s.text = "n/a";
    std::string reason = Text(doc, keys::ReasonKey(key));
    s.reason = !reason.empty() ? reason : v ? "no value" : "not in this report";
  }
  return s;
}

std::string ShowInline(const Shown& s) { return s.present ? s.text : s.text + " (" + s.reason + ")"; }

std::vector<CollectiveCells> CollectiveTable(const json& doc) {
  std::vector<CollectiveCells> rows;
  auto number = [](const json& row, const char* key, Unit unit, const char* suffix) {
    Shown v = Show(row, key, unit);
    return v.present ? v.text + suffix : v.text;
  };
  for (const json& c : Array(doc, "collectives")) {
    CollectiveCells r;
    r.collective = Text(c, "collective");
    r.dtype = Text(c, "dtype");
    if (r.dtype.empty()) r.dtype = "n/a";
    r.message = number(c, "message_bytes", Unit::kCount, " B");
    r.group = number(c, "group_size", Unit::kCount, "");
    r.calls = number(c, "count", Unit::kCount, "");
    r.total = number(c, "total_ms", Unit::kMs, "");
    r.mean = number(c, "mean_ms", Unit::kMs, "");
    r.algbw = number(c, "algbw_gbs", Unit::kPlain, " GB/s");
    r.busbw = number(c, "busbw_gbs", Unit::kPlain, " GB/s");
    rows.push_back(std::move(r));
  }
  return rows;
}

std::string RankCommunicationText(const json& doc) {
  const json& ranks = Array(doc, "ranks");
  if (ranks.empty()) return "";
  const json& r = ranks[0];
  return "communication " + ShowInline(Show(r, "comm_ms", Unit::kMs)) + " / iteration, compute " +
         ShowInline(Show(r, "compute_ms", Unit::kMs)) + ", overlap " +
         ShowInline(Show(r, "overlap_ratio", Unit::kPercent));
}

std::vector<HeadlineRow> Headline(const json& doc) {
  std::vector<HeadlineRow> rows;
  for (const keys::Key* k : keys::kHeadline)
    if ((k->shown & keys::kInTable) && (!(k->shown & keys::kIfPresent) || Find(doc, k->name)))
      rows.push_back({k, std::string(k->label), Show(doc, k->name, k->unit)});
  return rows;
}

std::vector<std::pair<std::string, std::string>> RunFacts(const json& doc) {
  std::vector<std::pair<std::string, std::string>> facts;
  auto add = [&](const char* label, std::string value) {
    if (!value.empty()) facts.emplace_back(label, std::move(value));
  };
  add("Model", Text(doc, "model"));
  add("Precision", Text(doc, "precision"));
  if (auto b = Number(doc, "batch")) add("Batch", FormatValue(*b, Unit::kCount));
  std::string devices;
  for (const json& d : Array(doc, "devices")) {
    std::string name = Text(d, "name");
    if (name.empty()) continue;
    auto id = Number(d, "device");
    devices += (devices.empty() ? "" : ", ") + (id ? StrFormat("GPU %.0f: ", *id) : std::string()) + name;
  }
  add("Device", devices);
  add("Commit", Text(doc, "commit"));
  add("Profiled", Text(doc, "profiling_date"));
  add("Trace", Text(Object(doc, "source"), "path"));
  add("Iterations from", Text(Object(doc, "iteration_source"), "description"));
  add("Warm-up", Text(Object(Object(doc, "iteration_source"), "warmup"), "summary"));
  const json& tool = Object(doc, "tool");
  std::string tool_text = Text(tool, "name");
  if (!Text(tool, "version").empty()) tool_text += " " + Text(tool, "version");
  add("Tool", tool_text);
  return facts;
}

std::string EmptyListReason(const json& doc, std::string_view key, const char* if_empty) {
  if (!Array(doc, key).empty()) return "";
  return Find(doc, key) ? if_empty : "not in this report";
}

std::string WholeTraceNote(const json& doc) {
  const int64_t skipped = Int(Object(doc, "iteration_source"), "skipped");
  return skipped > 0 ? StrFormat("whole trace, the %lld dropped warm-up iteration%s included",
                                 static_cast<long long>(skipped), skipped == 1 ? "" : "s")
                     : "";
}

std::string GainText(const json& finding) {
  const json& a = Object(finding, "amdahl");
  auto gain = Number(a, "gain_pct");
  if (!gain) return "n/a";
  auto overall = Number(a, "overall_speedup");
  auto bound = Number(a, "upper_bound");
  // The replay's estimate first where the report has it (analyze --replay-findings), Amdahl's as its bound.
  const json& replay = Object(finding, "replay");
  auto replayed = Number(replay, "gain_pct");
  std::string text = replayed ? StrFormat("%+.1f%% by the replay (%.3fx overall; Amdahl's bound %+.1f%%, ", *replayed,
                                          Number(replay, "overall_speedup").value_or(1), *gain)
                              : StrFormat("%+.1f%% (", *gain);
  text += overall ? StrFormat("%.3fx overall", *overall) : std::string("unbounded");
  text += bound ? StrFormat(", at most %.3fx", *bound) : std::string(", no upper bound");
  text += ")";
  return text;
}

std::string ReplayText(const json& obj) {
  const json* replay = Find(obj, "replay");
  if (!replay) return "";
  if (auto gain = Number(*replay, "gain_pct"))
    return StrFormat("%+.1f%% (%.3fx overall: %.3f -> %.3f ms summed over the kept iterations)", *gain,
                     Number(*replay, "overall_speedup").value_or(1), Int(*replay, "base_total_ns") / 1e6,
                     Int(*replay, "predicted_total_ns") / 1e6);
  const std::string why = Text(obj, "replay_reason");
  return "no figure" + (why.empty() ? std::string() : ": " + why);
}

std::string OverlapText(const json& finding) {
  std::string names;
  for (const json& ref : Array(finding, "overlaps"))
    if (ref.is_string()) names += (names.empty() ? "" : ", ") + ref.get<std::string>();
  return names.empty() ? ""
                       : "claims time that " + names + " also claim" +
                             (names.find(',') == std::string::npos ? "s" : "") + ": the gains do not add";
}

std::string CombinedText(const json& doc) {
  const json* c = Find(doc, "combined_estimate");
  if (!c || !c->is_object()) return "";
  const json& parts = Array(*c, "parts");
  if (parts.empty()) return "none: no finding claims a part of the iterations' time";
  auto overall = Number(*c, "overall_speedup");
  std::string text = StrFormat("%+.1f%% (", Number(*c, "gain_pct").value_or(0)) +
                     (overall ? StrFormat("%.3fx overall", *overall) : std::string("unbounded")) +
                     ") over disjoint parts:";
  for (size_t i = 0; i < parts.size(); ++i) {
    auto s = Number(parts[i], "speedup");
    text += StrFormat("%s %s P = %.3f S = %s", i ? "," : "", Text(parts[i], "finding").c_str(),
                      Number(parts[i], "share").value_or(0), s ? StrFormat("%.2f", *s).c_str() : "unbounded");
  }
  std::string left;
  for (const json& ref : Array(*c, "left_out"))
    if (ref.is_string()) left += (left.empty() ? "" : ", ") + ref.get<std::string>();
  if (!left.empty()) text += "; left out (they claim the run as a whole): " + left;
  if (std::string replay = ReplayText(*c); !replay.empty()) {
    std::string names;
    for (const json& ref : Array(Object(*c, "replay"), "findings"))
      if (ref.is_string()) names += (names.empty() ? "" : ", ") + ref.get<std::string>();
    const bool several = names.find(',') != std::string::npos;
    text += "; replayed" + std::string(several ? " together" : "") + (names.empty() ? "" : " (" + names + ")") + ": " +
            replay;
  }
  return text;
}

std::string EvidenceText(const json& e) {
  std::string text = Text(e, "metric");
  auto value = Number(e, "value");
  auto threshold = Number(e, "threshold");
  text += value ? StrFormat(" = %.4g", *value) : std::string(" = n/a");
  std::string unit = Text(e, "unit");
  if (!unit.empty() && unit != "ratio" && unit != "count") text += " " + unit;
  if (threshold) text += " (threshold " + Text(e, "comparison") + StrFormat(" %.4g)", *threshold);
  return text;
}

std::vector<const json*> NonZeroCounters(const json& doc) {
  std::vector<const json*> out;
  for (const json& c : Array(Object(doc, "data_quality"), "counters"))
    if (Number(c, "count").value_or(0) > 0) out.push_back(&c);
  return out;
}

std::string QualityVerdict(const json& doc) {
  const json* q = Find(doc, "data_quality");
  if (!q || !q->is_object()) return "n/a";
  const json* errors = Find(*q, "has_errors");
  if (errors && errors->is_boolean() && errors->get<bool>()) return "errors";
  for (const json* c : NonZeroCounters(doc))
    if (Text(*c, "severity") == "warning") return "warnings";
  return "ok";
}

std::map<std::string, KernelLabel> ReportKernelLabels(const json& doc) {
  std::vector<std::string> names;
  for (const json& k : Array(doc, "top_kernels")) names.push_back(Text(k, "name"));
  const json& table = Array(doc, "kernel_table");
  for (size_t i = 0; i < table.size() && i < kKernelRows; ++i) names.push_back(Text(table[i], "name"));
  return KernelLabels(names);
}

std::string KernelLabelText(const std::map<std::string, KernelLabel>& labels, const std::string& name) {
  const auto it = labels.find(name);
  return it != labels.end() ? it->second.Text() : ShortKernelName(name);
}

size_t Utf8Chars(const std::string& s) {
  size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

namespace {

// The first `chars` characters of s (whole UTF-8 sequences).
std::string Utf8Prefix(const std::string& s, size_t chars) {
  size_t i = 0;
  for (size_t n = 0; i < s.size(); ++i)
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80 && n++ == chars) break;
  return s.substr(0, i);
}

}  // namespace

std::string KernelLabelFit(const std::map<std::string, KernelLabel>& labels, const std::string& name, size_t max) {
  const auto it = labels.find(name);
  KernelLabel l = it != labels.end() ? it->second : KernelLabel{ShortKernelName(name), ""};
  if (Utf8Chars(l.Text()) <= max) return l.Text();
  // The leading namespaces go first ("at::native::vectorized_elementwise_kernel" ->
  // "vectorized_elementwise_kernel"): the kernel's own name and the hint tell it apart.
  for (size_t p;
       Utf8Chars(l.Text()) > max && (p = l.short_name.find("::")) != std::string::npos && p + 2 < l.short_name.size();)
    l.short_name.erase(0, p + 2);
  // Then the hint's end, keeping at least its first 8 characters.
  const size_t fixed = Utf8Chars(l.short_name) + 3;  // the name, a space and the two brackets
  if (!l.hint.empty() && Utf8Chars(l.Text()) > max && max >= fixed + 8 + 3)
    l.hint = Utf8Prefix(l.hint, max - fixed - 3) + "...";
  std::string out = l.Text();
  // Still too long (a long name without a namespace): its middle.
  const size_t n = Utf8Chars(out);
  if (n <= max) return out;
  if (max <= 3) return Utf8Prefix(out, max);
  const size_t head = (max - 3) / 2, tail = max - 3 - head;
  const std::string rest = out.substr(Utf8Prefix(out, n - tail).size());
  return Utf8Prefix(out, head) + "..." + rest;
}

std::vector<std::string> CriticalPathKinds(const json& critical_path) {
  std::vector<std::pair<int64_t, std::string>> kinds;
  for (const auto& [name, k] : Object(critical_path, "kinds").items())
    if (Int(k, "total_ns") > 0) kinds.emplace_back(Int(k, "total_ns"), name);
  std::stable_sort(kinds.begin(), kinds.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
  std::vector<std::string> names;
  for (auto& [ns, name] : kinds) names.push_back(std::move(name));
  return names;
}

}  // namespace tg::internal

namespace tg {

// Declared in tracegate/reports/report_html.h; here, with the other helpers every renderer uses,
// so that the report stage does not depend on the page stage.
std::string HtmlEscape(std::string_view text) { return internal::HtmlEscapeText(text); }

}  // namespace tg
