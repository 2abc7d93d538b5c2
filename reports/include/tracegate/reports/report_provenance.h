// Where a report comes from and what the run looked like beyond timings: the report keys
// commit, memory_peak_mb, temperature_c_range and profiling_date. Never invented: a value the
// trace or the command line does not give is null with a "<key>_reason".
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "tracegate/analyzer/analysis.h"
#include "tracegate/analyzer/model.h"

namespace tg {

// `git rev-parse HEAD` of the current directory. False, with *reason saying why and what to do,
// when git is missing, the directory is not in a work tree or the work tree has no commit.
bool GitHead(std::string* commit, std::string* reason);

// ISO-8601 UTC ("2023-11-14T22:13:20Z") of `t` when it reads as Unix-epoch nanoseconds of a
// date in [2000, 2100); false otherwise (a clock counting from process or session start).
bool EpochNsToIso(TimeNs t, std::string* out);

// Adds commit (config.commit; else null + commit_reason), memory_peak_mb (max memory_used_mb over
// the NVML samples of every device: the fullest device's peak, not a sum), temperature_c_range
// ("54-58", min-max temperature_c over the samples, rounded to whole degrees) and profiling_date
// (EpochNsToIso of the trace start, analysis.summary.start_ns) to the report document.
void AddProvenanceJson(nlohmann::json& doc, const Trace& trace, const Analysis& analysis,
                       const AnalysisConfig& config);

}  // namespace tg
