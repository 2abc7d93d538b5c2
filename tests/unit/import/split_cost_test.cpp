// Where the two-thread Kineto import splits a file (split_cost.h): at half the estimated cost of
// reading it, sampled from windows, not at half its bytes.
#include "analyzer/import/kineto/split_cost.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace tg::internal {
namespace {

TEST(SplitCost, CountsEachEventByItsCategory) {
  uint64_t events = 0;
  const uint64_t kernel = EstimatedReadCost(R"({"ph": "X", "cat": "kernel", "name": "k"},)", &events);
  EXPECT_EQ(events, 1u);
  const uint64_t flow = EstimatedReadCost(R"({"ph": "s", "cat":"ac2g", "id": 1},)", &events);
  EXPECT_EQ(events, 1u);
  EXPECT_GT(kernel, flow);  // a kernel's members and columns cost more than a flow's
  // The 2020-2021 capitalised names read as their new ones do.
  EXPECT_EQ(EstimatedReadCost(R"({"cat": "Kernel"})"), kernel);
  // Two events, white space around the colon, and "cat" as a value (not a member name).
  const std::string two = R"({"cat" :  "kernel", "name": "cat"}, {"cat": "cpu_op", "name": "\"cat\""})";
  EXPECT_EQ(EstimatedReadCost(two, &events), kernel + EstimatedReadCost(R"({"cat": "cpu_op"})"));
  EXPECT_EQ(events, 2u);
  // A window cut inside a category's name counts the events before it only.
  EXPECT_EQ(EstimatedReadCost(R"({"cat": "kernel"}, {"cat": "ker)", &events), kernel);
  EXPECT_EQ(events, 1u);
  EXPECT_EQ(EstimatedReadCost("no events here", &events), 0u);
  EXPECT_EQ(events, 0u);
}

TEST(SplitCost, CountsTheRowsEachTableGets) {
  // One event of each category the builder keeps, a flow and an unmodelled event (no row).
  const std::string text =
      R"({"cat": "kernel"}, {"cat": "gpu_memcpy"}, {"cat": "gpu_memset"}, {"cat": "cuda_sync"},)"
      R"( {"cat": "cuda_runtime"}, {"cat": "cuda_driver"}, {"cat": "cpu_op"}, {"cat": "python_function"},)"
      R"( {"cat": "user_annotation"}, {"cat": "gpu_user_annotation"}, {"cat": "ac2g"}, {"cat": "Trace"},)"
      R"( {"cat": "Kernel"})";
  uint64_t events = 0;
  TableRows rows{};
  EstimatedReadCost(text, &events, &rows);
  EXPECT_EQ(events, 13u);
  EXPECT_EQ(rows, (TableRows{2, 1, 1, 1, 2, 4}));  // kernels, copies, memsets, syncs, API calls, ranges
  // Added to what `rows` holds.
  EstimatedReadCost(R"({"cat": "kernel"})", nullptr, &rows);
  EXPECT_EQ(rows[0], 3u);
}

TEST(SplitCost, EstimatesTheRowsOfAPartFromItsWindows) {
  const uint64_t size = 1'000'000, window = 1'000;
  // Ten stretches of 100,000 bytes, each window 1,000 bytes: 100 times its rows.
  std::vector<TableRows> rows(10, TableRows{2, 0, 0, 0, 3, 0});
  rows[9] = TableRows{0, 5, 0, 0, 0, 0};
  EXPECT_EQ(EstimatedRows(rows, window, size, 0), (TableRows{1800, 500, 0, 0, 2700, 0}));
  // From the middle: stretches 5-9.
  EXPECT_EQ(EstimatedRows(rows, window, size, 500'000), (TableRows{800, 500, 0, 0, 1200, 0}));
  // From inside stretch 8, a quarter of it left: 50 of its 200 kernels.
  EXPECT_EQ(EstimatedRows(rows, window, size, 875'000), (TableRows{50, 500, 0, 0, 75, 0}));
  // Past the end, or stretches shorter than their windows: nothing.
  EXPECT_EQ(EstimatedRows(rows, window, size, size), TableRows{});
  EXPECT_EQ(EstimatedRows(rows, window, 5'000, 0), TableRows{});
  EXPECT_EQ(EstimatedRows({}, window, size, 0), TableRows{});
}

TEST(SplitCost, SplitsWhereHalfTheCostLies) {
  const uint64_t size = 1'000'000, window = 1'000;
  // Every stretch alike: the middle.
  EXPECT_EQ(CostMiddle(std::vector<uint64_t>(10, 500), window, size), 500'000u);
  // The first half twice as costly a byte as the second: a third of the way in.
  std::vector<uint64_t> costs(10, 500);
  for (size_t i = 0; i < 5; ++i) costs[i] = 1000;
  EXPECT_NEAR(static_cast<double>(CostMiddle(costs, window, size)), 1e6 * 3 / 8, 1.0);
  // The second half twice as costly: past the middle, at 5/8.
  for (size_t i = 0; i < 10; ++i) costs[i] = i < 5 ? 500 : 1000;
  EXPECT_NEAR(static_cast<double>(CostMiddle(costs, window, size)), 1e6 * 5 / 8, 1.0);
  // A window with no event takes the mean of the others.
  for (size_t i = 0; i < 10; ++i) costs[i] = i == 2 ? 0 : 700;
  EXPECT_EQ(CostMiddle(costs, window, size), 500'000u);
}

TEST(SplitCost, FallsBackToTheMiddle) {
  EXPECT_EQ(CostMiddle({}, 1'000, 1'000'000), 500'000u);
  EXPECT_EQ(CostMiddle(std::vector<uint64_t>(8, 0), 1'000, 1'000'000), 500'000u);  // no event seen
  // Stretches shorter than their windows: the windows overlap, so they say nothing apart.
  EXPECT_EQ(CostMiddle(std::vector<uint64_t>{9, 1}, 1'000, 1'500), 750u);
  EXPECT_EQ(CostMiddle(std::vector<uint64_t>{9, 1}, 0, 1'500), 750u);
}

}  // namespace
}  // namespace tg::internal
