// The report's "collectives" and "ranks" sections (communication of one trace). Internal to the
// reports library (AnalysisToJson calls them, and the job stage CollectiveJson for the job's table);
// the keys are listed in tracegate/analysis_report.h.
#pragma once

#include <nlohmann/json.hpp>

#include "tracegate/analyzer/analysis.h"

namespace tg::internal {

// One row of the per-collective table (collectives[], and the job's job.collectives[] with its
// keys across ranks added).
nlohmann::json CollectiveJson(const CollectiveStat& s);
// One row per (collective, dtype, message bytes, group size), as CommunicationAnalysis orders them.
nlohmann::json CollectivesJson(const CommunicationAnalysis& c);
// One object for this trace's rank: its communication figures and collective calls.
nlohmann::json RanksJson(const Analysis& analysis);

}  // namespace tg::internal
