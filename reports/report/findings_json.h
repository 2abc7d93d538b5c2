// Findings as the report writes them (findings[] and combined_estimate of tracegate.report/v1),
// for the job report's cross-rank findings too.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tracegate/analyzer/findings.h"

namespace tg::internal {

nlohmann::json FindingsJson(const std::vector<Finding>& findings);
nlohmann::json CombinedJson(const CombinedEstimate& c);

// Sets obj[key] = value when defined, else null plus obj[key + "_reason"].
inline void SetOrNull(nlohmann::json& obj, const std::string& key, bool defined, double value, const char* reason) {
  if (defined) {
    obj[key] = value;
  } else {
    obj[key] = nullptr;
    obj[key + "_reason"] = reason;
  }
}

}  // namespace tg::internal
