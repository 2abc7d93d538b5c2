// The commands' wording of the report checks (reports/document/report_document.h).
#include "tracegate/reports/report_read.h"

#include "reports/document/report_document.h"
#include "reports/document/report_keys.h"
#include "tracegate/reports/analysis_report.h"

namespace tg {

namespace keys = internal::keys;

using internal::ReportFault;

Status CheckReport(const nlohmann::json& report, const std::string& label) {
  const internal::ReportCheck check = internal::CheckReportDocument(report, {.gate_keys = true});
  switch (check.fault) {
    case ReportFault::kNone: return Status::Ok();
    case ReportFault::kNotObject: return InvalidInput(label + ": not a tracegate report (not a JSON object)");
    case ReportFault::kNoSchema: return InvalidInput(label + ": not a tracegate report (no \"schema\" key)");
    case ReportFault::kOtherSchema:
      return Unsupported(label + ": report schema \"" + check.schema + "\" is not " + kReportSchema +
                         "; re-run tracegate analyze with this version");
    case ReportFault::kMissingKey:
      return InvalidInput(label + ": the report has no \"" + std::string(check.key) + "\"");
    case ReportFault::kWrongType:
      return InvalidInput(label + ": \"" + std::string(check.key) + "\" is not " + check.expected);
    case ReportFault::kNoLatency: break;  // not asked for
  }
  return Status::Ok();
}

Status ReadReferenceRun(const std::string& path, ReferenceRun* out) {
  nlohmann::json doc;
  TG_RETURN_IF_ERROR(internal::LoadReportFile(path, "report", &doc));
  switch (internal::CheckReportDocument(doc, {.positive_latency = true}).fault) {
    case ReportFault::kNone: break;
    case ReportFault::kNotObject: return InvalidInput(path + ": not a JSON report object");
    case ReportFault::kNoLatency: return InvalidInput(path + ": the report has no positive avg_latency_ms");
    default:
      return InvalidInput(path + ": not a tracegate report (schema is not " + std::string(kReportSchema) + ")");
  }
  out->path = path;
  out->avg_latency_ms = *internal::Number(doc, keys::kAvgLatencyMs.name);
  out->precision = internal::Text(doc, "precision");
  return Status::Ok();
}

}  // namespace tg
