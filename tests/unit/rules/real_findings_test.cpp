// Findings on a real trace nobody on this project wrote (../shared/traces, nsys export of a
// 2-GPU H100 run), with their evidence recomputed independently: straight SQL over the export
// and a union written here, not tracegate's importer, iteration or phase code.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "sqlite_test_util.h"
#include "tracegate/analyzer/analysis.h"
#include "tracegate/analyzer/import.h"

namespace tg {
namespace {

const std::string kExport = std::string(TRACEGATE_SHARED_TRACES_DIR) + "/nsys_2gpu_export.sqlite";

using testing::QueryPairs;

// Length of the union of [start, end) intervals.
int64_t Union(std::vector<std::pair<int64_t, int64_t>> v) {
  std::sort(v.begin(), v.end());
  int64_t total = 0, a = 0, b = 0;
  bool open = false;
  for (auto [s, e] : v) {
    if (open && s <= b) {
      b = std::max(b, e);
    } else {
      if (open) total += b - a;
      a = s, b = e, open = true;
    }
  }
  return open ? total + b - a : total;
}

TEST(RealFindings, NsysExportSyncAndIdleEvidenceMatchPlainSql) {
  if (!std::filesystem::exists(kExport)) GTEST_SKIP() << kExport << " is absent (the shared traces folder)";
  Trace trace;
  ASSERT_TRUE(ImportTrace(kExport, &trace).ok());
  Analysis a;
  ASSERT_TRUE(RunAnalysis(trace, AnalysisConfig{}, &a).ok());

  // No iteration markers: the iteration spans the GPU work and the runtime calls that launched it
  // (no NVTX range here names a phase), not the whole window of every event.
  auto window = QueryPairs(kExport,
                           "SELECT min(s), max(e) FROM ("
                           " SELECT start s, end e FROM CUPTI_ACTIVITY_KIND_KERNEL UNION ALL"
                           " SELECT start, end FROM CUPTI_ACTIVITY_KIND_MEMCPY UNION ALL"
                           " SELECT start, end FROM CUPTI_ACTIVITY_KIND_MEMSET UNION ALL"
                           " SELECT r.start, r.end FROM CUPTI_ACTIVITY_KIND_RUNTIME r WHERE r.correlationId IN ("
                           "  SELECT correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL UNION"
                           "  SELECT correlationId FROM CUPTI_ACTIVITY_KIND_MEMCPY UNION"
                           "  SELECT correlationId FROM CUPTI_ACTIVITY_KIND_MEMSET))");
  ASSERT_EQ(window.size(), 1u);
  const double total = static_cast<double>(window[0].second - window[0].first);
  ASSERT_EQ(a.iterations.iterations.size(), 1u);
  EXPECT_EQ(a.iterations.total_ns, window[0].second - window[0].first);

  // idle_ratio: no pre/post ranges here, so idle = window minus the union of all GPU work.
  auto gpu = QueryPairs(kExport,
                        "SELECT start, end FROM CUPTI_ACTIVITY_KIND_KERNEL UNION ALL"
                        " SELECT start, end FROM CUPTI_ACTIVITY_KIND_MEMCPY UNION ALL"
                        " SELECT start, end FROM CUPTI_ACTIVITY_KIND_MEMSET");
  double idle = 1.0 - static_cast<double>(Union(gpu)) / total;
  EXPECT_NEAR(a.iterations.phase_ratio[static_cast<size_t>(Phase::kIdle)], idle, 1e-12);

  // sync_in_loop: blocking syncs are event (1), stream (3) and context (4) synchronisations.
  auto syncs =
      QueryPairs(kExport, "SELECT start, end FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION WHERE syncType IN (1, 3, 4)");
  const Finding* sync = nullptr;
  for (const Finding& f : a.findings)
    if (f.id == "sync_in_loop") sync = &f;
  ASSERT_NE(sync, nullptr) << "sync_in_loop should fire: " << syncs.size() << " blocking syncs";
  ASSERT_EQ(sync->evidence.size(), 2u);
  EXPECT_EQ(sync->evidence[0].metric, "syncs_per_iteration");
  EXPECT_EQ(sync->evidence[0].value, static_cast<double>(syncs.size()));
  EXPECT_EQ(sync->evidence[1].metric, "sync_wait_ratio");
  EXPECT_NEAR(sync->evidence[1].value, static_cast<double>(Union(syncs)) / total, 1e-12);
  // P is bounded by the idle share that waits for launches: waiting costs time only while the
  // GPU idles for want of work the host has not launched yet.
  // (The share of the iterations' idle phase whose cause is host_launch.)
  TimeNs phase = 0;
  for (TimeNs ns : a.idle.idle_phase_ns) phase += ns;
  const double host_share = static_cast<double>(a.idle.idle_phase_ns[static_cast<size_t>(IdleCause::kHostLaunch)]) /
                            static_cast<double>(phase);
  EXPECT_NEAR(sync->amdahl.share, std::min(idle * host_share, sync->evidence[1].value), 1e-12);
  EXPECT_LE(sync->amdahl.share, std::min(idle, sync->evidence[1].value));
}

}  // namespace
}  // namespace tg
