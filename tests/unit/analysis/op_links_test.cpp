// LinkOps: the innermost host op enclosing each GPU row's launch call; and the classes the op
// gives (OpKernelClass, ClassifyKernels with ops), which fusion and memory_bound read.
#include "tracegate/analyzer/op_links.h"

#include <gtest/gtest.h>

#include <string>

#include "analyzer/analysis/correlation.h"
#include "trace_builder.h"
#include "tracegate/analyzer/analysis.h"
#include "tracegate/analyzer/kernel_class.h"

namespace tg {

using internal::OpBaseName;
namespace {

using testing::AddApi;
using testing::AddKernel;
using testing::AddRange;

// A cpu_op range, as the Kineto importer makes them.
size_t AddRangeIn(Trace& t, std::string_view domain, std::string_view name, TimeNs start, TimeNs end, int64_t pid = 100,
                  int64_t tid = 100) {
  Range r;
  r.start = start;
  r.end = end;
  r.name = t.strings.Intern(name);
  r.domain = t.strings.Intern(domain);
  r.pid = pid;
  r.tid = tid;
  t.ranges.Add(r);
  return t.ranges.size() - 1;
}
size_t AddOp(Trace& t, std::string_view name, TimeNs start, TimeNs end, int64_t pid = 100, int64_t tid = 100) {
  return AddRangeIn(t, "cpu_op", name, start, end, pid, tid);
}

// A kernel launched by a call at `at` on (pid, tid), with correlation `corr`.
size_t Launch(Trace& t, std::string_view kernel, TimeNs at, int64_t corr, int64_t pid = 100, int64_t tid = 100) {
  AddApi(t, "cudaLaunchKernel", at, at + 5, corr, pid, tid);
  return AddKernel(t, kernel, 10'000 + at, 10'000 + at + 50, 0, 7, corr);
}

std::string Op(const Trace& t, StringId id) { return std::string(t.Name(id)); }

TEST(OpLinks, TheInnermostEnclosingOpOfTheLaunchCallOnItsThread) {
  Trace t;
  AddOp(t, "aten::linear", 0, 1000);
  AddOp(t, "aten::addmm", 100, 900);
  AddOp(t, "aten::empty", 150, 160);          // ends before the launch: not it
  AddOp(t, "aten::mul", 200, 900, 100, 101);  // another thread: never it
  size_t in_addmm = Launch(t, "k0", 300, 1);
  size_t in_linear = Launch(t, "k1", 950, 2);
  size_t outside = Launch(t, "k2", 2000, 3);
  size_t at_end = Launch(t, "k3", 900, 4);  // [start, end): 900 is past addmm, inside linear
  size_t other_thread = Launch(t, "k4", 300, 5, 100, 101);
  size_t no_call = AddKernel(t, "k5", 20'000, 20'050, 0, 7, 99);
  const OpLinks links = LinkOps(t);
  EXPECT_EQ(links.source, OpSource::kCpuOp);
  ASSERT_EQ(links.kernels.size(), t.kernels.size());
  EXPECT_EQ(Op(t, links.kernels[in_addmm]), "aten::addmm");
  EXPECT_EQ(Op(t, links.kernels[in_linear]), "aten::linear");
  EXPECT_EQ(links.kernels[outside], StringTable::kEmpty);
  EXPECT_EQ(links.kernel_launch_found[outside], 1);
  EXPECT_EQ(Op(t, links.kernels[at_end]), "aten::linear");
  EXPECT_EQ(Op(t, links.kernels[other_thread]), "aten::mul");
  EXPECT_EQ(links.kernels[no_call], StringTable::kEmpty);
  EXPECT_EQ(links.kernel_launch_found[no_call], 0);
  // Per API call too.
  ASSERT_EQ(links.api.size(), t.api_calls.size());
  EXPECT_EQ(Op(t, links.api[0]), "aten::addmm");
}

TEST(OpLinks, RangesInAnyFileOrderNestAndTheLastStartedOpenOneIsInnermost) {
  Trace t;
  // A profiler writes an enclosing op after what it encloses; same starts: the shorter is inner.
  AddOp(t, "aten::addmm", 100, 500);
  AddOp(t, "aten::linear", 100, 1000);
  AddOp(t, "inner_late", 600, 2000);  // overlaps linear's end without nesting
  AddOp(t, "aten::copy_", 0, 50);
  size_t a = Launch(t, "a", 100, 1);   // addmm and linear start here: addmm
  size_t b = Launch(t, "b", 700, 2);   // linear [100, 1000) and inner_late [600, 2000): the later start
  size_t c = Launch(t, "c", 1500, 3);  // linear has ended: inner_late
  size_t d = Launch(t, "d", 10, 4);
  const OpLinks links = LinkOps(t);
  EXPECT_EQ(Op(t, links.kernels[a]), "aten::addmm");
  EXPECT_EQ(Op(t, links.kernels[b]), "inner_late");
  EXPECT_EQ(Op(t, links.kernels[c]), "inner_late");
  EXPECT_EQ(Op(t, links.kernels[d]), "aten::copy_");
}

TEST(OpLinks, CopiesAndMemsetsAndProcessesThatReuseCorrelationIds) {
  Trace t;
  AddOp(t, "aten::copy_", 0, 100, 100, 1);
  AddOp(t, "aten::zero_", 0, 100, 200, 1);  // another process, same tid and times
  AddApi(t, "cudaMemcpyAsync", 10, 20, 7, 100, 1);
  AddApi(t, "cudaMemsetAsync", 30, 40, 7, 200, 1);  // the same correlation id in process 200
  size_t copy = testing::AddCopy(t, CopyKind::kHtoD, 64, 1000, 1100, MemKind::kPinned, MemKind::kDevice, 0, 7, 7);
  t.memcpys.pid.set(copy, 100);
  size_t set = testing::AddMemset(t, 64, 1200, 1300);
  t.memsets.correlation.set(set, 7);
  t.memsets.pid.set(set, 200);
  const OpLinks links = LinkOps(t);
  EXPECT_EQ(Op(t, links.memcpys[copy]), "aten::copy_");
  EXPECT_EQ(Op(t, links.memsets[set]), "aten::zero_");
}

TEST(OpLinks, WithoutCpuOpsTheHostsNvtxRangesAreTheOps) {
  Trace t;
  AddRange(t, "forward", 0, 1000);  // NVTX, default domain
  AddRange(t, "matmul_block", 100, 500);
  AddRangeIn(t, "python_function", "model.py(12): forward", 100, 400);  // a Python frame is no op
  size_t gpu = AddRange(t, "on the GPU", 100, 300);                     // GPU-projected range
  t.ranges.on_gpu[gpu] = true;
  size_t k = Launch(t, "k", 200, 1);
  size_t outer = Launch(t, "k", 700, 2);
  OpLinks links = LinkOps(t);
  EXPECT_EQ(links.source, OpSource::kNvtx);
  EXPECT_EQ(Op(t, links.kernels[k]), "matmul_block");
  EXPECT_EQ(Op(t, links.kernels[outer]), "forward");
  // Once there is a cpu_op, the other ranges are no ops.
  AddOp(t, "aten::mm", 650, 800);
  links = LinkOps(t);
  EXPECT_EQ(links.source, OpSource::kCpuOp);
  EXPECT_EQ(links.kernels[k], StringTable::kEmpty);
  EXPECT_EQ(Op(t, links.kernels[outer]), "aten::mm");
}

TEST(OpLinks, OpBaseNameDropsEmitNvtxsPerCallSuffixOnly) {
  EXPECT_EQ(OpBaseName("aten::addmm, seq = 45339, op_id = 990389"), "aten::addmm");
  EXPECT_EQ(OpBaseName("flash_attn::_flash_attn_forward, op_id = 990441"), "flash_attn::_flash_attn_forward");
  EXPECT_EQ(OpBaseName("aten::mul, sizes = [[2], []]"), "aten::mul");
  EXPECT_EQ(OpBaseName("torch::autograd::CppNode<Foo<int, float>>"), "torch::autograd::CppNode<Foo<int, float>>");
  EXPECT_EQ(OpBaseName("aten::mm"), "aten::mm");
}

TEST(OpLinks, ATraceWithoutRangesHasNoOps) {
  Trace t;
  size_t k = Launch(t, "k", 200, 1);
  const OpLinks links = LinkOps(t);
  EXPECT_EQ(links.source, OpSource::kNone);
  EXPECT_EQ(links.kernels[k], StringTable::kEmpty);
  EXPECT_EQ(links.kernel_launch_found[k], 1);
}

TEST(OpKernelClass, OpsThatSayTheWorkDecideTheRestDoNot) {
  struct Case {
    const char* op;
    bool decides;
    KernelClass cls;
  };
  const Case cases[] = {
      {"aten::mm", true, KernelClass::kGemm},
      {"aten::addmm", true, KernelClass::kGemm},
      {"aten::linear", true, KernelClass::kGemm},
      {"aten::bmm", true, KernelClass::kGemm},
      {"aten::baddbmm", true, KernelClass::kGemm},
      {"aten::matmul", true, KernelClass::kGemm},
      {"aten::_scaled_mm", true, KernelClass::kGemm},
      {"aten::_addmm_activation", true, KernelClass::kGemm},
      {"aten::_int_mm", true, KernelClass::kGemm},
      {"aten::addmm, seq = 12, sizes = [[64], [64, 64]]", true, KernelClass::kGemm},  // emit_nvtx
      {"aten::scaled_dot_product_attention", true, KernelClass::kAttention},
      {"aten::_scaled_dot_product_flash_attention", true, KernelClass::kAttention},
      {"aten::_scaled_dot_product_efficient_attention_backward", true, KernelClass::kAttention},
      {"aten::_flash_attention_forward", true, KernelClass::kAttention},
      {"aten::_efficient_attention_forward", true, KernelClass::kAttention},
      {"vllm::unified_attention_with_output", true, KernelClass::kAttention},
      {"_C::paged_attention_v1", true, KernelClass::kAttention},
      {"flash_attn::_flash_attn_forward", true, KernelClass::kAttention},
      {"aten::layer_norm", true, KernelClass::kNormalization},
      {"aten::native_layer_norm", true, KernelClass::kNormalization},
      {"aten::native_batch_norm_backward", true, KernelClass::kNormalization},
      {"aten::cudnn_batch_norm", true, KernelClass::kNormalization},
      {"aten::group_norm", true, KernelClass::kNormalization},
      {"aten::rms_norm", true, KernelClass::kNormalization},
      {"aten::_fused_rms_norm", true, KernelClass::kNormalization},
      {"_C::fused_add_rms_norm", true, KernelClass::kNormalization},
      {"aten::conv2d", true, KernelClass::kConv},
      {"aten::convolution", true, KernelClass::kConv},
      {"aten::_convolution", true, KernelClass::kConv},
      {"aten::cudnn_convolution", true, KernelClass::kConv},
      {"aten::convolution_backward", true, KernelClass::kConv},
      {"c10d::allreduce_", true, KernelClass::kCommunication},
      {"nccl:all_reduce", true, KernelClass::kCommunication},
      {"record_param_comms", true, KernelClass::kCommunication},
      {"aten::copy_", false, KernelClass::kOther},
      {"aten::add", false, KernelClass::kOther},
      {"aten::mul", false, KernelClass::kOther},
      {"aten::_softmax", false, KernelClass::kOther},
      {"aten::mm_out_of_place_helper", false, KernelClass::kOther},  // not aten::mm
      {"aten::_convert_indices_from_coo_to_csr", false, KernelClass::kOther},
      {"mymodule::mm", false, KernelClass::kOther},  // gemm ops are ATen's
      {"", false, KernelClass::kOther},
  };
  for (const Case& c : cases) {
    KernelClass got = KernelClass::kOther;
    EXPECT_EQ(OpKernelClass(c.op, &got), c.decides) << c.op;
    if (c.decides) {
      EXPECT_EQ(got, c.cls) << c.op;
    }
  }
}

TEST(OpKernelClass, ClassifyKernelsAsksTheOpFirstThenTheName) {
  Trace t;
  AddOp(t, "aten::addmm", 0, 100);
  AddOp(t, "aten::add", 200, 300);
  AddOp(t, "aten::cudnn_convolution", 400, 500);
  AddOp(t, "aten::_flash_attention_forward", 600, 700);
  AddOp(t, "c10d::allreduce_", 800, 900);
  // A name that reads as element-wise, launched by a GEMM op: gemm (hipBLASLt's bias epilogue).
  size_t gemm = Launch(t, "my_bias_add_kernel", 10, 1);
  size_t add = Launch(t, "my_bias_add_kernel", 210, 2);  // aten::add says nothing: the name
  size_t layout = Launch(t, "void cudnn::ops::nchwToNhwcKernel<float>(int)", 410, 3);  // stays transform
  size_t conv = Launch(t, "sm80_xmma_something", 420, 4);
  size_t attn = Launch(t, "void at::native::reduce_kernel<512>(int)", 610, 5);
  size_t coll = Launch(t, "copy_into_flat_buffer", 810, 6);  // transform by name stays transform
  size_t gather = Launch(t, "my_gather_kernel", 820, 7);
  size_t unlinked = AddKernel(t, "my_bias_add_kernel", 50'000, 50'010, 0, 7, 99);
  KernelClassifier classifier;
  ASSERT_TRUE(KernelClassifier::Create({}, &classifier).ok());
  const OpLinks links = LinkOps(t);
  const std::vector<KernelClass> by_op = ClassifyKernels(t, classifier, &links.kernels);
  EXPECT_EQ(by_op[gemm], KernelClass::kGemm);
  EXPECT_EQ(by_op[add], KernelClass::kElementwise);
  EXPECT_EQ(by_op[layout], KernelClass::kTransform);
  EXPECT_EQ(by_op[conv], KernelClass::kConv);
  EXPECT_EQ(by_op[attn], KernelClass::kAttention);
  EXPECT_EQ(by_op[coll], KernelClass::kTransform);
  EXPECT_EQ(by_op[gather], KernelClass::kCommunication);
  EXPECT_EQ(by_op[unlinked], KernelClass::kElementwise);
  // Without ops: the names alone.
  const std::vector<KernelClass> by_name = ClassifyKernels(t, classifier);
  EXPECT_EQ(by_name[gemm], KernelClass::kElementwise);
  EXPECT_EQ(by_name[attn], KernelClass::kReduction);
  // GEMM and attention kernels are neither followers nor likely memory-bound.
  for (KernelClass c : {KernelClass::kGemm, KernelClass::kAttention}) {
    EXPECT_FALSE(IsFusableFollower(c));
    EXPECT_FALSE(IsLikelyMemoryBound(c));
  }
}

// Through RunAnalysis: the op link is in the analysis, and a GEMM whose name reads as element-wise
// is neither a memory_bound member nor a fusion follower.
TEST(OpKernelClass, MemoryBoundAndFusionFollowTheOpsClass) {
  Trace t;
  AddRange(t, "ProfilerStep#1", 0, 100'000);
  AddRange(t, "ProfilerStep#2", 100'000, 200'000);
  for (int step = 0; step < 2; ++step) {
    const TimeNs base = step * 100'000;
    AddOp(t, "aten::relu", base + 100, base + 200);
    AddOp(t, "aten::addmm", base + 300, base + 400);
    AddApi(t, "cudaLaunchKernel", base + 110, base + 120, 10 * step + 1);
    AddApi(t, "cudaLaunchKernel", base + 310, base + 320, 10 * step + 2);
    // relu then the GEMM right after it: a chain only if the GEMM were a follower.
    AddKernel(t, "relu_kernel", base + 1'000, base + 40'000, 0, 7, 10 * step + 1);
    AddKernel(t, "like_bias_add_kernel", base + 40'100, base + 90'000, 0, 7, 10 * step + 2);
  }
  AnalysisConfig config;
  Analysis a;
  ASSERT_TRUE(RunAnalysis(t, config, &a).ok());
  ASSERT_EQ(a.ops.kernels.size(), t.kernels.size());
  EXPECT_EQ(Op(t, a.ops.kernels[1]), "aten::addmm");
  EXPECT_EQ(a.kernel_classes[1], KernelClass::kGemm);
  EXPECT_EQ(a.kernel_classes[0], KernelClass::kActivation);
  for (const FusionCandidate& c : a.fusion)
    for (size_t k = 1; k < c.classes.size(); ++k) EXPECT_NE(c.classes[k], KernelClass::kGemm);
  bool memory_bound = false;
  for (const Finding& f : a.findings) {
    if (f.id != "memory_bound") continue;
    memory_bound = true;
    ASSERT_FALSE(f.involved.empty());
    for (const Involved& i : f.involved) EXPECT_EQ(i.name.find("like_bias_add"), std::string::npos) << i.name;
  }
  EXPECT_TRUE(memory_bound);  // the ReLUs alone take 39% of the steps
}

}  // namespace
}  // namespace tg
