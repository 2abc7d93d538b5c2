// The critical path of every kept iteration (issue 31): the replay's dependency graph
// (analyzer/analysis/replay_engine.h, the same edges as `tracegate predict --method replay`) with
// nothing changed, where every node keeps its recorded time and one of its predecessors bound it
// (analyzer/analysis/recorded_graph.h finds which as the walk reaches the node); walking those
// back from the iteration's end to its start gives the longest chain of dependencies, and every
// nanosecond of the step goes to one kind of work on it:
//   kernel_<class>  a kernel's duration, by its class (kernel_class.h), except collectives:
//   communication   a collective kernel's duration (NCCL, RCCL: the kCommunication class);
//   copy, memset    a copy's / memset's duration;
//   gpu_gap         the recorded gap between two back-to-back activities of a busy stream, or
//                   between an event's work and the work of another stream that waited for it
//                   (cudaStreamWaitEvent);
//   launch_delay    a launch call's start to its GPU work's start, where the launch bound it;
//   launch_call     a launch call's own duration (cudaLaunchKernel, cuLaunchKernel, ...) where the
//                   thread's next call waited on it;
//   runtime_call    the same for the other runtime/driver calls (async copies, allocations, ...);
//   sync_wait       a synchronising call's time after the GPU work it waited for ended (its
//                   wake-up delay; for a cudaEventSynchronize, the event's work), or all of it
//                   when it waited for nothing;
//   host_compute    host time between two calls of a thread (Python, the framework, CPU work),
//                   split by host frame when the trace has them;
//   unattributed    what no recorded dependency explains: before the path's first node when that
//                   node has no predecessor inside the step (GPU work without a launch call), and
//                   after the last GPU work when the span ends later (a step without markers).
// Where the walk meets the iteration's start the segment is cut there, so the kinds sum exactly
// to the step's time (Iteration::latency_ns). A segment with a negative length (a GPU clock that
// runs behind the host's) counts as 0 and the next one's start is cut to it, keeping the sum.
//
// Kept in memory: the sums per kind and per host frame, and the longest segments overall (a fixed
// number); each iteration's path is walked and dropped.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tracegate/analyzer/iterations.h"
#include "tracegate/analyzer/kernel_class.h"
#include "tracegate/analyzer/model.h"
#include "tracegate/analyzer/status.h"

namespace tg {

namespace internal {
class ApiIndex;
class HostModel;
}  // namespace internal

enum class PathKind : uint8_t {
  // The kernel classes, in KernelClass order (kCommunication first).
  kCommunication,
  kKernelAttention,
  kKernelConv,
  kKernelGemm,
  kKernelTransform,
  kKernelNormalization,
  kKernelActivation,
  kKernelElementwise,
  kKernelReduction,
  kKernelOther,
  kCopy,
  kMemset,
  kGpuGap,
  kLaunchDelay,
  kLaunchCall,
  kRuntimeCall,
  kSyncWait,
  kHostCompute,
  kUnattributed,
  kCount
};
inline constexpr size_t kPathKindCount = static_cast<size_t>(PathKind::kCount);
inline constexpr std::array<const char*, kPathKindCount> kPathKindNames{"communication",
                                                                        "kernel_attention",
                                                                        "kernel_conv",
                                                                        "kernel_gemm",
                                                                        "kernel_transform",
                                                                        "kernel_normalization",
                                                                        "kernel_activation",
                                                                        "kernel_elementwise",
                                                                        "kernel_reduction",
                                                                        "kernel_other",
                                                                        "copy",
                                                                        "memset",
                                                                        "gpu_gap",
                                                                        "launch_delay",
                                                                        "launch_call",
                                                                        "runtime_call",
                                                                        "sync_wait",
                                                                        "host_compute",
                                                                        "unattributed"};
static_assert(kPathKindNames.back() != nullptr, "a name for every kind");
static_assert(static_cast<size_t>(PathKind::kKernelOther) == static_cast<size_t>(KernelClass::kOther));
constexpr PathKind PathKindOf(KernelClass c) { return static_cast<PathKind>(static_cast<size_t>(c)); }

// One piece of a path: `duration` ns from `start` (both as recorded), of one kind, and the event
// it belongs to: for a GPU activity's duration, gpu_gap and launch_delay the activity (table
// kKernel / kMemcpy / kMemset, row), with `call` its launch call's row (-1 for none); for
// launch_call, runtime_call and sync_wait the call (kApi); for host_compute the call the host time led to (kApi,
// -1 at the end of a step); kNone for unattributed.
struct PathSegment {
  enum class Table : uint8_t { kNone, kApi, kKernel, kMemcpy, kMemset };
  PathKind kind = PathKind::kUnattributed;
  Table table = Table::kNone;
  int64_t row = -1;
  int64_t call = -1;
  size_t iteration = 0;  // position among the kept iterations
  TimeNs start = 0, duration = 0;
};

// A segment as reported: the event's name and where it ran.
struct PathTopSegment {
  PathKind kind = PathKind::kUnattributed;
  size_t iteration = 0;  // Iteration::index
  TimeNs start = 0, duration = 0;
  std::string name;  // the kernel / copy / call; host_compute: its largest frame ("" for none)
  bool gpu = false;  // device/stream set (GPU activities), else pid/tid
  int64_t device = -1, stream = -1;
  int64_t pid = kUnknownId, tid = kUnknownId;
};

struct PathFrame {
  std::string name;  // the host frame (HostModel::ShortName); "" for host time inside no frame
  TimeNs ns = 0;
};

struct CriticalPathOptions {
  size_t top_segments = 10;  // the longest segments kept
  size_t top_frames = 10;    // the host frames with the most host_compute time kept
  // One iteration's whole path, for drawing (the report's timeline draws the median iteration,
  // MedianIterationPosition): its position among the kept iterations (SIZE_MAX: none), and the
  // most segments kept of it (the longest, when it has more).
  size_t detail_iteration = SIZE_MAX;
  size_t detail_cap = 2000;
  // The kernel rows in (start, row) order (Summary::kernels_by_start), or null to sort them here.
  const std::vector<uint32_t>* kernels_by_start = nullptr;
  // Called for every segment of every path (tests; nothing is kept for them), from the
  // iteration's end backwards; and once per iteration with its sums per kind.
  std::function<void(const PathSegment&)> on_segment;
  std::function<void(size_t iteration, const std::array<TimeNs, kPathKindCount>& kind_ns)> on_iteration;
};

struct CriticalPathResult {
  size_t iterations = 0;
  TimeNs step_total_ns = 0;  // the kept iterations' summed latency (= the sum of kind_ns)
  std::array<TimeNs, kPathKindCount> kind_ns{};
  uint64_t segments = 0;                 // segments of positive length on the paths
  std::vector<PathTopSegment> top;       // the longest segments, longest first (ties: earlier first)
  std::vector<PathFrame> frames;         // host_compute by frame, the largest first, at most top_frames
  TimeNs frames_other_ns = 0;            // host_compute in the other frames
  bool has_frames = false;               // the trace has host frames on the paths' threads
  // CriticalPathOptions::detail_iteration's path: its segments of positive length in time order
  // (at most detail_cap, the longest), how many it has, and the iteration (Iteration::index).
  std::vector<PathTopSegment> detail;
  uint64_t detail_total = 0;
  size_t detail_index = 0;
  bool has_detail = false;
  std::vector<std::string> edges;        // the dependencies the path follows, one line each
  std::vector<std::string> assumptions;  // what it takes as given
};

// `kernel_classes`: per kernel row (ClassifyKernels). `index`, `host`: built when null.
// InvalidInput when there are no kept iterations.
Status AnalyzeCriticalPath(const Trace& trace, const IterationAnalysis& iterations,
                           const std::vector<KernelClass>& kernel_classes, const internal::ApiIndex* index,
                           const internal::HostModel* host, const CriticalPathOptions& options,
                           CriticalPathResult* out);

}  // namespace tg
