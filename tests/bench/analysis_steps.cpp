// tracegate-analysis-steps FILE [RUNS]: what each step of RunAnalysis costs on one trace, run one
// after the other on one thread in RunAnalysis's order (analyzer/pipeline/run_analysis.cpp: keep
// the two in step). For each step: its best wall time of RUNS (default 5), and the heap it holds
// at its peak and after it (every operator new / delete of the process counted here), each also
// per kernel row. The load itself is measured the same way. This is where docs/PERFORMANCE.md's
// per-kernel cost table of the kernel-dense shape comes from.
#include <malloc.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/analysis/correlation.h"
#include "analyzer/analysis/host_stages.h"
#include "analyzer/analysis/iteration_idle_internal.h"
#include "analyzer/host/host_model.h"
#include "tracegate/analyzer/analysis.h"
#include "tracegate/analyzer/import.h"
#include "tracegate/analyzer/kernel_class.h"
#include "tracegate/reports/api.h"

namespace {

std::atomic<long long> g_live{0}, g_peak{0};

void Count(void* p) {
  if (!p) return;
  const long long now = g_live.fetch_add(static_cast<long long>(malloc_usable_size(p))) +
                        static_cast<long long>(malloc_usable_size(p));
  long long peak = g_peak.load();
  while (now > peak && !g_peak.compare_exchange_weak(peak, now)) {
  }
}

}  // namespace

void* operator new(size_t n) {
  void* p = std::malloc(n ? n : 1);
  if (!p) throw std::bad_alloc();
  Count(p);
  return p;
}
void* operator new[](size_t n) { return operator new(n); }
void operator delete(void* p) noexcept {
  if (!p) return;
  g_live.fetch_sub(static_cast<long long>(malloc_usable_size(p)));
  std::free(p);
}
void operator delete[](void* p) noexcept { operator delete(p); }
void operator delete(void* p, size_t) noexcept { operator delete(p); }
void operator delete[](void* p, size_t) noexcept { operator delete(p); }

namespace {

struct Row {
  const char* step;
  double best_s = 1e30;
  long long peak = 0, held = 0;  // bytes over the live heap before the step
};

double g_kernels = 1;

// Runs `reset` (unmeasured: drops what the step's last run kept) then `step`, `runs` times.
void Measure(std::vector<Row>& rows, const char* name, int runs, const std::function<void()>& reset,
             const std::function<void()>& step) {
  Row r{name};
  for (int i = 0; i < runs; ++i) {
    reset();
    const long long before = g_live.load();
    g_peak.store(before);
    const auto t0 = std::chrono::steady_clock::now();
    step();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    r.best_s = std::min(r.best_s, s);
    r.peak = g_peak.load() - before;
    r.held = g_live.load() - before;
  }
  rows.push_back(r);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs("usage: tracegate-analysis-steps TRACE [RUNS]\n", stderr);
    return 2;
  }
  const int runs = argc > 2 ? std::atoi(argv[2]) : 5;
  std::vector<Row> rows;
  tg::Trace trace;
  bool ok = true;
  Measure(
      rows, "load (ImportTrace; held = the model)", 1, [&] { trace = tg::Trace{}; },
      [&] { ok = tg::ImportTrace(argv[1], &trace).ok(); });
  if (!ok) {
    std::fprintf(stderr, "%s: cannot import\n", argv[1]);
    return 2;
  }
  g_kernels = static_cast<double>(std::max<size_t>(1, trace.kernels.size()));
  tg::AnalysisSettings settings;
  settings.commit = "none";
  tg::AnalysisConfig config;
  if (!tg::ToAnalysisConfig(settings, &config).ok()) return 2;
  tg::KernelClassifier classifier;
  if (!tg::KernelClassifier::Create(config.rules.kernel_class_patterns, &classifier).ok()) return 2;
  tg::Analysis out;
  std::optional<tg::internal::ApiIndex> api;
  Measure(rows, "ApiIndex (correlation index)", runs, [&] { api.reset(); }, [&] { api.emplace(trace.api_calls); });
  tg::internal::HostStages stages(trace, config.iterations);
  Measure(rows, "HostStages::Collect", runs, [] {}, [&] { stages.Collect(); });
  Measure(
      rows, "LinkOps (the op behind each launch)", runs, [&] { out.ops = tg::OpLinks{}; },
      [&] { out.ops = tg::LinkOps(trace, *api); });
  Measure(
      rows, "ClassifyKernels (by op, then name)", runs,
      [&] {
        out.kernel_classes.clear();
        out.kernel_classes.shrink_to_fit();
      },
      [&] { out.kernel_classes = tg::ClassifyKernels(trace, classifier, &out.ops.kernels); });
  // RunAnalysis drops the per-call ops here: the GPU rows have theirs.
  Measure(
      rows, "LinkOps' per-call ops released", 1, [] {}, [&] { std::vector<tg::StringId>().swap(out.ops.api); });
  tg::AnalyzeOptions summary_options = config.summary;
  summary_options.compute_block_ns = static_cast<tg::TimeNs>(config.rules.Get("host_bound", "compute_block_us") * 1000);
  summary_options.backlog_ns = static_cast<tg::TimeNs>(config.rules.Get("idle_gaps", "backlog_us") * 1000);
  std::optional<tg::internal::HostModel> host;
  uint64_t before_launch = 0;
  Measure(
      rows, "LaunchedCalls + HostModel (host threads' nesting)", runs, [&] { host.reset(); },
      [&] {
        host.emplace(trace, tg::internal::LaunchedCalls(trace, *api, &before_launch),
                     tg::internal::HostModelOptions{summary_options.compute_block_ns});
      });
  Measure(
      rows, "AnalyzeIterations (assignment, phases)", runs, [&] { out.iterations = tg::IterationAnalysis{}; },
      [&] {
        ok = tg::AnalyzeIterations(
                 trace, config.iterations, [&]() -> const tg::internal::ApiIndex& { return *api; }, &out.iterations)
                 .ok();
      });
  std::vector<std::pair<tg::TimeNs, tg::TimeNs>> spans;
  for (const tg::Iteration& it : out.iterations.iterations) spans.emplace_back(it.start, it.end);
  const tg::SpanSource span_source = [&]() { return &spans; };
  const tg::HostSource host_source = [&]() -> const tg::internal::HostModel* { return &*host; };
  Measure(
      rows, "Summarize (timelines, devices' idle causes, kernel table)", runs, [&] { out.summary = tg::Summary{}; },
      [&] {
        out.summary =
            tg::Summarize(trace, summary_options, &*api, &stages, &out.kernel_classes, &span_source, &host_source);
      });
  // Attributing moves host compute into the iterations' phases: each run starts from the same
  // iterations.
  const tg::IterationAnalysis found = out.iterations;
  Measure(
      rows, "AttributeIterationIdle (every idle instant's cause)", runs, [&] { out.iterations = found; },
      [&] {
        const tg::internal::IdleCauseFinder finder(trace, *api, nullptr, out.kernel_classes, &*host, summary_options);
        out.idle = tg::internal::AttributeIterationIdle(trace, out.summary, finder, &out.iterations, nullptr, SIZE_MAX);
      });
  Measure(
      rows, "HostModel released", 1, [] {}, [&] { host.reset(); });
  Measure(rows, "ApiIndex released", 1, [] {}, [&] { api.reset(); });
  tg::FusionOptions fusion;
  fusion.max_gap_ns = static_cast<tg::TimeNs>(config.rules.Get("fusion_candidate", "max_gap_us") * 1000);
  fusion.follower_residual = config.rules.Get("fusion_candidate", "follower_residual");
  fusion.top = static_cast<size_t>(config.rules.Get("fusion_candidate", "top"));
  Measure(rows, "FindFusionCandidates", runs, [&] { out.fusion = {}; }, [&] {
    out.fusion = tg::FindFusionCandidates(trace, out.iterations, out.kernel_classes, fusion);
  });
  Measure(rows, "AnalyzeCommunication", runs, [&] { out.communication = tg::CommunicationAnalysis{}; }, [&] {
    out.communication = tg::AnalyzeCommunication(trace, out.iterations, out.kernel_classes, out.summary.kernels_by_start);
  });
  tg::PeakOverride peak = config.peak;
  if (peak.bandwidth_gbs <= 0) peak.bandwidth_gbs = config.rules.peak_bandwidth_gbs;
  if (peak.tflops <= 0) peak.tflops = config.rules.peak_tflops;
  out.peak = tg::ResolvePeakRates(trace, peak);
  Measure(rows, "kept mask + BuildRoofline", runs, [&] { out.roofline = {}; }, [&] {
    std::vector<uint8_t> kept(trace.kernels.size());
    for (size_t i = 0; i < kept.size(); ++i) kept[i] = out.iterations.kernel_iteration[i] >= 0;
    out.roofline = tg::BuildRoofline(trace, config.costs, out.peak, kept);
  });
  tg::FindingsInput in;
  in.trace = &trace;
  in.summary = &out.summary;
  in.iterations = &out.iterations;
  in.kernel_classes = &out.kernel_classes;
  in.idle = &out.idle;
  in.roofline = &out.roofline;
  in.peak = &out.peak;
  in.fusion = &out.fusion;
  in.small_copy_bytes = config.summary.small_copy_bytes;
  Measure(rows, "EvaluateRules (every rule, claims)", runs, [&] { out.findings = {}; }, [&] {
    out.findings = tg::EvaluateRules(in, config.rules, tg::RuleSubset::kAllButFusion);
    std::vector<tg::Finding> f = tg::EvaluateRules(in, config.rules, tg::RuleSubset::kFusionOnly);
    out.findings.insert(out.findings.end(), f.begin(), f.end());
    tg::OrderFindings(out.findings);
  });
  Measure(rows, "RelateFindings (overlaps, combined estimate)", runs, [&] { out.combined = {}; }, [&] { out.combined = tg::RelateFindings(out.findings); });

  std::printf("%s: %zu kernels, %zu copies, %zu memsets, %zu runtime calls, %zu ranges, %zu iterations, %zu names\n",
              argv[1], trace.kernels.size(), trace.memcpys.size(), trace.memsets.size(), trace.api_calls.size(),
              trace.ranges.size(), out.iterations.iterations.size(), trace.strings.size());
  std::printf("| step (one thread, best of %d) | time | ns / kernel | heap at its peak | B / kernel | held after | B / kernel |\n", runs);
  std::printf("| --- | --- | --- | --- | --- | --- | --- |\n");
  for (const Row& r : rows)
    std::printf("| %s | %.1f ms | %.1f | %.1f MiB | %.1f | %.1f MiB | %.1f |\n", r.step, r.best_s * 1e3,
                r.best_s * 1e9 / g_kernels, static_cast<double>(r.peak) / 1048576, static_cast<double>(r.peak) / g_kernels,
                static_cast<double>(r.held) / 1048576, static_cast<double>(r.held) / g_kernels);
  return ok ? 0 : 1;
}
