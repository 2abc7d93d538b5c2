// One call that runs every analysis behind `tracegate analyze`: the summary, iterations and
// phases, kernel classes, roofline, fusion candidates and the pattern matrix's findings.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tracegate/analyzer/communication.h"
#include "tracegate/analyzer/critical_path.h"
#include "tracegate/analyzer/findings.h"
#include "tracegate/analyzer/fusion.h"
#include "tracegate/analyzer/gpu_specs.h"
#include "tracegate/analyzer/graph_capture.h"
#include "tracegate/analyzer/iteration_idle.h"
#include "tracegate/analyzer/iterations.h"
#include "tracegate/analyzer/kernel_class.h"
#include "tracegate/analyzer/op_links.h"
#include "tracegate/analyzer/roofline.h"
#include "tracegate/analyzer/rules.h"
#include "tracegate/analyzer/serving.h"
#include "tracegate/analyzer/summary.h"

namespace tg {

struct AnalysisConfig {
  AnalyzeOptions summary;
  IterationOptions iterations;
  RulesConfig rules;
  std::vector<KernelCost> costs;
  PeakOverride peak;                      // CLI overrides; rules.json "gpu" fills it when unset
  std::string model, precision;           // tags carried into the report
  std::string commit;                     // the run's source revision ("" = unknown)
  std::string commit_reason;              // why commit is "" (report key commit_reason)
  std::optional<ReferenceRun> reference;  // int8_no_gain
  // --critical-path: compute Analysis::critical_path. Off by default: on the 10^6-event file it
  // adds 4-6% to the analyze time and takes the peak memory to 0.31x the file (docs/PERFORMANCE.md).
  bool critical_path = false;
  // --replay-findings: each finding's gain, and the combined estimate's, as the what-if replay
  // predicts it (Finding::replay, ReplayFindingGains). Off by default: one replay pass per
  // replayable finding (docs/PERFORMANCE.md).
  bool replay_findings = false;
  // The idle findings' claims (idle_gaps, launch_bound, sync_in_loop, host_bound) given their
  // instants (LocateIdleClaims) once the combined estimate is made, and kept in Analysis::findings
  // (predict --finding replays them). replay_findings locates them for its replays and drops them
  // again, so its report shows the claims as a run without it. Off by default: it keeps every
  // idle piece of the iterations until the findings are made.
  bool locate_idle_claims = false;
  // --capture: the graphs of capture traces (ExtractCapturedGraphs), to trace this trace's graph
  // replays back to the ops that launched their kernels (graph_capture.h).
  std::vector<CapturedGraph> captured_graphs;
};

struct Analysis {
  Summary summary;
  IterationAnalysis iterations;
  IterationIdle idle;                       // every GPU-idle instant of the kept iterations by cause (iteration_idle.h)
  std::vector<KernelClass> kernel_classes;  // per kernel row: by the launching op, then by name
  OpLinks ops;                              // the host op that launched each GPU row (LinkOps)
  PeakRates peak;
  std::vector<RooflineItem> roofline;
  std::vector<FusionCandidate> fusion;
  CommunicationAnalysis communication;  // collectives and the rank's communication figures
  std::vector<Finding> findings;
  CombinedEstimate combined;  // the findings' gains over disjoint parts (RelateFindings)
  ServingAnalysis serving;    // LLM serving steps by kind and token bucket, graph replays (serving.h)
  CriticalPathResult critical_path;  // the kept iterations' critical path by kind (critical_path.h), when asked
  GraphCaptureMapping graph_ops;     // graph-replayed kernels matched to captured ops, when captures were given
  BusyOverview overview;             // each device's busy time over the whole window, binned (summary.h)
};

// InvalidInput for bad options (regexes, --skip, kernel class patterns).
Status RunAnalysis(const Trace& trace, const AnalysisConfig& config, Analysis* out);

}  // namespace tg
