// The analyze page (tracegate/reports/report_html.h's HtmlReport), composable: other pages built on
// it (a job's) give the sections that lead its main part.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace tg::internal {

// The page of `report` with `lead_html` at the head of its <main>, before the findings.
std::string AnalyzePage(const nlohmann::json& report, const std::string& lead_html);

}  // namespace tg::internal
