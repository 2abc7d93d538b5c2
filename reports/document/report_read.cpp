#include "tracegate/reports/report_read.h"


#include "tracegate/reports/analysis_report.h"
#include "analyzer/util/json_file.h"

namespace tg {

Status ReadReferenceRun(const std::string& path, ReferenceRun* out) {
  nlohmann::json doc;
  TG_RETURN_IF_ERROR(ReadJsonFile(path, "report", &doc));
  if (!doc.is_object()) return InvalidInput(path + ": not a JSON report object");
  auto schema = doc.find("schema");
  if (schema == doc.end() || !schema->is_string() || *schema != kReportSchema)
    return InvalidInput(path + ": not a tracegate report (schema is not " + std::string(kReportSchema) + ")");
  auto avg = doc.find("avg_latency_ms");
  if (avg == doc.end() || !avg->is_number() || avg->get<double>() <= 0)
    return InvalidInput(path + ": the report has no positive avg_latency_ms");
  out->path = path;
  out->avg_latency_ms = avg->get<double>();
  auto precision = doc.find("precision");
  out->precision = precision != doc.end() && precision->is_string() ? precision->get<std::string>() : "";
  return Status::Ok();
}

}  // namespace tg
