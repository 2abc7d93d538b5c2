// The top of the analyze page: one sentence that answers "where does the time go, and what do I
// try first", and the headline cards that have something to say.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "reports/view/report_view.h"

namespace tg::internal {

// One sentence from the report's own figures, e.g. "3 iterations of 222.442 ms (p50): the GPU is
// idle 76.4% of each iteration, mostly waiting for the host to launch work (100% of the idle
// time), the longest gap before Memcpy DtoD; try: capture the loop in a CUDA graph or fuse kernels
// (+61.8% predicted, idle_gaps)." Plain text: the caller escapes it.
std::string SummarySentence(const nlohmann::json& doc);
// The priority of the first finding ("high", "medium", "low"), "" without findings.
std::string SummaryPriority(const nlohmann::json& doc);

// The headline cards worth a card: present values only (no n/a), no phase share that is 0 because
// the trace has no such phase, the latency spread only from 2 iterations (p99 from 20). `hidden`
// gets "label (why)" for what was left out.
std::vector<HeadlineRow> HeadlineCards(const nlohmann::json& doc, std::vector<std::string>* hidden);

}  // namespace tg::internal
