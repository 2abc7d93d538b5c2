// The one door to CUPTI: subscribes, enables the activity kinds (convert.h kRecordedKinds), hands
// CUPTI buffers from a capped pool, converts completed buffers and submits them to a PartWriter,
// flushes CUPTI every flush interval from its own thread, counts lost records, and finishes the
// part on stop. CUPTI is process-global, so there is one collector per process, driven by the
// injection library and by the in-process recorder; its state is a singleton only because CUPTI's
// buffer callbacks are plain C functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "api_tiers.h"
#include "tracegate/collector/recorder.h"
#include "tracegate/analyzer/status.h"

namespace tg::cupti {

// Starts recording into the part file `part_path` (its directory must exist).
// Errors: already recording, or the part file cannot be created. CUPTI being in use by another
// tool, or an activity kind that cannot be enabled, is no error: one warning on stderr, the part's
// metadata (key kMissedKey) says what was not recorded, and the program runs on.
[[nodiscard]] Status StartCollector(const RecordingOptions& options, const std::string& part_path);

// Disables CUPTI activity, flushes every buffer (forced), writes the final counters and metadata
// and marks the part complete. Work still running on the device is not waited for: synchronise
// first to have it. Ok when not recording.
[[nodiscard]] Status StopCollector();

bool CollectorRecording();

// Part metadata written by the collector.
inline constexpr const char* kMissedKey = "cupti_missed";           // what could not be recorded
// tg::meta::kMemoryPeakMb (model.h): the largest live total of CUDA device allocations on one
// device; its tg::meta::kMemoryPeakMbSource is:
inline constexpr const char* kMemoryPeakSource = "cupti allocations";
inline constexpr const char* kBufferRefusalsKey = "cupti_buffer_refusals";  // buffer cap reached
inline constexpr const char* kOverheadPrefix = "cupti_overhead_ns.";  // + overhead kind
inline constexpr const char* kQuietApisKey = "cupti_api_not_recorded";  // QuietApis' names
// Who zeroes CUPTI's activity buffers: "tracegate" (the pool, off the application's threads) or
// "cupti" (a CUPTI without CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, on the thread asking).
inline constexpr const char* kBufferZeroingKey = "cupti_buffer_zeroing";
// How API calls are recorded (ActivityPlan::tier), and the functions when one at a time.
inline constexpr const char* kApiTierKey = "cupti_api_tier";
inline constexpr const char* kApiRecordedKey = "cupti_api_recorded";
inline constexpr const char* kGraphTraceKey = "cupti_cuda_graph_trace";  // "node" or "graph"
// With a capture range: "nvtx:NAME[, ranges K+1 to K+N]", the ranges seen, the windows recorded.
inline constexpr const char* kCaptureRangeKey = "cupti_capture_range";
inline constexpr const char* kCaptureSeenKey = "cupti_capture_ranges_seen";
inline constexpr const char* kCaptureWindowsKey = "cupti_capture_windows";
// The domain of the collector's own ranges (buffer requests, conversions, flushes, windows).
inline constexpr const char* kSelfDomain = "tracegate";
// "cupti" or "driver": where the part's device table came from (devices.h)
inline constexpr const char* kDeviceSourceKey = "cupti_device_source";

}  // namespace tg::cupti
