// Comparing two reports (schema tracegate.report/v1): what changed, whether it is noise, and the
// gate's verdict. Computing (CompareReports) is kept apart from printing (JSON, Markdown, JUnit).
//
// Verdict, for the base (baseline) and new report:
//   cannot_judge  a side is not a tracegate.report/v1 object; a side's avg_latency_ms is missing,
//                 null or not positive; both sides name their devices and the names differ (unless
//                 allow_device_mismatch); a side has an error-level data-quality counter
//                 (data_quality.has_errors, or a counter with severity "error" and count > 0);
//                 with require_significance, the latency is over the limit but the Mann-Whitney
//                 test cannot run (fewer than 2 latency samples on a side); lost data on a side:
//                 malformed_event over max_malformed_pct % of the rows read (counts{} plus the
//                 dropped rows), or no kernels / memcpys / runtime+driver calls where the other
//                 side has some (compare_lost.cpp).
//   regression    new avg_latency_ms > base avg_latency_ms x (1 + threshold_pct / 100), and, with
//                 require_significance, the Mann-Whitney p-value on latency_samples_ms < alpha;
//                 or, with kernel_threshold_pct, a kernel family present on both sides whose GPU
//                 time per iteration changed beyond noise and grew by more than that percentage.
//   pass          otherwise.
// Serving reports (both with serving.steps > 0; docs/SERVING.md, "The serving gate"): the steps are
// compared per group (kind x power-of-two token bucket), ms per token with a bootstrap interval;
// a group regresses when its ms/token is significantly more than threshold_pct above the base's:
// q < alpha, q the one-sided bootstrap p-value of "new / base <= 1 + threshold_pct / 100",
// Benjamini-Hochberg-adjusted across the judged groups. That replaces the
// avg_latency_ms rule (the mean step latency follows the batch mix). Groups on one side only or
// a shifted step mix are a workload change, reported, not failed. No group with 10 steps on both
// sides: cannot_judge.
// Kernel families (KernelFamilyName: the template instantiations of one kernel summed) whose GPU
// time per iteration changed beyond noise (kernel_change_pct / kernel_change_min_ms) are always
// listed, whether or not the latency moved; those on one side only are what a change such as
// torch.compile removed (base only) and added (new only).
// Warm-up: each side's iterations are the report's (a trace is analysed with --skip auto, or the
// --skip given); the texts say when a side had warm-up dropped, and note a side whose report
// predates warm-up detection when the other side dropped some.
// Job reports (tracegate/reports/job.h): the job's latency is its slowest rank's avg_latency_ms;
// each rank is compared with the same rank of the other side, and a regression's verdict names
// the ranks over the limit and, for each, the kernel families whose time grew on it.
// Kernels come from each report's kernel_table (per-iteration time of every distinct kernel).
// Contributors explain a latency change: the kernels and phases whose per-iteration time moved
// the same way as avg_latency_ms, largest move first. Kernel time is summed over streams, so on
// overlapping streams a kernel's delta may exceed its effect on latency; phases partition each
// iteration, so phase deltas add up to the latency delta exactly.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "tracegate/analyzer/significance.h"
#include "tracegate/analyzer/status.h"

namespace tg {

inline constexpr const char* kComparisonSchema = "tracegate.comparison/v1";

struct CompareOptions {
  double threshold_pct = 5;
  bool require_significance = false;
  bool allow_device_mismatch = false;
  double alpha = 0.05;               // significance level for the Mann-Whitney p-value
  double kernel_change_pct = 1;      // a kernel whose per-iteration time moves less than this % of
  double kernel_change_min_ms = 0.001;  // its base time, or less than this, is "unchanged"
  size_t contributors = 3;           // kernels named in the verdict line
  double max_malformed_pct = 1;      // malformed_event above this % of the rows read: cannot judge
  bool has_kernel_threshold = false;  // kernel_threshold_pct applies (gate --kernel-threshold)
  double kernel_threshold_pct = 0;
};

enum class Verdict { kPass, kRegression, kCannotJudge };
std::string_view VerdictName(Verdict v);  // "pass", "regression", "cannot_judge"

// One headline metric on both sides. `key` is the report key (or a dotted path for nested ones).
struct MetricDelta {
  std::string key;
  bool higher_is_worse = true;
  bool has_base = false, has_new = false;
  double base = 0, next = 0;
  std::string base_reason, new_reason;  // the report's <key>_reason when a side is null/missing
  double delta = 0;                      // next - base, when both sides have it
  bool has_pct = false;
  double pct = 0;                        // delta / |base| x 100, when base != 0
};

enum class KernelChange { kUnchanged, kChanged, kAdded, kRemoved };
std::string_view KernelChangeName(KernelChange c);  // "unchanged", "changed", "added", "removed"

struct KernelDelta {
  std::string name;                     // demangled, as in kernel_table
  KernelChange change = KernelChange::kUnchanged;
  uint64_t base_count = 0, new_count = 0;
  double base_ms = 0, new_ms = 0;       // per iteration (0 on the side that lacks the kernel)
  double base_mean_us = 0, new_mean_us = 0;
  double delta_ms = 0;                  // new_ms - base_ms
  bool has_delta_pct = false;
  double delta_pct = 0;                 // delta_ms / base_ms x 100, when base_ms > 0
  bool has_share = false;               // only when the latency change is significant and not 0
  double share_of_change = 0;           // delta_ms / avg latency delta
};

// A kernel family (KernelFamilyName) summed over its variants; per iteration.
struct FamilyDelta {
  std::string name;
  KernelChange change = KernelChange::kUnchanged;  // added / removed: no variant on one side
  size_t variants = 0;
  double base_ms = 0, new_ms = 0, delta_ms = 0;
  bool has_launches = false;            // from kernel_table counts (not for a job's per-rank families)
  double base_launches = 0, new_launches = 0;  // launches per iteration (counts / the side's iterations)
  bool has_delta_pct = false;
  double delta_pct = 0;                 // delta_ms / base_ms x 100, when base_ms > 0
};

// One rank of a job report (tracegate/reports/job.h) on both sides, matched by rank number.
struct RankDelta {
  int64_t rank = 0;
  bool has_base = false, has_new = false;  // the side has the rank, with an avg_latency_ms
  double base_ms = 0, new_ms = 0;          // its avg_latency_ms
  double delta_pct = 0;                    // when both
  bool over_threshold = false;             // new_ms > base_ms x (1 + threshold_pct / 100)
  // The rank's kernel families (ranks[].kernel_families) whose time per iteration grew beyond
  // noise (kernel_change_pct / kernel_change_min_ms), largest growth first. A family listed on
  // one side only counts as added when the other side's list is whole (kernel_families_left_out
  // 0); otherwise it may merely have dropped out of that side's top list, and is left out.
  bool has_families = false;               // both sides have the rank's kernel_families
  std::vector<FamilyDelta> grown;
};

struct PhaseDelta {
  std::string phase;                    // pre, h2d, infer, d2h, post, idle
  double base_ms = 0, new_ms = 0, delta_ms = 0;  // phases.<phase>.mean_ms
  bool has_share = false;               // as KernelDelta
  double share_of_change = 0;
};

struct SideInfo {
  std::string label;                    // the path or name the caller gave
  std::vector<std::string> devices;     // distinct non-null devices[].name, sorted
  std::string model, commit;            // "" when the report has none
  size_t samples = 0;                   // latency_samples_ms
  // Warm-up (iteration_source): iterations found, those dropped from the front, and the report's
  // line on it ("" in reports written before warm-up detection, which kept every iteration
  // unless --skip said otherwise).
  size_t found = 0, skipped = 0;
  std::string warmup;
  bool has_cv = false;
  double cv = 0;                        // latency_cv of the samples (population std / mean)
  bool has_kernel_table = false;
  std::vector<std::string> error_counters;  // error-level data-quality counters that are non-zero
  std::vector<std::string> warning_counters;  // warning-level ones ("key = count"): caveats, not problems
  bool has_quality = false;                 // the report has a data_quality section
};

// Serving reports (docs/SERVING.md, compare_serving.cpp): one step group (kind x power-of-two
// token bucket) on both sides. ms per token = summed latency_ms / summed tokens of the group's
// iteration_table rows (the report's serving.groups[].ms_per_token); the bootstrap resamples its
// steps on each side.
struct ServingGroupDelta {
  std::string kind;                        // prefill, decode, mixed
  int64_t bucket_min = 0, bucket_max = 0;  // tokens in [min, max)
  size_t base_steps = 0, new_steps = 0;
  int64_t base_tokens = 0, new_tokens = 0;
  double base_ms_per_token = 0, new_ms_per_token = 0;  // 0 on a side without steps
  double base_step_share = 0, new_step_share = 0;      // the group's share of the side's grouped steps
  RateBootstrapResult bootstrap;                       // new / base ms per token (run with 10 steps or more a side)
  bool judged = false;                                 // bootstrap.ok
  double delta_pct = 0;                                // (bootstrap.ratio - 1) x 100, when judged
  double q = 1;  // bootstrap.p_not_above (of new / base <= 1 + threshold), BH-adjusted over the judged groups
  bool over_threshold = false;  // delta_pct > threshold_pct
  bool regression = false;      // over_threshold and q < alpha
};

struct ServingComparison {
  bool applies = false;                        // both reports hold serving steps (serving.steps > 0)
  std::vector<ServingGroupDelta> groups;       // every group of either side, by kind then bucket
  size_t base_left_out = 0, new_left_out = 0;  // steps of unknown kind or tokens (or 0 tokens)
  size_t judged = 0, regressions = 0;
  // Workload change (not a regression): groups on one side only, or the step mix shifted, the
  // total variation distance between the sides' shares of steps over the groups at least
  // kServingMixLimit.
  double step_mix_distance = 0;
  bool workload_changed = false;
  std::string workload_text;  // "" when the workload did not change
  std::string no_match;       // applies and no group judged: why (a "latency" problem)
};
inline constexpr double kServingMixLimit = 0.05;

// Why the comparison cannot judge. check: "inputs", "devices", "data_quality" or "latency".
// Lost data (compare_lost.cpp) is a "data_quality" problem.
struct CompareProblem {
  std::string check;
  std::string message;
};

struct Comparison {
  CompareOptions options;
  Verdict verdict = Verdict::kCannotJudge;
  std::string verdict_text;             // one line, starts with PASS / REGRESSION / CANNOT JUDGE
  std::vector<CompareProblem> problems;  // why it cannot judge (empty otherwise)
  std::vector<std::string> notes;       // what was not checked and why
  SideInfo base, next;
  // avg_latency_ms and the limit the gate applies.
  bool has_latency = false;
  double base_latency_ms = 0, new_latency_ms = 0, limit_ms = 0;
  double latency_delta_ms = 0, latency_delta_pct = 0;
  bool over_threshold = false;
  std::vector<MetricDelta> metrics;     // every headline metric, in a fixed order
  std::vector<PhaseDelta> phases;       // kPhaseNames order
  std::vector<KernelDelta> kernels;     // all kernels of both sides, by |delta_ms| desc, then name
  std::vector<size_t> kernel_contributors;  // indexes into kernels, largest contribution first
  std::vector<size_t> phase_contributors;   // indexes into phases, largest contribution first
  std::vector<FamilyDelta> families;    // kernel families changed beyond noise, by |delta_ms| desc
  std::vector<size_t> families_over;    // indexes into families over kernel_threshold_pct
  std::vector<RankDelta> ranks;         // job reports (either side): every rank, by rank
  MannWhitneyResult mann_whitney;       // base samples vs new samples
  BootstrapResult bootstrap;            // mean(new) / mean(base)
  bool significant = false;             // mann_whitney.ok and p < alpha
  // Both reports serving reports: the verdict is the step groups' (the headline latency, which
  // follows the batch mix, is shown but does not fail the gate on its own).
  ServingComparison serving;
};

// The family a kernel is compared in: ShortKernelName, except that PyTorch's element-wise kernels
// keep their functor, the operation ("at::native::vectorized_elementwise_kernel<CUDAFunctor_add<float>>"),
// and Inductor's generated Triton kernels drop the counter that tells apart one fused pattern's
// kernels for different shapes ("triton_poi_fused_add_relu_12" -> "triton_poi_fused_add_relu_*").
std::string KernelFamilyName(const std::string& demangled);

// Never fails: what it cannot judge it says in the result. base_label / new_label name the
// sides in texts (paths, baseline names).
Comparison CompareReports(const nlohmann::json& base, const nlohmann::json& next, const CompareOptions& options,
                          const std::string& base_label = "base", const std::string& new_label = "new");

// The result when an input cannot even be read (missing file, not JSON, not a report): verdict
// cannot_judge with one "inputs" problem, so the gate still writes its JUnit and Markdown.
Comparison CannotReadInputs(const std::string& message, const CompareOptions& options,
                            const std::string& base_label, const std::string& new_label);

// The comparison document (schema tracegate.comparison/v1): verdict{name, text, problems, notes},
// options, base/new{label, devices, model, commit, samples, latency_cv}, latency{...}, metrics[],
// phases[], kernels[] (every kernel, with change, delta_pct_of_base; share_of_change is null unless
// the latency change is significant), kernel_families[]{name, change, variants, base/new/delta
// ms_per_iteration, delta_pct_of_base} (changed beyond noise), kernel_families_over_threshold[]
// (names), ranks[]{rank, base_ms, new_ms, delta_pct, over_threshold,
// kernel_families_grown[]{name, change, base/new/delta ms_per_iteration, delta_pct_of_base} (null
// when a side has no per-rank kernel families)} (job reports), contributors{kernels[], phases[]} (names),
// statistics{mann_whitney{...}, bootstrap{...}, significant, alpha}; options add max_malformed_pct and
// kernel_threshold_pct (null: off). null where undefined. Serving reports only (ServingComparison):
// serving{groups[]{kind, token_bucket_min/max, name, base/new steps, tokens, ms_per_token, step_share, judged, ratio,
// delta_pct, ci_lo_pct, ci_hi_pct, p_within_threshold, q, over_threshold, regression}, failing[] (names),
// judged, regressions, workload_changed, workload, step_mix_distance, no_match, bootstrap{...}}.
nlohmann::json ComparisonToJson(const Comparison& c);

// The terminal summary of `tracegate compare` and `gate`: the verdict line first, then the
// headline metrics, what moved the latency, the statistics and the notes.
void PrintComparison(std::ostream& out, const Comparison& c);

// A Markdown summary fit for a pull-request comment or a CI step summary. Names from traces are
// shown as code with table pipes escaped, so they cannot break the table or inject markup.
std::string ComparisonMarkdown(const Comparison& c);

// JUnit XML for CI systems: one test suite "tracegate.gate" with one test case per check (inputs,
// devices, data_quality, avg_latency_ms); a regression is a <failure> of avg_latency_ms, a check
// that cannot judge an <error>, and checks left unjudged because of it <skipped>. Serving reports
// (ServingComparison): in place of avg_latency_ms, one case per step group on both sides
// ("serving decode 64-127 tokens ms_per_token"; a <failure> with the group's verdict line when it
// regressed, <skipped> with fewer than 10 steps a side, its line as <system-out> otherwise),
// "serving workload" (never fails; the workload change or its absence as <system-out>), and
// "serving ms_per_token", an <error>, when no group can be judged.
std::string ComparisonJunit(const Comparison& c);

// Decides whether a file is a tracegate report or a trace without reading a large trace whole:
// gzip and SQLite files are traces; a JSON object is a report when it has a top-level "schema"
// member (a Chrome trace has traceEvents/schemaVersion instead). Errors: the file cannot be read.
enum class InputKind { kReport, kTrace };
Status ClassifyInput(const std::string& path, InputKind* kind);

}  // namespace tg
