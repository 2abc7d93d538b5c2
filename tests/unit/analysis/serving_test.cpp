// LLM serving steps (tracegate/analyzer/serving.h, docs/SERVING.md): the annotation grammars,
// steps as iterations (vLLM, SGLang, both forms for one step), and the serving section's groups
// and graph-replay share, on hand-made traces with exact expected values.
#include "tracegate/analyzer/serving.h"

#include <gtest/gtest.h>

#include <string>

#include "analyzer/analysis/correlation.h"
#include "trace_builder.h"
#include "tracegate/analyzer/iterations.h"

namespace tg {

using internal::ApiIndex;
namespace {

using testing::AddApi;
using testing::AddKernel;
using testing::AddRange;

ServingStep Parse(const std::string& name) {
  ServingStep s;
  EXPECT_TRUE(ParseServingStep(name, &s)) << name;
  return s;
}

bool Parses(const std::string& name) {
  ServingStep s;
  return ParseServingStep(name, &s);
}

TEST(Serving, VllmRealAnnotation) {
  // The step annotation of ../shared/traces/kineto_vllm_decode_graph_replay_mi300.json.gz.
  const ServingStep s = Parse("execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk55086sqsq32sqsk55086)");
  EXPECT_EQ(s.forms, kStepFormVllm);
  EXPECT_EQ(s.kind, StepKind::kDecode);
  EXPECT_EQ(s.tokens, 32);
  EXPECT_EQ(s.prefill_requests, 0);
  EXPECT_EQ(s.decode_requests, 32);
  EXPECT_EQ(s.prefill_query_tokens, 0);
  EXPECT_EQ(s.prefill_context_tokens, 0);
  EXPECT_EQ(s.decode_query_tokens, 32);
  EXPECT_EQ(s.decode_context_tokens, 55086);
}

TEST(Serving, VllmVariants) {
  ServingStep mixed = Parse("execute_72_context_2(sq40sk40sqsq800sqsk800)_generation_32(sq32sk9000sqsq32sqsk9000)");
  EXPECT_EQ(mixed.kind, StepKind::kMixed);
  EXPECT_EQ(mixed.tokens, 72);
  EXPECT_EQ(mixed.prefill_requests, 2);
  EXPECT_EQ(mixed.prefill_query_tokens, 40);
  EXPECT_EQ(mixed.decode_context_tokens, 9000);
  // No sums: counts known, sums unknown (never zero-guessed).
  ServingStep bare = Parse("execute_512_context_3_generation_0");
  EXPECT_EQ(bare.kind, StepKind::kPrefill);
  EXPECT_EQ(bare.tokens, 512);
  EXPECT_EQ(bare.prefill_requests, 3);
  EXPECT_EQ(bare.decode_requests, 0);
  EXPECT_EQ(bare.prefill_query_tokens, -1);
  EXPECT_EQ(bare.decode_context_tokens, -1);
  // Other parenthesised text: skipped, sums unknown.
  ServingStep other = Parse("execute_8_context_0(x=1)_generation_8(y)");
  EXPECT_EQ(other.kind, StepKind::kDecode);
  EXPECT_EQ(other.decode_requests, 8);
  EXPECT_EQ(other.decode_query_tokens, -1);
  // Nothing scheduled: a step of unknown kind.
  EXPECT_EQ(Parse("execute_0_context_0_generation_0").kind, StepKind::kUnknown);
  for (const char* bad : {"execute_", "execute_x_context_0_generation_1", "execute_1_context_0_generation_",
                          "execute_1_context_0_generation_1_extra", "execute_1_context_0(sq0_generation_1",
                          "execute_1234567890123456789_context_0_generation_1", "Execute_1_context_0_generation_1",
                          "execute_-1_context_0_generation_1"})
    EXPECT_FALSE(Parses(bad)) << bad;
}

TEST(Serving, SglangSteps) {
  ServingStep extend = Parse("step[EXTEND bs=15 toks=15360]");
  EXPECT_EQ(extend.forms, kStepFormSglang);
  EXPECT_EQ(extend.kind, StepKind::kPrefill);
  EXPECT_EQ(extend.tokens, 15360);
  EXPECT_EQ(extend.prefill_requests, 15);
  EXPECT_EQ(extend.decode_requests, 0);
  EXPECT_EQ(extend.prefill_query_tokens, -1);
  ServingStep decode = Parse("step[DECODE bs=32]");
  EXPECT_EQ(decode.kind, StepKind::kDecode);
  EXPECT_EQ(decode.decode_requests, 32);
  EXPECT_EQ(decode.prefill_requests, 0);
  EXPECT_EQ(decode.tokens, -1);  // not given: unknown, not bs
  ServingStep mixed = Parse("step[MIXED bs=4 toks=100 extra=abc]");
  EXPECT_EQ(mixed.kind, StepKind::kMixed);
  EXPECT_EQ(mixed.tokens, 100);
  EXPECT_EQ(mixed.prefill_requests, -1);
  EXPECT_EQ(mixed.decode_requests, -1);
  EXPECT_EQ(Parse("step[IDLE]").kind, StepKind::kUnknown);
  for (const char* bad : {"step[]", "step[EXTEND bs=x]", "step[EXTEND bs=1", "step[EXTEND bs]", "step[1 bs=2]",
                          "step 3", "steps[DECODE bs=1]"})
    EXPECT_FALSE(Parses(bad)) << bad;
}

TEST(Serving, TrtllmSteps) {
  // The PyTorch backend's NVTX range and the C++ batch manager's.
  ServingStep decode = Parse("[Executor] _forward_step 812: 0 ctx reqs, 64 gen reqs");
  EXPECT_EQ(decode.forms, kStepFormTrtllm);
  EXPECT_EQ(decode.kind, StepKind::kDecode);
  EXPECT_EQ(decode.prefill_requests, 0);
  EXPECT_EQ(decode.decode_requests, 64);
  EXPECT_EQ(decode.tokens, -1);  // the range gives no token count: unknown, not guessed
  EXPECT_EQ(Parse("_forward_step 3: 2 ctx reqs, 0 gen reqs").kind, StepKind::kPrefill);
  EXPECT_EQ(Parse("executeStep: 1 ctx reqs, 7 gen reqs").kind, StepKind::kMixed);
  EXPECT_EQ(StepFormName(kStepFormTrtllm), "trtllm");
  EXPECT_EQ(StepFormName(kStepFormVllm | kStepFormTrtllm), "vllm+trtllm");
  for (const char* bad :
       {"_forward_step 3: 2 ctx reqs", "executeStep: 1 ctx reqs, 7 gen reqs ", "executeStep 1 ctx reqs, 7 gen reqs",
        "[Executor] _forward_step x: 0 ctx reqs, 1 gen reqs", "executeStep: -1 ctx reqs, 2 gen reqs"})
    EXPECT_FALSE(Parses(bad)) << bad;
}

TEST(Serving, CaptureAndBuckets) {
  int64_t size = 0;
  std::string mode;
  ASSERT_TRUE(ParseCaptureStep("capture_32_FULL", &size, &mode));
  EXPECT_EQ(size, 32);
  EXPECT_EQ(mode, "FULL");
  ASSERT_TRUE(ParseCaptureStep("capture_8192_PIECEWISE", &size, &mode));
  EXPECT_EQ(size, 8192);
  EXPECT_EQ(mode, "PIECEWISE");
  ASSERT_TRUE(ParseCaptureStep("capture_32_DECODE", &size, &mode));
  EXPECT_EQ(mode, "DECODE");
  EXPECT_FALSE(ParseCaptureStep("capture_x_FULL", &size, &mode));
  EXPECT_FALSE(ParseCaptureStep("capture_32_", &size, &mode));
  EXPECT_FALSE(Parses("capture_32_FULL"));  // never a step
  EXPECT_EQ(TokenBucketMin(-1), -1);
  EXPECT_EQ(TokenBucketMin(0), 0);
  EXPECT_EQ(TokenBucketMin(1), 1);
  EXPECT_EQ(TokenBucketMin(32), 32);
  EXPECT_EQ(TokenBucketMin(33), 32);
  EXPECT_EQ(TokenBucketMin(63), 32);
  EXPECT_EQ(TokenBucketMin(64), 64);
  EXPECT_EQ(TokenBucketMin(15360), 8192);
}

IterationAnalysis Analyze(const Trace& t, IterationOptions o = {}) {
  o.skip = 0;
  IterationAnalysis a;
  Status s = AnalyzeIterations(t, o, &a);
  EXPECT_TRUE(s.ok()) << s.message();
  return a;
}

// A step [start, start + len) with one kernel launched inside it (correlation `corr`).
void Step(Trace& t, const std::string& name, TimeNs start, TimeNs len, int64_t corr,
          const char* call = "cudaLaunchKernel") {
  AddRange(t, name, start, start + len);
  AddApi(t, call, start + 10, start + 20, corr);
  AddKernel(t, "k", start + 30, start + len - 10, 0, 7, corr);
}

TEST(Serving, VllmStepsAreIterationsAndGroups) {
  Trace t;
  // Three decode steps of 32 tokens (1000, 2000, 4000 ns), one of 40 (bucket 32 as well: 32-63),
  // one prefill of 512 tokens (a graph replay with two kernels), one mixed of 100 tokens.
  Step(t, "execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk100sqsq32sqsk100)", 0, 1000, 1);
  Step(t, "execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk132sqsq32sqsk132)", 10'000, 2000, 2);
  Step(t, "execute_32_context_0_generation_32", 20'000, 4000, 3);
  Step(t, "execute_40_context_0_generation_40", 30'000, 3000, 4);
  Step(t, "execute_512_context_2(sq512sk512sqsq131072sqsk131072)_generation_0(sq0sk0sqsq0sqsk0)", 40'000, 8000, 5,
       "cudaGraphLaunch");
  AddKernel(t, "k2", 40'100, 40'600, 0, 7, 5);  // the graph's second kernel
  Step(t, "execute_100_context_1_generation_4", 50'000, 5000, 6);
  AddRange(t, "capture_32_FULL", 60'000, 61'000);  // a capture annotation: not a step
  const IterationAnalysis a = Analyze(t);
  ASSERT_TRUE(a.from_markers);
  ASSERT_EQ(a.iterations.size(), 6u);
  EXPECT_EQ(a.step_form, "vllm");
  EXPECT_NE(a.source.find("6 serving steps from vLLM"), std::string::npos) << a.source;
  EXPECT_EQ(a.iterations[0].serving.kind, StepKind::kDecode);
  EXPECT_EQ(a.iterations[0].serving.decode_context_tokens, 100);
  EXPECT_EQ(a.iterations[4].serving.kind, StepKind::kPrefill);
  EXPECT_EQ(a.iterations[4].serving.prefill_requests, 2);
  EXPECT_EQ(a.iterations[5].serving.kind, StepKind::kMixed);
  EXPECT_EQ(a.iterations[2].latency_ns(), 4000);

  const ApiIndex index(t.api_calls);
  const ServingAnalysis sv = AnalyzeServing(t, a, index);
  EXPECT_EQ(sv.steps, 6u);
  EXPECT_EQ(sv.step_form, "vllm");
  EXPECT_EQ(sv.capture_steps, 1u);
  ASSERT_EQ(sv.capture_names.size(), 1u);
  EXPECT_EQ(sv.capture_names[0], "capture_32_FULL");
  ASSERT_EQ(sv.groups.size(), 3u);
  const ServingGroup& prefill = sv.groups[0];
  EXPECT_EQ(prefill.kind, StepKind::kPrefill);
  EXPECT_EQ(prefill.bucket_min, 512);
  EXPECT_EQ(prefill.count, 1u);
  EXPECT_EQ(prefill.tokens, 512);
  EXPECT_EQ(prefill.latency_ns, 8000);
  const ServingGroup& decode = sv.groups[1];
  EXPECT_EQ(decode.kind, StepKind::kDecode);
  EXPECT_EQ(decode.bucket_min, 32);
  EXPECT_EQ(decode.count, 4u);
  EXPECT_EQ(decode.tokens, 32 * 3 + 40);
  EXPECT_EQ(decode.latency_ns, 1000 + 2000 + 4000 + 3000);
  // Latencies 0.001, 0.002, 0.003, 0.004 ms: nearest rank p50 = 2nd, p95 = p99 = 4th.
  EXPECT_DOUBLE_EQ(decode.p50_ms, 0.002);
  EXPECT_DOUBLE_EQ(decode.p95_ms, 0.004);
  EXPECT_DOUBLE_EQ(decode.p99_ms, 0.004);
  EXPECT_DOUBLE_EQ(decode.mean_ms, 0.0025);
  const ServingGroup& mixed = sv.groups[2];
  EXPECT_EQ(mixed.kind, StepKind::kMixed);
  EXPECT_EQ(mixed.bucket_min, 64);
  EXPECT_EQ(mixed.count, 1u);
  // Graph replays: the prefill step's two kernels (7960 + 500 ns) of 6 + 1 kernels.
  EXPECT_EQ(sv.graph_launches, 1u);
  EXPECT_EQ(sv.graph_kernels, 2u);
  EXPECT_EQ(sv.graph_kernel_ns, 7960 + 500);
  const TimeNs all = (1000 - 40) + (2000 - 40) + (4000 - 40) + (3000 - 40) + (8000 - 40) + 500 + (5000 - 40);
  EXPECT_EQ(sv.kernel_ns, all);
  ASSERT_TRUE(sv.has_graph_ratio);
  EXPECT_DOUBLE_EQ(sv.graph_kernel_ratio, static_cast<double>(7960 + 500) / static_cast<double>(all));
}

TEST(Serving, TrtllmRangesAreSteps) {
  Trace t;
  Step(t, "[Executor] _forward_step 10: 0 ctx reqs, 8 gen reqs", 0, 1000, 1);
  Step(t, "[Executor] _forward_step 11: 1 ctx reqs, 8 gen reqs", 10'000, 2000, 2);
  Step(t, "[Executor] _forward_step 12: 0 ctx reqs, 9 gen reqs", 20'000, 3000, 3);
  const IterationAnalysis a = Analyze(t);
  ASSERT_TRUE(a.from_markers);
  ASSERT_EQ(a.iterations.size(), 3u);
  EXPECT_EQ(a.step_form, "trtllm");
  EXPECT_NE(a.source.find("3 serving steps from TensorRT-LLM"), std::string::npos) << a.source;
  EXPECT_EQ(a.iterations[1].serving.kind, StepKind::kMixed);
  const ApiIndex index(t.api_calls);
  const ServingAnalysis sv = AnalyzeServing(t, a, index);
  ASSERT_EQ(sv.groups.size(), 2u);  // decode and mixed, tokens unknown
  EXPECT_EQ(sv.groups[0].kind, StepKind::kDecode);
  EXPECT_EQ(sv.groups[0].count, 2u);
  EXPECT_EQ(sv.groups[0].bucket_min, -1);
  EXPECT_EQ(sv.groups[0].tokens, -1);
}

TEST(Serving, SglangNestedAndOverlappingFormsAreOneStep) {
  Trace t;
  // Step 1: execute_... nested inside step[...]. Step 2: the two overlap without nesting; the
  // step runs to the later end. Step 3: step[...] alone.
  AddRange(t, "step[EXTEND bs=2 toks=300]", 0, 1000);
  AddRange(t, "execute_300_context_2(sq300sk300sqsq45000sqsk45000)_generation_0", 100, 900, 100, 100, 1);
  AddRange(t, "step[DECODE bs=2]", 2000, 2600);
  AddRange(t, "execute_2_context_0_generation_2(sq2sk400sqsq2sqsk400)", 2100, 2800, 100, 101);
  AddRange(t, "step[DECODE bs=3 toks=3]", 4000, 4500);
  const IterationAnalysis a = Analyze(t);
  ASSERT_EQ(a.iterations.size(), 3u);
  EXPECT_EQ(a.step_form, "vllm+sglang");
  const ServingStep& s1 = a.iterations[0].serving;
  EXPECT_EQ(s1.forms, kStepFormVllm | kStepFormSglang);
  EXPECT_EQ(s1.kind, StepKind::kPrefill);
  EXPECT_EQ(s1.tokens, 300);
  EXPECT_EQ(s1.prefill_requests, 2);
  EXPECT_EQ(s1.prefill_context_tokens, 300);  // from the vLLM form
  EXPECT_EQ(a.iterations[0].name, "step[EXTEND bs=2 toks=300]");
  const ServingStep& s2 = a.iterations[1].serving;
  EXPECT_EQ(s2.kind, StepKind::kDecode);
  EXPECT_EQ(s2.tokens, 2);  // step[DECODE] gives none, execute_ gives 2
  EXPECT_EQ(s2.decode_context_tokens, 400);
  EXPECT_EQ(a.iterations[1].marker_start, 2000);
  EXPECT_EQ(a.iterations[1].marker_end, 2800);
  EXPECT_EQ(a.iterations[2].serving.forms, kStepFormSglang);
  EXPECT_EQ(a.iterations[2].serving.tokens, 3);
}

TEST(Serving, ConsecutiveStepsOfOneFormStaySeparate) {
  Trace t;
  // Two vLLM steps that overlap (another thread's range) are still two steps.
  AddRange(t, "execute_1_context_0_generation_1", 0, 1000);
  AddRange(t, "execute_1_context_0_generation_1", 900, 2000, 100, 101);
  const IterationAnalysis a = Analyze(t);
  EXPECT_EQ(a.iterations.size(), 2u);
}

TEST(Serving, ProfilerStepAndIterationOptionWin) {
  Trace t;
  AddRange(t, "ProfilerStep#1", 0, 5000);
  AddRange(t, "execute_32_context_0_generation_32", 100, 1000);
  AddRange(t, "execute_32_context_0_generation_32", 2000, 3000);
  IterationAnalysis a = Analyze(t);
  ASSERT_EQ(a.iterations.size(), 1u);
  EXPECT_EQ(a.iterations[0].name, "ProfilerStep#1");
  EXPECT_FALSE(a.iterations[0].serving.is_step());
  EXPECT_EQ(a.step_form, "");
  // --iteration names the steps itself: its matches are the iterations, their fields still parsed.
  IterationOptions o;
  o.iteration_regex = "^execute_";
  a = Analyze(t, o);
  ASSERT_EQ(a.iterations.size(), 2u);
  EXPECT_EQ(a.iterations[0].serving.decode_requests, 32);
  EXPECT_EQ(a.step_form, "");
  // A user expression that matches nothing: no fallback to the step annotations.
  o.iteration_regex = "^nothing$";
  a = Analyze(t, o);
  EXPECT_FALSE(a.from_markers);
}

TEST(Serving, NoStepsNoGroups) {
  Trace t;
  AddApi(t, "cudaLaunchKernel", 0, 10, 1);
  AddKernel(t, "k", 20, 120, 0, 7, 1);
  const IterationAnalysis a = Analyze(t);
  const ApiIndex index(t.api_calls);
  const ServingAnalysis sv = AnalyzeServing(t, a, index);
  EXPECT_EQ(sv.steps, 0u);
  EXPECT_TRUE(sv.groups.empty());
  EXPECT_EQ(sv.graph_launches, 0u);
  EXPECT_EQ(sv.graph_kernel_ns, 0);
  EXPECT_EQ(sv.kernel_ns, 100);
  EXPECT_DOUBLE_EQ(sv.graph_kernel_ratio, 0.0);
}

}  // namespace
}  // namespace tg
