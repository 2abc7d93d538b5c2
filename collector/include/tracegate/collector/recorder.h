// The in-process recorder: a program that links tracegate (target tracegate_cupti) records its own
// CUDA activity around a region, with the machinery `tracegate record` injects into other
// programs: the same CUPTI collector writes a part file, which StopRecording merges into a
// tracegate store at `path`, written atomically.
//
//   tg::Status s = tg::StartRecording("resnet.db");
//   ... launch work ...
//   cudaDeviceSynchronize();          // work still on the device when recording stops is lost
//   s = tg::StopRecording();
//
// One recording per process at a time; CUPTI being used by another tool is no error (the store
// says what was missed, see collector/cupti/collector.h). Not to be used in a process that
// `tracegate record` already records (CUPTI allows one collector: the second one records nothing).
#pragma once

#include <cstdint>
#include <string>

#include "tracegate/analyzer/status.h"

namespace tg {

// Which CUDA API calls become records (`record --api`).
enum class ApiRecording : uint8_t {
  // What the analysis reads: launches (cuLaunchKernel(Ex) and cuGraphLaunch included), copies,
  // memsets, synchronisations, waits, event records, allocations and module loads, enabled one
  // callback id at a time (CUPTI 12.5+; an older CUPTI records every call less the quiet queries).
  // The trace's metadata lists them (cupti_api_recorded).
  kAnalysis,
  kAll,  // every runtime and driver API call
};

// How CUDA graph launches are recorded (`record --cuda-graph-trace`).
enum class GraphTrace : uint8_t {
  kNode,   // every node's kernel, copy and memset (the default)
  kGraph,  // one record per graph launch (CUPTI_ACTIVITY_KIND_GRAPH_TRACE), far cheaper
};

struct RecordingOptions {
  int64_t flush_ms = 1000;      // CUPTI flush and part append period
  bool driver_api = true;       // record driver API calls besides runtime API calls
  int64_t buffer_mb = 8;        // one CUPTI activity buffer
  int64_t buffer_cap_mb = 512;  // all buffers together; beyond it records are dropped and counted
  ApiRecording api = ApiRecording::kAnalysis;
  GraphTrace graph_trace = GraphTrace::kNode;
  // Non-empty: CUDA activity is recorded only inside NVTX ranges of this name (push/pop or
  // start/end, outermost occurrences), and nothing outside them pays for recording.
  std::string capture_nvtx;
  int64_t skip_ranges = 0;    // of those ranges, the first K are not recorded (`--iterations K:N`)
  int64_t record_ranges = 0;  // then N are; 0: every one after the skipped
};

// Starts recording. `path`'s directory must exist; a parts directory "<path>.parts-<pid>" is used
// meanwhile. Errors: a recording is already running, the parts directory cannot be created.
[[nodiscard]] Status StartRecording(const std::string& path, const RecordingOptions& options = {});

// Stops the recording and writes the store (replacing a file at the path only with a complete
// one). Errors: no recording running; the store cannot be written.
[[nodiscard]] Status StopRecording();

}  // namespace tg
