// The texts of `tracegate baseline save|list|show|history`: a stored report's headline and top
// findings (read with the report document's accessors), the baseline table, and the history
// table with its trend. See tracegate/reports/baseline.h.
#include <algorithm>

#include "reports/document/report_document.h"
#include "reports/document/report_keys.h"
#include "tracegate/analyzer/strings.h"
#include "tracegate/reports/baseline.h"

namespace tg {

namespace keys = internal::keys;

namespace {

using internal::Array;
using internal::Find;
using internal::Number;
using internal::Object;
using nlohmann::json;

constexpr size_t kFindingsShown = 5;
constexpr size_t kCommitChars = 12;  // enough to name a commit in a table
// Sparkline levels, lowest to highest (ASCII so it survives any CI log).
constexpr char kSparkLevels[] = "_.-~^";

// doc[key] as text, "-" when missing or empty.
std::string TextOrDash(const json& doc, std::string_view key) {
  std::string text = internal::Text(doc, key);
  return text.empty() ? "-" : text;
}

// doc[key] with printf format `fmt`, or "-" when the key is missing or null.
std::string NumberOrDash(const json& doc, std::string_view key, const char* fmt, double scale = 1) {
  const std::optional<double> v = Number(doc, key);
  return v ? StrFormat(fmt, *v * scale) : "-";
}

// `shown`, or for a missing value "- (<key>_reason)".
std::string OrReason(const json& doc, std::string_view key, const std::string& shown) {
  std::string reason = TextOrDash(doc, keys::ReasonKey(key));
  return shown == "-" && reason != "-" ? "- (" + reason + ")" : shown;
}

// A HistoryRow metric: 0 means absent.
std::string Metric(double v, const char* fmt) { return v == 0 ? "-" : StrFormat(fmt, v); }

std::string ShortCommit(const std::string& commit) { return commit.empty() ? "-" : commit.substr(0, kCommitChars); }

// "2024-05-01T10:00:00Z" -> "2024-05-01 10:00" (tables show minutes).
std::string ShortDate(const std::string& iso) {
  if (iso.size() < 16) return iso.empty() ? "-" : iso;
  std::string d = iso.substr(0, 16);
  d[10] = ' ';
  return d;
}

std::string HeadlineText(const json& r) {
  std::string out;
  out += StrFormat("  model %s, precision %s, batch %s\n", TextOrDash(r, "model").c_str(),
                   TextOrDash(r, "precision").c_str(), NumberOrDash(r, "batch", "%.0f").c_str());
  out +=
      StrFormat("  commit %s, profiled %s\n", TextOrDash(r, "commit").c_str(), TextOrDash(r, "profiling_date").c_str());
  const json& devices = Array(r, "devices");
  if (!devices.empty() && devices[0].is_object())
    out += StrFormat("  device %s\n", TextOrDash(devices[0], "name").c_str());
  if (const json* source = Find(r, "source"); source && source->is_object())
    out += StrFormat("  trace %s [%s]\n", TextOrDash(*source, "path").c_str(), TextOrDash(*source, "format").c_str());
  out += StrFormat("  iterations %s: avg %s ms, p50 %s, p95 %s, p99 %s, std %s, cv %s\n",
                   NumberOrDash(r, keys::kIterations.name, "%.0f").c_str(),
                   NumberOrDash(r, keys::kAvgLatencyMs.name, "%.3f").c_str(),
                   NumberOrDash(r, keys::kP50LatencyMs.name, "%.3f").c_str(),
                   NumberOrDash(r, keys::kP95LatencyMs.name, "%.3f").c_str(),
                   NumberOrDash(r, keys::kP99LatencyMs.name, "%.3f").c_str(),
                   NumberOrDash(r, keys::kStdLatencyMs.name, "%.3f").c_str(),
                   NumberOrDash(r, keys::kLatencyCv.name, "%.3f").c_str());
  out += StrFormat("  throughput %s fps\n", NumberOrDash(r, keys::kThroughputFps.name, "%.1f").c_str());
  out += StrFormat("  phases: pre %s%%, h2d %s%%, infer %s%%, d2h %s%%, post %s%%, idle %s%%\n",
                   NumberOrDash(r, keys::kPreRatio.name, "%.1f", 100).c_str(),
                   NumberOrDash(r, keys::kH2dRatio.name, "%.1f", 100).c_str(),
                   NumberOrDash(r, keys::kInferRatio.name, "%.1f", 100).c_str(),
                   NumberOrDash(r, keys::kD2hRatio.name, "%.1f", 100).c_str(),
                   NumberOrDash(r, keys::kPostRatio.name, "%.1f", 100).c_str(),
                   NumberOrDash(r, keys::kIdleRatio.name, "%.1f", 100).c_str());
  std::string memory = NumberOrDash(r, keys::kMemoryPeakMb.name, "%.0f MB"),
              temperature = TextOrDash(r, keys::kTemperatureRange.name);
  if (temperature != "-") temperature += " C";
  out += StrFormat("  memory peak %s, temperature %s\n", OrReason(r, keys::kMemoryPeakMb.name, memory).c_str(),
                   OrReason(r, keys::kTemperatureRange.name, temperature).c_str());
  const json& q = Object(r, "data_quality");
  std::string problems;
  for (const json& c : Array(q, "counters"))
    if (c.is_object() && NumberOrDash(c, "count", "%.0f") != "0" && TextOrDash(c, "severity") != "info")
      problems += " " + TextOrDash(c, "key") + "=" + NumberOrDash(c, "count", "%.0f");
  out += StrFormat("  data quality: %s%s\n", internal::Flag(q, "has_errors") ? "ERRORS" : "ok",
                   problems.empty() ? "" : (";" + problems).c_str());
  return out;
}

std::string FindingsText(const json& r) {
  const json& findings = Array(r, "findings");
  if (findings.empty()) return "no findings\n";
  std::string out =
      StrFormat("top findings (%zu of %zu):\n", std::min(kFindingsShown, findings.size()), findings.size());
  size_t n = 0;
  for (const json& f : findings) {
    if (!f.is_object() || n++ == kFindingsShown) break;
    out += StrFormat("  %zu. [%s] %s (est. gain %s%%)\n     %s\n", n, TextOrDash(f, "priority").c_str(),
                     TextOrDash(f, "title").c_str(), NumberOrDash(Object(f, "amdahl"), "gain_pct", "%.1f").c_str(),
                     TextOrDash(f, "summary").c_str());
  }
  return out;
}

// The relative change of `v` from `first`, "+1.2%"; "-" when either is absent (0).
std::string Change(double v, double first) {
  return v == 0 || first == 0 ? "-" : StrFormat("%+.1f%%", (v / first - 1) * 100);
}

// One character per row: the avg latency's height between the smallest and largest ones.
std::string Sparkline(const std::vector<HistoryRow>& rows, double lo, double hi) {
  const size_t top = sizeof kSparkLevels - 2;
  std::string line;
  for (const HistoryRow& r : rows) {
    if (r.avg_latency_ms == 0) {
      line += ' ';
    } else {
      double x = hi > lo ? (r.avg_latency_ms - lo) / (hi - lo) : 0.5;
      line += kSparkLevels[static_cast<size_t>(x * static_cast<double>(top) + 0.5)];
    }
  }
  return line;
}

}  // namespace

std::string BaselineSavedText(const std::string& name, const std::string& path, const json& report) {
  return StrFormat("saved baseline '%s' to %s: avg latency %s ms, commit %s\n", name.c_str(), path.c_str(),
                   NumberOrDash(report, keys::kAvgLatencyMs.name, "%.3f").c_str(),
                   ShortCommit(TextOrDash(report, "commit")).c_str());
}

std::string BaselineListText(const std::string& dir, const std::vector<BaselineInfo>& list) {
  if (list.empty())
    return StrFormat("no baselines in %s (tracegate baseline save REPORT --name NAME --dir %s)\n", dir.c_str(),
                     dir.c_str());
  // Columns as wide as their longest entry, so long names and models stay aligned.
  int name_w = 4, model_w = 5;
  for (const BaselineInfo& b : list) {
    name_w = std::max(name_w, static_cast<int>(b.name.size()));
    model_w = std::max(model_w, static_cast<int>(b.model.size()));
  }
  std::string out = StrFormat("%-*s  %-*s  %-9s %12s  %-12s  %s\n", name_w, "NAME", model_w, "MODEL", "PRECISION",
                              "AVG_MS", "COMMIT", "DATE (UTC)");
  for (const BaselineInfo& b : list) {
    if (!b.error.empty()) {
      out += StrFormat("%-*s  unreadable: %s\n", name_w, b.name.c_str(), b.error.c_str());
      continue;
    }
    std::string avg = b.has_avg_latency ? Metric(b.avg_latency_ms, "%.3f") : "-";
    out += StrFormat("%-*s  %-*s  %-9s %12s  %-12s  %s\n", name_w, b.name.c_str(), model_w,
                     b.model.empty() ? "-" : b.model.c_str(), b.precision.empty() ? "-" : b.precision.c_str(),
                     avg.c_str(), ShortCommit(b.commit).c_str(), ShortDate(b.profiling_date).c_str());
  }
  return out;
}

std::string BaselineShowText(const std::string& name, const std::string& path, const json& report) {
  return StrFormat("baseline %s (%s)\n", name.c_str(), path.c_str()) + HeadlineText(report) + FindingsText(report);
}

std::string BaselineHistoryText(const std::string& name, const std::string& dir, const std::vector<HistoryRow>& rows) {
  double first = 0, last = 0, lo = 0, hi = 0;
  for (const HistoryRow& r : rows) {
    if (r.avg_latency_ms == 0) continue;
    if (first == 0) first = lo = hi = r.avg_latency_ms;
    last = r.avg_latency_ms;
    lo = std::min(lo, last);
    hi = std::max(hi, last);
  }
  std::string out = StrFormat("history of '%s' (%s): %zu row(s); change is avg latency vs the first row\n",
                              name.c_str(), HistoryPath(dir).c_str(), rows.size());
  out += StrFormat("%-4s %-17s %-6s %-12s %10s %8s %10s %10s  %-13s %s\n", "#", "RECORDED (UTC)", "KIND", "COMMIT",
                   "AVG_MS", "CHANGE", "P95_MS", "FPS", "VERDICT", "SOURCE");
  for (size_t i = 0; i < rows.size(); ++i) {
    const HistoryRow& r = rows[i];
    out += StrFormat("%-4zu %-17s %-6s %-12s %10s %8s %10s %10s  %-13s %s\n", i + 1, ShortDate(r.recorded_at).c_str(),
                     r.kind.c_str(), ShortCommit(r.commit).c_str(), Metric(r.avg_latency_ms, "%.3f").c_str(),
                     Change(r.avg_latency_ms, first).c_str(), Metric(r.p95_latency_ms, "%.3f").c_str(),
                     Metric(r.throughput_fps, "%.2f").c_str(), r.verdict.empty() ? "-" : r.verdict.c_str(),
                     r.source.c_str());
  }
  if (first > 0)
    out += StrFormat("trend (avg latency, oldest -> newest): [%s]  min %.3f ms, max %.3f ms, last vs first %s\n",
                     Sparkline(rows, lo, hi).c_str(), lo, hi, Change(last, first).c_str());
  return out;
}

}  // namespace tg
