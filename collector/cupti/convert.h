// The boundary between CUPTI and tracegate: real CUPTI activity records (the structs of
// cupti_activity.h, CUDA 13 versions) become rows of the trace model. It never calls a CUPTI
// function, so its tests fill the structs by hand and need no driver; the names of driver and
// runtime API functions come from an injected lookup (cuptiGetCallbackName in the collector).
//
// One converter serves one process for the whole recording: it keeps what spans buffers (context
// -> device, NVTX range starts waiting for their end, live allocations for the memory peak,
// overhead totals). Not thread-safe: the collector serialises the buffer-completed callbacks.
#pragma once

#include <cupti_activity.h>

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tracegate/analyzer/model.h"

namespace tg::cupti {

// The name of a runtime or driver API function by CUPTI callback id ("" when unknown).
using ApiNameLookup = std::function<std::string(ApiKind kind, uint32_t cbid)>;

// The activity kinds the collector enables, in one table: what each becomes in our vocabulary.
// Kinds without rows feed state: devices, context -> device, allocations, overheads, event records.
struct RecordedKind {
  CUpti_ActivityKind kind;
  std::string_view name;           // for warnings and metadata ("kernels", "driver API", ...)
  std::optional<EventKind> event;  // the rows its records become; none: they feed state only
};
inline constexpr RecordedKind kRecordedKinds[] = {
    {CUPTI_ACTIVITY_KIND_DEVICE, "devices", std::nullopt},
    {CUPTI_ACTIVITY_KIND_CONTEXT, "contexts", std::nullopt},
    {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "kernels", EventKind::kKernel},
    {CUPTI_ACTIVITY_KIND_MEMCPY, "memory copies", EventKind::kMemcpy},
    {CUPTI_ACTIVITY_KIND_MEMCPY2, "peer-to-peer copies", EventKind::kMemcpy},
    {CUPTI_ACTIVITY_KIND_MEMSET, "memsets", EventKind::kMemset},
    {CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "synchronization", EventKind::kSync},
    // cudaEventRecord calls: no rows; they give event syncs their record (wait_stream,
    // record_correlation). Always on, so a sync in a capture window finds a record made before it.
    {CUPTI_ACTIVITY_KIND_CUDA_EVENT, "CUDA event records", std::nullopt},
    {CUPTI_ACTIVITY_KIND_RUNTIME, "runtime API", EventKind::kRuntime},
    {CUPTI_ACTIVITY_KIND_DRIVER, "driver API", EventKind::kDriver},
    {CUPTI_ACTIVITY_KIND_MARKER, "NVTX markers and ranges", EventKind::kRange},
    {CUPTI_ACTIVITY_KIND_OVERHEAD, "CUPTI overhead", std::nullopt},
    {CUPTI_ACTIVITY_KIND_MEMORY2, "memory allocations", std::nullopt},
};
// The table's entry for a kind; nullptr for kinds the collector never enables.
const RecordedKind* FindRecordedKind(CUpti_ActivityKind kind);

// Device memory allocated through CUDA (cudaMalloc, cudaMallocAsync, module statics) per device,
// from MEMORY2 allocation/release records. The peak is the largest live total any one device
// reached, the same sense as the largest NVML memory_used sample.
class AllocationTracker {
 public:
  void Allocate(int32_t device, uint64_t address, uint64_t bytes);
  // A release of an allocation made before recording started is ignored.
  void Release(int32_t device, uint64_t address);
  uint64_t PeakBytes() const { return peak_; }
  uint64_t LiveBytes(int32_t device) const;

 private:
  std::map<std::pair<int32_t, uint64_t>, uint64_t> live_;  // (device, address) -> bytes
  std::map<int32_t, uint64_t> live_total_;
  uint64_t peak_ = 0;
};

class ActivityConverter {
 public:
  // pid: the recorded process (kernel, copy, memset and sync records carry none).
  ActivityConverter(int64_t pid, ApiNameLookup api_name);

  // Appends the row(s) the record stands for to batch's event tables (names interned in
  // batch.strings), DEVICE records to batch.devices, and counts what it had to drop in
  // batch.quality. Memory that CUPTI hands to the client (device names, overhead data) is not
  // freed here.
  void Convert(const CUpti_Activity& record, Trace& batch);

  // Starts a batch: Convert remembers the ids its names have in the batch it converts into (a
  // kernel or API name's later records in the same batch take the id without hashing the text),
  // and this forgets them. Convert also starts a batch by itself when handed another Trace, or one
  // whose string table changed size since its last call; call this when a new Trace may sit where
  // the last one was (the collector's per-buffer batch on the stack).
  void BeginBatch(Trace& batch);

  // End of recording: NVTX ranges still open, and ends whose start never came, are counted as
  // unmatched_range_end into batch; syncs whose context never came are added with device -1, and
  // event syncs whose event record never came with wait_stream and record_correlation unknown.
  void Close(Trace& batch);

  // Whether CUDA event records (CUPTI_ACTIVITY_KIND_CUDA_EVENT) are coming (default: true). When
  // CUPTI refused the kind, event syncs are not held for a record that will not come.
  void ExpectEventRecords(bool expect) { expect_event_records_ = expect; }

  // Bounds of the event-record matching (see CudaEvent in convert.cpp).
  static constexpr size_t kRecordsPerEvent = 8;             // latest records kept per (context, event)
  static constexpr size_t kMaxEvents = size_t{1} << 16;     // events with records kept
  static constexpr size_t kMaxHeldSyncs = size_t{1} << 16;  // syncs waiting for their record

  const AllocationTracker& allocations() const { return allocations_; }
  // CUPTI and driver overhead in ns by kind name ("cupti_buffer_flush", "driver_compiler", ...).
  const std::map<std::string, int64_t>& overhead_ns() const { return overhead_ns_; }
  // Records of kinds outside kRecordedKinds (also counted as unknown_category_skipped).
  uint64_t skipped_records() const { return skipped_; }

 private:
  struct OpenRange {
    TimeNs start = 0;
    std::string name, domain;
    int64_t pid = kUnknownId, tid = kUnknownId;
  };
  struct Heterogeneous {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };

  void ConvertRecord(const CUpti_Activity& record, Trace& batch);
  void Kernel(const CUpti_ActivityKernel10& r, Trace& batch);
  // MEMCPY (CUpti_ActivityMemcpy6) and MEMCPY2 (peer, CUpti_ActivityMemcpyPtoP4) records.
  template <typename CopyRecord>
  void Copy(const CopyRecord& r, Trace& batch);
  void Memset(const CUpti_ActivityMemset4& r, Trace& batch);
  void Sync(const CUpti_ActivitySynchronization2& r, Trace& batch);
  void CudaEvent(const CUpti_ActivityCudaEvent2& r, Trace& batch);
  // A sync with what it can know now: its device from its context, or held for the context.
  void AddSync(tg::Sync y, uint32_t context, Trace& batch);
  void ForgetOldEvents();
  void Api(const CUpti_ActivityAPI& r, ApiKind kind, Trace& batch);
  void Marker(const CUpti_ActivityMarker2& r, Trace& batch);
  void Memory(const CUpti_ActivityMemory4& r);
  void Overhead(const CUpti_ActivityOverhead3& r);
  void Device(const CUpti_ActivityDevice5& r, Trace& batch);
  int32_t DeviceOfContext(uint32_t context) const;
  // The id of a kernel's demangled name in batch.strings, by CUPTI's name pointer (see names_).
  StringId KernelName(const char* mangled, Trace& batch);
  StringId ApiName(ApiKind kind, uint32_t cbid, Trace& batch);

  int64_t pid_;
  ApiNameLookup api_name_;
  std::unordered_map<uint32_t, int32_t> context_device_;
  std::unordered_map<uint32_t, OpenRange> open_ranges_;  // NVTX start markers by marker id
  // Records that arrived before the record they refer to (CUPTI delivers per-thread and
  // per-context buffers in no set order): syncs by context id, NVTX end times by marker id.
  std::unordered_map<uint32_t, std::vector<tg::Sync>> pending_syncs_;
  std::unordered_map<uint32_t, TimeNs> pending_ends_;
  // CUDA event records by cudaEventSyncId, the id CUPTI gives each cudaEventRecord call and copies
  // into the syncs that wait on that recording (see CudaEvent in convert.cpp).
  struct EventRecord {
    int64_t stream = kUnknownId;
    int64_t correlation = kUnknownId;
  };
  std::unordered_map<uint64_t, EventRecord> event_records_;
  // Per (context << 32 | event id): the sync ids of its latest kRecordsPerEvent records (a ring),
  // and when it was last recorded (a serial), to forget the least recently recorded events.
  struct EventHistory {
    std::array<uint64_t, kRecordsPerEvent> sync_ids{};
    uint32_t count = 0, next = 0;
    uint64_t recorded = 0;
  };
  std::unordered_map<uint64_t, EventHistory> event_history_;
  uint64_t event_serial_ = 0;
  // Event syncs whose record has not come yet, by cudaEventSyncId (with the sync's context id);
  // at most kMaxHeldSyncs, the lowest sync ids given up first.
  std::map<uint64_t, std::vector<std::pair<tg::Sync, uint32_t>>> held_syncs_;
  size_t held_count_ = 0;
  bool expect_event_records_ = true;
  // Kernel names. CUPTI shares one name string among all records of a kernel, so the pointer is
  // the key: a hit costs a hash of the pointer and a compare of the text with the entry's (strcmp,
  // no hashing): CUPTI may free a module's names when it is unloaded and a later module's name can
  // land at the same address, and then the compare fails and the text decides. Names equal in text
  // under two pointers (one kernel in two modules) share one entry, through by_text_.
  struct KernelNameEntry {
    std::string mangled, demangled;
    StringId id = 0;          // in the current batch, when batch_of == batch_serial_
    uint64_t batch_of = 0;
  };
  std::vector<KernelNameEntry> names_;
  std::unordered_map<const char*, uint32_t> by_pointer_;  // -> names_ index
  // In front of by_pointer_: a direct-mapped table by pointer bits (no division, no node to
  // chase); a slot holds the last pointer that mapped to it.
  struct RecentName {
    const char* pointer = nullptr;
    uint32_t index = 0;
  };
  static constexpr size_t kRecentNames = 1024;
  std::array<RecentName, kRecentNames> recent_names_{};
  std::unordered_map<std::string, uint32_t, Heterogeneous, std::equal_to<>> by_text_;  // mangled -> index
  // API names by callback id, one flat table per kind (CUPTI's ids are small and dense).
  struct ApiNameEntry {
    std::string name;         // "" until looked up
    StringId id = 0;
    uint64_t batch_of = 0;
  };
  static constexpr uint32_t kMaxCachedCbid = 1 << 16;  // ids beyond: looked up every time
  std::vector<ApiNameEntry> api_names_[2];            // [ApiKind]
  // The batch Convert last wrote to, its string count then, and its serial (from 1).
  const Trace* batch_ = nullptr;
  size_t batch_strings_ = 0;
  uint64_t batch_serial_ = 0;
  AllocationTracker allocations_;
  std::map<std::string, int64_t> overhead_ns_;
  uint64_t skipped_ = 0;
};

// Checks a CUPTI start/end pair (unsigned ns); false when the event must be dropped, with the
// reason counted in `quality`: both 0 (CUPTI could not time it), beyond int64, or end < start.
bool ToTimes(uint64_t start, uint64_t end, QualityCounters& quality, TimeNs* out_start, TimeNs* out_end);

}  // namespace tg::cupti
