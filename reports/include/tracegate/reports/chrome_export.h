// Chrome / Perfetto trace-event JSON export (what `tracegate export --chrome` writes).
#pragma once

#include <string>
#include <vector>

#include "tracegate/analyzer/findings.h"
#include "tracegate/analyzer/model.h"
#include "tracegate/analyzer/status.h"

namespace tg {

struct ChromeExportOptions {
  // Findings of the trace's analysis (RunAnalysis), shown as a "tracegate findings" process with
  // one track per finding: a slice per interval its claim locates, an instant with its summary.
  // Null or empty: none.
  const std::vector<Finding>* findings = nullptr;
};

// Chrome/Perfetto trace JSON; written atomically (temp file + CommitTempFile). Streams events to
// disk (an index of 32 bytes per slice is kept to order and nest them). ts/dur are microseconds
// RELATIVE to the top-level integer "baseTimeNanoseconds" (the earliest time written: the trace
// window's start, or an earlier telemetry sample), printed with 3 decimals so the absolute
// nanosecond times are reconstructed exactly. The tracks: reports/export/chrome_export.cpp.
[[nodiscard]] Status WriteChromeTrace(const Trace& trace, const std::string& path,
                                      const ChromeExportOptions& options = {});

}  // namespace tg
