// The protocol between `tracegate record` (the launcher) and the recorded processes, and the
// merge of their parts into one trace. CUDA-free.
//
// The launcher creates a parts directory next to the output, sets the environment below for
// the child, and every CUDA process under it (the injection library is loaded into each)
// writes <parts dir>/part-<pid>.db through a PartWriter. After the child exits the launcher
// merges the parts: a part without "tracegate.part_complete" = "1" (its process was killed or
// crashed) is kept up to its last flush and counted as trace_incomplete.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tracegate/analyzer/model.h"
#include "tracegate/analyzer/status.h"
#include "tracegate/collector/record.h"

namespace tg::internal {
inline constexpr const char* kPartsDir = "TRACEGATE_PARTS_DIR";        // required by the collector
inline constexpr const char* kFlushMs = "TRACEGATE_FLUSH_MS";          // default 1000
inline constexpr const char* kDriverApi = "TRACEGATE_DRIVER_API";      // "0" disables driver API records
inline constexpr const char* kBufferMb = "TRACEGATE_BUFFER_MB";        // CUPTI buffer size, default 8
inline constexpr const char* kBufferCapMb = "TRACEGATE_BUFFER_CAP_MB"; // pool cap, default 512
inline constexpr const char* kInjectLib = "TRACEGATE_INJECT_LIB";      // override of the library path
inline constexpr const char* kApi = "TRACEGATE_API";                   // "default" or "all"
inline constexpr const char* kGraphTrace = "TRACEGATE_CUDA_GRAPH_TRACE";  // "node" or "graph"
inline constexpr const char* kCaptureRange = "TRACEGATE_CAPTURE_RANGE";   // "nvtx:NAME"
inline constexpr const char* kIterations = "TRACEGATE_ITERATIONS";        // "K:N"
// Set by the launcher for the CUDA driver / NVTX to load the injection library:
inline constexpr const char* kCudaInjection = "CUDA_INJECTION64_PATH";
inline constexpr const char* kNvtxInjection = "NVTX_INJECTION64_PATH";

// Metadata key a PartWriter sets to "1" when it finishes; a part without it was cut short.
inline constexpr std::string_view kPartCompleteKey = "tracegate.part_complete";

// Part metadata key prefix: + CUDA device id -> that device's UUID ("GPU-..." as NVML prints it),
// written by the collector, so `record` can put NVML samples on the right CUDA device.
inline constexpr std::string_view kDeviceUuidPrefix = "cuda_device_uuid.";

// The clock of every timestamp in a recording, ns: CLOCK_REALTIME, so samples taken by the
// launcher and activity recorded in other processes line up.
int64_t RecordClockNs();

// The values of `record --capture-range` and `--iterations` (and of their environment variables):
// "nvtx:NAME" (NAME non-empty) -> NAME; "K:N" (K >= 0, N >= 1) -> skip K, record N. Errors
// (InvalidInput) say what is expected.
[[nodiscard]] Status ParseCaptureRange(std::string_view text, std::string* nvtx_name);
[[nodiscard]] Status ParseIterations(std::string_view text, int64_t* skip, int64_t* count);

// "<dir>/part-<pid>.db".
std::string PartPath(const std::string& dir, int64_t pid);

// Reads every part-*.db in `dir` into one trace (strings re-interned, processes and devices
// united, quality counters summed, trace_incomplete += incomplete parts). A part that cannot be
// read at all is skipped with a note and also counts as incomplete. No parts: an empty trace.
[[nodiscard]] Status MergeParts(const std::string& dir, Trace* out, MergeResult* result);

}  // namespace tg::internal
