// The analyze page's kernel table (its labels: ReportKernelLabels, reports/view/report_view.h).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tracegate/analyzer/kernel_class.h"

namespace tg::internal {

// "kernel_table" (the kept iterations' kernels; "top_kernels" for a report without it) as a
// sortable, filterable table: short name with its hint and the full name on demand, devices,
// streams, calls, total, per iteration, mean and share; at most kKernelRows rows.
std::string KernelTableHtml(const nlohmann::json& doc, const std::map<std::string, KernelLabel>& labels);

}  // namespace tg::internal
