// Warm-up handling past the iterations (iterations_test.cpp has the rule's own cases): the findings
// judge the kept iterations' gaps, every report says what was dropped, and compare says it for
// both sides; and what compare says a compiler fused (kernel families removed and added).
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "analysis_test_util.h"
#include "trace_builder.h"
#include "tracegate/analyzer/analysis.h"
#include "tracegate/reports/analysis_report.h"
#include "tracegate/reports/compare.h"
#include "tracegate/reports/report_html.h"

namespace tg {
namespace {

using nlohmann::json;
using testing::AddApi;
using testing::AddKernel;
using testing::AddRange;

constexpr TimeNs kUs = 1'000, kMs = 1'000'000;

// Iteration 0 (the warm-up) spans [0, 100 ms): kernels at its start and end, 98 ms apart, the
// second launched by a call that returns 99 ms in. Iterations 1-5 take 1 ms each: a kernel of
// 400 us, a 200 us gap while its successor's launch call runs, a kernel of 400 us.
Trace WarmupTrace() {
  Trace t;
  t.devices.push_back(Device{0, "NVIDIA H200", 132, 0, 0, 9, 0});
  int64_t corr = 1;
  AddRange(t, "iteration 0", 0, 100 * kMs);
  AddApi(t, "cudaLaunchKernel", 10 * kUs, 20 * kUs, corr);
  AddKernel(t, "conv", 0 + 30 * kUs, 1 * kMs, 0, 7, corr++);
  AddApi(t, "cudaLaunchKernel", 1 * kMs, 99 * kMs, corr);
  AddKernel(t, "conv", 99 * kMs, 100 * kMs, 0, 7, corr++);
  for (int i = 1; i <= 5; ++i) {
    const TimeNs s = 100 * kMs + (i - 1) * kMs;
    AddRange(t, "iteration " + std::to_string(i), s, s + kMs);
    AddApi(t, "cudaLaunchKernel", s, s + 5 * kUs, corr);
    AddKernel(t, "conv", s, s + 400 * kUs, 0, 7, corr++);
    AddApi(t, "cudaLaunchKernel", s + 500 * kUs, s + 590 * kUs, corr);
    AddKernel(t, "conv", s + 600 * kUs, s + kMs, 0, 7, corr++);
  }
  return t;
}

TEST(Warmup, TheIdleFindingJudgesTheKeptIterations) {
  const Analysis a = testing::AnalyzeOk(WarmupTrace());
  ASSERT_EQ(a.iterations.skipped, 1u);
  ASSERT_EQ(a.summary.devices.size(), 1u);
  const DeviceSummary& d = a.summary.devices[0];
  // The whole trace's gaps: the warm-up's 98 ms one and five of 200 us.
  EXPECT_EQ(d.gap_total_ns, 98 * kMs + 5 * 200 * kUs);
  EXPECT_EQ(d.largest_gaps.front().duration_ns, 98 * kMs);
  // Inside the kept iterations: the five 200 us gaps, each waiting for its launch.
  ASSERT_TRUE(d.has_in_iterations);
  EXPECT_EQ(d.in_iterations_ns, 5 * 200 * kUs);
  EXPECT_EQ(d.in_iterations.ns[static_cast<size_t>(IdleCause::kHostLaunch)], 5 * 200 * kUs);
  EXPECT_EQ(d.in_iterations.gaps[static_cast<size_t>(IdleCause::kHostLaunch)], 5u);
  ASSERT_EQ(d.in_iterations_largest.size(), 5u);
  for (const IdleGap& g : d.in_iterations_largest) EXPECT_EQ(g.duration_ns, 200 * kUs);
  const Finding* idle = testing::FindFinding(a, "idle_gaps");
  ASSERT_NE(idle, nullptr);
  EXPECT_NEAR(idle->amdahl.share, 0.2, 1e-12);  // 200 us of each 1 ms
  ASSERT_FALSE(idle->involved.empty());
  for (const Involved& v : idle->involved) EXPECT_EQ(v.time_ns, 200 * kUs) << v.name;
  EXPECT_NE(idle->summary.find("(of the iterations' idle phase): host_launch 100%"), std::string::npos)
      << idle->summary;

  // With every iteration kept the warm-up's gap is the iterations' too, and listed first.
  AnalysisConfig all;
  all.iterations.skip = 0;
  const Analysis b = testing::AnalyzeOk(WarmupTrace(), all);
  const Finding* idle_all = testing::FindFinding(b, "idle_gaps");
  ASSERT_NE(idle_all, nullptr);
  EXPECT_EQ(idle_all->involved.front().time_ns, 98 * kMs);
  EXPECT_EQ(b.summary.devices[0].in_iterations_ns, b.summary.devices[0].gap_total_ns);
}

json Report(const Trace& t, const AnalysisConfig& config = {}) {
  const Analysis a = testing::AnalyzeOk(t, config);
  return AnalysisToJson(t, a, config);
}

TEST(Warmup, EveryReportSaysWhatWasDropped) {
  const json r = Report(WarmupTrace());
  const json& w = r["iteration_source"]["warmup"];
  EXPECT_EQ(r["iteration_source"]["found"], 6);
  EXPECT_EQ(r["iteration_source"]["skipped"], 1);
  EXPECT_EQ(r["options"]["skip"], "auto");
  EXPECT_EQ(w["mode"], "auto");
  EXPECT_EQ(w["factor"], 2.0);
  EXPECT_EQ(w["median_ms"], 1.0);
  EXPECT_TRUE(w["first_ratio"].is_null());
  ASSERT_EQ(w["dropped"].size(), 1u);
  EXPECT_EQ(w["dropped"][0], json({{"index", 0}, {"name", "iteration 0"}, {"latency_ms", 100.0}}));
  const std::string summary =
      "dropped the first of 6 iterations (--skip auto): iteration 0 100.000 ms, more than 2x the median 1.000 ms "
      "of the rest; --skip 0 keeps it";
  EXPECT_EQ(w["summary"], summary);
  EXPECT_EQ(r["latency_samples_ms"].size(), 5u);
  EXPECT_EQ(r["devices"][0]["gaps"]["in_iterations"]["total_ns"], 5 * 200 * kUs);
  std::ostringstream text;
  PrintAnalysis(text, r);
  EXPECT_NE(text.str().find("iterations: 5 (1 warm-up skipped)"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("  warm-up: " + summary + "\n"), std::string::npos) << text.str();
  // The sections that cover the whole trace say so.
  EXPECT_NE(text.str().find("\ndevices (whole trace, the 1 dropped warm-up iteration included):\n"), std::string::npos)
      << text.str();
  EXPECT_NE(text.str().find("\ntop kernels (whole trace, the 1 dropped warm-up iteration included: 12 launches"),
            std::string::npos)
      << text.str();
  EXPECT_NE(MarkdownReport(r).find("**Top kernels** (of the whole trace, the 1 dropped warm-up iteration included):"),
            std::string::npos);
  EXPECT_NE(MarkdownReport(r).find("**Warm-up** " + MarkdownEscape(summary)), std::string::npos);
  EXPECT_NE(HtmlReport(r).find(HtmlEscape(summary)), std::string::npos);

  AnalysisConfig fixed;
  fixed.iterations.skip = 0;
  const json k = Report(WarmupTrace(), fixed);
  EXPECT_EQ(k["options"]["skip"], 0);
  EXPECT_EQ(k["iteration_source"]["warmup"]["mode"], "fixed");
  EXPECT_EQ(k["iteration_source"]["warmup"]["summary"], "none dropped (--skip 0)");
  EXPECT_TRUE(k["iteration_source"]["warmup"]["factor"].is_null());
  std::ostringstream kept;
  PrintAnalysis(kept, k);
  EXPECT_EQ(kept.str().find("warm-up"), std::string::npos);  // nothing dropped, nothing judged

  fixed.iterations.skip = 2;
  const json two = Report(WarmupTrace(), fixed);
  EXPECT_EQ(two["iteration_source"]["warmup"]["summary"],
            "dropped the first 2 of 6 iterations (--skip 2): iteration 0 100.000 ms, iteration 1 1.000 ms; "
            "--skip 0 keeps them");
}

TEST(Warmup, ASteadyRunSaysNoneWasDroppedAndWhy) {
  Trace t;
  for (int i = 0; i < 4; ++i) {
    AddRange(t, "step " + std::to_string(i), i * kMs, (i + 1) * kMs);
    AddKernel(t, "gemm", i * kMs, i * kMs + 500 * kUs);
  }
  EXPECT_EQ(Report(t)["iteration_source"]["warmup"]["summary"],
            "none dropped (--skip auto): the first iteration took 1.00x the median 1.000 ms of the rest "
            "(warm-up: more than 2x)");
  Trace three;
  for (int i = 0; i < 3; ++i) AddRange(three, "step " + std::to_string(i), i * kMs, (i + 1) * kMs);
  AddKernel(three, "gemm", 0, 500 * kUs);
  EXPECT_EQ(Report(three)["iteration_source"]["warmup"]["summary"],
            "none dropped (--skip auto): 3 iterations, too few to tell warm-up from the steady state (4 needed)");
}

std::string Printed(const Comparison& c) {
  std::ostringstream out;
  PrintComparison(out, c);
  return out.str();
}

TEST(Warmup, CompareSaysWhichSideDroppedWarmup) {
  const json dropped = Report(WarmupTrace());
  AnalysisConfig all;
  all.iterations.skip = 0;
  const json kept = Report(WarmupTrace(), all);
  Comparison c = CompareReports(kept, dropped, {}, "base.json", "new.json");
  const std::string text = Printed(c);
  EXPECT_NE(text.find("  base: base.json (n = 6, CV"), std::string::npos) << text;
  EXPECT_NE(text.find("  new:  new.json (n = 5 of 6, 1 warm-up dropped, CV"), std::string::npos) << text;
  EXPECT_NE(text.find("  warm-up, new: dropped the first of 6 iterations (--skip auto)"), std::string::npos) << text;
  EXPECT_EQ(text.find("warm-up, base"), std::string::npos) << text;
  EXPECT_NE(ComparisonMarkdown(c).find("- Warm-up, new: dropped the first of 6 iterations"), std::string::npos);
  const json j = ComparisonToJson(c);
  EXPECT_EQ(j["new"]["warmup_skipped"], 1);
  EXPECT_EQ(j["new"]["iterations_found"], 6);
  EXPECT_EQ(j["base"]["warmup_skipped"], 0);
  EXPECT_TRUE(c.notes.empty() || c.notes.front().find("warm-up") == std::string::npos);

  // A report from before warm-up detection (no iteration_source.warmup) keeps every iteration:
  // a note says so when the other side dropped some.
  json old = kept;
  old["iteration_source"].erase("warmup");
  Comparison o = CompareReports(old, dropped, {}, "old.json", "new.json");
  const std::string note =
      "old.json was analysed before warm-up detection and keeps all 6 iterations while new.json dropped 1 as "
      "warm-up: re-run tracegate analyze on its trace";
  EXPECT_NE(std::find(o.notes.begin(), o.notes.end(), note), o.notes.end());
  // One from before the warm-up line that dropped iterations with --skip N: said from its counts.
  json fixed = dropped;
  fixed["iteration_source"].erase("warmup");
  const std::string fixed_text = Printed(CompareReports(fixed, dropped, {}, "old.json", "new.json"));
  EXPECT_NE(fixed_text.find("  warm-up, base: dropped the first 1 of 6 iterations (--skip 1)\n"), std::string::npos)
      << fixed_text;
}

TEST(CompareFamilies, KernelFamilyNames) {
  EXPECT_EQ(
      KernelFamilyName("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
                       "std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)"),
      "at::native::vectorized_elementwise_kernel<CUDAFunctor_add<float>>");
  EXPECT_EQ(KernelFamilyName("void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::"
                             "launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, "
                             "at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#7}::"
                             "operator()() const::{lambda(float)#1}, std::array<char*, 2ul> >(int, "
                             "at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, "
                             "c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()() "
                             "const::{lambda()#7}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul>)"),
            "at::native::vectorized_elementwise_kernel<launch_clamp_scalar>");
  EXPECT_EQ(KernelFamilyName("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<int>, "
                             "std::array<char*, 1ul> >(int, at::native::FillFunctor<int>, std::array<char*, 1ul>)"),
            "at::native::vectorized_elementwise_kernel<FillFunctor<int>>");
  EXPECT_EQ(KernelFamilyName("void at::native::elementwise_kernel<128, 2, at::native::AUnaryFunctor<float, float, "
                             "float, at::native::binary_internal::MulFunctor<float> > >(int, "
                             "at::native::AUnaryFunctor<float, float, float, "
                             "at::native::binary_internal::MulFunctor<float> >)"),
            "at::native::elementwise_kernel<AUnaryFunctor<float, float, float, MulFunctor<float>>>");
  EXPECT_EQ(KernelFamilyName("triton_poi_fused__native_batch_norm_legit_no_training_add_relu_12"),
            "triton_poi_fused__native_batch_norm_legit_no_training_add_relu_*");
  EXPECT_EQ(KernelFamilyName("triton_per_fused__native_batch_norm_legit_no_training_add_mean_relu_23"),
            "triton_per_fused__native_batch_norm_legit_no_training_add_mean_relu_*");
  EXPECT_EQ(KernelFamilyName("triton_red_fused_mean_0"), "triton_red_fused_mean_*");
  EXPECT_EQ(KernelFamilyName("triton_poi_fused_add"), "triton_poi_fused_add");  // no counter
  EXPECT_EQ(KernelFamilyName("_fwd_kernel"), "_fwd_kernel");                    // a hand-written Triton kernel
  EXPECT_EQ(KernelFamilyName("void cudnn::bn_fw_inf_1C11_kernel_NCHW<float, float, true, 1>(float, float)"),
            "cudnn::bn_fw_inf_1C11_kernel_NCHW");
  EXPECT_EQ(KernelFamilyName("void at::native::reduce_kernel<512, 1>(int)"), "at::native::reduce_kernel");
  // As Nsight Systems demangles them: casts on numbers, [lambda ...], <unnamed>, gpu_kernel_impl<F>.
  EXPECT_EQ(KernelFamilyName("void at::native::elementwise_kernel<(int)128, (int)2, void "
                             "at::native::gpu_kernel_impl_nocast<at::native::BinaryFunctor<float, float, float, "
                             "at::native::binary_internal::MulFunctor<float>>>(at::TensorIteratorBase &, const T1 "
                             "&)::[lambda(int) (instance 1)]>(int, T3)"),
            "at::native::elementwise_kernel<BinaryFunctor<float, float, float, MulFunctor<float>>>");
  EXPECT_EQ(
      KernelFamilyName("void at::native::elementwise_kernel<(int)128, (int)4, void "
                       "at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda("
                       "at::TensorIteratorBase &)::[lambda() (instance 3)]::operator ()() const::[lambda() "
                       "(instance 12)]::operator ()() const::[lambda(float) (instance 1)]>(at::TensorIteratorBase "
                       "&, const T1 &)::[lambda(int) (instance 1)]>(int, T3)"),
      "at::native::elementwise_kernel<direct_copy_kernel_cuda>");
  EXPECT_EQ(
      KernelFamilyName("void at::native::vectorized_elementwise_kernel<(int)4, void "
                       "at::native::<unnamed>::pow_tensor_scalar_kernel_impl<float, float>(at::TensorIteratorBase "
                       "&, T2)::[lambda(float) (instance 1)], std::array<char *, (unsigned long)2>>(int, T2, T3)"),
      "at::native::vectorized_elementwise_kernel<pow_tensor_scalar_kernel_impl<float, float>>");
  EXPECT_EQ(KernelFamilyName("void at::native::unrolled_elementwise_kernel<at::native::CUDAFunctor_add<float>, "
                             "std::array<char *, (unsigned long)3>, (int)4>(int, T1, T2)"),
            "at::native::unrolled_elementwise_kernel<CUDAFunctor_add<float>>");
}

// Per iteration, base: conv 3 ms, bn 1 ms, add 0.5 ms, relu 0.5 ms (4 launches); new (compiled):
// conv 3 ms and two generated kernels of one fused pattern, 0.4 ms each (3 launches), but 2 ms
// more host time between them: the latency grows while the kernels' time falls.
Trace ModelTrace(bool compiled) {
  Trace t;
  t.devices.push_back(Device{0, "NVIDIA H200", 132, 0, 0, 9, 0});
  const char* add =
      "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
      "std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)";
  const char* relu =
      "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<int>, "
      "std::array<char*, 1ul> >(int, at::native::FillFunctor<int>, std::array<char*, 1ul>)";
  for (int i = 0; i < 5; ++i) {
    const TimeNs s = i * 10 * kMs;
    AddRange(t, "iteration " + std::to_string(i), s, s + (compiled ? 8 : 6) * kMs);
    AddKernel(t, "void cudnn::conv<float>(float)", s, s + 3 * kMs);
    if (compiled) {
      AddKernel(t, "triton_poi_fused_add_relu_0", s + 5 * kMs, s + 5 * kMs + 400 * kUs);
      AddKernel(t, "triton_poi_fused_add_relu_1", s + 7 * kMs, s + 7 * kMs + 400 * kUs);
    } else {
      AddKernel(t, "void cudnn::bn_fw_inf_1C11_kernel_NCHW<float, float, true, 1>(float)", s + 3 * kMs, s + 4 * kMs);
      AddKernel(t, add, s + 4 * kMs, s + 4 * kMs + 500 * kUs);
      AddKernel(t, relu, s + 5 * kMs, s + 5 * kMs + 500 * kUs);
    }
  }
  return t;
}

const FamilyDelta* FindFamily(const Comparison& c, const std::string& name) {
  for (const FamilyDelta& f : c.families)
    if (f.name == name) return &f;
  return nullptr;
}

TEST(CompareFamilies, WhatTheCompilerFusedPerIteration) {
  const Comparison c = CompareReports(Report(ModelTrace(false)), Report(ModelTrace(true)), {});
  const FamilyDelta* bn = FindFamily(c, "cudnn::bn_fw_inf_1C11_kernel_NCHW");
  const FamilyDelta* add = FindFamily(c, "at::native::vectorized_elementwise_kernel<CUDAFunctor_add<float>>");
  const FamilyDelta* fused = FindFamily(c, "triton_poi_fused_add_relu_*");
  ASSERT_TRUE(bn && add && fused);
  EXPECT_EQ(bn->change, KernelChange::kRemoved);
  EXPECT_NEAR(bn->delta_ms, -1.0, 1e-12);
  EXPECT_EQ(bn->base_launches, 1.0);
  EXPECT_EQ(bn->new_launches, 0.0);
  EXPECT_EQ(add->change, KernelChange::kRemoved);
  EXPECT_NEAR(add->base_ms, 0.5, 1e-12);
  EXPECT_EQ(fused->change, KernelChange::kAdded);
  EXPECT_EQ(fused->variants, 2u);
  EXPECT_NEAR(fused->new_ms, 0.8, 1e-12);
  EXPECT_EQ(fused->new_launches, 2.0);
  EXPECT_EQ(FindFamily(c, "cudnn::conv"), nullptr);  // unchanged: not listed
  // Per iteration: kernels 5 ms -> 3.8 ms, launches 4 -> 3.
  size_t seen = 0;
  for (const MetricDelta& m : c.metrics) {
    if (m.key == "kernel_ms_per_iter") {
      EXPECT_NEAR(m.delta, -1.2, 1e-9);
      ++seen;
    }
    if (m.key == "launches_per_iter") {
      EXPECT_EQ(m.base, 4.0);
      EXPECT_EQ(m.next, 3.0);
      ++seen;
    }
  }
  EXPECT_EQ(seen, 2u);
  // The latency grew (6 -> 8 ms) while the kernels' time fell: the verdict says so.
  ASSERT_EQ(c.verdict, Verdict::kRegression);
  EXPECT_NE(c.verdict_text.find("; kernel GPU time -1.200 ms/iter overall (grew: triton_poi_fused_add_relu_* +0.800 "
                                "ms/iter (2 variants)); phases: idle"),
            std::string::npos)
      << c.verdict_text;
  const std::string text = Printed(c);
  EXPECT_NE(text.find("  kernel families removed (in base only): 3, -2.000 ms and -3.0 launches per iteration\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  kernel families added (in new only): 1, +0.800 ms and +2.0 launches per iteration\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("1.0 -> 0.0    cudnn::bn_fw_inf_1C11_kernel_NCHW\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  kernels that grew (ms per iteration; all kernels -1.200):\n"), std::string::npos) << text;
  EXPECT_NE(text.find("0.0 -> 2.0    triton_poi_fused_add_relu_* (2 variants)\n"), std::string::npos) << text;
  const std::string md = ComparisonMarkdown(c);
  EXPECT_EQ(md.rfind("**REGRESSION: avg\\_latency\\_ms 6.000 -&gt; 8.000 ms", 0), 0u) << md;
  // The verdict's clauses follow it: the kernels as a whole got faster, the change is in the phases.
  EXPECT_NE(md.find("\n- kernel GPU time -1.200 ms/iter overall (grew: triton\\_poi\\_fused"), std::string::npos) << md;
  EXPECT_NE(md.find("- 3 removed (in base only), -2.000 ms and -3.0 launches"), std::string::npos) << md;
  EXPECT_NE(md.find("| `triton_poi_fused_add_relu_*` ×2 | added | 0.000 → 0.800 | +0.800 | 0.0 → 2.0 |"),
            std::string::npos)
      << md;
  const json j = ComparisonToJson(c);
  for (const json& f : j["kernel_families"]) {
    if (f["name"] == "triton_poi_fused_add_relu_*") {
      EXPECT_EQ(f["new_launches_per_iteration"], 2.0);
    }
  }
}

}  // namespace
}  // namespace tg
