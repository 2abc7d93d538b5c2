// ReadReportOrTrace: commands that take "a report or a trace" (baseline save, gate) read a report
// as it is and analyze anything else with default options. See tracegate/baseline.h.
#include "reports/document/report_document.h"
#include "tracegate/reports/analysis_report.h"
#include "tracegate/reports/analyze.h"
#include "tracegate/reports/baseline.h"
#include "tracegate/reports/compare.h"
#include "tracegate/reports/report_provenance.h"

namespace tg {

Status ReadReportOrTrace(const std::string& path, nlohmann::json* report, std::optional<size_t> skip) {
  InputKind kind;
  TG_RETURN_IF_ERROR(ClassifyInput(path, &kind));
  if (kind == InputKind::kReport) {
    nlohmann::json doc;
    TG_RETURN_IF_ERROR(internal::LoadReportFile(path, "report", &doc));
    TG_RETURN_IF_ERROR(CheckReport(doc, path));
    *report = std::move(doc);
    return Status::Ok();
  }
  AnalysisConfig config;
  config.iterations.skip = skip;
  GitHead(&config.commit, &config.commit_reason);
  StatusOr<Report> analyzed = AnalyzeFile(path, config);
  TG_RETURN_IF_ERROR(analyzed.status());
  *report = std::move(*analyzed).TakeDocument();
  return Status::Ok();
}

}  // namespace tg
