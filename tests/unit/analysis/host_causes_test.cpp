// What the host was doing in every GPU-idle microsecond (issue 27): one synthetic trace per cause
// with exact expected times (CPU preprocessing mid-step, a Triton compile before the first
// kernel, a synchronous copy that blocks while the device idles, a backlog from before the trace,
// a capture trace, a host that idles between requests, a truly launch-bound loop), the per-cause
// sums against each iteration's GPU-idle time, pre/post from host work, and the findings that
// follow (host_bound, no idle claim for a backlog or a capture, CUDA-graph advice only for
// host_launch).
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "analyzer/host/host_model.h"
#include "trace_builder.h"
#include "tracegate/analyzer/analysis.h"
#include "tracegate/reports/analysis_report.h"

namespace tg {
namespace {

using testing::AddApi;
using testing::AddCopy;
using testing::AddKernel;
using testing::AddRange;

constexpr TimeNs kUs = 1'000;
constexpr TimeNs kMs = 1'000'000;

size_t C(IdleCause c) { return static_cast<size_t>(c); }

// A Python frame (python_function) or cpu_op on the main thread.
void Frame(Trace& t, std::string_view name, TimeNs s, TimeNs e, const char* domain = "python_function") {
  testing::AddRangeIn(t, domain, name, s, e);
}

// A kernel [s, e) launched by cudaLaunchKernel [ls, le).
void Launch(Trace& t, std::string_view kernel, TimeNs s, TimeNs e, TimeNs ls, TimeNs le, int64_t corr) {
  AddApi(t, "cudaLaunchKernel", ls, le, corr);
  AddKernel(t, kernel, s, e, 0, 7, corr);
}

Analysis Analyze(Trace& t) {
  FinalizeTrace(t);
  Analysis a;
  EXPECT_TRUE(RunAnalysis(t, AnalysisConfig{}, &a).ok());
  return a;
}

// Every iteration's causes sum to its GPU-idle time (latency - gpu_busy = pre + post + idle).
void ExpectCausesSumToIdle(const Analysis& a) {
  for (const Iteration& it : a.iterations.iterations) {
    const TimeNs causes = std::accumulate(it.idle_cause_ns.begin(), it.idle_cause_ns.end(), TimeNs{0});
    EXPECT_EQ(causes, it.latency_ns() - it.gpu_busy_ns) << it.name;
    EXPECT_EQ(causes, it.phase_ns[static_cast<size_t>(Phase::kPre)] + it.phase_ns[static_cast<size_t>(Phase::kPost)] +
                          it.phase_ns[static_cast<size_t>(Phase::kIdle)])
        << it.name;
  }
  TimeNs phase = 0;
  for (TimeNs ns : a.idle.idle_phase_ns) phase += ns;
  TimeNs idle = 0;
  for (const Iteration& it : a.iterations.iterations) idle += it.phase_ns[static_cast<size_t>(Phase::kIdle)];
  EXPECT_EQ(phase, idle);
}

const Finding* FindingOf(const Analysis& a, std::string_view id) {
  for (const Finding& f : a.findings)
    if (f.id == id) return &f;
  return nullptr;
}

// One step [0, 10 ms) under <module>: kernel A [0.2, 1.0) launched at [0.15, 0.19); then 5 ms of
// NumPy resizing [1.1, 6.1) that launches nothing; kernel B [6.3, 7.0) launched at [6.25, 6.29);
// then 2.8 ms of decoding [7.1, 9.9) after the last GPU work.
Trace PreprocessingMidStep() {
  Trace t;
  AddRange(t, "ProfilerStep#1", 0, 10 * kMs);
  Frame(t, "main.py(1): <module>", 0, 10 * kMs);
  Frame(t, "model.py(10): forward", 50 * kUs, 1050 * kUs);
  Launch(t, "gemm", 200 * kUs, 1000 * kUs, 150 * kUs, 190 * kUs, 1);
  Frame(t, "numpy/resize.py(40): resize", 1100 * kUs, 6100 * kUs);
  Frame(t, "numpy/resize.py(80): interpolate", 1200 * kUs, 5200 * kUs);
  Frame(t, "model.py(10): forward", 6150 * kUs, 6300 * kUs);
  Launch(t, "relu", 6300 * kUs, 7000 * kUs, 6250 * kUs, 6290 * kUs, 2);
  Frame(t, "post.py(5): decode", 7100 * kUs, 9900 * kUs);
  return t;
}

TEST(HostCauses, CpuPreprocessingMidStepIsHostComputeAndTheTailIsPost) {
  Trace t = PreprocessingMidStep();
  const Analysis a = Analyze(t);
  ASSERT_EQ(a.iterations.iterations.size(), 1u);
  const Iteration& it = a.iterations.iterations[0];
  ExpectCausesSumToIdle(a);
  // host_compute: the resize block (5 ms) and the decode block (2.8 ms).
  EXPECT_EQ(it.idle_cause_ns[C(IdleCause::kHostCompute)], 7800 * kUs);
  // The rest of the 8.5 ms of GPU-idle time is on the way to a launch: lead-in 0.2 ms, [1.0, 1.1),
  // [6.1, 6.3), and the tail's [7.0, 7.1) + [9.9, 10.0).
  EXPECT_EQ(it.idle_cause_ns[C(IdleCause::kHostLaunch)], 700 * kUs);
  // The decode after the last GPU work is the post phase; the resize, mid-step, stays idle.
  EXPECT_EQ(it.post_from_host_ns, 2800 * kUs);
  EXPECT_EQ(it.pre_from_host_ns, 0);
  EXPECT_EQ(it.phase_ns[static_cast<size_t>(Phase::kPost)], 2800 * kUs);
  EXPECT_EQ(a.idle.idle_phase_ns[C(IdleCause::kHostCompute)], 5000 * kUs);
  // The largest interval names the frames inside it, with their overlap.
  ASSERT_FALSE(a.idle.largest.empty());
  const IdleGap& g = a.idle.largest[0].gap;
  EXPECT_EQ(g.start_ns, 1000 * kUs);
  EXPECT_EQ(g.duration_ns, 5300 * kUs);
  EXPECT_EQ(g.cause, IdleCause::kHostCompute);
  EXPECT_EQ(g.frame, "resize.py: resize");
  ASSERT_FALSE(g.host_frames.empty());
  EXPECT_EQ(g.host_frames[0].path, "main.py: <module> > resize.py: resize");
  EXPECT_EQ(g.host_frames[0].ns, 5000 * kUs);
  bool inner = false;
  for (const GapFrame& f : g.host_frames)
    if (f.path == "resize.py: resize > resize.py: interpolate") inner = f.ns == 4000 * kUs;
  EXPECT_TRUE(inner);
  // host_bound names the frame and gives the compute strategy, not a CUDA graph.
  const Finding* f = FindingOf(a, "host_bound");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->summary.find("host_compute"), std::string::npos) << f->summary;
  ASSERT_FALSE(f->involved.empty());
  EXPECT_EQ(f->involved[0].name, "main.py: <module> > resize.py: resize");
  for (const std::string& s : f->strategies) EXPECT_EQ(s.find("CUDA graph"), std::string::npos) << s;
  EXPECT_EQ(FindingOf(a, "launch_bound"), nullptr);
}

// The lead-in: 3 ms of Triton compilation before the first kernel's launch.
TEST(HostCauses, TritonCompileBeforeTheFirstKernelIsJitCompile) {
  Trace t;
  AddRange(t, "ProfilerStep#1", 0, 5 * kMs);
  Frame(t, "main.py(1): <module>", 0, 5 * kMs);
  Frame(t, "triton/runtime/jit.py(500): run", 400 * kUs, 3700 * kUs);
  Frame(t, "triton/compiler/compiler.py(200): compile", 500 * kUs, 3500 * kUs);
  AddApi(t, "cuLaunchKernel", 3600 * kUs, 3610 * kUs, 1, 100, 100, ApiKind::kDriver);
  AddKernel(t, "triton_poi_fused_add_0", 3650 * kUs, 5 * kMs, 0, 7, 1);
  const Analysis a = Analyze(t);
  ExpectCausesSumToIdle(a);
  const Iteration& it = a.iterations.iterations[0];
  EXPECT_EQ(it.idle_cause_ns[C(IdleCause::kJitCompile)], 3000 * kUs);
  EXPECT_EQ(it.idle_cause_ns[C(IdleCause::kHostLaunch)], 650 * kUs);
  EXPECT_EQ(a.idle.largest.at(0).gap.cause, IdleCause::kJitCompile);
  const Finding* f = FindingOf(a, "host_bound");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->summary.find("jit_compile"), std::string::npos);
}

// A synchronous copy blocks the host for 4 ms while the device has nothing to do.
TEST(HostCauses, ASynchronousCopyThatBlocksIsHostSync) {
  Trace t;
  AddRange(t, "ProfilerStep#1", 0, 6 * kMs);
  Frame(t, "main.py(1): <module>", 0, 6 * kMs);
  Launch(t, "gemm", 100 * kUs, 500 * kUs, 60 * kUs, 90 * kUs, 1);
  Frame(t, "aten::copy_", 600 * kUs, 5 * kMs, "cpu_op");
  AddApi(t, "hipMemcpyWithStream", 700 * kUs, 4990 * kUs, 2);
  AddCopy(t, CopyKind::kDtoH, 1 << 20, 4900 * kUs, 4980 * kUs, MemKind::kDevice, MemKind::kPageable, 0, 7, 2);
  const Analysis a = Analyze(t);
  ExpectCausesSumToIdle(a);
  const Iteration& it = a.iterations.iterations[0];
  // [0.7, 4.9) before the copy ran, and [4.98, 4.99) after it, until the call returned.
  EXPECT_EQ(it.idle_cause_ns[C(IdleCause::kHostSync)], 4210 * kUs);
  const IdleGap& g = a.idle.largest.at(0).gap;
  EXPECT_EQ(g.cause, IdleCause::kHostSync);
  EXPECT_EQ(g.frame, "hipMemcpyWithStream");
  // The device-level gap says the same.
  EXPECT_EQ(a.summary.devices.at(0).idle_causes.gaps[C(IdleCause::kHostSync)], 1u);
  const Finding* f = FindingOf(a, "host_bound");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(FindingOf(a, "launch_bound"), nullptr);
}

// Work queued before the trace: every kernel starts 5 ms after its launch returned, on a device
// with no recorded work. Not idle: no idle finding claims it, and data quality warns.
TEST(HostCauses, ABacklogFromBeforeTheTraceIsNotIdle) {
  Trace t;
  AddRange(t, "execute_32", 0, 7120 * kUs);
  Frame(t, "main.py(1): <module>", 0, 8 * kMs);
  AddApi(t, "hipGraphLaunch", 100 * kUs, 120 * kUs, 1);
  for (int k = 0; k < 20; ++k)
    AddKernel(t, "graph_kernel", (5120 + 100 * k) * kUs, (5120 + 100 * k + 100) * kUs, 0, 7, 1);
  FinalizeTrace(t);
  AnalysisConfig config;
  config.iterations.iteration_regex = "^execute_";
  Analysis a;
  ASSERT_TRUE(RunAnalysis(t, config, &a).ok());
  ExpectCausesSumToIdle(a);
  const Iteration& it = a.iterations.iterations.at(0);
  EXPECT_EQ(it.idle_cause_ns[C(IdleCause::kDeviceBacklog)], 5000 * kUs);  // [0.12, 5.12)
  EXPECT_EQ(it.idle_cause_ns[C(IdleCause::kHostLaunch)], 120 * kUs);      // [0, 0.12)
  EXPECT_EQ(a.idle.backlog_items, 1u);
  EXPECT_EQ(a.idle.backlog_max_lag_ns, 5000 * kUs);
  for (const QualityEntry& q : a.summary.quality)
    if (q.id == Quality::kDeviceBacklog) {
      EXPECT_EQ(q.count, 1u);
    }
  // 5.12 ms of the 7.12 ms step is GPU-idle, but only 0.12 ms of it is claimable.
  EXPECT_EQ(FindingOf(a, "idle_gaps"), nullptr);
  EXPECT_EQ(FindingOf(a, "launch_bound"), nullptr);
  EXPECT_EQ(a.idle.largest.at(0).gap.cause, IdleCause::kDeviceBacklog);
  EXPECT_EQ(a.idle.largest.at(0).gap.lag_ns, 5000 * kUs);
}

// 20 launches captured into a graph run nothing; two kernels execute. One line, no idle finding.
TEST(HostCauses, ACaptureTraceSaysSoAndMakesNoIdleFinding) {
  Trace t;
  Frame(t, "main.py(1): <module>", 0, 10 * kMs);
  Launch(t, "fill", 100 * kUs, 110 * kUs, 50 * kUs, 60 * kUs, 1);
  AddApi(t, "cudaStreamBeginCapture", 1 * kMs, 1010 * kUs, 2);
  for (int k = 0; k < 20; ++k) AddApi(t, "cudaLaunchKernel", (1100 + 100 * k) * kUs, (1110 + 100 * k) * kUs, 10 + k);
  AddApi(t, "cudaStreamEndCapture", 5 * kMs, 5010 * kUs, 3);
  Launch(t, "gather", 9 * kMs, 9100 * kUs, 8900 * kUs, 8910 * kUs, 4);
  const Analysis a = Analyze(t);
  ExpectCausesSumToIdle(a);
  EXPECT_TRUE(a.idle.capture_trace);
  EXPECT_EQ(a.idle.captured_launches, 20u);
  EXPECT_NE(a.idle.capture_note.find("20 launches made while a stream captured"), std::string::npos)
      << a.idle.capture_note;
  const Iteration& it = a.iterations.iterations.at(0);
  EXPECT_EQ(it.idle_cause_ns[C(IdleCause::kGraphCapture)], 4010 * kUs);  // [1.0, 5.01)
  for (const char* id : {"idle_gaps", "launch_bound", "host_bound", "sync_in_loop"})
    EXPECT_EQ(FindingOf(a, id), nullptr) << id;
  const nlohmann::json doc = AnalysisToJson(t, a, AnalysisConfig{});
  EXPECT_EQ(doc["graph_capture"], a.idle.capture_note);
}

// Between two requests the thread is outside every Python frame for 30 ms: host_idle.
TEST(HostCauses, AHostThatIdlesBetweenRequestsIsHostIdle) {
  Trace t;
  AddRange(t, "step 1", 0, 40 * kMs);
  Frame(t, "server.py(10): handle", 0, 5 * kMs);
  Launch(t, "gemm", 1 * kMs, 4 * kMs, 500 * kUs, 510 * kUs, 1);
  Frame(t, "server.py(10): handle", 35 * kMs, 40 * kMs);
  Launch(t, "gemm", 36 * kMs, 39 * kMs, 35500 * kUs, 35510 * kUs, 2);
  const Analysis a = Analyze(t);
  ExpectCausesSumToIdle(a);
  const Iteration& it = a.iterations.iterations.at(0);
  EXPECT_EQ(it.idle_cause_ns[C(IdleCause::kHostIdle)], 30 * kMs);  // [5, 35)
  EXPECT_EQ(a.idle.largest.at(0).gap.cause, IdleCause::kHostIdle);
  const Finding* f = FindingOf(a, "host_bound");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->summary.find("host_idle"), std::string::npos);
}

// Eager, launch-bound: 200 short kernels, each launched inside aten::addmm under the model's
// forward, with a 5 us aten::empty before each launch. Every idle microsecond is host_launch.
TEST(HostCauses, ATrulyLaunchBoundLoopStaysHostLaunch) {
  Trace t;
  AddRange(t, "ProfilerStep#1", 0, 10 * kMs);
  Frame(t, "model.py(10): forward", 0, 10 * kMs);
  for (int k = 0; k < 200; ++k) {
    const TimeNs base = k * 50 * kUs;
    Frame(t, "aten::addmm", base + 5 * kUs, base + 45 * kUs, "cpu_op");
    Frame(t, "aten::empty", base + 10 * kUs, base + 15 * kUs, "cpu_op");
    Launch(t, "gemv", base + 30 * kUs, base + 36 * kUs, base + 20 * kUs, base + 28 * kUs, 1 + k);
  }
  const Analysis a = Analyze(t);
  ExpectCausesSumToIdle(a);
  const Iteration& it = a.iterations.iterations.at(0);
  const TimeNs idle = it.latency_ns() - it.gpu_busy_ns;
  EXPECT_EQ(it.idle_cause_ns[C(IdleCause::kHostLaunch)], idle);
  const Finding* f = FindingOf(a, "launch_bound");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(FindingOf(a, "host_bound"), nullptr);
  const Finding* g = FindingOf(a, "idle_gaps");
  ASSERT_NE(g, nullptr);
  EXPECT_NE(g->strategies.at(0).find("CUDA graph"), std::string::npos) << g->strategies.at(0);
}

// A named pre range still wins: host compute inside it is host_stage, and pre stays named.
TEST(HostCauses, NamedPreRangesWinOverHostCompute) {
  Trace t = PreprocessingMidStep();
  AddRange(t, "preprocess", 20 * kUs, 180 * kUs);
  const Analysis a = Analyze(t);
  ExpectCausesSumToIdle(a);
  const Iteration& it = a.iterations.iterations[0];
  EXPECT_EQ(it.idle_cause_ns[C(IdleCause::kHostStage)], 160 * kUs);
  EXPECT_EQ(it.phase_ns[static_cast<size_t>(Phase::kPre)], 160 * kUs);
}

// Random Python frames nested up to 4 deep on thread (100, tid), each with calls (launched or not)
// and child frames, written as a profiler writes them (a frame after its children). A child
// starts `lead` to `lead + spread - 1` after its parent (from 0: some start together).
struct RandomFrames {
  std::mt19937& rng;
  Trace& t;
  std::vector<uint8_t>& launched;
  TimeNs now = 0;
  int64_t corr = 1;

  void Frame(int depth, int64_t tid, TimeNs lead, TimeNs spread) {
    const TimeNs start = now;
    now += lead + static_cast<TimeNs>(rng() % static_cast<uint32_t>(spread));
    const int children = depth < 4 ? static_cast<int>(rng() % 4) : 0;
    for (int c = 0; c < children; ++c) {
      if (rng() % 3 == 0) {
        AddApi(t, rng() % 4 == 0 ? "cudaMemcpy" : "cudaLaunchKernel", now, now + 5 + static_cast<TimeNs>(rng() % 20),
               corr++, 100, tid);
        launched.push_back(rng() % 2 == 0);
        now = t.api_calls.end.back() + static_cast<TimeNs>(rng() % 10);
      } else {
        Frame(depth + 1, tid, lead, spread);
      }
      now += static_cast<TimeNs>(rng() % 30);
    }
    now += 1 + static_cast<TimeNs>(rng() % 50);
    Range r;
    r.start = start;
    r.end = now;
    r.name = t.strings.Intern(depth == 0 ? "main.py(1): step" : "lib.py(" + std::to_string(depth) + "): f");
    r.domain = t.strings.Intern("python_function");
    r.pid = 100;
    r.tid = tid;
    t.ranges.Add(r);
  }
  // `tops` top-level frames with empty stretches between them, on thread 100, or in turn on
  // threads 1 and 2.
  void Frames(int tops, bool two_threads, TimeNs lead, TimeNs spread) {
    for (int top = 0; top < tops; ++top) {
      Frame(0, two_threads ? 1 + top % 2 : 100, lead, spread);
      now += static_cast<TimeNs>(rng() % 400);
    }
  }
};

// A split that starts its search where the last one stopped (the idle walks pass a hint) gives
// the same pieces as one that searches the whole thread, in time order and in any order, on a
// random nesting of frames, calls and empty stretches.
TEST(HostModelSplit, AHintChangesNothing) {
  std::mt19937 rng(17);
  Trace t;
  std::vector<uint8_t> launched;
  RandomFrames gen{rng, t, launched};
  gen.Frames(200, false, 1, 50);
  const TimeNs now = gen.now;
  FinalizeTrace(t);
  const internal::HostModel model(t, launched, internal::HostModelOptions{100});
  ASSERT_FALSE(model.empty());
  std::vector<std::pair<TimeNs, TimeNs>> intervals;
  for (TimeNs a = -10; a < now + 10; a += 1 + static_cast<TimeNs>(rng() % 200))
    intervals.emplace_back(a, a + 1 + static_cast<TimeNs>(rng() % 300));
  auto pieces = [&](TimeNs a, TimeNs b, internal::HostModel::Hint* hint) {
    std::vector<std::tuple<TimeNs, TimeNs, int, uint32_t>> out;
    model.Split(
        0, a, b,
        [&](const internal::HostPiece& p) { out.emplace_back(p.start, p.end, static_cast<int>(p.state), p.frame); },
        hint);
    return out;
  };
  for (bool shuffled : {false, true}) {
    if (shuffled) std::shuffle(intervals.begin(), intervals.end(), rng);
    internal::HostModel::Hint hint;
    for (const auto& [a, b] : intervals) ASSERT_EQ(pieces(a, b, &hint), pieces(a, b, nullptr)) << a << " " << b;
  }
}

// A frame's name against every pattern, searched for plainly (the list host_model.h documents):
// names that hold one, names that hold one but for one character, and names without '/', '.' or
// ' ' (which the model does not search for the patterns that hold them).
TEST(HostModelNames, FramesThatCompileOrWait) {
  const std::vector<std::string> jit = {"_dynamo/convert_frame.py", "_inductor/compile_fx.py",
                                        "_inductor/codecache.py",   "_inductor/async_compile.py",
                                        "_inductor/graph.py",       "_functorch/aot_autograd.py",
                                        "triton/compiler/",         "triton/backends/",
                                        "utils/cpp_extension.py",   "nvrtc"};
  const std::vector<std::string> wait = {
      "threading.py",           "queue.py",        "selectors.py", "method sleep", "time.sleep",
      "select.select",          "select.poll",     "select.epoll", "socket.py",    "multiprocessing/connection.py",
      "asyncio/base_events.py", "asyncio/tasks.py"};
  auto has_any = [](const std::string& n, const std::vector<std::string>& parts) {
    return std::any_of(parts.begin(), parts.end(),
                       [&](const std::string& p) { return n.find(p) != std::string::npos; });
  };
  std::vector<std::string> names = {"execute_37_context_0(sq0sk0)_generation_37(sq37sk1042)",
                                    "",
                                    "nvrtc",
                                    "aten::mm",
                                    "ProfilerStep#3",
                                    "threading.py(1): _bootstrap",
                                    "x/y.z w"};
  for (const std::vector<std::string>* list : {&jit, &wait})
    for (const std::string& p : *list) {
      names.push_back(p);
      names.push_back("/usr/lib/python3/" + p + "(12): run");
      for (size_t k = 0; k < p.size(); ++k) names.push_back(p.substr(0, k) + "_" + p.substr(k + 1));  // one char off
    }
  for (const std::string& n : names) {
    const internal::FrameKind kind = internal::ClassifyFrameName(n);
    EXPECT_EQ(kind.jit, has_any(n, jit)) << n;
    EXPECT_EQ(kind.wait, has_any(n, wait) && n.find("_bootstrap") == std::string::npos) << n;
  }
}

// The ranges' nesting order that FinalizeTrace leaves in the trace (Trace::range_order) only
// spares the host model a sort: built from it, without it, from a reversed one (a permutation in
// the wrong order) and from one that names a row twice, the model gives the same pieces, on
// frames that a profiler writes after their children, some with equal starts, on two threads.
TEST(HostModelBuild, TheRangeOrderIsOnlyAHint) {
  std::mt19937 rng(23);
  Trace t;
  std::vector<uint8_t> launched;
  RandomFrames gen{rng, t, launched};
  gen.Frames(300, true, 0, 3);  // a child may start with its parent
  const TimeNs now = gen.now;
  FinalizeTrace(t);
  ASSERT_EQ(t.range_order.size(), t.ranges.size());
  auto pieces = [&](const Trace& trace) {
    const internal::HostModel model(trace, launched, internal::HostModelOptions{100});
    std::vector<std::tuple<int, TimeNs, TimeNs, int, uint32_t>> out;
    for (int64_t tid : {1, 2}) {
      const int32_t thread = model.ThreadOf(100, tid);
      EXPECT_NE(thread, internal::HostModel::kNoThread);
      for (TimeNs a = -10; a < now + 10; a += 97)
        model.Split(thread, a, a + 150, [&](const internal::HostPiece& p) {
          out.emplace_back(thread, p.start, p.end, static_cast<int>(p.state), p.frame);
        });
    }
    return out;
  };
  const auto want = pieces(t);
  ASSERT_GT(want.size(), 100u);
  const std::vector<uint32_t> nested = t.range_order;
  t.range_order.clear();
  EXPECT_EQ(pieces(t), want);
  t.range_order.assign(nested.rbegin(), nested.rend());
  EXPECT_EQ(pieces(t), want);
  t.range_order = nested;
  t.range_order[1] = t.range_order[0];
  EXPECT_EQ(pieces(t), want);
}

// Many threads, their times interleaved: with 3, 300 and 70,000 threads (past 255 and 65,535,
// where a narrower index per event would wrap), each with a frame around a launch, and frames on
// a thread with no call (which the model leaves out), a thread's pieces are those of a model of
// that thread alone.
TEST(HostModelBuild, EveryThreadCountPlacesEachEventInItsThread) {
  for (const int threads : {3, 300, 70000}) {
    auto add_thread = [](Trace& t, std::vector<uint8_t>& launched, int k) {
      const int64_t tid = 1000 + k;
      const TimeNs base = (k % 7) * 13;
      AddRange(t, "main.py(1): step", base, base + 100, 100, tid);
      AddRange(t, "lib.py(2): f", base + 10, base + 60, 100, tid);
      AddApi(t, "cudaLaunchKernel", base + 20, base + 30, 1 + k, 100, tid);
      launched.push_back(1);
    };
    Trace all;
    std::vector<uint8_t> launched;
    for (int k = 0; k < threads; ++k) add_thread(all, launched, k);
    AddRange(all, "other.py(3): g", 5, 50, 100, 999);  // a thread with no call
    FinalizeTrace(all);
    const internal::HostModel model(all, launched, internal::HostModelOptions{100});
    auto pieces = [](const internal::HostModel& m, int64_t tid) {
      std::vector<std::tuple<TimeNs, TimeNs, int, std::string>> out;
      const int32_t thread = m.ThreadOf(100, tid);
      EXPECT_NE(thread, internal::HostModel::kNoThread) << tid;
      if (thread == internal::HostModel::kNoThread) return out;
      m.Split(thread, -10, 300, [&](const internal::HostPiece& p) {
        out.emplace_back(p.start, p.end, static_cast<int>(p.state),
                         p.frame == internal::HostModel::kNoEvent ? "" : std::string(m.EventName(p.frame)));
      });
      return out;
    };
    EXPECT_EQ(model.ThreadOf(100, 999), internal::HostModel::kNoThread);
    for (const int k : {0, threads / 2, threads - 1}) {
      Trace one;
      std::vector<uint8_t> one_launched;
      add_thread(one, one_launched, k);
      FinalizeTrace(one);
      const internal::HostModel alone(one, one_launched, internal::HostModelOptions{100});
      const auto want = pieces(alone, 1000 + k);
      ASSERT_GE(want.size(), 3u) << threads << " " << k;
      EXPECT_EQ(pieces(model, 1000 + k), want) << threads << " threads, thread " << k;
    }
  }
}

// A long thread's walk in two parts on two cores gives the model one walk gives, wherever the
// middle falls: under a frame open across it (its events take their parents from the earlier
// part once it is walked), with a capture open across it, and with a name that is a frame's in
// one part and a call's in the other (both walked again from the earlier part's state).
TEST(HostModelBuild, AWalkInTwoPartsIsTheWalkInOne) {
  for (int variant = 0; variant < 3; ++variant) {
    std::mt19937 rng(31 + variant);
    Trace t;
    std::vector<uint8_t> launched;
    RandomFrames gen{rng, t, launched};
    gen.Frames(120, false, 1, 20);
    const TimeNs now = gen.now;
    const int64_t tid = 100;
    testing::AddRangeIn(t, "python_function", "main.py(0): <module>", -5, now + 5);  // open across any middle
    if (variant == 1) {  // a capture from a quarter to three quarters, with a launch inside
      AddApi(t, "cudaStreamBeginCapture", now / 4, now / 4 + 3, 900001, 100, tid);
      AddApi(t, "cudaLaunchKernel", now / 2, now / 2 + 2, 900002, 100, tid);
      AddApi(t, "cudaStreamEndCapture", now * 3 / 4, now * 3 / 4 + 3, 900003, 100, tid);
      launched.insert(launched.end(), {0, 0, 0});
    }
    if (variant == 2) {  // a frame early whose name the calls late have: the name is a frame's
      testing::AddRangeIn(t, "python_function", "cudaStreamBeginCapture", 7, 9);
      AddApi(t, "cudaStreamBeginCapture", now - 300, now - 290, 900004, 100, tid);
      AddApi(t, "cudaStreamEndCapture", now - 20, now - 10, 900005, 100, tid);
      launched.insert(launched.end(), {0, 0});
    }
    FinalizeTrace(t);
    auto model_of = [&](uint32_t split_walk_events) {
      internal::HostModelOptions options{100};
      options.split_walk_events = split_walk_events;
      return internal::HostModel(t, launched, options);
    };
    auto observe = [&](const internal::HostModel& model) {
      std::vector<std::tuple<TimeNs, TimeNs, int, uint32_t>> pieces;
      std::vector<std::string> frames;
      const int32_t thread = model.ThreadOf(100, tid);
      EXPECT_NE(thread, internal::HostModel::kNoThread);
      for (TimeNs a = -10; a < now + 10; a += 61) {
        model.Split(thread, a, a + 90, [&](const internal::HostPiece& p) {
          pieces.emplace_back(p.start, p.end, static_cast<int>(p.state), p.frame);
        });
        for (const internal::HostFrame& f : model.Frames(thread, a, a + 90, 4)) frames.push_back(f.path + "|" + f.name);
      }
      return std::make_tuple(pieces, frames, model.captured_launches(), model.capture_regions(), model.capture_name());
    };
    const auto want = observe(model_of(UINT32_MAX));
    ASSERT_GT(std::get<0>(want).size(), 200u);
    if (variant == 1) {
      EXPECT_GE(std::get<2>(want), 1u) << "the launches inside the capture";
    }
    EXPECT_EQ(std::get<3>(want), variant == 1 ? 1u : 0u);
    for (uint32_t parts : {2u, 50u, 333u, 1000u}) EXPECT_EQ(observe(model_of(parts)), want) << variant << " " << parts;
  }
}
}  // namespace
}  // namespace tg
