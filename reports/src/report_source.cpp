// ReadReportOrTrace: commands that take "a report or a trace" (baseline save, gate) read a report
// as it is and analyze anything else with default options. See tracegate/baseline.h.
#include "tracegate/analysis_report.h"
#include "tracegate/baseline.h"
#include "tracegate/compare.h"
#include "tracegate/import.h"
#include "tracegate/json_file.h"
#include "tracegate/report_provenance.h"

namespace tg {

Status ReadReportOrTrace(const std::string& path, nlohmann::json* report) {
  InputKind kind;
  if (Status s = ClassifyInput(path, &kind); !s.ok()) return s;
  if (kind == InputKind::kReport) {
    nlohmann::json doc;
    if (Status s = ReadJsonFile(path, "report", &doc); !s.ok()) return s;
    if (Status s = CheckReport(doc, path); !s.ok()) return s;
    *report = std::move(doc);
    return Status::Ok();
  }
  Trace trace;
  if (Status s = ImportTrace(path, trace); !s.ok()) return s;
  AnalysisConfig config;
  GitHead(&config.commit, &config.commit_reason);
  Analysis analysis;
  if (Status s = RunAnalysis(trace, config, &analysis); !s.ok()) return Status(s.code(), path + ": " + s.message());
  *report = AnalysisToJson(trace, analysis, config);
  return Status::Ok();
}

}  // namespace tg
