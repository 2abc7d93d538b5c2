// Across the ranks of a job: clock alignment, waits, stragglers (tracegate/analyzer/communication.h),
// and the job report built from per-rank documents (reports/job/), with known answers exact to
// the nanosecond.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "reports/job/job_internal.h"
#include "temp_file.h"
#include "tracegate/analyzer/communication.h"
#include "tracegate/analyzer/cross_rank.h"
#include "tracegate/reports/job.h"

namespace tg {
namespace {

using nlohmann::json;

// Per iteration k on a true clock: rank r computes compute[r] ns, then enters the all-reduce,
// which every rank leaves at T_k + max compute + 1 ms. Each rank writes its times on its own
// clock, true + skew[r].
struct Job {
  std::vector<TimeNs> compute, skew;
  int iterations = 4;
  bool with_seq = true;
};

// The names the calls' ids stand for: no group, the collective, the process group.
const std::vector<std::string> kNames = {"", "allreduce", "0"};
constexpr uint32_t kAllReduce = 1, kGroup = 2;

std::vector<RankCalls> Calls(const Job& j) {
  TimeNs most = 0;
  for (TimeNs c : j.compute) most = std::max(most, c);
  std::vector<RankCalls> ranks(j.compute.size());
  for (size_t r = 0; r < ranks.size(); ++r) {
    ranks[r].rank = static_cast<int64_t>(r);
    ranks[r].iterations = j.iterations;
    for (int k = 0; k < j.iterations; ++k) {
      const TimeNs t = 1'000'000'000 + k * 5'000'000;
      RankCall c;
      c.name = kAllReduce;
      c.group = j.with_seq ? kGroup : 0;
      c.seq = j.with_seq ? k : -1;
      c.start_ns = t + j.compute[r] + j.skew[r];
      c.end_ns = t + most + 1'000'000 + j.skew[r];
      ranks[r].calls.push_back(c);
    }
  }
  return ranks;
}

CrossRank Analyze(const std::vector<RankCalls>& ranks) { return AnalyzeCrossRank(kNames, ranks); }

TEST(CrossRank, AlignsClocksOnSharedCompletionsAndFindsTheLateRank) {
  const Job job{{2'000'000, 2'000'000, 2'300'000, 2'000'000}, {-100'000, 37'123, 74'246, -88'631}};
  const CrossRank x = Analyze(Calls(job));
  ASSERT_EQ(x.ranks.size(), 4u);
  EXPECT_EQ(x.shared_collectives, 4u);
  EXPECT_EQ(x.matched_by, "seq");
  for (size_t r = 0; r < 4; ++r) {
    ASSERT_TRUE(x.ranks[r].clock_offset_ns) << r;
    EXPECT_EQ(*x.ranks[r].clock_offset_ns, job.skew[0] - job.skew[r]) << r;
    EXPECT_EQ(x.ranks[r].shared, 4u);
  }
  // Ranks 0, 1, 3 wait 300 us per collective for rank 2, which waits for nobody.
  EXPECT_EQ(x.ranks[0].wait_ns, 4 * 300'000);
  EXPECT_DOUBLE_EQ(x.ranks[0].wait_ms, 0.3);  // per iteration
  EXPECT_EQ(x.ranks[2].wait_ns, 0);
  EXPECT_EQ(x.ranks[2].last, 4u);
  EXPECT_EQ(x.ranks[2].lateness_ns, 4 * 300'000);
  EXPECT_EQ(x.ranks[2].others_wait_ns, 4 * 3 * 300'000);
  EXPECT_EQ(x.ranks[0].last, 0u);
}

TEST(CrossRank, MatchesByOrderWithoutSequenceNumbers) {
  Job job{{1'000'000, 1'500'000}, {0, 50'000}};
  job.with_seq = false;
  const CrossRank x = Analyze(Calls(job));
  EXPECT_EQ(x.matched_by, "order");
  EXPECT_EQ(x.shared_collectives, 4u);
  EXPECT_EQ(*x.ranks[1].clock_offset_ns, -50'000);
  EXPECT_EQ(x.ranks[0].wait_ns, 4 * 500'000);
  EXPECT_EQ(x.ranks[1].last, 4u);
}

TEST(CrossRank, OffsetIsTheLowerMedianSoOneOddCompletionDoesNotMoveIt) {
  Job job{{1'000'000, 1'000'000}, {0, 20'000}};
  job.iterations = 5;
  std::vector<RankCalls> ranks = Calls(job);
  ranks[1].calls[3].end_ns += 900'000;  // one collective left late on rank 1
  const CrossRank x = Analyze(ranks);
  EXPECT_EQ(*x.ranks[1].clock_offset_ns, -20'000);
  // Equal arrivals: nobody is last, nobody waits.
  EXPECT_EQ(x.ranks[0].last + x.ranks[1].last, 0u);
  EXPECT_EQ(x.ranks[0].wait_ns, 0);
}

TEST(CrossRank, RankSharingNothingHasNoOffset) {
  std::vector<RankCalls> ranks = Calls(Job{{1'000'000, 1'000'000}, {0, 0}});
  RankCalls alone;
  alone.rank = 2;
  alone.calls.push_back({kAllReduce, 3, 0, -1, 10, 20, true});  // a group no other rank has
  ranks.push_back(alone);
  const CrossRank x = Analyze(ranks);
  EXPECT_FALSE(x.ranks[2].clock_offset_ns);
  EXPECT_EQ(x.ranks[2].shared, 0u);
  EXPECT_TRUE(x.ranks[0].clock_offset_ns);
}

// Tensor parallel in pairs {0, 1} and {2, 3} (process groups "1", "2"), data parallel across them
// in {0, 2} and {1, 3} ("3", "4"), each group with its own sequence numbers. Per iteration on the
// true clock: compute C (rank 3: C + L), the tensor-parallel all-reduce (D once both are in), a
// little compute G, the data-parallel all-reduce. Rank 3 makes rank 2 wait in their pair, so rank
// 2 reaches the data-parallel all-reduce L late and rank 0 waits for it: rank 1 waits for rank 3
// there. Clocks are aligned across groups (rank 3 only shares collectives with 1 and 2).
TEST(CrossRank, ProcessGroupsMatchOnTheirOwnSequenceNumbers) {
  const std::vector<std::string> names = {"", "allreduce", "1", "2", "3", "4"};
  constexpr TimeNs C = 2'000'000, L = 250'000, D = 500'000, G = 100'000, P = 5'000'000;
  const TimeNs skew[] = {0, 41'000, -17'000, 93'000};
  const uint32_t tp[] = {2, 2, 3, 3}, dp[] = {4, 5, 4, 5};
  std::vector<RankCalls> ranks(4);
  for (int64_t r = 0; r < 4; ++r) {
    ranks[r].rank = r;
    ranks[r].iterations = 3;
    for (int64_t k = 0; k < 3; ++k) {
      const TimeNs t = 1'000'000'000 + k * P;
      const TimeNs mine = C + (r == 3 ? L : 0), pair = C + (r >= 2 ? L : 0);
      const TimeNs tp_end = t + pair + D, dp_end = t + C + L + D + G + D;
      ranks[r].calls.push_back({1, tp[r], k, -1, t + mine + skew[r], tp_end + skew[r], true});
      ranks[r].calls.push_back({1, dp[r], k, -1, tp_end + G + skew[r], dp_end + skew[r], true});
    }
  }
  const CrossRank x = AnalyzeCrossRank(names, ranks);
  EXPECT_EQ(x.matched_by, "seq");
  EXPECT_EQ(x.shared_collectives, 12u);  // 3 per group
  EXPECT_EQ(x.doubtful, 0u);
  for (size_t r = 0; r < 4; ++r) EXPECT_EQ(*x.ranks[r].clock_offset_ns, skew[0] - skew[r]) << r;
  EXPECT_EQ(x.ranks[0].wait_ns, 3 * L);  // for rank 2, data parallel
  EXPECT_EQ(x.ranks[1].wait_ns, 3 * L);  // for rank 3, data parallel
  EXPECT_EQ(x.ranks[2].wait_ns, 3 * L);  // for rank 3, tensor parallel
  EXPECT_EQ(x.ranks[3].wait_ns, 0);
  EXPECT_EQ(x.ranks[3].last, 6u);  // its pair's and its data-parallel all-reduces
  EXPECT_EQ(x.ranks[2].last, 3u);
  EXPECT_EQ(x.ranks[0].last + x.ranks[1].last, 0u);
}

// Without sequence numbers, a rank whose profile began two steps later: by order alone its first
// call would pair with the others' first (offset off by two steps); within steps, every call
// pairs with its own step's.
TEST(CrossRank, MatchesWithinStepsWhenRanksProfiledDifferentSteps) {
  Job job{{1'000'000, 1'300'000, 1'000'000}, {0, 70'000, -30'000}};
  job.with_seq = false;
  job.iterations = 6;
  std::vector<RankCalls> ranks = Calls(job);
  for (RankCalls& r : ranks)
    for (size_t k = 0; k < r.calls.size(); ++k) r.calls[k].step = 100 + static_cast<int64_t>(k);
  ranks[2].calls.erase(ranks[2].calls.begin(), ranks[2].calls.begin() + 2);  // steps 100, 101 not profiled
  ranks[2].iterations = 4;
  const CrossRank x = Analyze(ranks);
  EXPECT_EQ(x.matched_by, "step");
  EXPECT_EQ(x.shared_collectives, 6u);
  EXPECT_EQ(x.doubtful, 0u);
  EXPECT_EQ(*x.ranks[1].clock_offset_ns, -70'000);
  EXPECT_EQ(*x.ranks[2].clock_offset_ns, 30'000);
  EXPECT_EQ(x.ranks[2].wait_ns, 4 * 300'000);
  EXPECT_DOUBLE_EQ(x.ranks[2].wait_ms, 0.3);
  EXPECT_EQ(x.ranks[1].last, 6u);
  EXPECT_EQ(x.uneven, 0u);
  // Without rank 2's steps, by order alone: its first call pairs with the others' first, two steps
  // earlier. The steps look alike, so the kernels still overlap on the clocks so aligned (two
  // steps off) and only the uneven counts tell.
  for (RankCall& c : ranks[2].calls) c.step = -1;
  const CrossRank o = Analyze(ranks);
  EXPECT_EQ(o.matched_by, "order");
  EXPECT_EQ(*o.ranks[2].clock_offset_ns, 30'000 - 10'000'000);
  EXPECT_EQ(o.doubtful, 0u);
  EXPECT_EQ(o.uneven, 1u);
}

// A rank missing one call, no sequence numbers and no steps: every pair after it is one call
// off. The aligned kernels of such pairs do not overlap, so they are counted as doubtful and
// left out of waits and late arrivals instead of giving wrong ones.
TEST(CrossRank, PairsWhoseKernelsDoNotOverlapAreDoubtful) {
  Job job{{1'000'000, 1'000'000}, {0, 0}};
  job.with_seq = false;
  job.iterations = 8;
  std::vector<RankCalls> ranks = Calls(job);
  ranks[1].calls.erase(ranks[1].calls.begin() + 6);  // its 7th call lost
  const CrossRank x = Analyze(ranks);
  EXPECT_EQ(x.shared_collectives, 7u);
  EXPECT_EQ(*x.ranks[1].clock_offset_ns, 0);  // 6 of the 7 pairs are right
  EXPECT_EQ(x.doubtful, 1u);                  // rank 0's 7th with rank 1's 8th: 5 ms apart, the calls take 1 ms
  EXPECT_EQ(x.ranks[0].wait_ns, 0);
  ranks[1].calls.erase(ranks[1].calls.begin() + 1);  // and its 2nd: now most pairs are off by one
  const CrossRank y = Analyze(ranks);
  EXPECT_EQ(y.shared_collectives, 6u);
  // The median aligns rank 1 on the off-by-one pairs (4 of 6), which then overlap; the first
  // call (correct, but 5 ms off under that offset) and the last (off by two) are doubtful.
  EXPECT_EQ(*y.ranks[1].clock_offset_ns, -5'000'000);
  EXPECT_EQ(y.doubtful, 2u);
  EXPECT_EQ(y.uneven, 1u);
  EXPECT_EQ(Analyze(Calls(job)).uneven, 0u);
}

// A broadcast's root may leave before the others arrive: kernels that do not overlap are not
// doubtful there.
TEST(CrossRank, OnlyCollectivesWhereEveryRankWaitsForAllAreChecked) {
  std::vector<RankCalls> ranks(2);
  const std::vector<std::string> names = {"", "broadcast", "0"};
  ranks[0].calls.push_back({1, 2, 0, -1, 1'000, 2'000, true});
  ranks[1].calls.push_back({1, 2, 0, -1, 5'000, 6'000, true});
  ranks[1].calls.push_back({1, 2, 1, -1, 7'000, 8'000, true});
  ranks[0].calls.push_back({1, 2, 1, -1, 8'500, 9'000, true});
  const CrossRank x = AnalyzeCrossRank(names, ranks);
  EXPECT_EQ(x.doubtful, 0u);
  EXPECT_EQ(x.shared_collectives, 2u);
}

// Waits and late arrivals count the calls inside the rank's kept iterations only (its figures
// are per kept iteration); matching and alignment use every call.
TEST(CrossRank, CallsOutsideKeptIterationsAlignButDoNotCount) {
  Job job{{1'000'000, 1'400'000}, {0, 10'000}};
  std::vector<RankCalls> ranks = Calls(job);  // 4 iterations, rank 1 late by 400 us
  ranks[0].calls[0].counted = false;          // rank 0 skipped its first iteration as warm-up
  ranks[0].iterations = 3;
  const CrossRank x = Analyze(ranks);
  EXPECT_EQ(x.ranks[0].wait_ns, 3 * 400'000);
  EXPECT_DOUBLE_EQ(x.ranks[0].wait_ms, 0.4);
  EXPECT_EQ(x.ranks[1].last, 4u);
  ranks[1].calls[3].counted = false;
  EXPECT_EQ(Analyze(ranks).ranks[1].last, 3u);
}

TEST(JobPack, CallsComeBackExactly) {
  internal::PackedCalls packed;
  std::vector<RankCall> calls = {
      {3, 0, -1, -1, INT64_MIN, INT64_MAX, true},
      {3, 0, 7, 12, 1'700'000'000'000'000'000, 1'700'000'000'000'000'500, false},
      {3, 0, 8, 12, 1'700'000'000'000'000'400, 1'700'000'000'000'000'100, true},  // ends before it starts
      {9, 1, INT64_MAX, 0, -5, 0, true},
      {9, 1, 0, INT64_MAX, 0, 0, false}};
  for (const RankCall& c : calls) packed.Add(c);
  packed.ShrinkToFit();
  const std::vector<RankCall> back = packed.Unpack();
  ASSERT_EQ(back.size(), calls.size());
  for (size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(back[i].name, calls[i].name) << i;
    EXPECT_EQ(back[i].group, calls[i].group) << i;
    EXPECT_EQ(back[i].seq, calls[i].seq) << i;
    EXPECT_EQ(back[i].step, calls[i].step) << i;
    EXPECT_EQ(back[i].start_ns, calls[i].start_ns) << i;
    EXPECT_EQ(back[i].end_ns, calls[i].end_ns) << i;
    EXPECT_EQ(back[i].counted, calls[i].counted) << i;
  }
}

// A per-rank report as the single-trace writer gives it, with ranks[0].collective_calls.
json RankDoc(const RankCalls& rc, double latency_ms, double compute_ms) {
  json calls = json::array();
  for (const RankCall& c : rc.calls)
    calls.push_back({{"name", kNames[c.name]},
                     {"group", kNames[c.group]},
                     {"seq", c.seq},
                     {"start_ns", c.start_ns},
                     {"end_ns", c.end_ns},
                     {"bytes", 4 << 20}});
  return {
      {"schema", "tracegate.report/v1"},
      {"avg_latency_ms", latency_ms},
      {"iterations", static_cast<int64_t>(rc.iterations)},
      {"idle_ratio", 0.1},
      {"findings", json::array({{{"id", "idle_gaps"}}})},
      {"iteration_table", json::array({1, 2})},
      {"data_quality",
       {{"has_errors", false},
        {"counters",
         json::array({{{"key", "malformed_event"}, {"severity", "warning"}, {"count", 1}, {"description", "x"}}})}}},
      {"ranks", json::array({{{"rank", rc.rank},
                              {"compute_ms", compute_ms},
                              {"comm_ms", 1.0},
                              {"overlap_ratio", 0.25},
                              {"collective_calls", calls}}})}};
}

StatusOr<json> Reduce(const std::vector<json>& docs, const std::vector<std::string>& files,
                      const RulesConfig& rules = RulesConfig()) {
  internal::JobReducer reducer(docs.size(), rules);
  for (size_t i = docs.size(); i-- > 0;) {  // in any order: the result does not depend on it
    internal::RankReport r;
    r.index = i;
    r.doc = docs[i];
    internal::RankOfReport(files[i], &r);
    reducer.Add(std::move(r));
  }
  return reducer.Finish("reports");
}

TEST(JobReport, RanksOffsetsWaitsAndTheStragglerFinding) {
  const Job job{{2'000'000, 2'000'000, 2'300'000, 2'000'000}, {-100'000, 37'123, 74'246, -88'631}};
  const std::vector<RankCalls> calls = Calls(job);
  std::vector<json> docs;
  std::vector<std::string> files;
  for (size_t r = 0; r < calls.size(); ++r) {
    docs.push_back(RankDoc(calls[r], r == 1 ? 5.5 : 5.0, r == 2 ? 2.3 : 2.0));
    files.push_back("r" + std::to_string(r) + ".report.json");
  }
  StatusOr<json> out = Reduce(docs, files);
  ASSERT_TRUE(out.ok()) << out.status().message();
  const json& doc = *out;
  EXPECT_EQ(doc["avg_latency_ms"], 5.5);
  EXPECT_EQ(doc["slowest_rank"], 1);
  EXPECT_EQ(doc["iteration_table"], json::array());
  EXPECT_EQ(doc["job"]["ranks"], 4);
  EXPECT_EQ(doc["job"]["built_from"], "reports");
  ASSERT_EQ(doc["ranks"].size(), 4u);
  for (size_t r = 0; r < 4; ++r) {
    EXPECT_EQ(doc["ranks"][r]["rank"], r);
    EXPECT_EQ(doc["ranks"][r]["clock_offset_ns"], job.skew[0] - job.skew[r]);
    EXPECT_EQ(doc["ranks"][r]["rank_source"], "distributed_info");
    EXPECT_EQ(doc["ranks"][r]["collectives"], 4);
  }
  EXPECT_DOUBLE_EQ(doc["ranks"][0]["wait_ms"].get<double>(), 0.3);
  EXPECT_DOUBLE_EQ(doc["ranks"][2]["wait_ms"].get<double>(), 0.0);
  EXPECT_EQ(doc["ranks"][2]["last_arrivals"], 4);
  EXPECT_EQ(doc["ranks"][0]["overlap_ratio"], 0.25);
  // Every rank's counters summed.
  EXPECT_EQ(doc["data_quality"]["counters"][0]["count"], 4);
  // The cross-rank findings come first, then the slowest rank's own. Every rank exposes 1 ms x
  // (1 - 0.25) of communication: comm_exposed (P = 0.75 / 5.5, high) leads.
  const json& f = doc["findings"];
  ASSERT_GE(f.size(), 4u);
  EXPECT_EQ(f[0]["id"], "comm_exposed");
  EXPECT_NEAR(f[0]["amdahl"]["share"].get<double>(), 0.75 / 5.5, 1e-12);
  EXPECT_EQ(f[1]["id"], "straggler");
  ASSERT_EQ(f[1]["involved"].size(), 1u);
  EXPECT_EQ(f[1]["involved"][0]["kind"], "rank");
  EXPECT_EQ(f[1]["involved"][0]["name"], "2");
  EXPECT_EQ(f[1]["involved"][0]["count"], 4);
  EXPECT_DOUBLE_EQ(f[1]["involved"][0]["time_ms"].get<double>(), 1.2);
  // P: 0.3 ms of lateness per iteration of the job's 5.5 ms.
  EXPECT_NEAR(f[1]["amdahl"]["share"].get<double>(), 0.3 / 5.5, 1e-12);
  EXPECT_EQ(f[2]["id"], "compute_imbalance");
  EXPECT_EQ(f[2]["involved"][0]["name"], "2");
  EXPECT_EQ(f.back()["id"], "idle_gaps");
}

// The rules across ranks are rules of the table: a rules file's threshold changes the job's
// findings. Rank 2 is 0.3 ms late per iteration of 5.5 ms (lateness_share 0.0545) and computes 2.3
// ms against the mean 2.075 (ratio 0.108).
TEST(JobReport, ARulesFileSetsTheThresholdsAcrossRanks) {
  const Job job{{2'000'000, 2'000'000, 2'300'000, 2'000'000}, {-100'000, 37'123, 74'246, -88'631}};
  const std::vector<RankCalls> calls = Calls(job);
  std::vector<json> docs;
  std::vector<std::string> files;
  for (size_t r = 0; r < calls.size(); ++r) {
    docs.push_back(RankDoc(calls[r], r == 1 ? 5.5 : 5.0, r == 2 ? 2.3 : 2.0));
    files.push_back("r" + std::to_string(r) + ".report.json");
  }
  auto ids = [](const json& doc) {
    std::vector<std::string> out;
    for (const json& f : doc["findings"]) out.push_back(f["id"]);
    return out;
  };
  auto has = [](const std::vector<std::string>& v, const char* id) { return std::count(v.begin(), v.end(), id) > 0; };
  StatusOr<json> defaults = Reduce(docs, files);
  ASSERT_TRUE(defaults.ok()) << defaults.status().message();
  ASSERT_TRUE(has(ids(*defaults), "straggler") && has(ids(*defaults), "compute_imbalance"));

  const std::string path = ::tg::testing::WriteTempFile(
      "job_rules.json", R"({"rules": {"straggler": {"min_share": 0.06}, "compute_imbalance": {"threshold": 0.05}}})");
  RulesConfig rules;
  ASSERT_TRUE(LoadRules(path, &rules).ok());
  StatusOr<json> tuned = Reduce(docs, files, rules);
  ASSERT_TRUE(tuned.ok()) << tuned.status().message();
  EXPECT_FALSE(has(ids(*tuned), "straggler"));  // 0.0545 < 0.06
  const json* imbalance = nullptr;
  for (const json& f : (*tuned)["findings"])
    if (f["id"] == "compute_imbalance") imbalance = &f;
  ASSERT_NE(imbalance, nullptr);
  EXPECT_DOUBLE_EQ((*imbalance)["evidence"][0]["threshold"].get<double>(), 0.05);  // the file's, in the evidence

  RulesConfig off;
  ASSERT_TRUE(off.SetEnabled("compute_imbalance", false).ok());
  StatusOr<json> without = Reduce(docs, files, off);
  ASSERT_TRUE(without.ok()) << without.status().message();
  EXPECT_FALSE(has(ids(*without), "compute_imbalance"));
  EXPECT_TRUE(has(ids(*without), "straggler"));
}

// Communication figures of rank r: comm_ms, overlap_ratio, compute_ms; the slowest rank also
// carries its own communication finding.
TEST(JobReport, CommExposedIsBoundedByComputeAndSharesTheRanksOwnClaim) {
  const std::vector<RankCalls> calls = Calls(Job{{2'000'000, 2'000'000, 2'000'000}, {0, 0, 0}});
  std::vector<json> docs;
  const double comm[] = {2.0, 3.0, 1.0}, overlap[] = {0.25, 0.5, 0.0}, compute[] = {0.5, 2.0, 2.0};
  for (size_t r = 0; r < 3; ++r) {
    json d = RankDoc(calls[r], r == 0 ? 6.0 : 5.0, compute[r]);
    d["ranks"][0]["comm_ms"] = comm[r];
    d["ranks"][0]["overlap_ratio"] = overlap[r];
    d["findings"] = json::array({{{"id", "communication"}, {"overlaps", json::array()}}});
    d["collectives"] = json::array({{{"collective", "allreduce"},
                                     {"dtype", "Float"},
                                     {"group_size", 3},
                                     {"count", 4},
                                     {"total_ms", 4 * comm[r]},
                                     {"message_bytes", 4 << 20}}});
    docs.push_back(std::move(d));
  }
  StatusOr<json> out = Reduce(docs, {"a_rank0.report.json", "a_rank1.report.json", "a_rank2.report.json"});
  ASSERT_TRUE(out.ok()) << out.status().message();
  const json* exposed = nullptr;
  const json* own = nullptr;
  for (const json& f : (*out)["findings"]) {
    if (f["id"] == "comm_exposed") exposed = &f;
    if (f["id"] == "communication") own = &f;
  }
  ASSERT_TRUE(exposed && own);
  // Rank 0 is the slowest: 1.5 ms exposed, but only its 0.5 ms of compute can hide any of it.
  EXPECT_NEAR((*exposed)["amdahl"]["share"].get<double>(), 0.5 / 6.0, 1e-12);
  EXPECT_NEAR((*exposed)["evidence"][0]["value"].get<double>(), 1.5 / 6.0, 1e-12);
  // The ranks by exposed communication, ties in rank order: 0 and 1 (1.5 ms), 2 (1 ms).
  const json& inv = (*exposed)["involved"];
  ASSERT_EQ(inv.size(), 4u);
  EXPECT_EQ(inv[0]["name"], "0");
  EXPECT_EQ(inv[1]["name"], "1");
  EXPECT_EQ(inv[2]["name"], "2");
  EXPECT_DOUBLE_EQ(inv[2]["time_ms"].get<double>(), 1.0);
  EXPECT_EQ(inv[3]["kind"], "collective");
  EXPECT_EQ(inv[3]["name"], "allreduce");
  EXPECT_EQ(inv[3]["count"], 12);
  EXPECT_DOUBLE_EQ(inv[3]["time_ms"].get<double>(), 24.0);
  EXPECT_EQ((*exposed)["overlaps"], json::array({"communication"}));
  EXPECT_EQ((*own)["overlaps"], json::array({"comm_exposed"}));
  EXPECT_EQ((*exposed)["claim"][0]["space"], "gpu");
  // The strategies the issue names: overlap by buckets, larger buckets, communication on its own
  // stream; the second quotes the top collective's bus bandwidth.
  const json& st = (*exposed)["strategies"];
  ASSERT_EQ(st.size(), 3u);
  EXPECT_NE(st[0].get<std::string>().find("bucket"), std::string::npos) << st[0];
  EXPECT_NE(st[1].get<std::string>().find("larger buckets"), std::string::npos) << st[1];
  EXPECT_NE(st[1].get<std::string>().find("bus bandwidth"), std::string::npos) << st[1];
  EXPECT_NE(st[2].get<std::string>().find("own stream"), std::string::npos) << st[2];
}

TEST(JobReport, CommExposedOfARankWithSeveralDevicesIsPerDevice) {
  const std::vector<RankCalls> calls = Calls(Job{{2'000'000, 2'000'000}, {0, 0}});
  std::vector<json> docs = {RankDoc(calls[0], 5, 2), RankDoc(calls[1], 5, 2)};
  // comm_ms and compute_ms sum over the rank's devices: 1 ms x 0.75 exposed over 2 devices with
  // kernels (a third has copies only) is 0.375 ms of the 5 ms iteration per device.
  docs[0]["devices"] = json::array({{{"kernels", 5}}, {{"kernels", 7}}, {{"kernels", 0}}});
  StatusOr<json> out = Reduce(docs, {"rank0.report.json", "rank1.report.json"});
  ASSERT_TRUE(out.ok());
  const json* f = nullptr;
  for (const json& x : (*out)["findings"])
    if (x["id"] == "comm_exposed") f = &x;
  ASSERT_TRUE(f);
  EXPECT_NEAR((*f)["amdahl"]["share"].get<double>(), 0.375 / 5, 1e-12);
}

TEST(JobReport, NoCommExposedWhenComputeHidesIt) {
  const std::vector<RankCalls> calls = Calls(Job{{2'000'000, 2'000'000}, {0, 0}});
  std::vector<json> docs = {RankDoc(calls[0], 5, 2), RankDoc(calls[1], 5, 2)};
  for (json& d : docs) d["ranks"][0]["overlap_ratio"] = 1.0;
  StatusOr<json> out = Reduce(docs, {"rank0.report.json", "rank1.report.json"});
  ASSERT_TRUE(out.ok());
  for (const json& f : (*out)["findings"]) EXPECT_NE(f["id"], "comm_exposed");
}

TEST(JobReport, CollectiveTableAcrossRanks) {
  auto row = [](const char* name, json bytes, int64_t count, double total_ms) {
    json r = {{"collective", name}, {"dtype", "Float"},     {"group_size", 2},
              {"count", count},     {"total_ms", total_ms}, {"message_bytes", bytes}};
    if (bytes.is_null()) r["message_bytes_reason"] = "no dtype in the metadata";
    return r;
  };
  const std::vector<RankCalls> calls = Calls(Job{{1'000'000, 1'000'000}, {0, 0}});
  std::vector<json> docs = {RankDoc(calls[0], 5, 2), RankDoc(calls[1], 5, 2)};
  // Rank 0: 4 all-reduces of 8 MB in 6 ms and 2 all-gathers of unknown size; rank 1: 5
  // all-reduces in 9 ms.
  docs[0]["collectives"] = json::array({row("allreduce", 8'000'000, 4, 6.0), row("allgather", nullptr, 2, 1.0)});
  docs[1]["collectives"] = json::array({row("allreduce", 8'000'000, 5, 9.0)});
  StatusOr<json> out = Reduce(docs, {"rank0.report.json", "rank1.report.json"});
  ASSERT_TRUE(out.ok()) << out.status().message();
  const json& t = (*out)["job"]["collectives"];
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0]["collective"], "allreduce");
  EXPECT_EQ(t[0]["ranks"], 2);
  EXPECT_EQ(t[0]["count"], 9);
  EXPECT_EQ(t[0]["count_per_rank"], nullptr);
  EXPECT_EQ(t[0]["count_per_rank_reason"], "the ranks disagree: 4 to 5 calls per rank");
  EXPECT_EQ(t[0]["count_min"], 4);
  EXPECT_EQ(t[0]["count_max"], 5);
  EXPECT_DOUBLE_EQ(t[0]["total_ms"].get<double>(), 15.0);
  EXPECT_DOUBLE_EQ(t[0]["mean_ms"].get<double>(), 15.0 / 9);
  // 8 MB per mean call of 15/9 ms: 4.8 GB/s; all-reduce over 2 ranks: x 2(2-1)/2 = 1.
  EXPECT_NEAR(t[0]["algbw_gbs"].get<double>(), 8e6 * 9 / 15e6, 1e-12);
  EXPECT_NEAR(t[0]["busbw_gbs"].get<double>(), 8e6 * 9 / 15e6, 1e-12);
  EXPECT_EQ(t[1]["collective"], "allgather");
  EXPECT_EQ(t[1]["ranks"], 1);
  EXPECT_EQ(t[1]["count_per_rank"], 2);
  EXPECT_EQ(t[1]["message_bytes"], nullptr);
  EXPECT_EQ(t[1]["algbw_gbs_reason"], "no dtype in the metadata");
}

// Two sets of ranks that share nothing across (their process groups are named apart): each set
// is aligned and waits among itself; offsets are onto the first rank's clock, so the other set's
// are null, with the rank they are aligned to.
TEST(JobReport, RanksOnAnotherClockHaveNoOffsetOntoTheFirstRanks) {
  std::vector<RankCalls> calls = Calls(Job{{2'000'000, 2'000'000, 2'000'000, 2'400'000}, {0, 5'000, 70'000, 90'000}});
  std::vector<json> docs;
  for (size_t r = 0; r < calls.size(); ++r) {
    docs.push_back(RankDoc(calls[r], 5.0, 2.0));
    if (r >= 2)
      for (json& c : docs.back()["ranks"][0]["collective_calls"]) c["group"] = "9";
  }
  StatusOr<json> out = Reduce(docs, {"r0.report.json", "r1.report.json", "r2.report.json", "r3.report.json"});
  ASSERT_TRUE(out.ok()) << out.status().message();
  const json& ranks = (*out)["ranks"];
  EXPECT_EQ(ranks[0]["clock_offset_ns"], 0);
  EXPECT_EQ(ranks[1]["clock_offset_ns"], -5'000);
  EXPECT_EQ(ranks[2]["clock_offset_ns"], nullptr);
  EXPECT_EQ(ranks[2]["clock_offset_ns_reason"],
            "no collective shared, directly or through other ranks, with rank 0: aligned to rank 2 instead (0 ns onto "
            "its clock)");
  EXPECT_EQ(ranks[3]["clock_offset_ns_reason"],
            "no collective shared, directly or through other ranks, with rank 0: aligned to rank 2 instead (-20000 ns "
            "onto its clock)");
  // Rank 3 is 400 us late in its set: rank 2 waits, ranks 0 and 1 do not.
  EXPECT_DOUBLE_EQ(ranks[2]["wait_ms"].get<double>(), 0.4);
  EXPECT_DOUBLE_EQ(ranks[0]["wait_ms"].get<double>(), 0.0);
  EXPECT_EQ(ranks[3]["last_arrivals"], 4);
  EXPECT_EQ((*out)["job"]["shared_collectives"], 8);
}

TEST(JobReport, NoStragglerWhenRanksArriveTogether) {
  const std::vector<RankCalls> calls = Calls(Job{{2'000'000, 2'000'000}, {0, 90'000}});
  StatusOr<json> out = Reduce({RankDoc(calls[0], 5, 2), RankDoc(calls[1], 5, 2)}, {"a.json", "b.json"});
  ASSERT_TRUE(out.ok());
  for (const json& f : (*out)["findings"]) EXPECT_NE(f["id"], "straggler");
  EXPECT_EQ((*out)["slowest_rank"], 0);  // a tie: the first file
}

TEST(JobReport, DuplicateRanksNameBothFiles) {
  const std::vector<RankCalls> calls = Calls(Job{{1, 1}, {0, 0}});
  json a = RankDoc(calls[0], 5, 1), b = RankDoc(calls[0], 5, 1);
  StatusOr<json> out = Reduce({a, b}, {"x/first.report.json", "x/second.report.json"});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("x/first.report.json and x/second.report.json: both are rank 0"),
            std::string::npos)
      << out.status().message();
}

TEST(JobReport, RanksFromFileNamesThenFileOrderWithANote) {
  json plain = {{"schema", "tracegate.report/v1"}, {"avg_latency_ms", 1.0}, {"iterations", 1}};
  StatusOr<json> out = Reduce({plain, plain, plain}, {"a.report.json", "job_rank_0.report.json", "c.report.json"});
  ASSERT_TRUE(out.ok()) << out.status().message();
  const json& ranks = (*out)["ranks"];
  EXPECT_EQ(ranks[0]["file"], "job_rank_0.report.json");
  EXPECT_EQ(ranks[0]["rank_source"], "file_name");
  EXPECT_EQ(ranks[1]["file"], "a.report.json");
  EXPECT_EQ(ranks[1]["rank_source"], "file_order");
  EXPECT_EQ(ranks[2]["file"], "c.report.json");
  EXPECT_EQ(ranks[2]["rank"], 2);
  const json& counters = (*out)["data_quality"]["counters"];
  ASSERT_EQ(counters.size(), 1u);
  EXPECT_EQ(counters[0]["key"], "rank_from_file_order");
  EXPECT_EQ(counters[0]["count"], 2);
  EXPECT_EQ(ranks[0]["comm_ms"], nullptr);
  EXPECT_EQ(ranks[0]["comm_ms_reason"], "not in the rank's report");
}

TEST(JobFiles, RankFromFileName) {
  EXPECT_EQ(RankFromFileName("d/rank-3.json"), 3);
  EXPECT_EQ(RankFromFileName("rank3.pt.trace.json.gz"), 3);
  EXPECT_EQ(RankFromFileName("trace_rank_12.json"), 12);
  EXPECT_EQ(RankFromFileName("host_worker7.1700.pt.trace.json"), 7);
  EXPECT_EQ(RankFromFileName("job7_RANK5.sqlite"), 5);
  EXPECT_EQ(RankFromFileName("rank7/trace.json"), std::nullopt);  // the directory is not the file
  EXPECT_EQ(RankFromFileName("cranky9.json"), std::nullopt);
  EXPECT_EQ(RankFromFileName("trace.json"), std::nullopt);
}

}  // namespace
}  // namespace tg
