// The host op behind each GPU activity: for every kernel, memcpy and memset row, the innermost
// host op that encloses the API call that launched it.
//   - The launch call is the API call with the row's correlation id (and pid where several
//     processes reuse the id): ApiIndex (analyzer/analysis/correlation.h).
//   - The op is the innermost op range on the call's pid/tid whose [start, end) contains the
//     call's start: PyTorch's `cpu_op` ranges (Range::domain "cpu_op") when the trace has any;
//     otherwise (Nsight Systems exports, stores of them) the host's NVTX ranges (not on a GPU,
//     not `python_function` frames). Among ranges that contain the instant, the innermost is the
//     one that started last (the outer one when two start together).
// One pass per thread over its op ranges and its API calls, each sorted by time once:
// O((ranges + calls) log n) time, four bytes per row and per call, no allocation per event.
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

// Which ranges were taken as ops.
enum class OpSource : uint8_t {
  kNone,   // the trace has no host ranges: no row has an op
  kCpuOp,  // PyTorch profiler cpu_op ranges
  kNvtx,   // NVTX / user ranges on the host (no cpu_op in the trace)
};

struct OpLinks {
  OpSource source = OpSource::kNone;
  // Per row of trace.api_calls: the innermost op enclosing the call's start (StringTable::kEmpty
  // = none); the GPU rows below read theirs from their launch call. RunAnalysis keeps it empty in
  // Analysis::ops once the GPU rows have theirs (nothing after reads it).
  std::vector<StringId> api;
  // Per row of trace.kernels / memcpys / memsets: the op name (StringTable::kEmpty = none).
  std::vector<StringId> kernels, memcpys, memsets;
  // Per kernel row: 1 when its launch call is in the trace (an op of kEmpty then means that no
  // op encloses the call), kGraphLaunched when that call is a graph launch (cudaGraphLaunch,
  // hipGraphLaunch: the op around it is the replay's, not the one that launched the kernel when
  // the graph was captured), 0 when it is not in the trace.
  std::vector<uint8_t> kernel_launch_found;
  static constexpr uint8_t kGraphLaunched = 2;
  // Op names that are not in the trace's string table: those of a capture trace, given to the
  // graph-launched kernels it captured (MapGraphKernels, graph_capture.h). Their ids follow the
  // trace's: extra_names[id - trace.strings.size()]. Read every op name through Name().
  std::vector<std::string> extra_names;
  std::string_view Name(const Trace& trace, StringId id) const {
    return id < trace.strings.size() ? trace.Name(id) : std::string_view(extra_names[id - trace.strings.size()]);
  }
  size_t NameCount(const Trace& trace) const { return trace.strings.size() + extra_names.size(); }
};

// Builds its own correlation index; RunAnalysis passes the one it has.
OpLinks LinkOps(const Trace& trace);
OpLinks LinkOps(const Trace& trace, const internal::ApiIndex& index);

}  // namespace tg
