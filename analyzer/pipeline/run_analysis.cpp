// RunAnalysis: the pipeline behind `tracegate analyze`, in dependency order.
#include "tracegate/analyzer/analysis.h"

#include <atomic>
#include <chrono>
#include <exception>
#include <functional>
#include <future>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "analyzer/analysis/correlation.h"
#include "analyzer/analysis/host_stages.h"
#include "analyzer/analysis/iteration_idle_internal.h"
#include "analyzer/analysis/name_matcher.h"
#include "analyzer/host/host_model.h"
#include "analyzer/util/help_board.h"
#include "analyzer/util/side_task.h"
#include "tracegate/analyzer/finding_replay.h"

namespace tg {

using internal::ApiIndex;
using internal::HostStages;
using internal::SideTask;

namespace {

FusionOptions FusionFromRules(const RulesConfig& rules) {
  FusionOptions f;
  f.max_gap_ns = static_cast<TimeNs>(rules.Get("fusion_candidate", "max_gap_us") * 1000);
  f.follower_residual = rules.Get("fusion_candidate", "follower_residual");
  f.top = static_cast<size_t>(rules.Get("fusion_candidate", "top"));
  return f;
}

// The report's timeline draws the median iteration: its whole path is kept for the drawing.
CriticalPathOptions PathOptions(const IterationAnalysis& iterations, const std::vector<uint32_t>& kernels_by_start) {
  CriticalPathOptions o;
  o.detail_iteration = MedianIterationPosition(iterations);
  o.kernels_by_start = &kernels_by_start;
  return o;
}

}  // namespace

Status RunAnalysis(const Trace& trace, const AnalysisConfig& config, Analysis* out) {
  *out = Analysis{};
  if (config.rules.Get("fusion_candidate", "follower_residual") > 1)
    return InvalidInput("rule 'fusion_candidate': 'follower_residual' must be between 0 and 1");
  internal::WarmRegexLocale();
  // The idle causes' thresholds are rule parameters (docs/RULES.md, "Idle causes").
  AnalyzeOptions summary_options = config.summary;
  summary_options.compute_block_ns = static_cast<TimeNs>(config.rules.Get("host_bound", "compute_block_us") * 1000);
  summary_options.backlog_ns = static_cast<TimeNs>(config.rules.Get("idle_gaps", "backlog_us") * 1000);
  KernelClassifier classifier;
  TG_RETURN_IF_ERROR(KernelClassifier::Create(config.rules.kernel_class_patterns, &classifier));
  // A second thread builds the API correlation index, which the iterations need once their
  // markers are found, then the timeline summary, which does not depend on the iterations until
  // its devices' gaps are attributed (both threads only read the trace).
  std::optional<ApiIndex> api_index;
  std::vector<KernelClass> kernel_classes;
  OpLinks op_links;
  GraphCaptureMapping graph_ops;
  std::optional<internal::HostModel> host;  // what each host thread did when (host_model.h)
  uint64_t before_launch = 0;
  std::promise<void> index_built;
  std::shared_future<void> index_ready = index_built.get_future().share();
  // The host model is built by whichever thread asks first: the summary's, when its sweep is
  // done before the iterations are found (it needs the model for the devices' gaps), or this
  // one once they are; the other waits.
  // The model takes the second core for its larger steps only while the other thread waits for it
  // too, or has nothing left to do: otherwise the two would share that core with no gain.
  std::once_flag host_once;
  std::atomic<int> asking_for_host{0};
  std::atomic<bool> summary_done{false};
  const HostSource host_source = [&]() -> const internal::HostModel* {
    ++asking_for_host;
    std::call_once(host_once, [&] {
      index_ready.get();
      internal::HostModelOptions options{summary_options.compute_block_ns};
      options.spare_core = [&] { return asking_for_host.load() >= 2 || summary_done.load(); };
      host.emplace(trace, internal::LaunchedCalls(trace, *api_index, &before_launch), std::move(options));
    });
    --asking_for_host;
    return &*host;
  };
  Status iterations;
  // The pre/post stage ranges tell a host busy pre/post-processing (host_stage) from one slow to
  // launch (host_launch); their expressions are compiled here, before the second thread starts
  // (host_stages.h says why), and AnalyzeIterations reports an invalid one.
  HostStages stages(trace, config.iterations);
  // The summary's gaps inside the kept iterations (DeviceSummary::in_iterations) wait, after the
  // sweep, for the iterations' spans: set below in every case, so the summary never waits forever.
  std::vector<std::pair<TimeNs, TimeNs>> spans;
  std::promise<const std::vector<std::pair<TimeNs, TimeNs>>*> spans_set;
  std::shared_future<const std::vector<std::pair<TimeNs, TimeNs>>*> spans_ready = spans_set.get_future().share();
  // When no thread can be had, SideTask runs the summary right here, before the iterations: then
  // there are no spans to wait for (the rules fall back to the whole trace's gaps).
  const std::thread::id main_thread = std::this_thread::get_id();
  const SpanSource span_source = [&]() -> const std::vector<std::pair<TimeNs, TimeNs>>* {
    return std::this_thread::get_id() == main_thread ? nullptr : spans_ready.get();
  };
  // The summary says when its busy union and kernels by start are final (before it attributes the
  // devices' gaps): this thread then attributes the iterations' idle time while it goes on.
  // The kernel classes (and the op links' launch flags) are final once the summary's thread has
  // classified the kernels: the fusion candidates read nothing else of that thread's.
  std::promise<void> classes_built;
  std::shared_future<void> classes_ready = classes_built.get_future().share();
  bool classes_published = false;  // the summary's thread only
  std::promise<void> busy_built;
  std::shared_future<void> busy_ready = busy_built.get_future().share();
  bool busy_published = false;  // the summary's thread only
  const std::function<void()> busy_known = [&] {
    busy_published = true;
    busy_built.set_value();
  };
  // Where the summary's thread posts the devices' gaps in chunks, for this thread to take a share
  // of once its own attribution is done (closed when that thread is done).
  internal::HelpBoard board;
  // The fusion candidates read the iterations' kernel rows, the kernel classes and the launch
  // flags, nothing the summary or the idle attribution write: they are found here while this
  // thread would wait for the summary's busy union (a kernel-dense trace: its statistics come
  // first), else on the side thread after the summary, as before. The same list either way.
  const bool fusion_enabled = config.rules.Enabled("fusion_candidate");
  FusionOptions fusion_options = FusionFromRules(config.rules);
  bool fusion_found = false;
  const auto find_fusion = [&](const std::vector<KernelClass>& classes, const std::vector<uint8_t>& launch_found) {
    if (fusion_found) return;
    fusion_options.launch_found = &launch_found;
    out->fusion = FindFusionCandidates(trace, out->iterations, classes, fusion_options);
    fusion_found = true;
  };
  const bool locate_idle = config.replay_findings || config.locate_idle_claims;
  std::vector<IdlePiece> idle_pieces;  // for LocateIdleClaims
  // What the second thread does after building the correlation index.
  const auto summary_work = [&] {
    stages.Collect();
    // The idle causes ask the kernel classes which kernels are collectives; the classes ask
    // the op that launched each kernel first.
    op_links = LinkOps(trace, *api_index);
    // Graph-replayed kernels take the op that launched them when the graph was captured.
    if (!config.captured_graphs.empty())
      graph_ops = MapGraphKernels(trace, *api_index, config.captured_graphs, &op_links);
    kernel_classes = ClassifyKernels(trace, classifier, &op_links.kernels, &op_links.extra_names);
    std::vector<StringId>().swap(op_links.api);  // the GPU rows have theirs (4 bytes a call)
    classes_published = true;
    classes_built.set_value();
    SummarizeInto(trace, summary_options, &*api_index, &stages, &kernel_classes, &span_source, &host_source,
                  &busy_known, &out->summary, &board);
  };
  {
    SideTask summary([&] {
      const internal::CloseOnExit close_board(&board);
      try {
        try {
          api_index.emplace(trace.api_calls);
        } catch (...) {
          index_built.set_exception(std::current_exception());
          throw;
        }
        index_built.set_value();
        summary_work();
        summary_done = true;
      } catch (...) {
        if (!classes_published) classes_built.set_exception(std::current_exception());
        if (!busy_published) busy_built.set_exception(std::current_exception());
        throw;
      }
    });
    try {
      iterations = AnalyzeIterations(
          trace, config.iterations,
          [&]() -> const ApiIndex& {
            index_ready.get();  // rethrows what building it threw
            return *api_index;
          },
          &out->iterations);
    } catch (...) {
      spans_set.set_value(nullptr);
      throw;
    }
    if (iterations.ok())
      for (const Iteration& it : out->iterations.iterations) spans.emplace_back(it.start, it.end);
    spans_set.set_value(iterations.ok() ? &spans : nullptr);
    if (iterations.ok()) {
      host_source();
      // Every GPU-idle instant of the kept iterations to a cause, while the summary attributes
      // the devices' gaps; host compute around the GPU work becomes pre / post where no range
      // names them (the named stages are split there, so the finder reads no stages). It reads
      // the summary's busy union and kernels by start, and writes only the iterations' phases
      // and causes (which the summary does not read: it has the spans above).
      if (fusion_enabled && busy_ready.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
        classes_ready.get();  // rethrows what the summary's thread threw before
        find_fusion(kernel_classes, op_links.kernel_launch_found);
      }
      busy_ready.get();  // rethrows what the summary's thread threw before
      const internal::IdleCauseFinder finder(trace, *api_index, nullptr, kernel_classes, host_source(),
                                             summary_options);
      out->idle = internal::AttributeIterationIdle(trace, out->summary, finder, &out->iterations,
                                                   locate_idle ? &idle_pieces : nullptr);
    }
    // Then chunks of the devices' gaps, while the summary's thread attributes them.
    board.HelpUntilClosed();
    summary.Wait();
  }
  if (!iterations.ok()) return iterations;
  if (!config.captured_graphs.empty() && graph_ops.launches == 0)
    return InvalidInput(
        "--capture: the trace has no graph launch (cudaGraphLaunch, hipGraphLaunch) that ran kernels; "
        "give the trace of the graphs' replay, and the capture traces with --capture (docs/SERVING.md)");
  out->graph_ops = std::move(graph_ops);
  out->kernel_classes = std::move(kernel_classes);
  out->ops = std::move(op_links);
  // Fusion candidates (unless found above) on a second thread while the roofline and the other
  // rules are worked out here (only fusion_candidate reads them), and that rule right after them
  // there. The communication figures (read by the report only) are found by whichever thread is
  // free first: that one after the fusion rule, or this one after the rules. Both read the
  // iterations' spans and kernels (the idle attribution above wrote only their phases and causes).
  // The critical path (only when asked, AnalysisConfig::critical_path; with no kept iteration
  // there is none) runs on whichever thread is free first after that: the side thread once the
  // fusion candidates and the communication figures are found, or this one after the rules. It reads
  // the iterations' spans and rows (which the idle attribution leaves alone), the kernel
  // classes, the correlation index, the kernels by start and the host model (built once, by
  // either thread).
  // The rules after the roofline's (RuleSubset::kAfterRoofline: they read neither the roofline nor
  // the peak rates) are evaluated by whichever thread is free first: the side thread after the
  // fusion rule, or this one after the rules up to the roofline's.
  std::vector<Finding> after_roofline;
  std::atomic<bool> after_roofline_taken{false};
  auto find_after_roofline = [&](const FindingsInput& input) {
    if (after_roofline_taken.exchange(true)) return;
    after_roofline = EvaluateRules(input, config.rules, RuleSubset::kAfterRoofline);
  };
  std::atomic<bool> communication_taken{false};
  auto find_communication = [&] {
    if (communication_taken.exchange(true)) return;
    out->communication =
        AnalyzeCommunication(trace, out->iterations, out->kernel_classes, out->summary.kernels_by_start);
  };
  Status critical_path;
  std::atomic<bool> path_taken{!config.critical_path || out->iterations.iterations.empty()};
  auto find_path = [&] {
    if (path_taken.exchange(true)) return;
    critical_path =
        AnalyzeCriticalPath(trace, out->iterations, out->kernel_classes, &*api_index, host_source(),
                            PathOptions(out->iterations, out->summary.kernels_by_start), &out->critical_path);
  };
  // The fusion rule reads its candidates, the iterations, the summary's busy union and kernels by
  // start, never the roofline or the peak rates this thread works out meanwhile (its input leaves
  // them out). Its findings join the others' below, in the order they had when it ran here.
  FindingsInput in;  // the roofline and the peak rates are set below, once this thread has them
  in.trace = &trace;
  in.summary = &out->summary;
  in.iterations = &out->iterations;
  in.kernel_classes = &out->kernel_classes;
  in.idle = &out->idle;
  in.fusion = &out->fusion;
  in.small_copy_bytes = config.summary.small_copy_bytes;
  in.precision = config.precision;
  in.reference = config.reference;
  const FindingsInput fusion_in = in;
  std::vector<Finding> fusion_findings;
  SideTask fusion_task([&] {
    if (fusion_enabled) {
      find_fusion(out->kernel_classes, out->ops.kernel_launch_found);
      fusion_findings = EvaluateRules(fusion_in, config.rules, RuleSubset::kFusionOnly);
    }
    find_after_roofline(fusion_in);
    find_communication();
    find_path();
  });
  out->serving = AnalyzeServing(trace, out->iterations, *api_index);
  if (!config.critical_path) host.reset();                                  // nothing below reads it then
  if (!config.critical_path && !config.replay_findings) api_index.reset();  // nor this
  for (QualityEntry& q : out->summary.quality) {
    if (q.id == Quality::kDeviceBacklog) q.count = out->idle.backlog_items;
    if (q.id == Quality::kStartBeforeLaunch) q.count = before_launch;
  }

  PeakOverride peak = config.peak;
  if (peak.bandwidth_gbs <= 0) peak.bandwidth_gbs = config.rules.peak_bandwidth_gbs;
  if (peak.tflops <= 0) peak.tflops = config.rules.peak_tflops;
  out->peak = ResolvePeakRates(trace, peak);

  std::vector<uint8_t> kept(trace.kernels.size());
  for (size_t i = 0; i < kept.size(); ++i) kept[i] = out->iterations.kernel_iteration[i] >= 0;
  out->roofline = BuildRoofline(trace, config.costs, out->peak, kept);

  in.roofline = &out->roofline;
  in.peak = &out->peak;
  out->findings = EvaluateRules(in, config.rules, RuleSubset::kUpToRoofline);
  find_after_roofline(in);
  find_communication();
  find_path();
  fusion_task.Wait();
  // The critical path read them until now (the findings' replays below read the index).
  host.reset();
  if (!config.replay_findings) api_index.reset();
  TG_RETURN_IF_ERROR(critical_path);
  // What the summary kept for the rules (summary.h): no report reads it, only the overview's bins.
  out->overview = BinBusy(out->summary, spans, kOverviewBins);
  std::vector<uint32_t>().swap(out->summary.kernels_by_start);
  std::vector<std::pair<TimeNs, TimeNs>>().swap(out->summary.gpu_busy_merged);
  for (DeviceSummary& d : out->summary.devices) std::vector<std::pair<TimeNs, TimeNs>>().swap(d.busy);
  // In rule order (RuleSubset says why OrderFindings then gives one run's order).
  for (std::vector<Finding>* part : {&after_roofline, &fusion_findings})
    out->findings.insert(out->findings.end(), std::make_move_iterator(part->begin()),
                         std::make_move_iterator(part->end()));
  OrderFindings(out->findings);
  out->combined = RelateFindings(out->findings);
  // The idle findings' instants, for the replay (the combined estimate above took them as
  // unlocated, as a run without the replay does: the same figures either way).
  std::vector<std::pair<size_t, size_t>> located;
  if (locate_idle) {
    located = LocateIdleClaims(idle_pieces, &out->findings);
    std::vector<IdlePiece>().swap(idle_pieces);
  }
  // Each finding's gain as the replay predicts it (Amdahl's is its bound), when asked.
  if (config.replay_findings && !out->iterations.iterations.empty())
    TG_RETURN_IF_ERROR(ReplayFindingGains(trace, out->iterations, &*api_index, &out->findings, &out->combined));
  // The report shows the claims as the rules make them (unlocated) unless the caller keeps them.
  if (!config.locate_idle_claims)
    for (const auto& [f, k] : located)
      std::vector<std::pair<TimeNs, TimeNs>>().swap(out->findings[f].claim[k].intervals);
  return Status::Ok();
}

}  // namespace tg
