// Findings as the report writes them (findings[] and combined_estimate of tracegate.report/v1),
// for the job report's cross-rank findings too.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/document/report_keys.h"
#include "tracegate/analyzer/findings.h"

namespace tg::internal {

nlohmann::json FindingsJson(const std::vector<Finding>& findings);
nlohmann::json CombinedJson(const CombinedEstimate& c);

// Sets obj[key] = value when defined, else null plus obj[key + "_reason"].
inline void SetOrNull(nlohmann::json& obj, std::string_view key, bool defined, double value, std::string_view reason) {
  std::string name(key);
  if (defined) {
    obj[name] = value;
  } else {
    obj[name] = nullptr;
    obj[keys::ReasonKey(name)] = reason;
  }
}

}  // namespace tg::internal
