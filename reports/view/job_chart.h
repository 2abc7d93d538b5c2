// The straggler chart of a job report: per rank its mean iteration compute, communication and
// wait, stacked, the slowest rank and the straggler(s) marked, last arrivals as a number. One
// set of rows drawn three ways: fixed-width text (the analyze summary), a Markdown code block
// and inline SVG (the HTML report).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tg::internal {

struct RankBar {
  int64_t rank = 0;
  // ms per iteration. The wait for the last rank is spent inside the rank's collective kernels,
  // so `comm` is comm_ms less the wait and the three parts add up without counting it twice.
  // A figure the report has as null is 0 here and named in `missing`.
  double compute = 0, comm = 0, wait = 0;
  std::string missing;
  int64_t last_arrivals = 0;
  bool slowest = false, straggler = false;
};

struct RankChart {
  std::vector<RankBar> shown;  // by rank
  size_t hidden = 0;           // ranks past the cap, left to the table and the JSON report
};

inline constexpr size_t kChartRanks = 64;

// The rows of a job report's ranks[]: at most `cap` ranks, the slowest and the straggler(s)
// always among them, the rest in rank order.
RankChart ChartRanks(const nlohmann::json& job, size_t cap = kChartRanks);

// One line per shown rank, "... N more ranks" after them; "" when no rank has a figure to draw.
std::string RankChartText(const RankChart& chart);
// The SVG chart, or a <p class="na"> saying why there is none.
std::string RankChartSvg(const RankChart& chart);

}  // namespace tg::internal
