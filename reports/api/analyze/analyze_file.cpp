// AnalyzeFile and AnalyzeLoaded (tracegate/reports/api.h): import -> RunAnalysis -> Report, once
// for every caller. A stage of its own (tracegate_analyze) so that the gate and the job, which
// come before the rest of the api stage, call it too.
#include <utility>

#include "tracegate/analyzer/analysis.h"
#include "tracegate/analyzer/import.h"
#include "tracegate/reports/analyze.h"

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
  Trace trace;
  TG_RETURN_IF_ERROR(hooks.load ? hooks.load(path, &trace) : ImportTrace(path, &trace));
  if (hooks.on_step) hooks.on_step("load");
  Analysis analysis;
  TG_RETURN_IF_ERROR(RunAnalysis(trace, config, &analysis));
  if (hooks.on_step) hooks.on_step("analysis");
  return Report(trace, std::move(analysis), config);
}

}  // namespace tg
