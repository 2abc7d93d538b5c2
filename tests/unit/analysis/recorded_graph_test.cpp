// The critical path's graph (analyzer/analysis/recorded_graph.h) binds every node as the replay's
// pass does with no change (ReplayEngine's ReplayRecord): node by node, on the real traces (the
// shipped fixtures, ../shared/traces when it is beside the checkout), and on generated shapes
// (kernel-dense on 4 streams, Python stacks, serving with graph launches, the benchmark's mix).
#include <gtest/gtest.h>

#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "analyzer/analysis/correlation.h"
#include "analyzer/analysis/recorded_graph.h"
#include "analyzer/analysis/replay_engine.h"
#include "gen_kineto.h"
#include "tracegate/analyzer/import.h"
#include "tracegate/analyzer/iterations.h"

namespace tg {
namespace {

namespace fs = std::filesystem;
using bench::TraceShape;
using bench::WriteKinetoShape;
using bench::WriteKinetoTrace;

// Compares every node's binding; returns the number of nodes compared.
size_t CompareBindings(const Trace& t, const IterationAnalysis& its, const std::string& what) {
  ReplayResult result;
  internal::ReplayRecord rec;
  const internal::ApiIndex index(t.api_calls);
  EXPECT_TRUE(internal::ReplayEngine(t, its, ReplayChange{}, &index, &result, &rec).ok()) << what;
  const internal::RecordedGraph g(t, its, index, nullptr);
  EXPECT_EQ(g.activities(), rec.acts.size()) << what;
  size_t compared = 0, mismatches = 0;
  for (uint32_t i = 0; i < rec.acts.size() && mismatches < 5; ++i) {
    const internal::ReplayActivity x = g.Act(i);
    EXPECT_EQ(x.start, rec.acts[i].start) << what << " activity " << i;
    EXPECT_EQ(x.end, rec.acts[i].end) << what << " activity " << i;
    EXPECT_EQ(x.call, rec.acts[i].call) << what << " activity " << i;
    EXPECT_EQ(x.row, rec.acts[i].row) << what << " activity " << i;
    int32_t from = -1;
    const internal::ActBound bound = g.BindAct(i, x, &from);
    const int32_t want = rec.act_bound[i] == internal::ActBound::kStream  ? rec.act_prev[i]
                         : rec.act_bound[i] == internal::ActBound::kEvent ? rec.act_waited[i]
                                                                          : -1;
    if (bound != rec.act_bound[i] || from != want) {
      ++mismatches;
      ADD_FAILURE() << what << " activity " << i << ": bound " << static_cast<int>(bound) << " from " << from
                    << ", the replay's " << static_cast<int>(rec.act_bound[i]) << " from " << want;
    }
    ++compared;
  }
  for (uint32_t c = 0; c < t.api_calls.size() && mismatches < 5; ++c) {
    const int32_t prev = g.CallPrev(c), waited = g.CallWaited(c);
    if (prev != rec.call_prev[c] || waited != rec.call_waited[c] || g.CallSync(c) != rec.call_sync[c]) {
      ++mismatches;
      ADD_FAILURE() << what << " call " << c << " (" << t.Name(t.api_calls.name[c]) << "): prev " << prev << " waited "
                    << waited << ", the replay's " << rec.call_prev[c] << " / " << rec.call_waited[c];
    }
    ++compared;
  }
  EXPECT_EQ(rec.iterations.size(), its.iterations.size()) << what;
  for (size_t k = 0; k < rec.iterations.size() && k < its.iterations.size(); ++k) {
    const auto &want = rec.iterations[k], &got = g.End(k);
    EXPECT_EQ(got.start, want.start) << what << " iteration " << k;
    EXPECT_EQ(got.end, want.end) << what << " iteration " << k;
    EXPECT_EQ(got.end_act, want.end_act) << what << " iteration " << k;
    EXPECT_EQ(got.end_call, want.end_call) << what << " iteration " << k;
    EXPECT_EQ(got.tail, want.tail) << what << " iteration " << k;
  }
  return compared;
}

// A gzipped store, unpacked to `out`.
bool Gunzip(const std::string& path, const std::string& out) {
  gzFile in = gzopen(path.c_str(), "rb");
  std::FILE* f = std::fopen(out.c_str(), "wb");
  bool ok = in && f;
  char buf[1 << 16];
  for (int n = 0; ok && (n = gzread(in, buf, sizeof buf)) != 0;) ok = n > 0 && std::fwrite(buf, 1, n, f) == size_t(n);
  if (in) gzclose(in);
  if (f) std::fclose(f);
  return ok;
}

void CompareFile(const std::string& given) {
  std::string path = given;
  const fs::path unpacked = fs::temp_directory_path() / ("tg_recorded_graph_" + std::to_string(::getpid()) + ".db");
  if (given.ends_with(".db.gz")) {
    ASSERT_TRUE(Gunzip(given, unpacked.string())) << given;
    path = unpacked.string();
  }
  Trace t;
  const Status s = ImportTrace(path, &t);
  if (path != given) fs::remove(unpacked);
  ASSERT_TRUE(s.ok()) << path << ": " << s.message();
  for (int skip : {0, -1}) {
    IterationOptions o;
    if (skip == 0) o.skip = 0;
    IterationAnalysis its;
    if (!AnalyzeIterations(t, o, &its).ok() || its.iterations.empty()) continue;
    const size_t nodes = CompareBindings(t, its, path + (skip == 0 ? " (--skip 0)" : ""));
    EXPECT_GT(nodes, 0u) << path;
    ::testing::Test::RecordProperty(fs::path(given).filename().string() + (skip == 0 ? ":skip0" : ":auto"),
                                    std::to_string(nodes));
  }
}

TEST(RecordedGraph, BindsAsTheReplayOnTheShippedTraces) {
  const std::string dir = TRACEGATE_FIXTURES_DIR;
  for (const char* f :
       {"/real/kineto_alexnet_train_step.json.gz", "/real/kineto_sampled_rank0.json.gz",
        "/real/hta_critical_path/simple_add_input.json.gz", "/real/hta_critical_path/event_sync_multi_stream.json.gz",
        "/gpu/known_workload.db.gz", "/gpu/resnet50_eager_b32.db.gz", "/gpu/torch211_resnet50_compile_b1.json.gz"})
    CompareFile(dir + f);
}

TEST(RecordedGraph, BindsAsTheReplayOnTheSharedTraces) {
  const fs::path dir = TRACEGATE_SHARED_TRACES_DIR;
  if (!fs::exists(dir)) GTEST_SKIP() << dir << " is absent (../shared/traces is not beside this checkout)";
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string p = e.path().string();
    if (p.ends_with(".json.gz") || p.ends_with(".sqlite")) {
      CompareFile(p);
      ++files;
    }
  }
  EXPECT_GT(files, 0u);
}

TEST(RecordedGraph, BindsAsTheReplayOnGeneratedShapes) {
  const fs::path dir = fs::temp_directory_path() / ("tg_recorded_graph_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string mix = (dir / "mix.json").string(), dense = (dir / "dense.json").string(),
                    stacks = (dir / "stacks.json").string(), serving = (dir / "serving.json").string();
  ASSERT_GT(WriteKinetoTrace(mix.c_str(), 20000, 3, 7), 0);
  ASSERT_GT(WriteKinetoShape(dense.c_str(), TraceShape::kDense, 20, 4, 7), 0);
  ASSERT_GT(WriteKinetoShape(stacks.c_str(), TraceShape::kStacks, 10, 2, 7), 0);
  ASSERT_GT(WriteKinetoShape(serving.c_str(), TraceShape::kServing, 64, 2, 7), 0);
  for (const std::string& p : {mix, dense, stacks, serving}) CompareFile(p);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tg
