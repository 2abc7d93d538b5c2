// Every gap attributed to its cause, with evidence: one synthetic trace with one gap of each cause
// (exact times, per stream, the largest gaps of each cause named with both neighbours), the
// communication rule on it, and the report's gap fields in JSON and text, old spelling included.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>

#include "trace_builder.h"
#include "tracegate/analyzer/analysis.h"
#include "tracegate/reports/analysis_report.h"

namespace tg {
namespace {

using testing::AddApi;
using testing::AddKernel;
using testing::AddRange;

constexpr TimeNs kUs = 1'000;
constexpr const char* kNccl = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";

size_t C(IdleCause c) { return static_cast<size_t>(c); }

// Device 0, streams 7 and 8, times in us:
//   gemm [0,100) s7 | 200 host_stage: relu [300,400) s7 launched [250,290) while "preprocess" [120,240) runs
//   | 100 host_launch: add [500,600) s8 launched [420,480)
//   | 400 communication: the all-reduce [1000,1100) s8, queued at [10,20)
//   scale [1100,1110) s7 | 190 dependency_sync: mul [1300,1400) s7 queued at [30,40), a stream sync [1150,1290)
//   | 100 unknown: div [1500,1600) s7 queued at [70,80), nothing in progress.
Trace OneGapOfEachCause() {
  Trace t;
  auto kernel = [&](const char* name, TimeNs s, TimeNs e, int64_t stream, int64_t corr, TimeNs ls, TimeNs le) {
    AddApi(t, "cudaLaunchKernel", ls * kUs, le * kUs, corr);
    AddKernel(t, name, s * kUs, e * kUs, 0, stream, corr);
  };
  kernel("gemm", 0, 100, 7, 1, 0, 5);
  kernel("relu", 300, 400, 7, 2, 250, 290);
  AddRange(t, "preprocess", 120 * kUs, 240 * kUs);
  kernel("add", 500, 600, 8, 3, 420, 480);
  kernel(kNccl, 1000, 1100, 8, 4, 10, 20);
  kernel("scale", 1100, 1110, 7, 5, 25, 28);
  kernel("mul", 1300, 1400, 7, 6, 30, 40);
  AddApi(t, "cudaStreamSynchronize", 1150 * kUs, 1290 * kUs, 99);
  kernel("div", 1500, 1600, 7, 7, 70, 80);
  return t;
}

Analysis Analyze(const Trace& t) {
  Analysis a;
  EXPECT_TRUE(RunAnalysis(t, AnalysisConfig{}, &a).ok());
  return a;
}

TEST(GapCauses, EachCauseWithExactTimesStreamsAndEvidence) {
  const Trace t = OneGapOfEachCause();
  const Analysis a = Analyze(t);
  const DeviceSummary& d = a.summary.devices.at(0);
  const IdleCauses& c = d.idle_causes;
  ASSERT_TRUE(c.attributed);
  // The stage gap [100, 300): 120 us inside "preprocess", 80 us on the way to relu's launch (the
  // 20 us before the range, the 10 us after it, the launch call, and 10 us of launch latency).
  EXPECT_EQ(c.ns[C(IdleCause::kHostStage)], 120 * kUs);
  EXPECT_EQ(c.ns[C(IdleCause::kHostLaunch)], 180 * kUs);
  EXPECT_EQ(c.ns[C(IdleCause::kCommunication)], 400 * kUs);
  EXPECT_EQ(c.ns[C(IdleCause::kDependencySync)], 190 * kUs);
  // div was queued at 80 us and started at 1500 us on an idle device: the device ran work the
  // trace does not hold.
  EXPECT_EQ(c.ns[C(IdleCause::kDeviceBacklog)], 100 * kUs);
  EXPECT_EQ(c.ns[C(IdleCause::kUnknown)], 0);
  for (IdleCause k : {IdleCause::kHostStage, IdleCause::kHostLaunch, IdleCause::kCommunication,
                      IdleCause::kDependencySync, IdleCause::kDeviceBacklog})
    EXPECT_EQ(c.gaps[C(k)], 1u) << kIdleCauseNames[C(k)];
  EXPECT_EQ(d.gap_total_ns, 990 * kUs);

  // Each gap counts for the stream of the work that ends it.
  ASSERT_EQ(a.summary.streams.size(), 2u);
  const StreamSummary& s7 = a.summary.streams[0];
  const StreamSummary& s8 = a.summary.streams[1];
  ASSERT_EQ(s7.stream, 7);
  EXPECT_EQ(s7.idle_before_ns[C(IdleCause::kHostStage)], 120 * kUs);
  EXPECT_EQ(s7.idle_before_ns[C(IdleCause::kHostLaunch)], 80 * kUs);
  EXPECT_EQ(s7.idle_before_ns[C(IdleCause::kDependencySync)], 190 * kUs);
  EXPECT_EQ(s7.idle_before_ns[C(IdleCause::kDeviceBacklog)], 100 * kUs);
  EXPECT_EQ(s8.idle_before_ns[C(IdleCause::kHostLaunch)], 100 * kUs);
  EXPECT_EQ(s8.idle_before_ns[C(IdleCause::kCommunication)], 400 * kUs);
  EXPECT_EQ(s7.idle_before_ns[C(IdleCause::kCommunication)] + s8.idle_before_ns[C(IdleCause::kHostStage)], 0);

  const IdleGap& stage = c.largest[C(IdleCause::kHostStage)].at(0);
  EXPECT_EQ(stage.start_ns, 100 * kUs);
  EXPECT_EQ(stage.previous, "gemm");
  EXPECT_EQ(stage.next, "relu");
  EXPECT_EQ(stage.next_stream, 7);
  EXPECT_EQ(stage.call, "cudaLaunchKernel");
  EXPECT_EQ(stage.call_returned_ns, 190 * kUs);
  EXPECT_EQ(stage.stage, "preprocess");
  const IdleGap& launch = c.largest[C(IdleCause::kHostLaunch)].at(0);
  EXPECT_EQ(launch.previous, "relu");
  EXPECT_EQ(launch.next, "add");
  EXPECT_EQ(launch.call_returned_ns, 80 * kUs);
  EXPECT_TRUE(launch.stage.empty());
  const IdleGap& comm = c.largest[C(IdleCause::kCommunication)].at(0);
  EXPECT_EQ(comm.previous, "add");
  EXPECT_EQ(comm.next, kNccl);
  EXPECT_EQ(comm.collective, kNccl);
  EXPECT_EQ(comm.next_stream, 8);
  const IdleGap& dep = c.largest[C(IdleCause::kDependencySync)].at(0);
  EXPECT_EQ(dep.previous, "scale");
  EXPECT_EQ(dep.next, "mul");
  EXPECT_EQ(dep.duration_ns, 190 * kUs);
  EXPECT_EQ(dep.call, "cudaStreamSynchronize");
  const IdleGap& backlog = c.largest[C(IdleCause::kDeviceBacklog)].at(0);
  EXPECT_EQ(backlog.next, "div");
  EXPECT_EQ(backlog.lag_ns, 1420 * kUs);

  // The device's largest gaps carry their cause too, longest first.
  ASSERT_EQ(d.largest_gaps.size(), 5u);
  EXPECT_EQ(d.largest_gaps[0].cause, IdleCause::kCommunication);
  EXPECT_EQ(d.largest_gaps[1].cause, IdleCause::kHostStage);
}

// Without the stage range the same gap is the host's launch, and the launch rules may claim it.
TEST(GapCauses, HostStageNeedsTheHostInsideAPrePostRange) {
  Trace t = OneGapOfEachCause();
  AnalysisConfig config;
  config.iterations.pre_regex = "^nothing$";
  Analysis a;
  ASSERT_TRUE(RunAnalysis(t, config, &a).ok());
  const IdleCauses& c = a.summary.devices.at(0).idle_causes;
  EXPECT_EQ(c.ns[C(IdleCause::kHostStage)], 0);
  // Not a stage now, "preprocess" is a 120 us range that launches nothing: host compute.
  EXPECT_EQ(c.ns[C(IdleCause::kHostCompute)], 120 * kUs);
  EXPECT_EQ(c.ns[C(IdleCause::kHostLaunch)], 180 * kUs);
}

TEST(GapCauses, CommunicationRuleStatesBothNumbersAndHidesAtMostTheExposedCollective) {
  const Trace t = OneGapOfEachCause();
  const Analysis a = Analyze(t);
  auto it =
      std::find_if(a.findings.begin(), a.findings.end(), [](const Finding& f) { return f.id == "communication"; });
  ASSERT_NE(it, a.findings.end());
  const Finding& f = *it;
  // One iteration, the whole 1600 us window; the all-reduce runs alone for 100 us.
  ASSERT_EQ(f.evidence.size(), 2u);
  EXPECT_EQ(f.evidence[0].metric, "collective_wall_ratio");
  EXPECT_DOUBLE_EQ(f.evidence[0].value, 100.0 / 1600);
  // Idle phase: 990 us of gaps less the 120 us pre stage; 400 of its 870 us are communication's.
  EXPECT_EQ(f.evidence[1].metric, "communication_idle_ratio");
  EXPECT_NEAR(f.evidence[1].value, 870.0 / 1600 * 400.0 / 870, 1e-12);
  EXPECT_NE(f.summary.find("6.2% of the iteration's wall time"), std::string::npos) << f.summary;
  EXPECT_NE(f.summary.find("idles 25.0%"), std::string::npos) << f.summary;
  ASSERT_EQ(f.involved.size(), 2u);
  EXPECT_EQ(f.involved[0].kind, "kernel");
  EXPECT_EQ(f.involved[0].name, kNccl);
  EXPECT_EQ(f.involved[1].kind, "gap");
  EXPECT_EQ(f.involved[1].time_ns, 400 * kUs);
  EXPECT_NE(f.involved[1].detail.find("stream 8"), std::string::npos) << f.involved[1].detail;
  EXPECT_DOUBLE_EQ(f.amdahl.share, 100.0 / 1600);  // min(exposed collective 100, other kernels 510)
  EXPECT_EQ(f.amdahl.basis, "measured");
  for (const std::string& s : f.strategies) EXPECT_EQ(s.find("compiler"), std::string::npos) << s;

  // idle_gaps leaves the communication gap to this rule.
  auto idle = std::find_if(a.findings.begin(), a.findings.end(), [](const Finding& x) { return x.id == "idle_gaps"; });
  ASSERT_NE(idle, a.findings.end());
  for (const Involved& i : idle->involved) EXPECT_EQ(i.detail.find("communication"), std::string::npos) << i.name;
}

TEST(GapCauses, ReportNamesPreviousAndNextAndReadsTheOldSpelling) {
  const Trace t = OneGapOfEachCause();
  const Analysis a = Analyze(t);
  nlohmann::json doc = AnalysisToJson(t, a, AnalysisConfig{});
  const nlohmann::json& g = doc["devices"][0]["gaps"]["largest"][0];
  EXPECT_EQ(g["previous"], "add");
  EXPECT_EQ(g["next"], kNccl);
  EXPECT_EQ(g["next_stream"], 8);
  EXPECT_EQ(g["cause"], "communication");
  EXPECT_EQ(g["evidence"]["collective"], kNccl);
  EXPECT_FALSE(g.contains("before"));
  const nlohmann::json& stage = doc["devices"][0]["idle_causes"]["host_stage"]["largest"][0];
  EXPECT_EQ(stage["evidence"]["launch_returned_after_gap_start_ns"], 190 * kUs);
  EXPECT_EQ(stage["evidence"]["stage"], "preprocess");
  EXPECT_EQ(doc["streams"][1]["idle_before_ns"]["communication"], 400 * kUs);

  std::ostringstream text;
  PrintAnalysis(text, doc);
  // Names are cut to 36 characters in the text.
  EXPECT_NE(text.str().find("between add and ncclDevKernel_AllReduce_Sum_f32_R... (stream 8), communication\n"),
            std::string::npos)
      << text.str();
  EXPECT_NE(text.str().find("returned 190.000 us after the gap began, host in preprocess"), std::string::npos)
      << text.str();

  // A v1 report from before the rename: "before" is the work before the gap, "after" the work after.
  for (nlohmann::json& gap : doc["devices"][0]["gaps"]["largest"]) {
    gap["before"] = gap["previous"];
    gap["after"] = gap["next"];
    for (const char* key : {"previous", "next", "next_stream", "cause", "evidence"}) gap.erase(key);
  }
  doc["devices"][0].erase("idle_causes");
  std::ostringstream old;
  PrintAnalysis(old, doc);
  EXPECT_NE(old.str().find("between add and ncclDevKernel_AllReduce_Sum_f32_R...\n"), std::string::npos) << old.str();
}

}  // namespace
}  // namespace tg
