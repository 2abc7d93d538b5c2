// The comparison of two runs as one self-contained HTML page (`tracegate compare --html`,
// `tracegate gate --html`): inline CSS and SVG, no script, no network (a Content-Security-Policy
// forbids both). Top to bottom:
//   - the verdict banner (pass / regression / cannot judge, the verdict line, the key figures:
//     avg latency, its change with the bootstrap interval, the Mann-Whitney p-value);
//   - caveats: why it cannot judge, devices, each side's data quality, warm-up dropped, unstable
//     or too few samples, the comparison's notes;
//   - both runs' latency samples on one axis with their means, the limit and the interval;
//   - the kernels' GPU time per iteration from base to new as a waterfall of kernel families
//     (variants netted), then the families' table with each variant's full name;
//   - the phases side by side; the two median iterations (the reports' timeline sections) on one
//     time axis; every headline metric; the ranks of job reports.
// Built from the comparison and the two report documents it was computed from (any JSON: what a
// side lacks is said, never drawn). Every string is escaped (HtmlEscape, invalid UTF-8 repaired).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "tracegate/analyzer/status.h"
#include "tracegate/reports/compare.h"

namespace tg {

std::string ComparisonHtml(const Comparison& c, const nlohmann::json& base, const nlohmann::json& next);

}  // namespace tg
