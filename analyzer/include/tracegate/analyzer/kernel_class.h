// Kernel classes: by the host op that launched the kernel first, by name as the fallback.
//
// By op (OpKernelClass): the innermost host op enclosing the kernel's launch call
// (tracegate/analyzer/op_links.h) decides where the op says what the work is: aten::mm / addmm /
// linear / bmm / baddbmm / matmul / _scaled_mm ... are gemm; scaled_dot_product / flash / efficient
// / paged / unified attention ops are attention; layer / batch / group / instance / RMS norm ops
// normalization; convolution ops conv; c10d / NCCL ops communication. Any other op (aten::copy_,
// aten::add, ...) says nothing and the name decides. One exception: a kernel whose name says it
// is a layout conversion or copy (transform) stays transform inside a gemm / conv / norm /
// attention op (cuDNN's nchwToNhwc inside aten::cudnn_convolution moves data; channels_last
// removes it).
//
// By name, a heuristic that every rule relying on it must say it uses. Each class
// has one case-insensitive regular expression (std::regex ECMAScript, searched in the demangled
// name without its parameter list, whose types are noise); classes are tried in declaration order
// and the first match wins. The order is chosen so that a kernel's main work decides, not the
// epilogue or template arguments that its name lists:
//   communication  first: "ncclDevKernel_AllReduce_Sum" is a collective, not a reduction;
//   attention      before gemm: ck_tile's "FmhaBatchPrefill..." and flash kernels name their
//                  block GEMMs in template arguments;
//   conv, gemm     before the rest: "fused_conv_bias_add_relu", "conv_bn_relu", cuDNN's
//                  "ampere_scudnn_128x64_relu_interior_nn" and CUTLASS GEMMs whose template
//                  arguments name "cutlass::transform::..." or a ReLU epilogue are conv / gemm;
//                  hipBLASLt / Tensile's "Cijk_Alik_Bljk_..._Bias_..." is gemm, not a bias add;
//                  conv before gemm: "implicit_convolve_sgemm" is a convolution;
//   transform      before element-wise: PyTorch's copies are elementwise_kernel<direct_copy...>;
//   normalization  before activation: "cudnn::bn_fw_inf_1C11_kernel_NCHW", "bn_relu" fusions;
//   activation     before element-wise: "gelu" or clamp_min (PyTorch's relu) inside an
//                  elementwise kernel's template arguments, and "add_relu_fused", make it
//                  activation (both are fusable followers, so fusion does not depend on it);
//   element-wise   before reduction; reduction last.
// Short tokens (add, mul, bias, scale, mm, cat, sum, ...) only match between non-letters, so
// "padding", "address" and "comm" do not. Before the patterns, kernels TorchInductor generated
// are classified by the kind their name starts with (kTritonPrefixes): their names list every
// fused ATen op, so "triton_poi_fused_convolution_relu_0" is a pointwise epilogue, not a conv.
// Users can replace any class's pattern (rules.json "kernel_classes"); an empty pattern turns
// the class off. Case-insensitivity is done by lower-casing the name and the pattern's letters
// (not the letter after a backslash, so \D, \W, \S keep their meaning; [[:upper:]] never matches).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "tracegate/analyzer/model.h"
#include "tracegate/analyzer/status.h"

namespace tg {

enum class KernelClass : uint8_t {
  kCommunication,  // NCCL / collectives
  kAttention,      // flash / fused / paged attention (FMHA, flash_fwd, attn_fwd, unified attention)
  kConv,           // convolutions (cuDNN, implicit GEMM fprop / dgrad / wgrad, Winograd, FFT)
  kGemm,           // GEMM / matmul (cuBLAS, cuBLASLt nvjet, CUTLASS, hipBLASLt / Tensile Cijk_)
  kTransform,      // transpose, permute, concat, pad, layout conversion, im2col, copies
  kNormalization,  // batch / layer / group / instance / RMS norm
  kActivation,     // relu, gelu, silu, sigmoid, tanh, clamp, threshold, ...
  kElementwise,    // add, mul, bias, scale, PyTorch (vectorized_)elementwise, Triton pointwise
  kReduction,      // softmax, reduce, sum, mean, pooling, scans
  kOther,
  kCount
};
inline constexpr size_t kKernelClassCount = static_cast<size_t>(KernelClass::kCount);
inline constexpr std::array<const char*, kKernelClassCount> kKernelClassNames{
    "communication", "attention", "conv", "gemm", "transform", "normalization", "activation", "elementwise", "reduction",
    "other"};

// TorchInductor's kernel-name prefixes and the class each one means (checked before patterns).
struct KernelNamePrefix {
  const char* prefix;
  KernelClass cls;
};
// Templates (triton_tem_) are left to the patterns: a conv template is conv, the rest gemm.
inline constexpr std::array<KernelNamePrefix, 4> kTritonPrefixes{{
    {"triton_poi_", KernelClass::kElementwise},  // pointwise
    {"triton_for_", KernelClass::kElementwise},  // foreach (one launch, many pointwise ops)
    {"triton_red_", KernelClass::kReduction},    // reduction, looped
    {"triton_per_", KernelClass::kReduction},    // persistent reduction
}};
// The default pattern of each class ("" for kOther, which is what matches nothing else).
const std::array<std::string, kKernelClassCount>& DefaultKernelClassPatterns();
bool ParseKernelClass(std::string_view name, KernelClass* out);

// Element-wise, normalisation and activation kernels: work a predecessor's epilogue can absorb.
constexpr bool IsFusableFollower(KernelClass c) {
  return c == KernelClass::kElementwise || c == KernelClass::kNormalization || c == KernelClass::kActivation;
}
// Classes whose kernels are likely memory-bound when no byte/FLOP counts are known.
constexpr bool IsLikelyMemoryBound(KernelClass c) {
  return IsFusableFollower(c) || c == KernelClass::kTransform || c == KernelClass::kReduction;
}

class KernelClassifier {
 public:
  // overrides: class name -> pattern; an unknown class or an invalid pattern is InvalidInput.
  static Status Create(const std::map<std::string, std::string>& overrides, KernelClassifier* out);
  KernelClass Classify(std::string_view demangled_name) const;
  const std::array<std::string, kKernelClassCount>& patterns() const { return patterns_; }

 private:
  std::array<std::string, kKernelClassCount> patterns_;
  std::array<std::regex, kKernelClassCount> regexes_;
};

// Whether kernel row `row` carries PyTorch's collective metadata ("Collective name" in its
// Kineto args, Kernel::collective).
inline bool HasCollectiveMetadata(const Trace& trace, size_t row) {
  return trace.kernels.collective[row] != StringTable::kEmpty;
}

// The class the host op `op` (a cpu_op or NVTX range name) gives the kernels it launches, when
// it says one (see the top of this file); false for ops that do not (aten::copy_, aten::add, "").
// A name of NVTX's emit_nvtx form ("aten::addmm, seq = 12, sizes = ...") counts by its OpBaseName.
bool OpKernelClass(std::string_view op, KernelClass* out);

// The class a kernel gets from its op's class (OpKernelClass) and its name's (Classify): the
// op's, except that a transform by name stays transform.
constexpr KernelClass CombineKernelClass(KernelClass by_op, KernelClass by_name) {
  return by_name == KernelClass::kTransform ? by_name : by_op;
}

// The class of every kernel row (one classification per distinct name and op). This is the one
// collective test every consumer reads (rules, idle causes, fusion, the communication figures):
// a kernel with collective metadata is kCommunication whatever its name; one without it is
// classified by the op that launched it (`kernel_ops`, LinkOps' per-row op, may be null), then
// by name, where the communication pattern finds NCCL's old (ncclKernel_*) and new
// (ncclDevKernel_*) kernels, RCCL's and other collectives.
// `extra_op_names` names the op ids past the trace's strings (OpLinks::extra_names).
std::vector<KernelClass> ClassifyKernels(const Trace& trace, const KernelClassifier& classifier,
                                         const std::vector<StringId>* kernel_ops = nullptr,
                                         const std::vector<std::string>* extra_op_names = nullptr);

// A short display form of a kernel name for titles: demangled, without return type, template
// arguments and parameter list ("void at::native::foo<4, bar>(int)" -> "at::native::foo").
std::string ShortKernelName(std::string_view demangled);

// Kernel names people can tell apart: a kernel's short name (ShortKernelName) and, when other
// names of the list share it, a hint from its template arguments and parameters that no other of
// them has ("MulFunctor", "BFloat16", "32"). Every report (text, Markdown, the HTML pages) labels
// its kernels with these, so the same kernel reads the same everywhere.
inline constexpr size_t kKernelHintChars = 48;
struct KernelLabel {
  std::string short_name, hint;
  // "short ‹hint›".
  std::string Text() const { return hint.empty() ? short_name : short_name + " \xE2\x80\xB9" + hint + "\xE2\x80\xBA"; }
};
// One label per distinct demangled name of `names`.
std::map<std::string, KernelLabel> KernelLabels(const std::vector<std::string>& names);

}  // namespace tg
