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
#include "tracegate/reports/analysis_report.h"
#include "tracegate/reports/chrome_export.h"
#include "tracegate/analyzer/import.h"
#include "tracegate/reports/json_out.h"
#include "tracegate/analyzer/predict.h"
#include "tracegate/reports/report_provenance.h"
#include "tracegate/reports/report_html.h"
#include "tracegate/reports/report_read.h"
#include "tracegate/analyzer/store.h"
#include "tracegate/analyzer/summary.h"
#include "tracegate/collector/record.h"

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

Status Load(const std::string& path, Trace& trace) {
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

// An output path must not be the input: writing would destroy the trace being read.
Status CheckOutputPath(const std::string& in, const std::string& out) {
  struct stat a{}, b{};
  if (::stat(in.c_str(), &a) == 0 && ::stat(out.c_str(), &b) == 0 && a.st_dev == b.st_dev &&
      a.st_ino == b.st_ino)
    return InvalidInput(out + ": output would overwrite the input trace; choose another path");
  return Status::Ok();
}

Status ParseSkip(const std::string& v, std::optional<size_t>* skip) {
  if (v == "auto") {
    skip->reset();
    return Status::Ok();
  }
  if (v.empty() || v.size() > 9 || !std::all_of(v.begin(), v.end(), [](char ch) { return ch >= '0' && ch <= '9'; }))
    return InvalidInput("--skip '" + v + "': expected auto or a number of iterations");
  *skip = static_cast<size_t>(std::stoul(v));
  return Status::Ok();
}

namespace {

Status ToIterationOptions(const IterationArgs& a, IterationOptions* o) {
  if (!a.iteration_regex.empty()) o->iteration_regex = a.iteration_regex;
  TG_RETURN_IF_ERROR(ParseSkip(a.skip, &o->skip));
  o->batch = a.batch;
  for (const std::string& p : a.phases) {
    size_t eq = p.find('=');
    std::string key = p.substr(0, eq == std::string::npos ? p.size() : eq);
    std::string* field = key == "pre" ? &o->pre_regex : key == "infer" ? &o->infer_regex : key == "post" ? &o->post_regex
                                                                                                       : nullptr;
    if (eq == std::string::npos || !field)
      return InvalidInput("--phase '" + p + "': expected pre=REGEX, infer=REGEX or post=REGEX");
    *field = p.substr(eq + 1);
  }
  return Status::Ok();
}

}  // namespace

Status ToAnalysisConfig(const AnalyzeArgs& a, AnalysisConfig* c) {
  c->summary.top_k = a.top_k;
  c->summary.largest_gaps = a.largest_gaps;
  c->summary.small_copy_bytes = a.small_copy_bytes;
  TG_RETURN_IF_ERROR(ToIterationOptions(a.iterations, &c->iterations));
  c->model = a.model;
  c->precision = a.precision;
  c->commit = a.commit;
  if (c->commit.empty()) GitHead(&c->commit, &c->commit_reason);
  c->peak = PeakOverride{a.peak_gbs, a.peak_tflops};
  if (!a.rules_path.empty())
    TG_RETURN_IF_ERROR(LoadRules(a.rules_path, &c->rules));
  if (!a.costs_path.empty())
    TG_RETURN_IF_ERROR(LoadKernelCosts(a.costs_path, &c->costs));
  if (!a.reference_path.empty()) {
    ReferenceRun ref;
    TG_RETURN_IF_ERROR(ReadReferenceRun(a.reference_path, &ref));
    c->reference = ref;
  }
  return Status::Ok();
}

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
  if (Status s = ToAnalysisConfig(args, &config); !s.ok()) return Fail(s);
  StepTimer timer(args.timings);
  Trace trace;
  if (Status s = Load(args.trace, trace); !s.ok()) return Fail(s);
  timer.Done("load");
  Analysis analysis;
  if (Status s = RunAnalysis(trace, config, &analysis); !s.ok()) return Fail(s);
  timer.Done("analysis");
  const bool files = !args.json_out.empty() || !args.md_out.empty() || !args.html_out.empty();
  // Every renderer (text, Markdown, HTML) reads the report document; none reads the iteration rows.
  nlohmann::json doc;
  if (files || !args.quiet) doc = AnalysisToJson(trace, analysis, config, IterationRows::kLeftOut);
  if (files) {
    if (!args.json_out.empty())
      if (Status s = WriteAnalysisJson(args.json_out, doc, analysis.iterations); !s.ok()) return Fail(s);
    if (!args.md_out.empty())
      if (Status s = WriteMarkdownReport(doc, args.md_out); !s.ok()) return Fail(s);
    if (!args.html_out.empty()) {
      // The page draws each iteration's phases: its rows, which the other renderers do not read.
      doc["iteration_table"] = IterationTableJson(analysis.iterations);
      if (Status s = WriteHtmlReport(doc, args.html_out); !s.ok()) return Fail(s);
    }
    timer.Done("reports");
  }
  if (!args.quiet) {
    auto no_activity = trace.metadata.find(record_meta::kNoActivity);
    PrintAnalysis(std::cout, doc, no_activity == trace.metadata.end() ? std::string_view() : no_activity->second);
    if (!args.json_out.empty()) std::cout << "\nreport written to " << args.json_out << "\n";
    if (!args.md_out.empty()) std::cout << "Markdown summary written to " << args.md_out << "\n";
    if (!args.html_out.empty()) std::cout << "HTML report written to " << args.html_out << "\n";
  }
  timer.Total();
  return kExitOk;
}

int RunPredict(const PredictArgs& args) {
  std::vector<AmdahlPart> parts;
  const bool measure = !args.trace.empty();
  const int measures = !args.kernels_regex.empty() + !args.range_regex.empty() + !args.launched_regex.empty();
  if (measure && measures != 1)
    return Fail(InvalidInput("predict TRACE needs exactly one of --kernels REGEX, --range REGEX or --launched-in REGEX"));
  if (!measure && measures > 0)
    return Fail(InvalidInput("--kernels, --range and --launched-in measure P from a trace: give the trace file first"));
  if (measure && args.fraction >= 0)
    return Fail(InvalidInput("--fraction and a trace both give P; use one"));
  if ((args.fraction >= 0 || measure) && args.speedup < 0)
    return Fail(InvalidInput("--speedup S is required with --fraction or a trace"));
  if (!measure && args.fraction < 0 && args.speedup >= 0)
    return Fail(InvalidInput("--speedup needs --fraction P (or a trace with --kernels/--range)"));
  if (measure) {
    IterationOptions io;
    if (Status s = ToIterationOptions(args.iterations, &io); !s.ok()) return Fail(s);
    Trace trace;
    if (Status s = Load(args.trace, trace); !s.ok()) return Fail(s);
    IterationAnalysis it;
    if (Status s = AnalyzeIterations(trace, io, &it); !s.ok()) return Fail(s);
    MeasuredShare m;
    Status s = !args.range_regex.empty()      ? MeasureRangeShare(trace, it, args.range_regex, &m)
               : !args.kernels_regex.empty() ? MeasureKernelShare(trace, it, args.kernels_regex, &m)
                                             : MeasureLaunchedShare(trace, it, args.launched_regex, &m);
    if (!s.ok()) return Fail(InvalidInput(args.trace + ": " + s.message()));
    std::printf("measured: %llu %s take %.3f ms of %.3f ms in %zu iteration(s) -> P = %.4f\n",
                static_cast<unsigned long long>(m.matched), args.range_regex.empty() ? "kernels" : "ranges",
                static_cast<double>(m.part_ns) / 1e6, static_cast<double>(m.total_ns) / 1e6, it.iterations.size(),
                m.share);
    if (it.skipped > 0)
      std::printf("  (the first %zu of %zu iterations dropped as warm-up by --skip %s; --skip 0 keeps them)\n",
                  it.skipped, it.found, it.skip_auto ? "auto" : std::to_string(it.skipped).c_str());
    if (args.range_regex.empty())
      std::printf("  (assumes the matched kernels are on the critical path: nothing else runs meanwhile)\n");
    parts.push_back({m.share, args.speedup});
  } else if (args.fraction >= 0) {
    parts.push_back({args.fraction, args.speedup});
  }
  for (const std::string& p : args.parts) {
    size_t colon = p.find(':');
    char* end = nullptr;
    AmdahlPart part;
    bool ok = colon != std::string::npos;
    if (ok) {
      std::string a = p.substr(0, colon), b = p.substr(colon + 1);
      part.fraction = std::strtod(a.c_str(), &end);
      ok = !a.empty() && *end == '\0';
      part.speedup = b == "inf" ? kInfiniteSpeedup : std::strtod(b.c_str(), &end);
      ok = ok && !b.empty() && (b == "inf" || *end == '\0');
    }
    if (!ok) return Fail(InvalidInput("--part '" + p + "': expected P:S, e.g. 0.1:1.146 (S may be inf)"));
    parts.push_back(part);
  }
  if (parts.empty())
    return Fail(InvalidInput("nothing to predict: give --fraction P --speedup S, --part P:S, or TRACE --kernels/--range/--launched-in"));
  if (Status s = ValidateAmdahl(parts); !s.ok()) return Fail(s);
  for (size_t i = 0; i < parts.size(); ++i)
    std::printf("part %zu: P = %.4f, S = %s\n", i + 1, parts[i].fraction, SpeedupText(parts[i].speedup).c_str());
  double overall = AmdahlSpeedup(parts), bound = AmdahlBound(parts);
  std::printf("overall speedup: %s", SpeedupText(overall).c_str());
  if (std::isfinite(overall)) std::printf(" (%+.1f%%)", (overall - 1) * 100);
  std::printf("\nupper bound (every S -> infinity): %s\n", SpeedupText(bound).c_str());
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
  if (Status s = Load(args.trace, trace); !s.ok()) return Fail(s);
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
  if (Status s = Load(args.trace, trace); !s.ok()) return Fail(s);
  if (Status s = WriteStore(trace, args.out); !s.ok()) return Fail(s);
  std::printf("wrote %s: %zu kernels, %zu copies, %zu memsets, %zu syncs, %zu API calls, %zu ranges\n",
              args.out.c_str(), trace.kernels.size(), trace.memcpys.size(), trace.memsets.size(),
              trace.syncs.size(), trace.api_calls.size(), trace.ranges.size());
  return kExitOk;
}

}  // namespace tg::cli
