// The first analysis behind `tracegate analyze`: counts, per-device busy/idle time and idle gaps,
// top-K kernels, copies by direction, per-stream activity and the data-quality counters.
// Computed from the Trace only (any importer), in O(n log n) over the columnar tables. Plain
// structs, no JSON: reports/analysis_report.h turns a Summary into the report document/text.
//
// Definitions (the report document repeats them; see reports/.../analysis_report.h):
// - GPU work = kernels + memcpys + memsets. A device's busy time is the length of the UNION of the
//   intervals of its GPU work (work overlapping on several streams counts once). The active
//   window is [earliest start, latest end] of its GPU work. Zero-length activities add no busy
//   time but split a gap, so busy + total gap time == active window exactly.
// - idle_ratio = 1 - busy / active window, computed as (active - busy) / active; undefined
//   (has_idle_ratio = false) when the window is empty.
// - Idle gaps are the holes between consecutive intervals of the busy union (gap > 0 ns).
// - Percentiles are nearest-rank: pX = the ceil(X/100 * n)-th smallest duration (1-based), i.e.
//   always an observed duration; p50 of {10,20,30,40} is 20.
#pragma once

#include <array>
#include <functional>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tracegate/analyzer/idle_cause.h"
#include "tracegate/analyzer/model.h"
#include "tracegate/analyzer/quality.h"

namespace tg {

struct AnalyzeOptions {
  size_t top_k = 10;                     // kernels in the top-K table
  size_t largest_gaps = 10;              // largest idle gaps listed per device
  int64_t small_copy_bytes = 64 * 1024;  // copies under this are "small"
  // Idle causes (idle_cause.h): a launch-free host block at least this long is host_compute, and
  // work that starts at least backlog_ns after its launch returned, on an idle device, is backlog.
  TimeNs compute_block_ns = 100'000;
  TimeNs backlog_ns = 1'000'000;
  size_t host_frames = 5;  // frames named per described gap
};

struct SummaryCounts {
  uint64_t kernels = 0, memcpys = 0, memsets = 0, syncs = 0;
  uint64_t runtime_calls = 0, driver_calls = 0;
  uint64_t ranges = 0, samples = 0;
};

// Idle-gap histogram buckets (fixed): [0,10us) [10us,100us) [100us,1ms) [1ms,10ms) [10ms,inf).
inline constexpr size_t kGapBucketCount = 5;
inline constexpr std::array<TimeNs, kGapBucketCount - 1> kGapBucketUpperNs{10'000, 100'000, 1'000'000,
                                                                         10'000'000};
inline constexpr std::array<const char*, kGapBucketCount> kGapBucketLabels{
    "<10us", "10us-100us", "100us-1ms", "1ms-10ms", ">=10ms"};
inline constexpr std::array<const char*, kGapBucketCount> kGapBucketKeys{
    "lt_10us", "10us_to_100us", "100us_to_1ms", "1ms_to_10ms", "ge_10ms"};
size_t GapBucketOf(TimeNs gap_ns);

inline constexpr size_t kLargestGapsPerCause = 3;  // gaps named per cause (IdleCauses::largest)

struct IdleGap {
  TimeNs start_ns = 0;        // where the gap begins: the end of `previous`
  TimeNs duration_ns = 0;
  std::string previous;       // the work that ends where the gap begins: demangled kernel name, "Memcpy HtoD", "Memset"
  std::string next;           // the work that starts where the gap ends
  int64_t next_stream = kUnknownId;  // the stream of `next`
  // The cause and the evidence that decided it (only when the device's causes are attributed):
  IdleCause cause = IdleCause::kUnknown;
  std::string call;           // host_stage, host_launch: next's launch call; dependency_sync: the wait in progress
  TimeNs call_returned_ns = 0;  // host_stage, host_launch: how long after the gap began that launch call returned
  std::string stage;          // host_stage: the pre/post range the launching process was in
  std::string collective;     // communication: the collective kernel next to the gap (next, else previous)
  std::string same_launch;    // dependency_sync inside one launch (a CUDA graph): that launch call
  // Host causes: the frame that decided the largest piece of the cause (the launch-free block, the
  // compile frame, the wait call) and the top frames by time inside the gap on the launching thread.
  std::string frame;
  std::vector<GapFrame> host_frames;
  int64_t host_tid = kUnknownId;  // the thread read (the launching thread of next, else of previous)
  TimeNs lag_ns = 0;              // device_backlog: from next's launch call returning to its start
  // The gap's time per cause (the gap is split where the host's state changes); `cause` has the most.
  std::array<TimeNs, kIdleCauseCount> cause_ns{};
};

struct IdleCauses {
  bool attributed = false;                        // computed (Summarize was given the API index)
  std::array<uint64_t, kIdleCauseCount> gaps{};   // gaps per cause
  std::array<TimeNs, kIdleCauseCount> ns{};       // gap time per cause; sums to gap_total_ns
  // The kLargestGapsPerCause longest gaps of each cause, longest first (ties: earlier first).
  std::array<std::vector<IdleGap>, kIdleCauseCount> largest;
};

struct DeviceSummary {
  int32_t device = -1;
  bool known = false;         // found in trace.devices
  std::string name;           // from trace.devices ("" when unknown)
  uint64_t kernels = 0, memcpys = 0, memsets = 0;
  TimeNs first_start_ns = 0, last_end_ns = 0;  // active window (0,0 when no work)
  TimeNs active_ns = 0;       // last_end - first_start
  TimeNs busy_ns = 0;         // length of the union of GPU work intervals
  bool has_idle_ratio = false;
  double idle_ratio = 0;      // (active - busy) / active; valid only when has_idle_ratio
  uint64_t gap_count = 0;
  TimeNs gap_total_ns = 0;
  std::array<uint64_t, kGapBucketCount> gap_histogram{};      // counts per bucket
  std::array<TimeNs, kGapBucketCount> gap_histogram_ns{};     // total gap time per bucket
  std::vector<IdleGap> largest_gaps;                          // longest first (ties: earlier first)
  IdleCauses idle_causes;
  // The same gaps inside the kept iterations (Summarize given their spans, causes attributed):
  // what the rules judge, as they judge the iterations and not the warm-up or start-up around them.
  // Each gap counts with the part of it inside the spans (in_iterations.ns per cause sums to
  // in_iterations_ns; gaps: those with a part inside); the largest, overall (in_iterations_largest,
  // up to largest_gaps) and per cause, are gaps that lie wholly inside the spans.
  bool has_in_iterations = false;
  TimeNs in_iterations_ns = 0;
  IdleCauses in_iterations;
  std::vector<IdleGap> in_iterations_largest;
  // The union of the device's GPU work, sorted and disjoint (busy_ns is its length; empty when
  // all its work has zero length): with one device the rules' Summary::GpuBusy, and what
  // BinBusy bins. RunAnalysis releases it with the summary's other sweep results.
  std::vector<std::pair<TimeNs, TimeNs>> busy;
};

struct KernelStat {
  StringId name = 0;          // name id of one representative (first seen) launch
  std::string display_name;   // Demangle(name)
  uint64_t count = 0;
  TimeNs total_ns = 0;
  double mean_ns = 0;
  TimeNs min_ns = 0, max_ns = 0;
  TimeNs p50_ns = 0, p95_ns = 0;  // nearest rank
  double share = 0;               // total_ns / total kernel time (0 when that is 0)
};

enum class CopyDirection : uint8_t { kHtoD, kDtoH, kDtoD, kPtoP, kOther, kCount };
inline constexpr std::array<const char*, static_cast<size_t>(CopyDirection::kCount)> kCopyDirectionNames{
    "HtoD", "DtoH", "DtoD", "PtoP", "other"};
CopyDirection DirectionOf(CopyKind kind);

struct CopyStat {
  CopyDirection direction = CopyDirection::kOther;
  uint64_t count = 0;
  int64_t bytes = 0;
  TimeNs time_ns = 0;             // sum of durations
  bool has_gbs = false;
  double gbs = 0;                 // bytes / time_ns (1 GB = 1e9 B), valid when has_gbs (time > 0)
  uint64_t pageable = 0;          // copies whose host side is pageable
  double pageable_share = 0;      // pageable / count (0 when count == 0)
  uint64_t small = 0;             // copies with bytes < small_copy_bytes
};

struct MemsetStat {
  uint64_t count = 0;
  int64_t bytes = 0;
  TimeNs time_ns = 0;
};

struct StreamSummary {
  int32_t device = -1;
  int64_t stream = kUnknownId;
  uint64_t kernels = 0, memcpys = 0, memsets = 0;
  TimeNs first_start_ns = 0, last_end_ns = 0;
  TimeNs busy_ns = 0;             // union of this stream's GPU work
  double device_busy_share = 0;   // busy_ns / device busy_ns (0 when the device busy is 0)
  // The device's gap time before this stream's next work, by cause (when the device's causes are
  // attributed): each gap counts for the stream of the work that ends it, so the streams of a
  // device sum to its IdleCauses::ns.
  bool idle_attributed = false;
  std::array<TimeNs, kIdleCauseCount> idle_before_ns{};
};

struct QualityEntry {
  Quality id = Quality::kCount;
  const char* key = "";
  Severity severity = Severity::kInfo;
  const char* description = "";
  uint64_t count = 0;
};

struct Summary {
  SummaryCounts counts;
  TimeNs start_ns = 0, end_ns = 0, duration_ns = 0;  // Trace::Window()
  std::vector<DeviceSummary> devices;                // sorted by device id
  // "" when the trace holds device activity (kernels, copies or memsets). Otherwise one line that
  // names what the trace does hold: with no device activity, device idle time is undefined (a
  // state of the recording, not a finding), so the idle ratios are null and the rules that read
  // them stay silent.
  std::string no_device_activity;
  // Kernels
  TimeNs total_kernel_ns = 0;
  uint64_t distinct_kernels = 0;                     // distinct display names
  std::vector<KernelStat> top_kernels;               // by total desc, then name asc; at most top_k
  // Copies
  std::array<CopyStat, static_cast<size_t>(CopyDirection::kCount)> copies{};  // indexed by CopyDirection
  MemsetStat memsets;
  // Streams, sorted by (device, stream)
  std::vector<StreamSummary> streams;
  // Data quality: every counter of quality.h in declaration order.
  bool has_errors = false;
  std::vector<QualityEntry> quality;
  // For the rules, kept from the sweep that orders every device's GPU work by time (so no rule
  // sorts a table again): kernel rows by start time, and the union of all GPU work of every
  // device, sorted and disjoint (GpuBusy: with one device its DeviceSummary::busy, with several
  // their union in gpu_busy_merged). Not part of the report: RunAnalysis releases both once its
  // rules have run (they would be most of the memory its result holds beyond the iterations).
  std::vector<uint32_t> kernels_by_start;
  std::vector<std::pair<TimeNs, TimeNs>> gpu_busy_merged;  // empty with fewer than two devices
  const std::vector<std::pair<TimeNs, TimeNs>>& GpuBusy() const {
    return devices.size() == 1 ? devices.front().busy : gpu_busy_merged;
  }
};

// The report's overview: the window of the trace's GPU work and of `spans` (the kept iterations'
// start and end) in `bins` equal bins (the last one takes what rounding leaves; none when there is
// no GPU work and no span), and per device with work of positive length (DeviceSummary::busy) its
// busy nanoseconds in each bin. Offsets are unsigned: a window may span nearly all of int64.
struct BusyOverview {
  TimeNs start_ns = 0;
  uint64_t duration_ns = 0, bin_ns = 1;
  std::vector<std::pair<int32_t, std::vector<uint64_t>>> devices;  // device, busy ns per bin
};
inline constexpr size_t kOverviewBins = 400;
BusyOverview BinBusy(const Summary& s, const std::vector<std::pair<TimeNs, TimeNs>>& spans, size_t bins);

// Kernel rows by start time (ties by row): what Summary::kernels_by_start gives, for callers
// that have no summary. One sort; the summary gets its order from its sweep instead.
std::vector<uint32_t> KernelsByStart(const KernelTable& k);

namespace internal {
class ApiIndex;
class HostStages;
}  // namespace internal
namespace internal {
class HostModel;
class HelpBoard;
}
enum class KernelClass : uint8_t;  // tracegate/analyzer/kernel_class.h
// `api_index` (the correlation index of trace.api_calls; may be null) lets every device gap be
// attributed to a cause (DeviceSummary::idle_causes); without it the causes stay unattributed.
// `stages` (the host pre/post stage ranges; may be null) tells host_stage from host_launch.
// `kernel_classes` (ClassifyKernels, one per kernel row) says which kernels are collectives, for
// the communication cause; causes are attributed only when it and `api_index` are given.
// `iteration_spans` (may be null) gives the kept iterations' spans, sorted and disjoint, for
// DeviceSummary::in_iterations; it is called once, after the devices' work is swept and before
// their gaps are attributed, and may block until the iterations are known (RunAnalysis finds them
// on another thread). It may return null: no spans.
using SpanSource = std::function<const std::vector<std::pair<TimeNs, TimeNs>>*()>;
// `host` (may be null, or return null) gives the host model, which tells the host's causes apart
// (idle_cause.h); without it every gap the host caused reads host_launch. Like `iteration_spans`
// it is called once, when the first device's gaps are attributed, and may block (RunAnalysis
// builds the model on the other thread once the iterations are found).
using HostSource = std::function<const internal::HostModel*()>;
Summary Summarize(const Trace& trace, const AnalyzeOptions& options, const internal::ApiIndex* api_index = nullptr,
                  const internal::HostStages* stages = nullptr,
                  const std::vector<KernelClass>* kernel_classes = nullptr, const SpanSource* iteration_spans = nullptr,
                  const HostSource* host = nullptr);
// Summarize into `*out`, in place, for a caller with a second thread: `busy_known` (may be null)
// is called once out->GpuBusy() and out->kernels_by_start are final, before the devices' gaps are
// attributed; from then on another thread may read those two (and only those) while this call
// fills the rest of `*out`. With `help`, a device's gaps are attributed in chunks that another
// thread may take a share of (internal::HelpBoard; the caller closes it).
void SummarizeInto(const Trace& trace, const AnalyzeOptions& options, const internal::ApiIndex* api_index,
                   const internal::HostStages* stages, const std::vector<KernelClass>* kernel_classes,
                   const SpanSource* iteration_spans, const HostSource* host, const std::function<void()>* busy_known,
                   Summary* out, internal::HelpBoard* help = nullptr);

}  // namespace tg
