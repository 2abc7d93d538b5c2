// The analyze page's timeline: an overview of the whole trace (each GPU's busy share per bin, the
// iterations, the numbered gaps) over a zoomable view of one iteration (host calls and ranges,
// one lane per GPU stream coloured by class, the device-idle intervals shaded and numbered).
// Every position is time into the trace (from window.start_ns), as the findings' gaps are.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tg::internal {

// A gap the page numbers: the gaps the findings cite first (in the findings' order), then the
// drawn iteration's longest device-idle intervals, up to kNumberedGaps in all.
inline constexpr size_t kNumberedGaps = 8;
struct NumberedGap {
  int number = 0;
  int64_t device = -1;
  double start_ns = 0;     // into the trace
  int64_t clock_ns = 0;    // the same in the trace's clock (as the findings' start_ns)
  double duration_ns = 0;
  std::vector<std::string> findings;  // ids of the findings that cite it
  std::string between;                // "previous -> next" when known
  std::string cause;                  // the idle cause when the report gives it
  bool in_drawn = false;              // inside the drawn iteration's span
};
std::vector<NumberedGap> NumberGaps(const nlohmann::json& doc);
// The number of the gap a finding's "involved" entry names; 0 when it names none of them.
int GapNumberOf(const std::vector<NumberedGap>& gaps, const nlohmann::json& involved);
// Where the trace starts (window.start_ns; the timeline's start without it), in the trace clock.
int64_t TraceOrigin(const nlohmann::json& doc);

// The section's body: legend, overview, tools, the zoomable view and the table of numbered gaps.
std::string TimelineHtml(const nlohmann::json& doc, const std::vector<NumberedGap>& gaps);

}  // namespace tg::internal
