// Findings as the report writes them (findings[] of tracegate.report/v1), for the job report's
// cross-rank findings too.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "tracegate/analyzer/findings.h"

namespace tg::internal {

nlohmann::json FindingsJson(const std::vector<Finding>& findings);

}  // namespace tg::internal
