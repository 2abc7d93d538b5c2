// The JSON Schema of the report `tracegate analyze -o` writes (tracegate.report/v1), as
// `tracegate schema` prints it: reports/schema/tracegate.report.v1.schema.in.json (every key but the
// headline's), completed with the headline keys declared in reports/document/report_keys.h. A new
// headline figure is in the schema with no edit to it.
#pragma once

#include <string>

#include "tracegate/analyzer/status.h"

namespace tg {

// The schema as JSON text (2-space indented, ending with a newline).
std::string ReportSchemaJson();
// Writes it to `path` atomically.
[[nodiscard]] Status WriteReportSchema(const std::string& path);

}  // namespace tg
