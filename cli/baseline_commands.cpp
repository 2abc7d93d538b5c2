// tracegate baseline save|list|show|history: stored reports to gate against, and their trend.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "commands.h"
#include "tracegate/reports/baseline.h"

namespace tg::cli {

namespace {

using nlohmann::json;

constexpr size_t kFindingsShown = 5;
constexpr size_t kCommitChars = 12;  // enough to name a commit in a table
// Sparkline levels, lowest to highest (ASCII so it survives any CI log).
constexpr char kSparkLevels[] = "_.-~^";

std::string Text(const json& doc, const char* key) {
  auto it = doc.find(key);
  return it != doc.end() && it->is_string() && !it->get<std::string>().empty() ? it->get<std::string>() : "-";
}

// A number with printf format `fmt`, or "-" when the key is missing or null.
std::string Number(const json& doc, const char* key, const char* fmt, double scale = 1) {
  auto it = doc.find(key);
  if (it == doc.end() || !it->is_number()) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, it->get<double>() * scale);
  return buf;
}

// `shown`, or for a missing value "- (<key>_reason)".
std::string OrReason(const json& doc, const char* key, const std::string& shown) {
  std::string reason = Text(doc, (std::string(key) + "_reason").c_str());
  return shown == "-" && reason != "-" ? "- (" + reason + ")" : shown;
}

// A HistoryRow metric: 0 means absent.
std::string Metric(double v, const char* fmt) {
  if (v == 0) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

std::string ShortCommit(const std::string& commit) {
  return commit.empty() ? "-" : commit.substr(0, kCommitChars);
}

// "2024-05-01T10:00:00Z" -> "2024-05-01 10:00" (tables show minutes).
std::string ShortDate(const std::string& iso) {
  if (iso.size() < 16) return iso.empty() ? "-" : iso;
  std::string d = iso.substr(0, 16);
  d[10] = ' ';
  return d;
}

void PrintHeadline(const json& r) {
  std::printf("  model %s, precision %s, batch %s\n", Text(r, "model").c_str(), Text(r, "precision").c_str(),
              Number(r, "batch", "%.0f").c_str());
  std::printf("  commit %s, profiled %s\n", Text(r, "commit").c_str(), Text(r, "profiling_date").c_str());
  const json& devices = r["devices"];
  if (!devices.empty() && devices[0].is_object()) std::printf("  device %s\n", Text(devices[0], "name").c_str());
  if (r.contains("source") && r["source"].is_object())
    std::printf("  trace %s [%s]\n", Text(r["source"], "path").c_str(), Text(r["source"], "format").c_str());
  std::printf("  iterations %s: avg %s ms, p50 %s, p95 %s, p99 %s, std %s, cv %s\n",
              Number(r, "iterations", "%.0f").c_str(), Number(r, "avg_latency_ms", "%.3f").c_str(),
              Number(r, "p50_latency_ms", "%.3f").c_str(), Number(r, "p95_latency_ms", "%.3f").c_str(),
              Number(r, "p99_latency_ms", "%.3f").c_str(), Number(r, "std_latency_ms", "%.3f").c_str(),
              Number(r, "latency_cv", "%.3f").c_str());
  std::printf("  throughput %s fps\n", Number(r, "throughput_fps", "%.1f").c_str());
  std::printf("  phases: pre %s%%, h2d %s%%, infer %s%%, d2h %s%%, post %s%%, idle %s%%\n",
              Number(r, "pre_ms_ratio", "%.1f", 100).c_str(), Number(r, "h2d_ms_ratio", "%.1f", 100).c_str(),
              Number(r, "infer_ms_ratio", "%.1f", 100).c_str(), Number(r, "d2h_ms_ratio", "%.1f", 100).c_str(),
              Number(r, "post_ms_ratio", "%.1f", 100).c_str(), Number(r, "idle_ratio", "%.1f", 100).c_str());
  std::string memory = Number(r, "memory_peak_mb", "%.0f MB"), temperature = Text(r, "temperature_c_range");
  if (temperature != "-") temperature += " C";
  std::printf("  memory peak %s, temperature %s\n", OrReason(r, "memory_peak_mb", memory).c_str(),
              OrReason(r, "temperature_c_range", temperature).c_str());
  const json& q = r["data_quality"];
  std::string problems;
  for (const json& c : q["counters"])
    if (c.is_object() && Number(c, "count", "%.0f") != "0" && Text(c, "severity") != "info")
      problems += " " + Text(c, "key") + "=" + Number(c, "count", "%.0f");
  std::printf("  data quality: %s%s\n", q["has_errors"].get<bool>() ? "ERRORS" : "ok",
              problems.empty() ? "" : (";" + problems).c_str());
}

void PrintFindings(const json& r) {
  auto it = r.find("findings");
  if (it == r.end() || !it->is_array() || it->empty()) {
    std::printf("no findings\n");
    return;
  }
  std::printf("top findings (%zu of %zu):\n", std::min(kFindingsShown, it->size()), it->size());
  size_t n = 0;
  for (const json& f : *it) {
    if (!f.is_object() || n++ == kFindingsShown) break;
    std::string gain = f.contains("amdahl") && f["amdahl"].is_object() ? Number(f["amdahl"], "gain_pct", "%.1f") : "-";
    std::printf("  %zu. [%s] %s (est. gain %s%%)\n     %s\n", n, Text(f, "priority").c_str(), Text(f, "title").c_str(),
                gain.c_str(), Text(f, "summary").c_str());
  }
}

// The relative change of `v` from `first`, "+1.2%"; "-" when either is absent (0).
std::string Change(double v, double first) {
  if (v == 0 || first == 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", (v / first - 1) * 100);
  return buf;
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

int RunBaselineSave(const BaselineArgs& args) {
  // Checked before a trace is analyzed: a bad name should not cost the analysis.
  if (Status s = ValidateBaselineName(args.name); !s.ok()) return Fail(s);
  json report;
  if (Status s = ReadReportOrTrace(args.input, &report); !s.ok()) return Fail(s);
  if (Status s = SaveBaseline(args.dir, args.name, report, args.input); !s.ok()) return Fail(s);
  std::printf("saved baseline '%s' to %s: avg latency %s ms, commit %s\n", args.name.c_str(),
              BaselinePath(args.dir, args.name).c_str(), Number(report, "avg_latency_ms", "%.3f").c_str(),
              ShortCommit(Text(report, "commit")).c_str());
  return kExitOk;
}

int RunBaselineList(const BaselineArgs& args) {
  std::vector<BaselineInfo> list;
  if (Status s = ListBaselines(args.dir, &list); !s.ok()) return Fail(s);
  if (list.empty()) {
    std::printf("no baselines in %s (tracegate baseline save REPORT --name NAME --dir %s)\n", args.dir.c_str(),
                args.dir.c_str());
    return kExitOk;
  }
  // Columns as wide as their longest entry, so long names and models stay aligned.
  int name_w = 4, model_w = 5;
  for (const BaselineInfo& b : list) {
    name_w = std::max(name_w, static_cast<int>(b.name.size()));
    model_w = std::max(model_w, static_cast<int>(b.model.size()));
  }
  std::printf("%-*s  %-*s  %-9s %12s  %-12s  %s\n", name_w, "NAME", model_w, "MODEL", "PRECISION", "AVG_MS", "COMMIT",
              "DATE (UTC)");
  for (const BaselineInfo& b : list) {
    if (!b.error.empty()) {
      std::printf("%-*s  unreadable: %s\n", name_w, b.name.c_str(), b.error.c_str());
      continue;
    }
    std::string avg = b.has_avg_latency ? Metric(b.avg_latency_ms, "%.3f") : "-";
    std::printf("%-*s  %-*s  %-9s %12s  %-12s  %s\n", name_w, b.name.c_str(), model_w,
                b.model.empty() ? "-" : b.model.c_str(), b.precision.empty() ? "-" : b.precision.c_str(), avg.c_str(),
                ShortCommit(b.commit).c_str(), ShortDate(b.profiling_date).c_str());
  }
  return kExitOk;
}

int RunBaselineShow(const BaselineArgs& args) {
  json report;
  std::string path;
  if (Status s = LoadBaseline(args.dir, args.name, &report, &path); !s.ok()) return Fail(s);
  std::printf("baseline %s (%s)\n", args.name.c_str(), path.c_str());
  PrintHeadline(report);
  PrintFindings(report);
  return kExitOk;
}

int RunBaselineHistory(const BaselineArgs& args) {
  std::vector<HistoryRow> rows;
  if (Status s = ReadHistory(args.dir, args.name, &rows); !s.ok()) return Fail(s);
  if (rows.empty())
    return Fail(NotFound(HistoryPath(args.dir) + ": no history for '" + args.name +
                         "' (tracegate baseline save and gate record it)"));
  double first = 0, last = 0, lo = 0, hi = 0;
  for (const HistoryRow& r : rows) {
    if (r.avg_latency_ms == 0) continue;
    if (first == 0) first = lo = hi = r.avg_latency_ms;
    last = r.avg_latency_ms;
    lo = std::min(lo, last);
    hi = std::max(hi, last);
  }
  std::printf("history of '%s' (%s): %zu row(s); change is avg latency vs the first row\n", args.name.c_str(),
              HistoryPath(args.dir).c_str(), rows.size());
  std::printf("%-4s %-17s %-6s %-12s %10s %8s %10s %10s  %-13s %s\n", "#", "RECORDED (UTC)", "KIND", "COMMIT",
              "AVG_MS", "CHANGE", "P95_MS", "FPS", "VERDICT", "SOURCE");
  for (size_t i = 0; i < rows.size(); ++i) {
    const HistoryRow& r = rows[i];
    std::string change = Change(r.avg_latency_ms, first);
    std::printf("%-4zu %-17s %-6s %-12s %10s %8s %10s %10s  %-13s %s\n", i + 1, ShortDate(r.recorded_at).c_str(),
                r.kind.c_str(), ShortCommit(r.commit).c_str(), Metric(r.avg_latency_ms, "%.3f").c_str(),
                change.c_str(), Metric(r.p95_latency_ms, "%.3f").c_str(), Metric(r.throughput_fps, "%.2f").c_str(),
                r.verdict.empty() ? "-" : r.verdict.c_str(), r.source.c_str());
  }
  if (first > 0)
    std::printf("trend (avg latency, oldest -> newest): [%s]  min %.3f ms, max %.3f ms, last vs first %s\n",
                Sparkline(rows, lo, hi).c_str(), lo, hi, Change(last, first).c_str());
  return kExitOk;
}

}  // namespace tg::cli
