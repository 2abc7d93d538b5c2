#include "analyzer/import/kineto/kineto_vocab.h"

#include <utility>

#include "analyzer/vocab/kineto_names.h"

namespace tg::internal {

namespace {

// The text between the first '(' and the last ')' of a name, or empty.
std::string_view Parenthesised(std::string_view name) {
  size_t open = name.find('(');
  size_t close = name.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return {};
  return name.substr(open + 1, close - open - 1);
}

}  // namespace

// Kineto's ActivityType names (libkineto/src/ActivityType.cpp) and the capitalised names its
// 2020-2021 output_json.cpp wrote. Everything else (Trace, overhead, cpu_instant_event,
// cuda_profiler_range, gpu_mem, xpu/mtia/privateuse1 runtimes, ...) is not modelled.
// The cases are the names' lengths (sizeof counts the terminating NUL).
Cat Classify(std::string_view c) {
  static_assert(sizeof(kineto_cat::kKernel) == 7 && sizeof(kineto_cat::kCpuOp) == 7 && sizeof(kineto_cat::kSync) == 10);
  static_assert(sizeof(kineto_cat::kMemcpy) == 11 && sizeof(kineto_cat::kMemset) == 11 &&
                sizeof(kineto_cat::kDriver) == 12);
  static_assert(sizeof(kineto_cat::kRuntime) == 13 && sizeof(kineto_cat::kUserAnnotation) == 16);
  static_assert(sizeof(kineto_cat::kPythonFunction) == 16 && sizeof(kineto_cat::kGpuUserAnnotation) == 20);
  switch (c.size()) {
    case 6:
      if (c == kineto_cat::kKernel || c == "Kernel") return Cat::kKernel;
      if (c == kineto_cat::kCpuOp) return Cat::kCpuOp;
      if (c == "Memcpy") return Cat::kMemcpy;
      if (c == "Memset") return Cat::kMemset;
      if (c == "Driver") return Cat::kDriver;  // not seen in any Kineto version; kept for symmetry
      break;
    case 7: if (c == "Runtime") return Cat::kRuntime; break;
    case 8: if (c == "Operator") return Cat::kCpuOp; break;
    case 9:
      if (c == kineto_cat::kSync) return Cat::kSync;
      break;
    case 10:
      if (c == kineto_cat::kMemcpy) return Cat::kMemcpy;
      if (c == kineto_cat::kMemset) return Cat::kMemset;
      break;
    case 11:
      if (c == kineto_cat::kDriver) return Cat::kDriver;
      break;
    case 12:
      if (c == kineto_cat::kRuntime) return Cat::kRuntime;
      break;
    case 15:
      if (c == kineto_cat::kUserAnnotation) return Cat::kUserAnnotation;
      if (c == kineto_cat::kPythonFunction) return Cat::kPythonFunction;
      break;
    case 19:
      if (c == kineto_cat::kGpuUserAnnotation) return Cat::kGpuUserAnnotation;
      break;
    default: break;
  }
  return Cat::kUnmodelled;
}

bool IsLaunchFlow(std::string_view cat) {
  return cat == kineto_cat::kLaunchFlow || cat == "async_gpu" || cat == "async";
}

// "Memcpy HtoD (Pageable -> Device)" (Kineto's memcpyName in CuptiActivity.cpp).
void ParseMemcpyName(std::string_view name, Memcpy& m) {
  constexpr std::string_view kPrefix = "Memcpy ";
  if (name.substr(0, kPrefix.size()) == kPrefix) {
    std::string_view rest = name.substr(kPrefix.size());
    m.kind = CopyKindFromName(rest.substr(0, rest.find(' ')));
  }
  std::string_view kinds = Parenthesised(name);
  size_t arrow = kinds.find(" -> ");
  if (arrow != std::string_view::npos) {
    m.src_kind = MemKindFromKineto(kinds.substr(0, arrow));
    m.dst_kind = MemKindFromKineto(kinds.substr(arrow + 4));
  }
}

SyncKind SyncKindFrom(std::string_view s) { return SyncKindFromKineto(s); }

MemKind ParseMemsetName(std::string_view name) { return MemKindFromKineto(Parenthesised(name)); }

}  // namespace tg::internal
