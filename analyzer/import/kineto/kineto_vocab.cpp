#include "analyzer/import/kineto/kineto_vocab.h"

#include <utility>

#include "analyzer/import/kineto/kineto_names.h"

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
Cat Classify(std::string_view c) {
  switch (c.size()) {
    case 6:
      if (c == "kernel" || c == "Kernel") return Cat::kKernel;
      if (c == "cpu_op") return Cat::kCpuOp;
      if (c == "Memcpy") return Cat::kMemcpy;
      if (c == "Memset") return Cat::kMemset;
      if (c == "Driver") return Cat::kDriver;  // not seen in any Kineto version; kept for symmetry
      break;
    case 7: if (c == "Runtime") return Cat::kRuntime; break;
    case 8: if (c == "Operator") return Cat::kCpuOp; break;
    case 9: if (c == "cuda_sync") return Cat::kSync; break;
    case 10:
      if (c == "gpu_memcpy") return Cat::kMemcpy;
      if (c == "gpu_memset") return Cat::kMemset;
      break;
    case 11: if (c == "cuda_driver") return Cat::kDriver; break;
    case 12: if (c == "cuda_runtime") return Cat::kRuntime; break;
    case 15:
      if (c == "user_annotation") return Cat::kUserAnnotation;
      if (c == "python_function") return Cat::kPythonFunction;
      break;
    case 19: if (c == "gpu_user_annotation") return Cat::kGpuUserAnnotation; break;
    default: break;
  }
  return Cat::kUnmodelled;
}

bool IsLaunchFlow(std::string_view cat) { return cat == "ac2g" || cat == "async_gpu" || cat == "async"; }

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
