// A job's ranks replayed together (tracegate/analyzer/job_replay.h) on hand-made ranks whose
// answers follow from their construction: a GPU-bound data-parallel step per rank (compute on
// one stream, an all-reduce on another that waits for it through an event, a device sync that
// ends the step), a straggler, and clocks that differ per rank. Every iteration is checked to
// the nanosecond against the construction, not against another tracegate computation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "analysis/causal_model.h"
#include "trace_builder.h"
#include "tracegate/analyzer/iterations.h"
#include "tracegate/analyzer/job_replay.h"

namespace tg {
namespace {

using testing::AddApi;
using testing::AddKernel;
using testing::AddRange;
using testing::kUs;

constexpr TimeNs kD = 1000 * kUs;   // the all-reduce once every rank has arrived
constexpr TimeNs kO = 400 * kUs;    // compute overlapping it
constexpr TimeNs kHost = 45 * kUs;  // host time of a step besides the GPU work
constexpr const char* kAllReduce = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)";

// One rank: per iteration T, host calls launch the compute [T, T + C_r) on stream 7, record an
// event, make stream 40 wait for it, launch the all-reduce [T + C_r, E) on stream 40 and a kernel
// overlapping it on stream 7, then synchronise until E + 10 us; E = T + max C + D. The marker
// spans [T - 30 us, E + 15 us), the next T is 65 us after E. Written on the rank's clock: + skew.
Trace RankTrace(const std::vector<TimeNs>& compute, size_t rank, int iterations, TimeNs skew) {
  Trace t;
  const TimeNs max_c = *std::max_element(compute.begin(), compute.end());
  const TimeNs c = compute[rank];
  int64_t corr = 1;
  TimeNs at = 1'000'000'000;
  auto launch = [&](const char* name, TimeNs start, TimeNs end, int64_t stream, TimeNs call) {
    AddKernel(t, name, start + skew, end + skew, 0, stream, corr);
    AddApi(t, "cudaLaunchKernel", call + skew, call + 5 * kUs + skew, corr);
    ++corr;
  };
  for (int k = 0; k < iterations; ++k) {
    const TimeNs e = at + max_c + kD;
    AddRange(t, "ProfilerStep#" + std::to_string(k), at - 30 * kUs + skew, e + 15 * kUs + skew);
    launch("gemm_compute_kernel", at, at + c, 7, at - 25 * kUs);
    const int64_t record = corr++;
    AddApi(t, "cudaEventRecord", at - 18 * kUs + skew, at - 16 * kUs + skew, record);
    const int64_t wait = corr++;
    AddApi(t, "cudaStreamWaitEvent", at - 15 * kUs + skew, at - 13 * kUs + skew, wait);
    Sync sync;
    sync.start = at - 14 * kUs + skew;
    sync.end = at - 13 * kUs + skew;
    sync.kind = SyncKind::kStreamWaitEvent;
    sync.correlation = wait;
    sync.device = 0;
    sync.stream = 40;
    sync.wait_stream = 7;
    sync.record_correlation = record;
    t.syncs.Add(sync);
    launch(kAllReduce, at + c, e, 40, at - 12 * kUs);
    launch("overlap_kernel", at + c, at + c + kO, 7, at - 6 * kUs);
    AddApi(t, "cudaDeviceSynchronize", at + skew, e + 10 * kUs + skew, corr++);
    at = e + 65 * kUs;
  }
  return t;
}

struct Job {
  std::vector<Trace> traces;
  std::vector<IterationAnalysis> its;
  std::vector<JobRankInput> inputs;
};

Job MakeJob(const std::vector<TimeNs>& compute, int iterations) {
  Job j;
  j.traces.reserve(compute.size());
  j.its.reserve(compute.size());
  for (size_t r = 0; r < compute.size(); ++r) {
    // Clocks apart by up to seconds, in no order.
    j.traces.push_back(RankTrace(compute, r, iterations, static_cast<TimeNs>((r * 7919) % 5) * 1'234'567'891));
    j.its.push_back(testing::Iterations(j.traces.back()));
  }
  // Given out of rank order: the result is by rank.
  for (size_t r = compute.size(); r-- > 0;)
    j.inputs.push_back({&j.traces[r], &j.its[r], static_cast<int64_t>(r), "rank" + std::to_string(r) + ".json"});
  return j;
}

TimeNs Scaled(TimeNs ns, double s) { return static_cast<TimeNs>(std::llround(static_cast<double>(ns) / s)); }

// Every iteration of every rank: (recorded, alone, with the job).
void ExpectIterations(const JobReplayResult& r, const std::vector<TimeNs>& base, const std::vector<TimeNs>& alone,
                      const std::vector<TimeNs>& job) {
  ASSERT_EQ(r.ranks.size(), base.size());
  for (size_t k = 0; k < r.ranks.size(); ++k) {
    EXPECT_EQ(r.ranks[k].rank, static_cast<int64_t>(k));
    ASSERT_FALSE(r.ranks[k].job.iterations.empty());
    for (size_t i = 0; i < r.ranks[k].job.iterations.size(); ++i) {
      EXPECT_EQ(r.ranks[k].job.iterations[i].base_ns, base[k]) << "rank " << k << " iteration " << i;
      EXPECT_EQ(r.ranks[k].alone.iterations[i].predicted_ns, alone[k]) << "rank " << k << " iteration " << i;
      EXPECT_EQ(r.ranks[k].job.iterations[i].predicted_ns, job[k]) << "rank " << k << " iteration " << i;
    }
  }
}

const std::vector<TimeNs> kCompute = {2000 * kUs, 2000 * kUs, 2300 * kUs, 2000 * kUs};  // rank 2 straggles

TEST(JobReplay, NoChangeGivesEveryRecordedTime) {
  Job j = MakeJob(kCompute, 4);
  JobReplayChange change;
  change.change.kernels_regex = "gemm_compute";
  change.change.kernel_speedup = 1;
  JobReplayResult r;
  ASSERT_TRUE(ReplayJob(j.inputs, change, &r).ok());
  const TimeNs base = 2300 * kUs + kD + kHost;
  ExpectIterations(r, {base, base, base, base}, {base, base, base, base}, {base, base, base, base});
  EXPECT_EQ(r.coupled, 4u);
  EXPECT_EQ(r.not_waiting + r.doubtful, 0u);
  for (const RankReplay& rr : r.ranks) EXPECT_EQ(rr.coupled, 4u);
}

// Every rank's compute 15% faster: every rank gains what the straggler gains. Alone, a rank that
// waited keeps its recorded wait and claims only its own saving.
TEST(JobReplay, EveryRankFasterGainsTheStragglersSaving) {
  Job j = MakeJob(kCompute, 4);
  JobReplayChange change;
  change.change.kernels_regex = "gemm_compute";
  change.change.kernel_speedup = 1.15;
  JobReplayResult r;
  ASSERT_TRUE(ReplayJob(j.inputs, change, &r).ok());
  const TimeNs base = 2300 * kUs + kD + kHost;
  const TimeNs job = Scaled(2300 * kUs, 1.15) + kD + kHost;
  std::vector<TimeNs> alone;
  for (TimeNs c : kCompute) alone.push_back(Scaled(c, 1.15) + (2300 * kUs - c) + kD + kHost);
  ExpectIterations(r, {base, base, base, base}, alone, {job, job, job, job});
  EXPECT_NEAR(r.speedup(), static_cast<double>(base) / static_cast<double>(job), 1e-12);
  EXPECT_EQ(r.slowest_base, 0u);  // all equal as recorded: the first
}

// The straggler alone as fast as the others: every rank gains its lateness, though only its own
// trace changed; a rank that waits gains nothing from its own faster compute.
TEST(JobReplay, OnlyTheStragglerMattersToTheJob) {
  Job j = MakeJob(kCompute, 3);
  const TimeNs base = 2300 * kUs + kD + kHost;
  {
    JobReplayChange change;
    change.change.kernels_regex = "gemm_compute";
    change.change.kernel_speedup = 1.15;
    change.ranks = {2};
    JobReplayResult r;
    ASSERT_TRUE(ReplayJob(j.inputs, change, &r).ok());
    const TimeNs job = std::max(Scaled(2300 * kUs, 1.15), 2000 * kUs) + kD + kHost;
    ExpectIterations(r, {base, base, base, base}, {base, base, job, base}, {job, job, job, job});
    EXPECT_FALSE(r.ranks[0].changed);
    EXPECT_TRUE(r.ranks[2].changed);
  }
  {
    JobReplayChange change;
    change.change.kernels_regex = "gemm_compute";
    change.change.kernel_speedup = 2;
    change.ranks = {0};
    JobReplayResult r;
    ASSERT_TRUE(ReplayJob(j.inputs, change, &r).ok());
    const TimeNs alone0 = 1000 * kUs + 300 * kUs + kD + kHost;
    ExpectIterations(r, {base, base, base, base}, {alone0, base, base, base}, {base, base, base, base});
    EXPECT_DOUBLE_EQ(r.speedup(), 1.0);
  }
}

// Faster all-reduces: only their transfer shrinks; the waits for the straggler stay.
TEST(JobReplay, FasterCollectivesKeepTheirWaits) {
  Job j = MakeJob(kCompute, 3);
  JobReplayChange change;
  change.change.kernel_class = "communication";
  change.change.kernel_speedup = 2;
  JobReplayResult r;
  ASSERT_TRUE(ReplayJob(j.inputs, change, &r).ok());
  const TimeNs base = 2300 * kUs + kD + kHost;
  const TimeNs job = 2300 * kUs + Scaled(kD, 2) + kHost;
  std::vector<TimeNs> alone;
  for (TimeNs c : kCompute) alone.push_back(c + Scaled(2300 * kUs - c + kD, 2) + kHost);
  ExpectIterations(r, {base, base, base, base}, alone, {job, job, job, job});
}

// The job's critical path as recorded: rank 0's iterations (the slowest by the tie rule) cross to
// the straggler at every all-reduce; its compute and launch are on the path, rank 0 keeps the
// transfer, the sync's wake-up and its host time after it. Every nanosecond of the steps is on it.
TEST(JobReplay, PathCrossesToTheRankThatArrivedLast) {
  Job j = MakeJob(kCompute, 3);
  JobReplayChange change;
  change.change.kernels_regex = "gemm_compute";
  change.change.kernel_speedup = 1;
  JobReplayResult r;
  ASSERT_TRUE(ReplayJob(j.inputs, change, &r).ok());
  const JobPathResult& p = r.path;
  EXPECT_EQ(p.rank, 0);
  EXPECT_EQ(p.iterations, 3u);
  EXPECT_EQ(p.crossings, 3u);
  EXPECT_EQ(p.step_total_ns, 3 * (2300 * kUs + kD + kHost));
  auto kind = [&](PathKind k) { return p.kind_ns[static_cast<size_t>(k)]; };
  EXPECT_EQ(kind(PathKind::kKernelOther) + kind(PathKind::kKernelGemm), 3 * 2300 * kUs);
  EXPECT_EQ(kind(PathKind::kCommunication), 3 * kD);
  EXPECT_EQ(kind(PathKind::kLaunchDelay), 3 * 25 * kUs);
  EXPECT_EQ(kind(PathKind::kSyncWait), 3 * 10 * kUs);
  EXPECT_EQ(kind(PathKind::kHostCompute), 3 * 10 * kUs);
  TimeNs sum = 0;
  for (TimeNs ns : p.kind_ns) sum += ns;
  EXPECT_EQ(sum, p.step_total_ns);
  const std::vector<std::pair<int64_t, TimeNs>> want = {{0, 3 * (kD + 15 * kUs)}, {2, 3 * (2300 * kUs + 30 * kUs)}};
  EXPECT_EQ(p.rank_ns, want);
  // Without a straggler every rank arrives at once: the path stays on the walked rank.
  Job even = MakeJob({2000 * kUs, 2000 * kUs, 2000 * kUs}, 2);
  ASSERT_TRUE(ReplayJob(even.inputs, change, &r).ok());
  EXPECT_EQ(r.path.crossings, 0u);
  ASSERT_EQ(r.path.rank_ns.size(), 1u);
  EXPECT_EQ(r.path.rank_ns[0].second, r.path.step_total_ns);
}

TEST(JobReplay, Errors) {
  Job j = MakeJob(kCompute, 2);
  JobReplayChange change;
  change.change.kernels_regex = "gemm_compute";
  change.change.kernel_speedup = 2;
  JobReplayResult r;
  // One rank is no job.
  Status s = ReplayJob({j.inputs.front()}, change, &r);
  EXPECT_EQ(s.code(), StatusCode::kInvalidInput);
  // Two inputs of one rank.
  std::vector<JobRankInput> twice = j.inputs;
  twice[1].rank = twice[0].rank;
  s = ReplayJob(twice, change, &r);
  EXPECT_NE(s.message().find("are both rank"), std::string::npos) << s.message();
  // A rank the job does not have.
  change.ranks = {7};
  s = ReplayJob(j.inputs, change, &r);
  EXPECT_NE(s.message().find("--rank 7: the job has no such rank"), std::string::npos) << s.message();
  // A change that names nothing anywhere.
  change.ranks = {};
  change.change.kernels_regex = "no_such_kernel";
  s = ReplayJob(j.inputs, change, &r);
  EXPECT_NE(s.message().find("names nothing on any rank"), std::string::npos) << s.message();
  // A change that names something on one rank only: the others say why, the job replays.
  change.change.kernels_regex = "gemm_compute";
  Trace plain = RankTrace(kCompute, 1, 2, 0);
  for (size_t k = 0; k < plain.kernels.size(); ++k)
    if (plain.Name(plain.kernels.name[k]) == "gemm_compute_kernel")
      plain.kernels.name[k] = plain.strings.Intern("other");
  const IterationAnalysis plain_its = testing::Iterations(plain);
  std::vector<JobRankInput> mixed = j.inputs;
  for (JobRankInput& in : mixed)
    if (in.rank == 1) in = {&plain, &plain_its, 1, "plain.json"};
  ASSERT_TRUE(ReplayJob(mixed, change, &r).ok());
  EXPECT_FALSE(r.ranks[1].unmatched.empty());
  EXPECT_TRUE(r.ranks[0].unmatched.empty());
  // A stage range on one rank only (--launched-in, refused before the pass where nothing matches):
  // the others are replayed unchanged and say why.
  Trace staged = RankTrace(kCompute, 2, 2, 0);
  AddRange(staged, "stage3", 999'000'000, 2'000'000'000);
  const IterationAnalysis staged_its = testing::Iterations(staged);
  std::vector<JobRankInput> stage = j.inputs;
  for (JobRankInput& in : stage)
    if (in.rank == 2) in = {&staged, &staged_its, 2, "staged.json"};
  JobReplayChange launched;
  launched.change.kernels_launched_in = "^stage3$";
  launched.change.kernel_speedup = 1.15;
  ASSERT_TRUE(ReplayJob(stage, launched, &r).ok());
  EXPECT_TRUE(r.ranks[2].unmatched.empty());
  EXPECT_NE(r.ranks[0].unmatched.find("--launched-in"), std::string::npos) << r.ranks[0].unmatched;
  EXPECT_LT(r.predicted_ms, r.base_ms);  // the straggler's stage got faster: every rank gains
  // An invalid change (two selections holding one kernel) is the job's error, not "names nothing".
  JobReplayChange twice_held;
  twice_held.change.kernels_regex = "gemm";
  twice_held.change.kernel_speedup = 2;
  twice_held.change.more_kernels.push_back({"kernel", "", 1.5, ""});  // overlap_kernel and gemm_compute_kernel
  s = ReplayJob(j.inputs, twice_held, &r);
  EXPECT_NE(s.message().find("two kernel selections"), std::string::npos) << s.message();
  EXPECT_EQ(s.message().find("names nothing"), std::string::npos) << s.message();
}

// A rank whose replay fails before its pass while the others' passes wait for it at their first
// collective: the wait is given up (no hang) and the job reports that rank's own error.
TEST(JobReplay, ARankFailingDoesNotHangTheOthers) {
  Job j = MakeJob(kCompute, 2);
  JobReplayChange change;
  change.change.kernels_regex = "(";  // an invalid regex, on rank 3 only
  change.change.kernel_speedup = 2;
  change.ranks = {3};
  JobReplayResult r;
  const Status s = ReplayJob(j.inputs, change, &r);
  EXPECT_EQ(s.code(), StatusCode::kInvalidInput);
  EXPECT_NE(s.message().find("rank3.json (rank 3)"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace tg
