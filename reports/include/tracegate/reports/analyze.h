// The one analyze sequence (import -> RunAnalysis -> Report) for every caller: `tracegate analyze`,
// a job's ranks, the gate and baseline's "report or trace", and the Python module. Its own stage
// (reports/api/analyze/, tracegate_analyze), which the gate, the job and the api stage use.
#pragma once

#include <functional>
#include <string>

#include "tracegate/analyzer/analysis.h"
#include "tracegate/analyzer/model.h"
#include "tracegate/analyzer/status.h"
#include "tracegate/reports/analysis_report.h"

namespace tg {

// How AnalyzeFile reads the trace and says where it is.
struct AnalyzeFileHooks {
  // Reads the trace (ImportTrace when empty): the CLI's announces a large file and trims the heap.
  std::function<Status(const std::string& path, Trace* trace)> load;
  // Called after each step, "load" then "analysis" (the CLI's --timings).
  std::function<void(const char* step)> on_step;
  // The config's commit is not looked up yet (commit and commit_reason empty): git's HEAD is
  // looked up on a second thread while the trace loads (a git process takes ~10 ms to answer).
  bool commit_aside = false;
};
// The trace at `path` imported, analysed under `config`, and its report. Errors: the import's
// (they name the file), or the analysis's (they name the option).
StatusOr<Report> AnalyzeFile(const std::string& path, const AnalysisConfig& config);
StatusOr<Report> AnalyzeFile(const std::string& path, const AnalysisConfig& config, const AnalyzeFileHooks& hooks);
// The same for a trace already loaded.
StatusOr<Report> AnalyzeLoaded(const Trace& trace, const AnalysisConfig& config);

}  // namespace tg
