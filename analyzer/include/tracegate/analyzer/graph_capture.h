// CUDA / HIP graphs traced back to their ops (docs/SERVING.md, "Graphs traced back to their ops").
//
// A graph replay records one launch call (cudaGraphLaunch, hipGraphLaunch) whose correlation id
// every kernel of the graph carries: the replay trace says which kernels ran, not which op or
// Python code launched each one. The trace of the capture says that: while a thread captures a
// stream (cudaStreamBeginCapture ... cudaStreamEndCapture), each kernel launch call it makes
// becomes a node of the graph instead of running, inside the op (cpu_op) and Python frames that
// made it. A graph replays its nodes in capture order (one stream; see the limits below).
//
// ExtractCapturedGraphs reads the capture trace: per thread, each capture's kernel launch calls
// in call order, with the op enclosing each (LinkOps' rule) and its caller's Python frame. When
// the trace holds no begin / end capture call, vLLM's capture_<size>_<MODE> host annotations bound
// the captures instead.
//
// MapGraphKernels matches each graph launch of the replay (its kernels in start order) to the
// captured graph with as many kernel launches:
//   - one candidate, or several that name the same op at every position: matched by launch count;
//   - several that differ: the replay's serving step (the vLLM / SGLang annotation enclosing the
//     graph launch) gives its tokens, and the candidate with the smallest capture size (from the
//     capture_<size>_<MODE> annotation) that holds them is taken (vLLM pads a batch to the next
//     captured size): matched by launch count and capture size;
//   - otherwise the launch stays unmatched (none with that many launches, or ambiguous).
// A matched kernel's op becomes the captured launch's op in OpLinks::kernels (named through
// OpLinks::extra_names), so kernel classes, the kernel table's op and every rule read it as
// for an eager kernel.
//
// Limits, stated in the report: kernels are matched by position, and launch calls do not carry
// kernel names in every trace (CUDA's runtime events have none), so a capture whose graph forks
// to several streams replays in an order the start times may not keep. Copies and memsets captured
// into a graph keep no op.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tracegate/analyzer/model.h"
#include "tracegate/analyzer/op_links.h"

namespace tg {

namespace internal {
class ApiIndex;
}  // namespace internal

struct CapturedLaunch {
  std::string op;     // the innermost host op enclosing the launch call ("" when none)
  std::string frame;  // the innermost Python frame of the caller's code ("" when none; below)
};

// One stream capture: the graph it built, as launch calls.
struct CapturedGraph {
  std::string source;                    // the capture trace's path, as given
  std::string annotation;                // the capture_<size>_<MODE> annotation enclosing it ("" when none)
  int64_t size = -1;                     // its <size>; -1 when there is no annotation
  std::vector<CapturedLaunch> launches;  // kernel launches made while capturing, in call order
};

// The graphs `capture` holds, in the order their captures began; only those with a kernel launch.
// The caller's frame of a launch is the innermost enclosing python_function frame that is not
// the framework's or a built-in: not "<built-in ...>" / "<string>" and not under torch/ or
// triton/ (the dispatcher, Inductor's launchers, Triton's driver), so that it names the model's,
// the engine's or the kernel library's code that asked for the kernel.
std::vector<CapturedGraph> ExtractCapturedGraphs(const Trace& capture, const std::string& source);

// A captured op's share of the replayed kernels.
struct GraphOpShare {
  std::string op;     // OpBaseName of the captured op ("" when none enclosed the launch)
  std::string frame;  // the caller's frame of its first kernel ("" when none)
  uint64_t kernels = 0;
  TimeNs kernel_ns = 0;
};

struct GraphCaptureMapping {
  bool asked = false;                // captured graphs were given (analyze --capture)
  std::vector<std::string> sources;  // the capture traces, in the order given
  size_t graphs = 0;                 // captured graphs they hold
  uint64_t launches = 0;             // graph launches of the replay that ran kernels
  uint64_t kernels = 0;              // their kernels
  uint64_t launches_mapped = 0, kernels_mapped = 0;
  uint64_t by_count = 0, by_size = 0;    // matched launches, by how
  uint64_t no_match = 0, ambiguous = 0;  // unmatched launches, by why
  TimeNs kernel_ns = 0;                  // summed durations of the mapped kernels
  std::vector<GraphOpShare> ops;         // by kernel time, longest first (every op)
};

// Matches the replay's graph launches to `graphs` and writes the captured op of each matched
// kernel into links->kernels (links from LinkOps on `replay`, whose kernel_launch_found says which
// kernels a graph launch ran).
GraphCaptureMapping MapGraphKernels(const Trace& replay, const internal::ApiIndex& index,
                                    const std::vector<CapturedGraph>& graphs, OpLinks* links);

}  // namespace tg
