// The report's "kernel_table" section: every distinct kernel of the kept iterations, so that
// `tracegate compare` can diff kernels beyond the top-K table. Internal to the reports library
// (AnalysisToJson calls it); the keys are listed in tracegate/analysis_report.h.
#pragma once

#include <nlohmann/json.hpp>

#include "tracegate/analyzer/analysis.h"
#include "tracegate/analyzer/model.h"

namespace tg {

// One row per distinct demangled name among kernels that belong to a kept iteration:
// {name, count, total_ms, per_iteration_ms (total / kept iterations), mean_us}, by total_ms
// descending, then name. Empty without kept iterations.
nlohmann::json KernelTableJson(const Trace& trace, const Analysis& analysis);

}  // namespace tg
