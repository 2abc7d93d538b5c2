// Reading reports back: the few headline fields other commands need from a report document.
#pragma once

#include <string>

#include "tracegate/analyzer/findings.h"
#include "tracegate/analyzer/status.h"

namespace tg {

// A report written by `tracegate analyze -o` as the higher-precision reference of an INT8 run:
// needs schema tracegate.report/v1 and a numeric avg_latency_ms; precision may be null.
// Errors name the file and the problem ("<path>: not a tracegate report (schema ...)").
Status ReadReferenceRun(const std::string& path, ReferenceRun* out);

}  // namespace tg
