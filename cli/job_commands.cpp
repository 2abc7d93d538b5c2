// tracegate analyze DIR | FILE FILE... and tracegate merge: the ranks of one job (reports/job).
#include <unistd.h>

#include <iostream>
#include <string>

#include "analyzer/util/fileio.h"
#include "commands.h"
#include "tracegate/analyzer/analysis.h"
#include "tracegate/analyzer/rules.h"
#include "tracegate/reports/analysis_report.h"
#include "tracegate/reports/job.h"
#include "tracegate/reports/json_out.h"
#include "tracegate/reports/report_html.h"

namespace tg::cli {

using tg::internal::WriteFileAtomic;

namespace {

// The job report's outputs: -o, --md, --html, and the summary on stdout.
int WriteJob(const nlohmann::json& job, const std::string& json_out, const std::string& md_out,
             const std::string& html_out, bool quiet) {
  if (!json_out.empty())
    if (Status s = WriteJsonFile(job, json_out); !s.ok()) return Fail(s);
  if (!md_out.empty())
    if (Status s = WriteFileAtomic(md_out, JobMarkdownReport(job)); !s.ok()) return Fail(s);
  if (!html_out.empty())
    if (Status s = WriteFileAtomic(html_out, JobHtmlReport(job)); !s.ok()) return Fail(s);
  if (!quiet) {
    PrintJobRanks(std::cout, job);
    PrintAnalysis(std::cout, job);
    if (!json_out.empty()) std::cout << "\njob report written to " << json_out << "\n";
    if (!md_out.empty()) std::cout << "Markdown summary written to " << md_out << "\n";
    if (!html_out.empty()) std::cout << "HTML report written to " << html_out << "\n";
  }
  return kExitOk;
}

// How far a long job is, on stderr: on a terminal every second once it has run 2 s; in a log
// (CI, a batch job) every 30 s once it has run 30 s, so a 512-rank job does not write 512 lines.
JobOptions Progress(size_t jobs) {
  JobOptions o;
  o.jobs = jobs;
  if (::isatty(STDERR_FILENO) == 0) o.progress_after_s = o.progress_every_s = 30;
  return o;
}

}  // namespace

int RunAnalyzeJob(const AnalyzeArgs& args) {
  StatusOr<std::vector<std::string>> files = ListJobFiles(args.traces);
  if (!files.ok()) return Fail(files.status());
  for (const std::string& in : *files)
    for (const std::string* out : {&args.json_out, &args.md_out, &args.html_out})
      if (!out->empty())
        if (Status s = CheckOutputPath(in, *out); !s.ok()) return Fail(s);
  AnalysisConfig config;
  if (Status s = ToAnalysisConfig(args, &config); !s.ok()) return Fail(s);
  StatusOr<nlohmann::json> job = AnalyzeJob(*files, config, Progress(args.jobs));
  if (!job.ok()) return Fail(job.status());
  return WriteJob(*job, args.json_out, args.md_out, args.html_out, args.quiet);
}

int RunMerge(const MergeArgs& args) {
  for (const std::string& in : args.reports)
    for (const std::string* out : {&args.json_out, &args.md_out, &args.html_out})
      if (!out->empty())
        if (Status s = CheckOutputPath(in, *out); !s.ok()) return Fail(s);
  RulesConfig rules;
  if (!args.rules_path.empty())
    if (Status s = LoadRules(args.rules_path, &rules); !s.ok()) return Fail(s);
  StatusOr<nlohmann::json> job = MergeReports(args.reports, rules, Progress(args.jobs));
  if (!job.ok()) return Fail(job.status());
  return WriteJob(*job, args.json_out, args.md_out, args.html_out, args.quiet);
}

}  // namespace tg::cli
