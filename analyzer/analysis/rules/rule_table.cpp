// The rule table: every rule's definition and the function that evaluates it, in the order
// docs/RULES.md lists them and EvaluateRules (the rules of one trace) and EvaluateJobRules (the
// rules across ranks, after them) run them. docs/RULES.md has a section per row;
// tests/unit/rules/findings_test.cpp checks that it has one for every rule, in this order, with these
// priorities, parameters, defaults and sources.
#include <algorithm>
#include <string_view>

#include "analyzer/analysis/rules/rule_helpers.h"
#include "tracegate/analyzer/findings.h"
#include "tracegate/analyzer/rules.h"

namespace tg {

const char* PriorityName(Priority p) {
  switch (p) {
    case Priority::kHigh: return "high";
    case Priority::kMedium: return "medium";
    case Priority::kLow: return "low";
  }
  return "medium";
}

namespace {

using namespace internal;

// One rule per block, aligned by hand. A rule that reads the roofline or the peak rates
// (FindingsInput::roofline, ::peak) goes at or before memory_bound: RunAnalysis may run the rules
// after it on a thread that has neither yet (RuleSubset::kAfterRoofline).
// clang-format off
constexpr RuleDef kRules[] = {
  {"idle_gaps", "Device idle between GPU work", Priority::kHigh,
   "idle_ratio: share of the iteration in the idle phase (no GPU work of the iteration, no pre/post stage)",
   {{"threshold", 0.10, "fires when idle_ratio (less device_backlog and graph_capture time) > threshold (ratio)"},
    {"assumed_speedup", 2.0, "S assumed for the idle time (CUDA graphs / prefetch remove about half)"},
    {"backlog_us", 1000.0, "device_backlog: queued work starting this long after its launch returned, on an idle "
                           "device, shows work the trace does not hold (us)"}},
   {"Follow the largest cause: its strategy comes first, and the largest gaps name the host frames in them"},
   "pattern matrix: device idle > 10% of the window", EvaluateIdleGaps},
  {"launch_bound", "Launch-bound: many short kernels with gaps between them", Priority::kHigh,
   "share of the iteration's kernels shorter than short_kernel_us, with idle_ratio above idle_threshold",
   {{"short_kernel_us", 10.0, "a kernel shorter than this is below typical launch overhead (us)"},
    {"min_short_share", 0.5, "fires when at least this share of kernels is short (ratio)"},
    {"min_kernels_per_iteration", 20.0, "and the iteration launches at least this many kernels"},
    {"idle_threshold", 0.10, "and idle_ratio exceeds this (ratio)"},
    {"assumed_speedup", 2.0, "S assumed for the idle time (CUDA graphs batch the launches)"}},
   {"Capture the loop in a CUDA graph (torch.cuda.graphs, torch.compile mode='reduce-overhead')",
    "Fuse the short kernels; raise the batch size so each kernel does more work",
    "Move launch work off the critical Python thread"},
   "timeline signs (many gaps); pattern matrix (merge small kernels, CUDA graphs)", EvaluateLaunchBound},
  {"h2d_bound", "Host-to-device copies take a large share", Priority::kHigh,
   "h2d_ms_ratio: share of the iteration in the h2d phase",
   {{"threshold", 0.20, "fires when h2d_ms_ratio > threshold (ratio)"},
    {"assumed_speedup", 2.0, "S assumed for copy time (pinned memory and merged, async copies)"}},
   {"Merge small copies into one", "Use pinned (page-locked) host memory and cudaMemcpyAsync",
    "Overlap copies with compute on a second stream", "Move preprocessing to the device so less data crosses PCIe"},
   "pattern matrix: H2D > 20%", EvaluateH2dBound},
  {"throttling", "Clocks fall as temperature rises", Priority::kHigh,
   "relative drop of the SM clock across samples and its correlation with temperature",
   {{"clock_drop", 0.10, "fires when (max - min) SM clock / max clock >= this (ratio)"},
    {"min_r", 0.5, "and Pearson r(temperature, SM clock) <= -min_r"},
    {"min_samples", 5.0, "samples of one device needed"}},
   {"Check cooling and airflow; watch nvidia-smi -q -d PERFORMANCE for thermal slowdown",
    "Lock application clocks for benchmarks (nvidia-smi -lgc) so runs compare",
    "Warm the GPU up before timing; shorten very long runs or add pauses"},
   "time decomposition: long runs checked for thermal throttling", EvaluateThrottling},
  {"memory_bound", "Memory-bound kernels", Priority::kMedium,
   "share of the iteration in kernels below the roofline ridge at high bandwidth (or, without costs, "
   "element-wise / normalisation / transform kernels by launching op, else by name)",
   {{"min_share", 0.05, "fires when those kernels take at least this share of the iteration (ratio)"},
    {"bandwidth_share", 0.5, "with costs: achieved bandwidth at least this share of peak (ratio)"},
    {"heuristic_min_share", 0.10, "without costs: likely-memory-bound kernels' share needed (ratio)"},
    {"assumed_speedup", 1.3, "S assumed for those kernels (less traffic by fusion or layout)"}},
   {"Fuse element-wise work into the producer's epilogue to remove intermediate reads and writes",
    "Change the layout (channels-last / NHWC) or tile so data is reused from cache",
    "Use lower precision (FP16/BF16) to halve the bytes moved"},
   "pattern matrix; roofline", EvaluateMemoryBound},
  {"single_stream", "All GPU work on one stream while copies could overlap", Priority::kMedium,
   "share of the iteration in copies that overlap no kernel, when each device uses one stream",
   {{"threshold", 0.05, "fires when serial copies take at least this share of the iteration (ratio)"}},
   {"Issue copies on a second stream with pinned memory and overlap them with compute",
    "Pipeline: copy batch n+1 while batch n computes", "Run independent branches on separate streams"},
   "pattern matrix: streams used = 1 while independent work exists", EvaluateSingleStream},
  {"pageable_copies", "Copies from pageable host memory", Priority::kMedium,
   "share of the iteration in copies whose host side is pageable",
   {{"threshold", 0.02, "fires when pageable copies take at least this share of the iteration (ratio)"},
    {"assumed_speedup", 2.0, "S assumed for those copies (pinned memory is about twice as fast and can be async)"}},
   {"Allocate host buffers pinned (cudaMallocHost, tensor.pin_memory(), DataLoader(pin_memory=True))",
    "Then copy asynchronously (non_blocking=True) so the copy can overlap compute"},
   "pattern matrix: H2D remedies (pinned memory)", EvaluatePageableCopies},
  {"small_copies", "Many small copies: merge candidates", Priority::kMedium,
   "small copies (under --small-copy-bytes) per iteration in one direction",
   {{"min_per_iteration", 3.0, "fires when a direction has at least this many small copies per iteration"},
    {"min_share", 0.005, "and they take at least this share of the iteration (ratio)"}},
   {"Pack the small tensors into one buffer and copy it once",
    "Keep constant inputs on the device instead of copying them every iteration"},
   "timeline signs (many small copies): merge them", EvaluateSmallCopies},
  {"sync_in_loop", "Synchronisation inside the loop", Priority::kMedium,
   "device or stream synchronisations per iteration",
   {{"max_per_iteration", 1.0, "fires when syncs per iteration exceed this"},
    {"min_wait_share", 0.01, "and the host waits in them at least this share of the iteration (ratio)"},
    {"assumed_speedup", 2.0, "S assumed for the time spent waiting in syncs"}},
   {"Remove cudaDeviceSynchronize / torch.cuda.synchronize / .item() / .cpu() from the loop body",
    "Synchronise once per iteration, on an event, only where the host needs the result"},
   "timeline signs (sync / wait track: high share of waiting)", EvaluateSyncInLoop},
  {"host_bound", "The GPU waits for host work that launches nothing", Priority::kHigh,
   "host_work_ratio: share of the iterations' time the GPU has no work while the launching thread computes "
   "(host_compute), compiles (jit_compile), blocks (host_sync) or does nothing (host_idle)",
   {{"threshold", 0.10, "fires when host_work_ratio > threshold (ratio)"},
    {"compute_block_us", 100.0, "host_compute: a launch-free block at least this long (us); shorter ones are "
                                "launch overhead (host_launch)"},
    {"assumed_speedup", 2.0, "S assumed for that host time (moved to the device or overlapped with GPU work)"}},
   {"Profile the frames named below on the CPU (py-spy, perf): the GPU waits for what they do"},
   "time decomposition: T_pre and T_post; what the host does between kernels", EvaluateHostBound},
  {"communication", "Collective communication on the critical path", Priority::kHigh,
   "collective_wall_ratio: share of the iteration's wall time in collective (NCCL/RCCL) kernels; "
   "communication_idle_ratio: share of the iteration idle in gaps next to a collective",
   {{"min_share", 0.20, "fires when collective_wall_ratio >= min_share (ratio)"},
    {"min_idle_share", 0.05, "or when communication_idle_ratio >= min_idle_share (ratio)"}},
   {"Overlap communication with compute: bucket gradients (DDP bucket_cap_mb) so all-reduce starts while "
    "the backward pass still runs",
    "Issue collectives asynchronously on their own stream (async_op=True, a dedicated NCCL stream) and wait "
    "only where the result is needed",
    "Check for a straggling rank: gaps before a collective are often time spent waiting for a slower peer"},
   "timeline signs (communication gaps); comm/compute overlap", EvaluateCommunication},
  {"slow_post", "Slow post-processing", Priority::kMedium,
   "post_ms_ratio: share of the iteration in the post phase",
   {{"threshold", 0.25, "fires when post_ms_ratio > threshold (ratio)"},
    {"assumed_speedup", 2.0, "S assumed for post-processing (parallel or on the device)"}},
   {"Parallelise post-processing or overlap it with the next iteration",
    "Move it to the device (GPU NMS, top-k, decode)"},
   "pattern matrix: post > 25%", EvaluateSlowPost},
  {"unstable", "Unstable latency", Priority::kMedium,
   "latency_cv = std / mean of iteration latency",
   {{"threshold", 0.15, "fires when latency_cv > threshold"},
    {"min_iterations", 3.0, "iterations needed"}},
   {"Fix seeds, inputs and clocks; close other GPU work; warm up (--skip the first iterations)",
    "Look at the slowest iterations' timelines: what runs there that does not run in the median one"},
   "time decomposition: CV > 0.15 means unstable", EvaluateUnstable},
  {"drift", "Latency drifts up across the run", Priority::kMedium,
   "rise of the least-squares latency trend over the run, relative to mean latency",
   {{"threshold", 0.05, "fires when slope x (n - 1) / mean > threshold (ratio)"},
    {"min_r", 0.5, "and the trend's Pearson r >= min_r"},
    {"min_iterations", 10.0, "iterations needed"}},
   {"Look for memory growth (allocator, caches, lists kept across iterations)",
    "Check clocks and temperature (throttling)"},
   "time decomposition: drift over long runs", EvaluateDrift},
  {"transform_kernels", "Layout and copy kernels", Priority::kLow,
   "share of kernel time in transpose / permute / concat / split / layout-conversion / copy kernels",
   {{"threshold", 0.10, "fires when their share of kernel time >= threshold (ratio)"},
    {"assumed_speedup", 2.0, "S assumed for those kernels (half of them removed)"}},
   {"Keep one layout end to end (channels-last) so conversions disappear",
    "Fuse transposes into the consumer (transpose + matmul) and avoid concat by writing into one buffer",
    "Align channels to multiples of 16/32"},
   "layout hints", EvaluateTransformKernels},
  {"int8_no_gain", "INT8 without a gain", Priority::kLow,
   "latency gain of this INT8 run over a higher-precision reference report (--reference)",
   {{"threshold", 0.10, "fires when reference / this - 1 < threshold (ratio)"},
    {"expected_speedup", 1.5, "the speedup INT8 should reach (low end of the 1.5-2.2x precision tier)"}},
   {"Recalibrate; check that the heavy layers really run in INT8 (look for dequantize/quantize kernels)",
    "Use mixed precision: INT8 where it pays, FP16 elsewhere"},
   "pattern matrix: INT8 vs FP16/FP32 < 10%; precision tiers", EvaluateInt8NoGain},
  {"fusion_candidate", "Fusion candidate", Priority::kLow,
   "chains of element-wise / normalisation / activation kernels following a kernel on one stream",
   {{"max_gap_us", 10.0, "a follower starts at most this long after its predecessor (us)"},
    {"follower_residual", 0.25, "share of the followers' time a fused kernel still spends (ratio)"},
    {"min_share", 0.01, "report a chain when it takes at least this share of the iteration (ratio)"},
    {"top", 5.0, "chains reported at most"}},
   {"Fuse the chain into the head kernel's epilogue (cuDNN fused conv-bias-add-relu, cuBLASLt epilogues)",
    "Let a compiler fuse it (torch.compile, TensorRT, XLA); fold batch-norm into the conv weights"},
   "operator fusion; Amdahl", EvaluateFusionCandidate},
  // Across the ranks of a job (EvaluateJobRules): evaluated when the job is reduced.
  {"straggler", "A rank arrives last at collectives and the others wait for it", Priority::kMedium,
   "last_arrival_share: share of the shared collectives the latest-arriving rank reaches after every other rank; "
   "lateness_share: its arrival after the next-latest rank per iteration, over the job's latency",
   {{"min_last_share", 0.5, "fires when last_arrival_share >= min_last_share (ratio)"},
    {"min_share", 0.01, "and lateness_share >= min_share (ratio)"}},
   {"Find what delays the late rank before its collectives: more compute (see compute_imbalance), "
    "its input pipeline or host-side stalls",
    "Rebalance the work (layers, micro-batches, sequence lengths) across the ranks",
    "Check the late rank's host and GPU: CPU contention, clocks or temperature, another GPU model"},
   "aligned arrivals at matched collectives; Amdahl", nullptr, EvaluateStraggler},
  {"compute_imbalance", "Compute is imbalanced across ranks", Priority::kMedium,
   "compute_imbalance_ratio: the most compute per iteration of a rank over the ranks' mean, minus 1",
   {{"threshold", 0.10, "fires when compute_imbalance_ratio >= threshold (ratio)"}},
   {"Split layers, experts or sequences so that each rank computes the same",
    "Look for work only this rank does (logging, evaluation, a larger shard)"},
   "each rank's compute_ms; Amdahl", nullptr, EvaluateComputeImbalance},
  {"comm_exposed", "Communication is not hidden behind compute", Priority::kMedium,
   "hideable_comm_share: min(exposed communication, compute) of the slowest rank per device, over the job's latency",
   {{"min_share", 0.05, "fires when hideable_comm_share >= min_share (ratio)"},
    {"top_ranks", 3.0, "ranks with the most exposed communication listed at most"},
    {"top_collectives", 3.0, "collectives with the most time listed at most"}},
   {"Overlap communication with compute: bucket gradients (DDP bucket_cap_mb) or prefetch parameters (FSDP "
    "forward/backward prefetch) so each collective starts while compute still runs",
    "Use fewer, larger collectives (larger buckets, coalesced calls)",
    "Run collectives on their own stream (async_op=True, a dedicated NCCL stream) so compute and communication "
    "run together, and wait only where the result is needed"},
   "comm/compute overlap across ranks; the communication rule's bound", nullptr, EvaluateCommExposed},
};
// clang-format on

// The rules of one trace come first, those across ranks after them.
constexpr size_t TraceRules() {
  size_t n = 0;
  while (n < std::size(kRules) && !kRules[n].across_ranks()) ++n;
  return n;
}

// RuleSubset splits the rules of one trace into fusion_candidate and the rest. Findings tie on
// priority and overall speedup in rule order (OrderFindings is stable), so the fusion findings
// evaluated apart come out where they would in one run only if fusion_candidate is the last rule
// of one trace.
constexpr bool FusionOnlyInLastRow() {
  const size_t last = TraceRules() - 1;
  for (size_t i = 0; i < std::size(kRules); ++i)
    if ((kRules[i].evaluate == EvaluateFusionCandidate) != (i == last)) return false;
  return std::string_view(kRules[last].id) == "fusion_candidate";
}
static_assert(FusionOnlyInLastRow(), "fusion_candidate must be the last rule of one trace (see RuleSubset)");

// Where kAfterRoofline begins: the rule after memory_bound, the one rule that reads the roofline
// and the peak rates (FindingsInput::roofline, ::peak; see RuleSubset).
constexpr size_t AfterRoofline() {
  for (size_t i = 0; i < TraceRules(); ++i)
    if (kRules[i].evaluate == EvaluateMemoryBound) return i + 1;
  return TraceRules();
}
static_assert(AfterRoofline() < TraceRules(), "memory_bound must be a rule of one trace (see RuleSubset)");

// A rules file names rules by id, and a finding's id picks its report entries: ids are unique,
// and every row has one evaluate function (of one trace, or across ranks after every rule of one
// trace), parameters and strategies.
constexpr bool RowsComplete() {
  for (size_t i = 0; i < std::size(kRules); ++i) {
    if (!kRules[i].evaluate == !kRules[i].evaluate_job) return false;
    if (kRules[i].across_ranks() != (i >= TraceRules())) return false;
    if (kRules[i].params.size() == 0 || kRules[i].strategies.size() == 0) return false;
    for (size_t j = 0; j < i; ++j)
      if (std::string_view(kRules[i].id) == kRules[j].id) return false;
  }
  return true;
}
static_assert(RowsComplete(), "every rule needs a unique id, one evaluate function, parameters and strategies");

// comm_exposed appends the collective with the most time to its second strategy.
constexpr bool CommExposedHasTwoStrategies() {
  for (const RuleDef& d : kRules)
    if (d.evaluate_job == EvaluateCommExposed) return d.strategies.size() >= 2;
  return false;
}
static_assert(CommExposedHasTwoStrategies(), "comm_exposed's second strategy is the one it completes");

}  // namespace

std::span<const RuleDef> RuleDefs() { return kRules; }

const RuleDef* FindRule(std::string_view id) {
  for (const RuleDef& d : kRules)
    if (id == d.id) return &d;
  return nullptr;
}

// Priorities derive from the predicted gain (DerivePriority), so within the same evidence a
// higher priority never predicts less; ties on priority go by gain.
void OrderFindings(std::vector<Finding>& findings) {
  std::stable_sort(findings.begin(), findings.end(), [](const Finding& a, const Finding& b) {
    if (a.priority != b.priority) return a.priority < b.priority;
    return a.amdahl.overall > b.amdahl.overall;
  });
}

std::vector<Finding> EvaluateRules(const FindingsInput& in, const RulesConfig& rules, RuleSubset subset) {
  std::vector<Finding> out;
  if (!in.trace || !in.iterations || in.iterations->iterations.empty()) return out;
  const internal::RuleContext c(in, rules);
  for (size_t position = 0; position < std::size(kRules); ++position) {
    const RuleDef& rule = kRules[position];
    if (rule.across_ranks()) continue;
    const bool fusion = rule.evaluate == internal::EvaluateFusionCandidate;
    const bool after_roofline = position >= AfterRoofline();
    bool run = true;
    switch (subset) {
      case RuleSubset::kAll: break;
      case RuleSubset::kAllButFusion: run = !fusion; break;
      case RuleSubset::kFusionOnly: run = fusion; break;
      case RuleSubset::kUpToRoofline: run = !after_roofline; break;
      case RuleSubset::kAfterRoofline: run = after_roofline && !fusion; break;
    }
    if (!run || !rules.Enabled(rule.id)) continue;
    const size_t first = out.size();
    rule.evaluate(c, rule, out);
    for (size_t i = first; i < out.size(); ++i) {
      if (out[i].claim.empty()) internal::DefaultClaim(c, out[i]);
      // The table's priority is the rule's default; the gain and the evidence decide.
      out[i].priority = DerivePriority(rule.priority, out[i]);
    }
  }
  OrderFindings(out);
  return out;
}

std::vector<Finding> EvaluateJobRules(const JobRulesInput& in, const RulesConfig& rules) {
  std::vector<Finding> out;
  if (!in.cross || !in.latency_ms || !(*in.latency_ms > 0)) return out;  // P is a share of it
  const internal::JobRuleContext c(in, rules);
  for (const RuleDef& rule : kRules) {
    if (!rule.across_ranks() || !rules.Enabled(rule.id)) continue;
    const size_t first = out.size();
    rule.evaluate_job(c, rule, out);
    // A rule across ranks states its claim or claims the run as a whole (no DefaultClaim: that
    // reads one trace's iterations).
    for (size_t i = first; i < out.size(); ++i) out[i].priority = DerivePriority(rule.priority, out[i]);
  }
  OrderFindings(out);
  return out;
}

}  // namespace tg
