#include "reports/view/job_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <set>
#include <string>

#include "reports/document/report_document.h"
#include "reports/view/report_svg.h"
#include "tracegate/analyzer/strings.h"

namespace tg::internal {

namespace {

constexpr int kTextWidth = 50;  // columns of the longest bar in the text chart

// The ranks a `straggler` finding names (its involved items of kind "rank").
std::set<int64_t> Stragglers(const json& job) {
  std::set<int64_t> out;
  for (const json& f : Array(job, "findings")) {
    if (Text(f, "id") != "straggler") continue;
    for (const json& v : Array(f, "involved"))
      if (Text(v, "kind") == "rank") {
        const std::string name = Text(v, "name");
        char* end = nullptr;
        const long long n = std::strtoll(name.c_str(), &end, 10);
        if (!name.empty() && end && *end == '\0') out.insert(n);
      }
  }
  return out;
}

RankBar Bar(const json& r, std::optional<double> slowest, const std::set<int64_t>& stragglers) {
  RankBar b;
  b.rank = Int(r, "rank");
  std::vector<std::string> missing;
  auto figure = [&](const char* key) {
    const std::optional<double> v = Number(r, key);
    if (!v) missing.push_back(key);
    return std::max(v.value_or(0), 0.0);
  };
  b.compute = figure("compute_ms");
  const double comm = figure("comm_ms");
  b.wait = figure("wait_ms");
  // A rank whose comm_ms is unknown still shows its wait, measured across ranks.
  b.comm = Number(r, "comm_ms") ? std::max(comm - b.wait, 0.0) : 0;
  for (size_t i = 0; i < missing.size(); ++i) b.missing += (i ? ", " : "") + missing[i];
  b.last_arrivals = Int(r, "last_arrivals");
  b.slowest = slowest && *slowest == static_cast<double>(b.rank);
  b.straggler = stragglers.count(b.rank) > 0;
  return b;
}

double Total(const RankBar& b) { return b.compute + b.comm + b.wait; }

std::string Tags(const RankBar& b) {
  if (b.straggler && b.slowest) return "straggler, slowest";
  return b.straggler ? "straggler" : b.slowest ? "slowest" : "";
}

std::string Numbers(const RankBar& b) {
  std::string s = StrFormat("%.3f + %.3f + %.3f = %.3f ms, last %lld", b.compute, b.comm, b.wait, Total(b),
                            static_cast<long long>(b.last_arrivals));
  if (!b.missing.empty()) s += " (n/a: " + b.missing + ")";
  return s;
}

}  // namespace

RankChart ChartRanks(const json& job, size_t cap) {
  const std::optional<double> slowest = Number(job, "slowest_rank");
  const std::set<int64_t> stragglers = Stragglers(job);
  std::vector<RankBar> all;
  for (const json& r : Array(job, "ranks"))
    if (Number(r, "rank")) all.push_back(Bar(r, slowest, stragglers));
  RankChart chart;
  // The marked ranks first claim their places, so a straggler past the cap is still drawn.
  size_t marked = 0;
  for (const RankBar& b : all) marked += b.slowest || b.straggler;
  size_t unmarked_room = cap > marked ? cap - marked : 0;
  for (const RankBar& b : all) {
    const bool mark = b.slowest || b.straggler;
    if ((mark && chart.shown.size() < cap) || (!mark && unmarked_room > 0)) {
      if (!mark) --unmarked_room;
      chart.shown.push_back(b);
    } else {
      ++chart.hidden;
    }
  }
  return chart;
}

std::string RankChartText(const RankChart& chart) {
  double most = 0;
  for (const RankBar& b : chart.shown) most = std::max(most, Total(b));
  if (most <= 0) return "";
  std::string out = StrFormat(
      "Straggler chart (ms per iteration; # compute, = communication, . wait for the last rank; %d columns = %.3f ms; "
      "last: collectives the rank reached after every other rank):\n",
      kTextWidth, most);
  for (const RankBar& b : chart.shown) {
    // Segment ends rounded from the running sum, so the bar's length is its total's.
    const double scale = kTextWidth / most;
    const int c1 = static_cast<int>(std::lround(b.compute * scale));
    const int c2 = static_cast<int>(std::lround((b.compute + b.comm) * scale));
    const int c3 = static_cast<int>(std::lround(Total(b) * scale));
    std::string bar = std::string(c1, '#') + std::string(c2 - c1, '=') + std::string(c3 - c2, '.');
    bar.resize(kTextWidth, ' ');
    const std::string tags = Tags(b);
    out += StrFormat("  rank %4lld%s |%s| ", static_cast<long long>(b.rank), b.slowest ? "*" : " ", bar.c_str()) +
           Numbers(b) + (tags.empty() ? "" : "  <- " + tags) + "\n";
  }
  if (chart.hidden > 0) out += StrFormat("  ... %zu more ranks (in the table and the JSON report)\n", chart.hidden);
  return out;
}

std::string RankChartSvg(const RankChart& chart) {
  std::vector<StackedBar> bars;
  for (const RankBar& b : chart.shown) {
    const std::string tags = Tags(b);
    bars.push_back({.label = "rank " + std::to_string(b.rank) + (tags.empty() ? "" : " (" + tags + ")"),
                    .parts = {b.compute, b.comm, b.wait},
                    .note = Numbers(b),
                    .marked = b.slowest || b.straggler});
  }
  std::string out = StackedBarsSvg(bars, {"kernel", "collective", "gap"},
                                   {"compute", "communication (without the wait)", "wait for the last rank"},
                                   "ms per iteration: compute + communication + wait; last: collectives the rank "
                                   "reached after every other rank",
                                   "straggler chart: compute, communication and wait per rank");
  if (chart.hidden > 0)
    out += StrFormat("<p class=\"na\">... %zu more ranks: in the table above and the JSON report.</p>\n", chart.hidden);
  return out;
}

}  // namespace tg::internal
