// Iterations and per-iteration phases (docs/RULES.md, "Iterations and phases"):
//   T_total = T_pre + T_h2d + T_infer + T_d2h + T_post + T_idle   for every iteration.
//
// Iterations come from host ranges (NVTX, Kineto user annotations) whose names match
// IterationOptions::iteration_regex (std::regex ECMAScript, searched, case-insensitive). When the
// default expression matches nothing, LLM serving engines' step annotations are the iterations
// (vLLM execute_..., SGLang step[...]; serving.h, docs/SERVING.md); --iteration REGEX overrides.
// Only the outermost matches count; when several processes have matches, the process with the most is
// used (ties: lowest pid) and the others' GPU work is left out. With no match the whole trace
// window is one iteration (from_markers = false) and the report says so.
//
// Warm-up (docs/RULES.md, "Warm-up iterations"): IterationOptions::skip drops that many iterations
// from the front; unset (the default, `--skip auto`) the warm-up rule of FindWarmup (stats.h)
// decides, on the latencies every iteration has with nothing dropped. The result is exactly that
// of `--skip N` with the N it found; the dropped iterations are kept aside (IterationAnalysis::dropped)
// so that every report can say what was dropped.
//
// GPU work (kernels, memcpys, memsets) and syncs belong to the iteration whose marker contains
// the start of the API call that launched them (matched by correlation id, same process); work
// without a matching call belongs to the iteration whose marker contains its start, else its end.
// An iteration's span runs from its marker's start to the later of the marker's end and the end
// of the last GPU work that belongs to it: its latency is the span's length. Spans never overlap:
// when the host runs ahead and step N's GPU work ends after step N+1's marker starts, step N+1's
// span starts where step N's ends (the GPU step); the marker (the host step) is kept beside it.
//
// Phases partition the span: each instant goes to the first of these that is active then:
//   h2d   an HtoD copy
//   d2h   a DtoH copy
//   infer any other GPU work (kernels, memsets, other copies)
// (GPU work of any iteration that runs inside the span: time the device spends on another
// iteration's work is not idle, so the idle phases sum to at most the device's idle time)
//   pre   a range matching pre_regex that starts inside this iteration's marker
//   post  a range matching post_regex that starts inside this iteration's marker
//   idle  none of these: the GPU has no work at all and the host is in no
//         pre/post stage (launch overhead, waits, framework time, sleeps).
// Ranges matching infer_regex do not take time from idle (host time in an infer range while the
// GPU waits is exactly the scheduling gap the idle rule looks for); their host-side length is
// reported separately as infer_range_ns.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tracegate/analyzer/idle_cause.h"
#include "tracegate/analyzer/model.h"
#include "tracegate/analyzer/serving.h"
#include "tracegate/analyzer/stats.h"
#include "tracegate/analyzer/status.h"

namespace tg {

inline constexpr const char* kDefaultIterationRegex =
    R"(^(ProfilerStep#\d+|iter(ation)?([ _#:-]*\d+)?|step[ _#:-]*\d+)$)";
inline constexpr const char* kDefaultPreRegex = R"(^(pre|preprocess(ing)?)$)";
inline constexpr const char* kDefaultInferRegex = R"(^(infer|inference|forward)$)";
inline constexpr const char* kDefaultPostRegex = R"(^(post|postprocess(ing)?)$)";

struct IterationOptions {
  std::string iteration_regex = kDefaultIterationRegex;
  std::optional<size_t> skip;          // warm-up iterations dropped from the front; unset: the warm-up rule decides
  std::string pre_regex = kDefaultPreRegex;
  std::string infer_regex = kDefaultInferRegex;
  std::string post_regex = kDefaultPostRegex;
  int64_t batch = 1;                   // items per iteration, for throughput
};

enum class Phase : uint8_t { kPre, kH2d, kInfer, kD2h, kPost, kIdle, kCount };
inline constexpr size_t kPhaseCount = static_cast<size_t>(Phase::kCount);
inline constexpr std::array<const char*, kPhaseCount> kPhaseNames{"pre", "h2d", "infer", "d2h", "post", "idle"};

struct Iteration {
  size_t index = 0;               // position among all iterations found (before --skip), 0-based
  std::string name;               // marker name ("" without markers)
  TimeNs marker_start = 0, marker_end = 0;
  TimeNs start = 0, end = 0;      // span; latency = end - start
  std::array<TimeNs, kPhaseCount> phase_ns{};  // sums to end - start exactly
  TimeNs gpu_busy_ns = 0;         // union of the GPU work (of any iteration) inside the span
  uint64_t kernels = 0, memcpys = 0, memsets = 0, syncs = 0;
  TimeNs sync_ns = 0;             // summed duration of its sync records
  TimeNs pre_range_ns = 0, infer_range_ns = 0, post_range_ns = 0;  // union of phase ranges, clipped
  int64_t tid = kUnknownId;                                        // the marker's thread (kUnknownId without markers)
  // Why the GPU had no work (idle_cause.h), once AttributeIterationIdle ran: the span's GPU-idle
  // time (latency - gpu_busy_ns, the pre, post and idle phases) by cause.
  std::array<TimeNs, kIdleCauseCount> idle_cause_ns{};
  // Host compute before the first GPU work (or first HtoD copy) and after the last DtoH copy (or
  // last GPU work), moved from idle to pre / post because no range names those phases.
  TimeNs pre_from_host_ns = 0, post_from_host_ns = 0;
  // What the marker's name says about an LLM serving step (serving.h); not a step (forms none)
  // for other names. Steps found as two annotations (SGLang's execute_... and step[...]) merged.
  ServingStep serving;
  TimeNs latency_ns() const { return end - start; }
  TimeNs host_ns() const { return marker_end - marker_start; }  // the host step (the marker)
};

struct IterationAnalysis {
  bool from_markers = false;
  std::string source;             // one line: how iterations were found (or why there are none)
  // The serving step annotation form the iterations came from (StepFormName: "vllm", "sglang",
  // "vllm+sglang"); empty when they are not serving steps.
  std::string step_form;
  int64_t pid = kUnknownId;       // process whose markers were used
  size_t found = 0;               // iterations found before --skip
  size_t skipped = 0;             // dropped from the front: --skip N, or the warm-up rule's count
  bool skip_auto = false;         // the warm-up rule decided (IterationOptions::skip unset)
  WarmupSplit warmup;             // the rule's figures, when skip_auto (median in ns)
  // The dropped iterations, in order: index, name, marker, and the span (start, end) they have
  // with nothing dropped. No phases or counts.
  std::vector<Iteration> dropped;
  int64_t batch = 1;
  std::vector<Iteration> iterations;  // kept iterations, by start time

  // Which kept iteration each row belongs to (index into `iterations`), -1 for none (outside
  // every marker, another process, or a skipped iteration). One entry per row of the table.
  std::vector<int32_t> kernel_iteration, memcpy_iteration, memset_iteration, sync_iteration,
      api_iteration;

  // The pre and post ranges of each kept iteration, clipped to its span (what its pre and post
  // phases are made of, under GPU work or not), sorted by (iteration, start).
  struct StagePiece {
    int32_t iteration;
    TimeNs start, end;
    bool post;
  };
  std::vector<StagePiece> stage_pieces;

  // Statistics over kept iterations.
  SampleStats latency_ms;                        // of latency_ns / 1e6
  TimeNs total_ns = 0;                           // sum of latencies
  bool has_throughput = false;
  double throughput_fps = 0;                     // kept * batch / (last end - first start) in s
  std::array<double, kPhaseCount> phase_ratio{};   // sum phase / total_ns (0 when total is 0)
  std::array<double, kPhaseCount> phase_mean_ms{};  // mean per iteration
};

// Fills `out`. Errors (InvalidInput, message naming the option): an invalid regular expression,
// --skip that drops every iteration found, batch < 1.
Status AnalyzeIterations(const Trace& trace, const IterationOptions& options, IterationAnalysis* out);

namespace internal {
class ApiIndex;
}  // namespace internal
// The same, with the correlation index of trace.api_calls built elsewhere (RunAnalysis builds it
// on its second thread while the markers are found): `api_index()` is called once, when it is
// needed, and must return the index of this trace's API table.
Status AnalyzeIterations(const Trace& trace, const IterationOptions& options,
                         const std::function<const internal::ApiIndex&()>& api_index, IterationAnalysis* out);

// The position (in out->iterations) of the kept iteration whose latency is the nearest-rank
// median, the first such one when several have it; 0 without kept iterations. The report's
// timeline draws it, and the critical path keeps its whole path for the drawing.
size_t MedianIterationPosition(const IterationAnalysis& iterations);

namespace internal {
// The statistics over the kept iterations (latency, throughput, phase ratios and means).
void ComputeIterationStats(IterationAnalysis* out);
// The phase ratios and means alone, again after the phases changed (AttributeIterationIdle moves
// host compute from idle to pre/post): nothing else is written, so the fusion candidates may
// read the iterations meanwhile.
void ComputePhaseStats(IterationAnalysis* out);
}  // namespace internal

}  // namespace tg
