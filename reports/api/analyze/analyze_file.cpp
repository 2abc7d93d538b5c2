// AnalyzeFile and AnalyzeLoaded (tracegate/reports/api.h): import -> RunAnalysis -> Report, once
// for every caller. A stage of its own (tracegate_analyze) so that the gate and the job, which
// come before the rest of the api stage, call it too.
#include <future>
#include <string>
#include <system_error>
#include <tuple>
#include <utility>

#include "tracegate/analyzer/analysis.h"
#include "tracegate/analyzer/import.h"
#include "tracegate/reports/analyze.h"
#include "tracegate/reports/report_provenance.h"

namespace tg {

StatusOr<Report> AnalyzeLoaded(const Trace& trace, const AnalysisConfig& config) {
  Analysis analysis;
  TG_RETURN_IF_ERROR(RunAnalysis(trace, config, &analysis));
  return Report(trace, std::move(analysis), config);
}

StatusOr<Report> AnalyzeFile(const std::string& path, const AnalysisConfig& config) {
  return AnalyzeFile(path, config, AnalyzeFileHooks{});
}

StatusOr<Report> AnalyzeFile(const std::string& path, const AnalysisConfig& config, const AnalyzeFileHooks& hooks) {
  // The commit's lookup beside the load: only the report reads it.
  const bool look_up_commit = hooks.commit_aside && config.commit.empty() && config.commit_reason.empty();
  std::future<std::pair<std::string, std::string>> head;
  if (look_up_commit) {
    try {
      head = std::async(std::launch::async, [] {
        std::pair<std::string, std::string> found;
        GitHead(&found.first, &found.second);
        return found;
      });
    } catch (const std::system_error&) {
      // No thread to be had: looked up below, after the analysis.
    }
  }
  Trace trace;
  TG_RETURN_IF_ERROR(hooks.load ? hooks.load(path, &trace) : ImportTrace(path, &trace));
  if (hooks.on_step) hooks.on_step("load");
  Analysis analysis;
  TG_RETURN_IF_ERROR(RunAnalysis(trace, config, &analysis));
  if (hooks.on_step) hooks.on_step("analysis");
  if (!look_up_commit) return Report(trace, std::move(analysis), config);
  AnalysisConfig with_commit = config;
  if (head.valid()) {
    std::tie(with_commit.commit, with_commit.commit_reason) = head.get();
  } else {
    GitHead(&with_commit.commit, &with_commit.commit_reason);
  }
  return Report(trace, std::move(analysis), with_commit);
}

}  // namespace tg
