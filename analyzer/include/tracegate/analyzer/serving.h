// LLM serving steps (docs/SERVING.md): the step annotations of vLLM and SGLang as iterations, what
// each annotation says about its step, and the `serving` section of the report.
//
// Grammars (parsed by hand, no regex; every number a run of decimal digits):
//   vLLM    execute_<tokens>_context_<P>[(<sums>)]_generation_<D>[(<sums>)]
//           <sums> = sq<a>sk<b>sqsq<c>sqsk<d>: over the step's requests of that part, the sums of
//           query lengths (a), of KV lengths (b), of squared query lengths (c) and of query x KV
//           lengths (d). P: prefill (context) requests, D: decode (generation) requests.
//   SGLang  step[<MODE> key=value ...]   MODE EXTEND (prefill), DECODE, MIXED (prefill and
//           decode in one batch), others kept with an unknown kind; bs= is the batch's requests,
//           toks= its tokens. Unknown keys are ignored.
//   TensorRT-LLM (NVTX ranges, in Nsight Systems exports)
//           [Executor] _forward_step <iteration>: <P> ctx reqs, <D> gen reqs   (PyTorch backend)
//           executeStep: <P> ctx reqs, <D> gen reqs                          (C++ batch manager)
//           P: context (prefill) requests, D: generation (decode) requests; no token count.
//   capture capture_<size>_<MODE> (vLLM's CUDA/HIP graph capture): never a step (it records a
//           graph, it serves nothing); counted in ServingAnalysis::capture_steps.
// A field the annotation does not give is -1 (null in the report), never guessed.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tracegate/analyzer/model.h"

namespace tg {

namespace internal {
class ApiIndex;
}  // namespace internal
struct IterationAnalysis;

enum class StepKind : uint8_t { kUnknown, kPrefill, kDecode, kMixed };
inline constexpr const char* kStepKindNames[] = {"unknown", "prefill", "decode", "mixed"};

// Which annotation form a step came from (bit flags: one step may carry both).
enum StepForm : uint8_t { kStepFormNone = 0, kStepFormVllm = 1, kStepFormSglang = 2, kStepFormTrtllm = 4 };

struct ServingStep {
  uint8_t forms = kStepFormNone;  // StepForm bits; none: not a serving step
  StepKind kind = StepKind::kUnknown;
  int64_t tokens = -1;
  int64_t prefill_requests = -1, decode_requests = -1;
  int64_t prefill_query_tokens = -1, prefill_context_tokens = -1;  // vLLM sq / sk of the context part
  int64_t decode_query_tokens = -1, decode_context_tokens = -1;    // vLLM sq / sk of the generation part
  bool is_step() const { return forms != kStepFormNone; }
};

// Parses one annotation name; false (out untouched) when it is neither form.
bool ParseVllmStep(std::string_view name, ServingStep* out);
bool ParseSglangStep(std::string_view name, ServingStep* out);
bool ParseTrtllmStep(std::string_view name, ServingStep* out);
bool ParseServingStep(std::string_view name, ServingStep* out);  // any form
// capture_<size>_<MODE>: size and mode; false when the name is not one.
bool ParseCaptureStep(std::string_view name, int64_t* size, std::string* mode);
// Fills the fields `into` lacks from `from` (the other form of the same step) and ORs the forms;
// the kind is recomputed from the request counts when both are known.
void MergeServingStep(ServingStep& into, const ServingStep& from);
// The forms joined by '+' in the order vllm, sglang, trtllm ("vllm", "vllm+sglang", ...); "" for none.
std::string StepFormName(uint8_t forms);

// The power-of-two token bucket [min, 2 min) of `tokens` (0: [0, 1)); -1 when tokens is unknown.
int64_t TokenBucketMin(int64_t tokens);

// One group of kept serving steps: kind x token bucket.
struct ServingGroup {
  StepKind kind = StepKind::kUnknown;
  int64_t bucket_min = -1;  // -1: tokens unknown (bucket_max too)
  size_t count = 0;
  double p50_ms = 0, p95_ms = 0, p99_ms = 0, mean_ms = 0;  // step latency, nearest rank
  int64_t tokens = -1;    // summed tokens; -1 when any step's tokens are unknown (then no rates)
  TimeNs latency_ns = 0;  // summed latency
};

struct ServingAnalysis {
  size_t steps = 0;                  // kept iterations that are serving steps
  std::string step_form;             // StepFormName of the union of the steps' forms
  std::vector<ServingGroup> groups;  // by kind (prefill, decode, mixed, unknown), then bucket
  // Graph capture annotations (capture_<size>_<MODE>, host ranges), left out of the steps.
  size_t capture_steps = 0;
  std::vector<std::string> capture_names;  // distinct, in order of first appearance (at most 16)
  // Graph replays over the whole trace: kernels whose launch call (same correlation id) is a
  // graph launch (cudaGraphLaunch, cuGraphLaunch, hipGraphLaunch, with nsys' suffixes).
  uint64_t graph_launches = 0;  // graph launch calls that launched at least one kernel
  uint64_t graph_kernels = 0;
  TimeNs graph_kernel_ns = 0;     // summed kernel durations
  TimeNs kernel_ns = 0;           // summed durations of every kernel (the report's kernels.total_ns)
  bool has_graph_ratio = false;   // kernel_ns > 0
  double graph_kernel_ratio = 0;  // graph_kernel_ns / kernel_ns
};

// The serving section from the kept iterations (their ServingStep) and the trace's graph launches.
ServingAnalysis AnalyzeServing(const Trace& trace, const IterationAnalysis& iterations, const internal::ApiIndex& api);

}  // namespace tg
