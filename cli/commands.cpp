#include "commands.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <iostream>

#include "tracegate/analyzer/amdahl.h"
#include "tracegate/analyzer/import.h"
#include "tracegate/analyzer/predict.h"
#include "tracegate/analyzer/store.h"
#include "tracegate/analyzer/summary.h"
#include "tracegate/collector/record.h"
#include "tracegate/reports/analysis_report.h"
#include "tracegate/reports/chrome_export.h"
#include "tracegate/reports/job.h"
#include "tracegate/reports/json_out.h"
#include "tracegate/reports/report_html.h"
#include "tracegate/reports/report_provenance.h"
#include "tracegate/reports/report_read.h"
#include "tracegate/reports/report_schema.h"

namespace tg::cli {

int Fail(const Status& s) {
  std::fprintf(stderr, "tracegate: error: %s\n", s.message().c_str());
  return kExitBadInput;
}

namespace {


// Long imports say what they are doing; short ones stay quiet. Only on a terminal.
void AnnounceImport(const std::string& path) {
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0 || !::isatty(STDERR_FILENO)) return;
  if (st.st_size >= 64LL << 20)
    std::fprintf(stderr, "tracegate: reading %s (%.0f MB)...\n", path.c_str(), st.st_size / 1e6);
}

Status Load(const std::string& path, Trace* trace) {
  AnnounceImport(path);
  Status s = ImportTrace(path, trace);
#if defined(__GLIBC__)
  // The import's temporaries (read buffers, the second thread's part, hash sets) are freed, but
  // glibc keeps freed heap pages resident: give them back before the analyses allocate theirs
  // (~1 MiB of peak RSS on a 10^6-event Kineto file, under a millisecond in this one-shot
  // process; a long-lived library user would pay for it on every import, so it is done here).
  malloc_trim(0);
#endif
  return s;
}

// --timings: one stderr line per step with its wall time, the resident memory after it (heap and
// mapped files apart) and the peak so far (VmRSS, RssAnon, RssFile and VmHWM of /proc/self/status;
// "n/a" where there is no /proc).
class StepTimer {
 public:
  explicit StepTimer(bool on) : on_(on), last_(Clock::now()), first_(last_) {}
  void Done(const char* step) {
    if (!on_) return;
    const auto now = Clock::now();
    std::fprintf(stderr, "tracegate: timings: %-8s %7.3f s  rss %s (anon %s, files %s)  peak %s\n", step,
                 Seconds(now - last_), Memory("VmRSS:").c_str(), Memory("RssAnon:").c_str(),
                 Memory("RssFile:").c_str(), Memory("VmHWM:").c_str());
    last_ = now;
  }
  void Total() {
    if (on_) std::fprintf(stderr, "tracegate: timings: %-8s %7.3f s\n", "total", Seconds(Clock::now() - first_));
  }

 private:
  using Clock = std::chrono::steady_clock;
  static double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }
  static std::string Memory(const char* key) {
    std::FILE* f = std::fopen("/proc/self/status", "r");
    if (!f) return "n/a";
    char line[256];
    std::string out = "n/a";
    const size_t n = std::strlen(key);
    while (std::fgets(line, sizeof line, f)) {
      if (std::strncmp(line, key, n) != 0) continue;
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.1f MiB", std::strtod(line + n, nullptr) / 1024.0);  // kB
      out = buf;
      break;
    }
    std::fclose(f);
    return out;
  }
  bool on_;
  Clock::time_point last_, first_;
};

}  // namespace

namespace {

std::string SpeedupText(double v) {
  char buf[64];
  if (!std::isfinite(v)) return "unbounded";
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

}  // namespace

int RunAnalyze(const AnalyzeArgs& args) {
  for (const std::string* out : {&args.json_out, &args.md_out, &args.html_out})
    if (!out->empty())
      if (Status s = CheckOutputPath(args.trace, *out); !s.ok()) return Fail(s);
  AnalysisConfig config;
  if (Status s = ToAnalysisConfig(args, &config, /*look_up_commit=*/false); !s.ok()) return Fail(s);
  StepTimer timer(args.timings);
  AnalyzeFileHooks hooks;
  hooks.load = Load;
  hooks.commit_aside = true;
  hooks.on_step = [&timer](const char* step) { timer.Done(step); };
  StatusOr<Report> report = AnalyzeFile(args.trace, config, hooks);
  if (!report.ok()) return Fail(report.status());
  if (!args.json_out.empty() || !args.md_out.empty() || !args.html_out.empty()) {
    if (!args.json_out.empty())
      if (Status s = report->WriteJson(args.json_out); !s.ok()) return Fail(s);
    // The Markdown reads the document without its iteration rows; the page draws each iteration.
    if (!args.md_out.empty())
      if (Status s = WriteMarkdownReport(report->Head(), args.md_out); !s.ok()) return Fail(s);
    if (!args.html_out.empty())
      if (Status s = WriteHtmlReport(report->Document(), args.html_out); !s.ok()) return Fail(s);
    timer.Done("reports");
  }
  if (!args.quiet) {
    PrintAnalysis(std::cout, report->Head(), report->TraceMetadata(record_meta::kNoActivity));
    if (!args.json_out.empty()) std::cout << "\nreport written to " << args.json_out << "\n";
    if (!args.md_out.empty()) std::cout << "Markdown summary written to " << args.md_out << "\n";
    if (!args.html_out.empty()) std::cout << "HTML report written to " << args.html_out << "\n";
  }
  timer.Total();
  return kExitOk;
}

// What a replay's change re-timed, one line each (`prefix` before each): the kernel selections
// with their speedups, the host ranges, the launch calls, the graph launches, the syncs.
void PrintChanges(const PredictArgs& args, const ReplayResult& r, const char* prefix) {
  std::vector<double> speedups;  // of the kernel selections, in the replay's order
  if (!args.kernels_regex.empty() || !args.kernel_class.empty() || !args.launched_regex.empty())
    speedups.push_back(args.speedup);
  for (const KernelSelection& k : args.more_kernels) speedups.push_back(k.speedup);
  for (size_t k = 0; k < r.selections.size() && k < speedups.size(); ++k)
    std::printf("%s%llu kernels (%.3f ms of GPU time) run %.4gx faster\n", prefix,
                static_cast<unsigned long long>(r.selections[k].kernels),
                static_cast<double>(r.selections[k].part_ns) / 1e6, speedups[k]);
  if (!args.host_regex.empty())
    std::printf("%s%.3f ms of host time inside ranges matching '%s' run %.4gx faster\n", prefix,
                static_cast<double>(r.host_part_ns) / 1e6, args.host_regex.c_str(),
                args.host_speedup > 0 ? args.host_speedup : args.speedup);
  if (r.launches_changed > 0)
    std::printf("%s%llu launch calls take %.4g us each\n", prefix, static_cast<unsigned long long>(r.launches_changed),
                args.launch_us);
  if (args.graph)
    std::printf("%s%llu graph launches replace %llu launch calls\n", prefix,
                static_cast<unsigned long long>(r.graph_launches),
                static_cast<unsigned long long>(r.graph_launches + r.graph_folded));
  if (r.syncs_removed > 0)
    std::printf("%s%llu synchronising calls no longer wait\n", prefix,
                static_cast<unsigned long long>(r.syncs_removed));
}

// A job's replay (predict DIR): per rank its mean iteration as recorded, replayed alone (its
// collectives as recorded, waits included) and replayed with the job; the job's latency; what
// changed on the ranks it was made on; why Amdahl gives no figure; what was held fixed.
int PrintJobReplay(const PredictArgs& args, const Prediction& p) {
  const JobReplayResult& j = p.job_replay;
  auto rank = [](const RankReplay& r) { return static_cast<long long>(r.rank); };
  size_t width = 4;
  for (const RankReplay& r : j.ranks) width = std::max(width, r.file.size());
  std::printf("job replay: %zu ranks, %llu collectives coupled across ranks", j.ranks.size(),
              static_cast<unsigned long long>(j.coupled));
  if (j.not_waiting + j.doubtful > 0)
    std::printf(" (%llu kept as recorded: %llu need not wait for every rank, %llu doubtful)",
                static_cast<unsigned long long>(j.not_waiting + j.doubtful),
                static_cast<unsigned long long>(j.not_waiting), static_cast<unsigned long long>(j.doubtful));
  std::printf("\n  %-6s %-*s %6s %10s %10s %10s  (mean iteration, ms)\n", "rank", static_cast<int>(width), "file",
              "iters", "recorded", "alone", "with job");
  for (const RankReplay& r : j.ranks)
    std::printf("  %-6lld %-*s %6zu %10.3f %10.3f %10.3f%s\n", rank(r), static_cast<int>(width), r.file.c_str(),
                r.job.iterations.size(), r.base_ms(), r.alone_ms(), r.job_ms(),
                !r.changed             ? "  (unchanged)"
                : !r.unmatched.empty() ? "  (the change names nothing here)"
                                       : "");
  std::printf(
      "job: mean %.3f ms -> %.3f ms: speedup %.4f (%+.1f%%) (the slowest rank: %lld as recorded, %lld replayed)\n",
      j.base_ms, j.predicted_ms, j.speedup(), (j.speedup() - 1) * 100, rank(j.ranks[j.slowest_base]),
      rank(j.ranks[j.slowest_predicted]));
  const double alone = j.alone_ms > 0 ? j.base_ms / j.alone_ms : 0;
  std::printf(
      "  each rank replayed alone (its collectives as recorded, waits included): %.3f ms, speedup %.4f (%+.1f%%)\n",
      j.alone_ms, alone, (alone - 1) * 100);
  // The job's critical path as recorded, per iteration: by kind, then by rank.
  const JobPathResult& path = j.path;
  if (path.iterations > 0 && path.step_total_ns > 0) {
    const double its = static_cast<double>(path.iterations), total = static_cast<double>(path.step_total_ns);
    std::printf("critical path as recorded (rank %lld's iterations, crossing to the last rank at %llu collectives):",
                static_cast<long long>(path.rank), static_cast<unsigned long long>(path.crossings));
    std::vector<size_t> kinds;
    for (size_t k = 0; k < kPathKindCount; ++k)
      if (path.kind_ns[k] > 0) kinds.push_back(k);
    std::stable_sort(kinds.begin(), kinds.end(), [&](size_t x, size_t y) { return path.kind_ns[x] > path.kind_ns[y]; });
    for (size_t i = 0; i < kinds.size(); ++i)
      std::printf("%s %s %.3f ms (%.1f%%)", i ? "," : "", kPathKindNames[kinds[i]],
                  static_cast<double>(path.kind_ns[kinds[i]]) / its / 1e6,
                  100.0 * static_cast<double>(path.kind_ns[kinds[i]]) / total);
    std::printf("\n  on it by rank:");
    std::vector<std::pair<int64_t, TimeNs>> by = path.rank_ns;
    std::stable_sort(by.begin(), by.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
    for (size_t i = 0; i < by.size(); ++i)
      std::printf("%s rank %lld %.3f ms (%.1f%%)", i ? "," : "", static_cast<long long>(by[i].first),
                  static_cast<double>(by[i].second) / its / 1e6, 100.0 * static_cast<double>(by[i].second) / total);
    std::printf(" (per iteration)\n");
  }
  if (p.skipped > 0)
    std::printf(
        "  (the first %zu of %zu iterations of rank %lld dropped as warm-up by --skip %s; --skip 0 keeps them)\n",
        p.skipped, p.found, rank(j.ranks[j.slowest_base]), p.skip_auto ? "auto" : std::to_string(p.skipped).c_str());
  // What the change covered, summed over the ranks it was made on (Predict's job replay).
  const ReplayResult& sum = p.replay;
  std::string on;
  for (const RankReplay& r : j.ranks)
    if (r.changed && r.unmatched.empty()) on += (on.empty() ? "" : ", ") + std::to_string(r.rank);
  std::printf("changed on rank%s %s:\n", on.find(',') != std::string::npos ? "s" : "", on.c_str());
  PrintChanges(args, sum, "  ");
  for (const RankReplay& r : j.ranks)
    if (r.changed && !r.unmatched.empty()) std::printf("  rank %lld: %s\n", rank(r), r.unmatched.c_str());
  std::printf(
      "amdahl: no figure for a job (a rank's P bounds neither the job, whose straggler's saving reaches every rank, "
      "nor that rank, which gains nothing from its own part while it waits); predict one rank's trace for its own\n");
  for (const std::string& a : j.assumptions) std::printf("  held fixed: %s\n", a.c_str());
  if (!p.caution.empty()) std::printf("caution: %s\n", p.caution.c_str());
  return kExitOk;
}

int RunPredict(const PredictArgs& args) {
  Prediction p;
  if (!args.json_out.empty() && !args.trace.empty()) {
    if (Status s = CheckOutputPath(args.trace, args.json_out); !s.ok()) return Fail(s);
  }
  if (!args.json_out.empty() && !args.job.empty()) {  // none of a job's traces
    StatusOr<std::vector<std::string>> files = ListJobFiles(args.job);
    for (const std::string& f : files.ok() ? *files : std::vector<std::string>{})
      if (Status s = CheckOutputPath(f, args.json_out); !s.ok()) return Fail(s);
  }
  if (Status s = Predict(args, nullptr, Load, &p); !s.ok()) return Fail(s);
  if (!args.json_out.empty()) {
    if (Status s = WritePredictionJson(args, p, args.json_out); !s.ok()) return Fail(s);
  }
  auto dropped = [&] {
    if (p.skipped > 0)
      std::printf("  (the first %zu of %zu iterations dropped as warm-up by --skip %s; --skip 0 keeps them)\n",
                  p.skipped, p.found, p.skip_auto ? "auto" : std::to_string(p.skipped).c_str());
  };
  if (p.job) return PrintJobReplay(args, p);
  if (p.replayed) {
    const ReplayResult& r = p.replay;
    const double n = static_cast<double>(std::max<size_t>(1, r.iterations.size()));
    std::printf("replay: %zu iteration(s), mean %.3f ms -> %.3f ms: speedup %.4f (%+.1f%%)\n", r.iterations.size(),
                static_cast<double>(r.base_total_ns) / n / 1e6, static_cast<double>(r.predicted_total_ns) / n / 1e6,
                r.speedup(), (r.speedup() - 1) * 100);
    dropped();
    if (!p.findings_replayed.empty()) {
      std::string names;
      for (const std::string& f : p.findings_replayed) names += (names.empty() ? "" : ", ") + f;
      const double speedup = p.parts.empty() ? 0 : p.parts.front().speedup;
      const std::string how = p.findings_replayed.size() > 1
                                  ? "run their S times faster (the largest S where they overlap)"
                              : std::isfinite(speedup) ? "run " + SpeedupText(speedup) + "x faster (its S)"
                                                       : std::string("take no time (its S is unbounded)");
      std::printf("  changed: the claimed instants of %s %s %s\n",
                  p.findings_replayed.size() == 1 ? "finding" : "findings", names.c_str(), how.c_str());
      std::printf("  covered: %.3f ms of GPU time (%llu activities) and %.3f ms of host time between calls\n",
                  static_cast<double>(r.located_gpu_ns) / 1e6,
                  static_cast<unsigned long long>(r.located_gpu_activities),
                  static_cast<double>(r.located_host_ns) / 1e6);
      for (const auto& [ref, reason] : p.findings_left_out)
        std::printf("  left out: %s: %s\n", ref.c_str(), reason.c_str());
    }
    PrintChanges(args, r, "  changed: ");
    if (p.amdahl) {
      std::printf("amdahl: speedup %s", SpeedupText(p.overall).c_str());
      if (std::isfinite(p.overall)) std::printf(" (%+.1f%%)", (p.overall - 1) * 100);
      std::printf(", upper bound %s: the bound if the sped-up part were all on the critical path\n",
                  SpeedupText(p.bound).c_str());
      for (size_t i = 0; i < p.parts.size(); ++i)
        std::printf("  part %zu: P = %.4f, S = %s%s\n", i + 1, p.parts[i].fraction,
                    SpeedupText(p.parts[i].speedup).c_str(),
                    i < p.part_findings.size() ? (" (" + p.part_findings[i] + ")").c_str() : "");
    } else {
      std::printf(
          "amdahl: cannot express this change (launch costs, removed syncs and graphs are not a share of "
          "the step made faster)\n");
    }
    for (const std::string& a : r.assumptions) std::printf("  held fixed: %s\n", a.c_str());
    if (!p.caution.empty()) std::printf("caution: %s\n", p.caution.c_str());
    return kExitOk;
  }
  if (p.measured) {
    const MeasuredShare& m = p.share;
    std::printf("measured: %llu %s take %.3f ms of %.3f ms in %zu iteration(s) -> P = %.4f\n",
                static_cast<unsigned long long>(m.matched), p.by_ranges ? "ranges" : "kernels",
                static_cast<double>(m.part_ns) / 1e6, static_cast<double>(m.total_ns) / 1e6, p.iterations, m.share);
    dropped();
    if (!p.by_ranges)
      std::printf("  (assumes the matched kernels are on the critical path: nothing else runs meanwhile)\n");
  }
  for (size_t i = 0; i < p.parts.size(); ++i)
    std::printf("part %zu: P = %.4f, S = %s\n", i + 1, p.parts[i].fraction, SpeedupText(p.parts[i].speedup).c_str());
  std::printf("overall speedup: %s", SpeedupText(p.overall).c_str());
  if (std::isfinite(p.overall)) std::printf(" (%+.1f%%)", (p.overall - 1) * 100);
  std::printf("\nupper bound (every S -> infinity): %s\n", SpeedupText(p.bound).c_str());
  return kExitOk;
}

int RunExport(const ExportArgs& args) {
  if (Status s = CheckOutputPath(args.trace, args.chrome_out); !s.ok()) return Fail(s);
  AnalyzeArgs options;
  options.iterations = args.iterations;
  options.commit = "-";  // no report is written: the source revision is not looked up
  AnalysisConfig config;
  if (Status s = ToAnalysisConfig(options, &config); !s.ok()) return Fail(s);
  Trace trace;
  if (Status s = Load(args.trace, &trace); !s.ok()) return Fail(s);
  Analysis analysis;
  ChromeExportOptions out;
  if (!args.no_findings) {
    if (Status s = RunAnalysis(trace, config, &analysis); !s.ok()) return Fail(s);
    out.findings = &analysis.findings;
  }
  if (Status s = WriteChromeTrace(trace, args.chrome_out, out); !s.ok()) return Fail(s);
  std::printf("wrote %s: %zu kernels, %zu copies, %zu memsets, %zu syncs, %zu API calls, %zu ranges, "
              "%zu samples, %zu findings (open it in https://ui.perfetto.dev or chrome://tracing)\n",
              args.chrome_out.c_str(), trace.kernels.size(), trace.memcpys.size(), trace.memsets.size(),
              trace.syncs.size(), trace.api_calls.size(), trace.ranges.size(), trace.samples.size(),
              analysis.findings.size());
  return kExitOk;
}

int RunConvert(const ConvertArgs& args) {
  if (Status s = CheckOutputPath(args.trace, args.out); !s.ok()) return Fail(s);
  Trace trace;
  if (Status s = Load(args.trace, &trace); !s.ok()) return Fail(s);
  if (Status s = WriteStore(trace, args.out); !s.ok()) return Fail(s);
  std::printf("wrote %s: %zu kernels, %zu copies, %zu memsets, %zu syncs, %zu API calls, %zu ranges\n",
              args.out.c_str(), trace.kernels.size(), trace.memcpys.size(), trace.memsets.size(),
              trace.syncs.size(), trace.api_calls.size(), trace.ranges.size());
  return kExitOk;
}

int RunSchema(const std::string& out) {
  if (out.empty()) {
    std::fputs(ReportSchemaJson().c_str(), stdout);
    return kExitOk;
  }
  if (Status s = WriteReportSchema(out); !s.ok()) return Fail(s);
  return kExitOk;
}

}  // namespace tg::cli
