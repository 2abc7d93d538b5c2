// CUPTI activity records -> trace-model rows; see convert.h.
#include "convert.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "analyzer/util/demangle.h"

namespace tg::cupti {

using tg::internal::Demangle;

namespace {

constexpr uint64_t kMaxNs = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());

// CUpti_ActivityMemoryKind counts from 1 (0 = unknown); our MemKind, like nsys, from 0.
MemKind ToMemKind(uint32_t cupti_kind) {
  if (cupti_kind >= CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE && cupti_kind <= CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC)
    return static_cast<MemKind>(cupti_kind - 1);
  return MemKind::kUnknown;
}

// CUpti_ActivityMemcpyKind and our CopyKind share their numbers (1 = HtoD ... 10 = PtoP).
CopyKind ToCopyKind(uint8_t cupti_kind, QualityCounters& quality) {
  if (cupti_kind >= CUPTI_ACTIVITY_MEMCPY_KIND_HTOD && cupti_kind <= CUPTI_ACTIVITY_MEMCPY_KIND_PTOP)
    return static_cast<CopyKind>(cupti_kind);
  quality.Add(Quality::kUnknownCopyKind);
  return CopyKind::kUnknown;
}

// CUpti_ActivitySynchronizationType and our SyncKind share their numbers (0-4).
SyncKind ToSyncKind(CUpti_ActivitySynchronizationType t) {
  if (t >= CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE &&
      t <= CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE)
    return static_cast<SyncKind>(t);
  return SyncKind::kUnknown;
}

// Stream and event ids of sync records: CUPTI_SYNCHRONIZATION_INVALID_VALUE when not applicable.
int64_t SyncId(uint32_t v) { return v == CUPTI_SYNCHRONIZATION_INVALID_VALUE ? kUnknownId : v; }

// cudaEventSyncId (sync and CUDA event records): CUPTI_SYNCHRONIZATION_INVALID_VALUE where not
// applicable. 0 is read as not filled too (a zeroed buffer from a CUPTI that leaves it): matching
// every such sync to one record would make edges that are not there.
bool KnownEventSyncId(uint64_t v) {
  return v != 0 && v != CUPTI_SYNCHRONIZATION_INVALID_VALUE && v != std::numeric_limits<uint64_t>::max();
}

// Graph ids are 0 for work not launched through a graph.
int64_t GraphId(uint64_t v) { return v == 0 ? kUnknownId : static_cast<int64_t>(v); }

std::string OverheadName(CUpti_ActivityOverheadKind k) {
  switch (k) {
    case CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER: return "driver_compiler";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH: return "cupti_buffer_flush";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION: return "cupti_instrumentation";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_RESOURCE: return "cupti_resource";
    case CUPTI_ACTIVITY_OVERHEAD_RUNTIME_TRIGGERED_MODULE_LOADING: return "runtime_module_loading";
    case CUPTI_ACTIVITY_OVERHEAD_LAZY_FUNCTION_LOADING: return "lazy_function_loading";
    case CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL: return "command_buffer_full";
    case CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST: return "activity_buffer_request";
    case CUPTI_ACTIVITY_OVERHEAD_UVM_ACTIVITY_INIT: return "uvm_activity_init";
    default: return "unknown";
  }
}

template <typename T>
const T& As(const CUpti_Activity& record) {
  return reinterpret_cast<const T&>(record);
}

}  // namespace

// The columns each conversion below sets (and, second, those CUPTI records have no data for): a
// new model column must be added to one of them, and to the conversion.
static_assert(ColumnCheck<tg::Kernel>()
                  .With(&tg::Kernel::start, &tg::Kernel::end, &tg::Kernel::name, &tg::Kernel::device,
                        &tg::Kernel::stream, &tg::Kernel::correlation, &tg::Kernel::grid_x, &tg::Kernel::grid_y,
                        &tg::Kernel::grid_z, &tg::Kernel::block_x, &tg::Kernel::block_y, &tg::Kernel::block_z,
                        &tg::Kernel::registers, &tg::Kernel::shared_static, &tg::Kernel::shared_dynamic,
                        &tg::Kernel::pid, &tg::Kernel::graph_id, &tg::Kernel::graph_node_id)
                  // PyTorch's collective metadata: CUPTI records have none (collectives by name only)
                  .With(&tg::Kernel::collective, &tg::Kernel::coll_dtype, &tg::Kernel::coll_in_nelems,
                        &tg::Kernel::coll_out_nelems, &tg::Kernel::coll_group_size, &tg::Kernel::coll_group,
                        &tg::Kernel::coll_group_ranks, &tg::Kernel::coll_seq)
                  .All());
static_assert(ColumnCheck<tg::Memcpy>()
                  .With(&tg::Memcpy::start, &tg::Memcpy::end, &tg::Memcpy::device, &tg::Memcpy::stream,
                        &tg::Memcpy::correlation, &tg::Memcpy::bytes, &tg::Memcpy::kind, &tg::Memcpy::src_kind,
                        &tg::Memcpy::dst_kind, &tg::Memcpy::pid)
                  .All());
static_assert(ColumnCheck<tg::Memset>()
                  .With(&tg::Memset::start, &tg::Memset::end, &tg::Memset::device, &tg::Memset::stream,
                        &tg::Memset::correlation, &tg::Memset::bytes, &tg::Memset::value, &tg::Memset::mem_kind,
                        &tg::Memset::pid)
                  .All());
static_assert(ColumnCheck<tg::Sync>()
                  .With(&tg::Sync::start, &tg::Sync::end, &tg::Sync::device, &tg::Sync::stream, &tg::Sync::correlation,
                        &tg::Sync::kind, &tg::Sync::event_id, &tg::Sync::pid)
                  // From the sync's CUPTI_ACTIVITY_KIND_CUDA_EVENT record (CudaEvent below).
                  .With(&tg::Sync::wait_stream, &tg::Sync::record_correlation)
                  .All());
static_assert(ColumnCheck<ApiCall>()
                  .With(&ApiCall::start, &ApiCall::end, &ApiCall::name, &ApiCall::kind, &ApiCall::pid,
                        &ApiCall::tid, &ApiCall::correlation, &ApiCall::return_value)
                  .All());
static_assert(ColumnCheck<Range>()
                  .With(&Range::start, &Range::end, &Range::name, &Range::domain, &Range::pid, &Range::tid)
                  // NVTX is host-side: no stream; FinalizeTrace computes the depth.
                  .With(&Range::on_gpu, &Range::stream, &Range::depth)
                  .All());

const RecordedKind* FindRecordedKind(CUpti_ActivityKind kind) {
  for (const RecordedKind& k : kRecordedKinds)
    if (k.kind == kind) return &k;
  return nullptr;
}

bool ToTimes(uint64_t start, uint64_t end, QualityCounters& quality, TimeNs* out_start, TimeNs* out_end) {
  if (start == 0 && end == 0) {
    quality.Add(Quality::kMissingTimestamp);
    return false;
  }
  if (start > kMaxNs || end > kMaxNs) {
    quality.Add(Quality::kTimestampOverflow);
    return false;
  }
  if (end < start) {
    quality.Add(Quality::kNegativeDuration);
    return false;
  }
  *out_start = static_cast<TimeNs>(start);
  *out_end = static_cast<TimeNs>(end);
  return true;
}

void AllocationTracker::Allocate(int32_t device, uint64_t address, uint64_t bytes) {
  auto [it, inserted] = live_.try_emplace({device, address}, bytes);
  uint64_t& total = live_total_[device];
  if (!inserted) {  // a release we never saw: the address was reused
    total -= it->second;
    it->second = bytes;
  }
  total += bytes;
  if (total > peak_) peak_ = total;
}

void AllocationTracker::Release(int32_t device, uint64_t address) {
  auto it = live_.find({device, address});
  if (it == live_.end()) return;
  live_total_[device] -= it->second;
  live_.erase(it);
}

uint64_t AllocationTracker::LiveBytes(int32_t device) const {
  auto it = live_total_.find(device);
  return it == live_total_.end() ? 0 : it->second;
}

ActivityConverter::ActivityConverter(int64_t pid, ApiNameLookup api_name)
    : pid_(pid), api_name_(std::move(api_name)) {}

void ActivityConverter::BeginBatch(Trace& batch) {
  batch_ = &batch;
  batch_strings_ = batch.strings.size();
  ++batch_serial_;
}

void ActivityConverter::Convert(const CUpti_Activity& record, Trace& batch) {
  if (&batch != batch_ || batch.strings.size() != batch_strings_) BeginBatch(batch);
  ConvertRecord(record, batch);
  batch_strings_ = batch.strings.size();
}

void ActivityConverter::ConvertRecord(const CUpti_Activity& record, Trace& batch) {
  switch (record.kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL: return Kernel(As<CUpti_ActivityKernel10>(record), batch);
    case CUPTI_ACTIVITY_KIND_MEMCPY: return Copy(As<CUpti_ActivityMemcpy6>(record), batch);
    case CUPTI_ACTIVITY_KIND_MEMCPY2: return Copy(As<CUpti_ActivityMemcpyPtoP4>(record), batch);
    case CUPTI_ACTIVITY_KIND_MEMSET: return Memset(As<CUpti_ActivityMemset4>(record), batch);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return Sync(As<CUpti_ActivitySynchronization2>(record), batch);
    case CUPTI_ACTIVITY_KIND_CUDA_EVENT: return CudaEvent(As<CUpti_ActivityCudaEvent2>(record), batch);
    case CUPTI_ACTIVITY_KIND_RUNTIME: return Api(As<CUpti_ActivityAPI>(record), ApiKind::kRuntime, batch);
    case CUPTI_ACTIVITY_KIND_DRIVER: return Api(As<CUpti_ActivityAPI>(record), ApiKind::kDriver, batch);
    case CUPTI_ACTIVITY_KIND_MARKER: return Marker(As<CUpti_ActivityMarker2>(record), batch);
    case CUPTI_ACTIVITY_KIND_MEMORY2: return Memory(As<CUpti_ActivityMemory4>(record));
    case CUPTI_ACTIVITY_KIND_OVERHEAD: return Overhead(As<CUpti_ActivityOverhead3>(record));
    case CUPTI_ACTIVITY_KIND_DEVICE: return Device(As<CUpti_ActivityDevice5>(record), batch);
    case CUPTI_ACTIVITY_KIND_CONTEXT: {
      const auto& c = As<CUpti_ActivityContext3>(record);
      context_device_[c.contextId] = static_cast<int32_t>(c.deviceId);
      if (auto it = pending_syncs_.find(c.contextId); it != pending_syncs_.end()) {
        for (tg::Sync& y : it->second) {
          y.device = static_cast<int32_t>(c.deviceId);
          batch.syncs.Add(y);
        }
        pending_syncs_.erase(it);
      }
      return;
    }
    default:
      skipped_++;
      batch.quality.Add(Quality::kUnknownCategorySkipped);
      return;
  }
}

void ActivityConverter::Close(Trace& batch) {
  batch.quality.Add(Quality::kUnmatchedRangeEnd, open_ranges_.size() + pending_ends_.size());
  open_ranges_.clear();
  pending_ends_.clear();
  for (auto& [sync_id, syncs] : held_syncs_)  // their record never came: wait_stream etc. unknown
    for (auto& [y, context] : syncs) AddSync(y, context, batch);
  held_syncs_.clear();
  held_count_ = 0;
  for (auto& [context, syncs] : pending_syncs_)
    for (const tg::Sync& y : syncs) batch.syncs.Add(y);  // device stays -1
  pending_syncs_.clear();
}

void ActivityConverter::Kernel(const CUpti_ActivityKernel10& r, Trace& batch) {
  tg::Kernel k;
  if (!ToTimes(r.start, r.end, batch.quality, &k.start, &k.end)) return;
  k.name = r.name ? KernelName(r.name, batch) : StringTable::kEmpty;
  k.device = static_cast<int32_t>(r.deviceId);
  k.stream = r.streamId;
  k.correlation = r.correlationId;
  k.grid_x = r.gridX;
  k.grid_y = r.gridY;
  k.grid_z = r.gridZ;
  k.block_x = r.blockX;
  k.block_y = r.blockY;
  k.block_z = r.blockZ;
  k.registers = r.registersPerThread;
  k.shared_static = r.staticSharedMemory;
  k.shared_dynamic = r.dynamicSharedMemory;
  k.pid = pid_;
  k.graph_id = GraphId(r.graphId);
  k.graph_node_id = GraphId(r.graphNodeId);
  batch.kernels.Add(k);
}

template <typename CopyRecord>
void ActivityConverter::Copy(const CopyRecord& r, Trace& batch) {
  tg::Memcpy m;
  if (!ToTimes(r.start, r.end, batch.quality, &m.start, &m.end)) return;
  m.device = static_cast<int32_t>(r.deviceId);
  m.stream = r.streamId;
  m.correlation = r.correlationId;
  m.bytes = static_cast<int64_t>(r.bytes);
  m.kind = ToCopyKind(r.copyKind, batch.quality);
  m.src_kind = ToMemKind(r.srcKind);
  m.dst_kind = ToMemKind(r.dstKind);
  m.pid = pid_;
  batch.memcpys.Add(m);
}

void ActivityConverter::Memset(const CUpti_ActivityMemset4& r, Trace& batch) {
  tg::Memset m;
  if (!ToTimes(r.start, r.end, batch.quality, &m.start, &m.end)) return;
  m.device = static_cast<int32_t>(r.deviceId);
  m.stream = r.streamId;
  m.correlation = r.correlationId;
  m.bytes = static_cast<int64_t>(r.bytes);
  m.value = static_cast<int32_t>(r.value);
  m.mem_kind = ToMemKind(r.memoryKind);
  m.pid = pid_;
  batch.memsets.Add(m);
}

void ActivityConverter::Sync(const CUpti_ActivitySynchronization2& r, Trace& batch) {
  tg::Sync y;
  if (!ToTimes(r.start, r.end, batch.quality, &y.start, &y.end)) return;
  y.device = DeviceOfContext(r.contextId);
  y.stream = SyncId(r.streamId);
  y.correlation = r.correlationId;
  y.kind = ToSyncKind(r.type);
  y.event_id = SyncId(r.cudaEventId);
  y.pid = pid_;
  if ((y.kind == SyncKind::kEventSync || y.kind == SyncKind::kStreamWaitEvent) && KnownEventSyncId(r.cudaEventSyncId)) {
    if (auto it = event_records_.find(r.cudaEventSyncId); it != event_records_.end()) {
      y.wait_stream = it->second.stream;
      y.record_correlation = it->second.correlation;
    } else if (expect_event_records_) {  // its record may be in a buffer still to come
      held_syncs_[r.cudaEventSyncId].emplace_back(y, r.contextId);
      if (++held_count_ > kMaxHeldSyncs) {  // give up on the oldest recording's syncs
        auto oldest = held_syncs_.begin();
        for (auto& [held, context] : oldest->second) AddSync(held, context, batch);
        held_count_ -= oldest->second.size();
        held_syncs_.erase(oldest);
      }
      return;
    }
  }
  AddSync(y, r.contextId, batch);
}

void ActivityConverter::AddSync(tg::Sync y, uint32_t context, Trace& batch) {
  if (y.device < 0) y.device = DeviceOfContext(context);
  if (y.device < 0) {
    pending_syncs_[context].push_back(y);
    return;
  }
  batch.syncs.Add(y);
}

// A cudaEventSynchronize or cudaStreamWaitEvent waits for the event's latest cudaEventRecord
// before the call. CUPTI names that record for us: each CUDA event record (one per cudaEventRecord
// call) has a cudaEventSyncId of its own, and a sync record of type EVENT_SYNCHRONIZE or
// STREAM_WAIT_EVENT carries the cudaEventSyncId of the record it waits on. The sync takes that
// record's stream (wait_stream) and correlation id (record_correlation, the cudaEventRecord call's),
// the rule of the nsys importer (sqlite_events.cpp ReadSyncs: a join on eventSyncId, one process).
// Buffers come in no set order, so either may come first: a record is kept for the syncs still to
// come, and a sync whose record has not come is held until it does (or Close).
// Bounded: an event (by context and event id; CUDA reuses an event for many records) keeps its
// latest kRecordsPerEvent records, a sync naming an older one stays unmatched; at most kMaxEvents
// events are kept (beyond, the least recently recorded half is forgotten); at most kMaxHeldSyncs
// syncs are held (beyond, those waiting on the lowest sync id, the oldest record, go out
// unmatched). No record for a sync (event recorded before the recording started, or the kind
// refused): wait_stream and record_correlation stay kUnknownId.
void ActivityConverter::CudaEvent(const CUpti_ActivityCudaEvent2& r, Trace& batch) {
  if (!KnownEventSyncId(r.cudaEventSyncId)) return;
  EventHistory& h = event_history_[(uint64_t{r.contextId} << 32) | r.eventId];
  if (h.count == kRecordsPerEvent) event_records_.erase(h.sync_ids[h.next]);  // the event's oldest
  else ++h.count;
  h.sync_ids[h.next] = r.cudaEventSyncId;
  h.next = static_cast<uint32_t>((h.next + 1) % kRecordsPerEvent);
  h.recorded = ++event_serial_;
  const EventRecord record{static_cast<int64_t>(r.streamId), static_cast<int64_t>(r.correlationId)};
  event_records_.insert_or_assign(r.cudaEventSyncId, record);
  if (auto held = held_syncs_.find(r.cudaEventSyncId); held != held_syncs_.end()) {
    for (auto& [y, context] : held->second) {
      y.wait_stream = record.stream;
      y.record_correlation = record.correlation;
      AddSync(y, context, batch);
    }
    held_count_ -= held->second.size();
    held_syncs_.erase(held);
  }
  if (event_history_.size() > kMaxEvents) ForgetOldEvents();
}

void ActivityConverter::ForgetOldEvents() {
  std::vector<uint64_t> serials;
  serials.reserve(event_history_.size());
  for (const auto& [key, h] : event_history_) serials.push_back(h.recorded);
  auto middle = serials.begin() + static_cast<std::ptrdiff_t>(serials.size() / 2);
  std::nth_element(serials.begin(), middle, serials.end());
  const uint64_t keep_from = *middle;
  for (auto it = event_history_.begin(); it != event_history_.end();) {
    if (it->second.recorded >= keep_from) {
      ++it;
      continue;
    }
    for (uint32_t i = 0; i < it->second.count; ++i) event_records_.erase(it->second.sync_ids[i]);
    it = event_history_.erase(it);
  }
}

void ActivityConverter::Api(const CUpti_ActivityAPI& r, ApiKind kind, Trace& batch) {
  ApiCall a;
  if (!ToTimes(r.start, r.end, batch.quality, &a.start, &a.end)) return;
  a.name = ApiName(kind, r.cbid, batch);
  a.kind = kind;
  a.pid = r.processId;
  a.tid = r.threadId;
  a.correlation = r.correlationId;
  a.return_value = static_cast<int32_t>(r.returnValue);
  batch.api_calls.Add(a);
}

// NVTX through CUPTI: a push/pop or start/end range arrives as a START and an END marker with the
// same id, possibly in different buffers; a mark as one INSTANTANEOUS marker. END has no name.
void ActivityConverter::Marker(const CUpti_ActivityMarker2& r, Trace& batch) {
  OpenRange open;
  open.start = static_cast<TimeNs>(r.timestamp);
  if (r.name) open.name = r.name;
  if (r.domain) open.domain = r.domain;
  open.pid = pid_;
  if (r.objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS || r.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD)
    open.pid = r.objectId.pt.processId;
  if (r.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD) open.tid = r.objectId.pt.threadId;

  const bool instant = r.flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS;
  const bool start = r.flags & CUPTI_ACTIVITY_FLAG_MARKER_START;
  const bool end = r.flags & CUPTI_ACTIVITY_FLAG_MARKER_END;
  if (!instant && !start && !end) {  // NVTX sync-object markers: not modelled
    batch.quality.Add(Quality::kUnknownCategorySkipped);
    return;
  }
  if (r.timestamp == 0) {
    batch.quality.Add(Quality::kMissingTimestamp);
    if (end) open_ranges_.erase(r.id);
    return;
  }
  if (r.timestamp > kMaxNs) {
    batch.quality.Add(Quality::kTimestampOverflow);
    if (end) open_ranges_.erase(r.id);
    return;
  }
  Range range;
  range.end = static_cast<TimeNs>(r.timestamp);
  if (start) {
    auto ended = pending_ends_.find(r.id);
    if (ended == pending_ends_.end()) {
      open_ranges_[r.id] = std::move(open);
      return;
    }
    range.end = ended->second;
    pending_ends_.erase(ended);
    if (range.end < open.start) {
      batch.quality.Add(Quality::kNegativeDuration);
      return;
    }
  } else if (end) {
    auto it = open_ranges_.find(r.id);
    if (it == open_ranges_.end()) {
      pending_ends_[r.id] = range.end;
      return;
    }
    open = std::move(it->second);
    open_ranges_.erase(it);
    if (range.end < open.start) {
      batch.quality.Add(Quality::kNegativeDuration);
      return;
    }
  }
  range.start = open.start;
  range.name = batch.strings.Intern(open.name);
  range.domain = batch.strings.Intern(open.domain);
  range.pid = open.pid;
  range.tid = open.tid;
  batch.ranges.Add(range);
}

void ActivityConverter::Memory(const CUpti_ActivityMemory4& r) {
  // Device memory only: what NVML's memory_used also counts (pinned host memory is not on the GPU).
  if (r.memoryKind != CUPTI_ACTIVITY_MEMORY_KIND_DEVICE && r.memoryKind != CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC)
    return;
  const auto device = static_cast<int32_t>(r.deviceId);
  if (r.memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION)
    allocations_.Allocate(device, r.address, r.bytes);
  else if (r.memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE)
    allocations_.Release(device, r.address);
}

void ActivityConverter::Overhead(const CUpti_ActivityOverhead3& r) {
  QualityCounters ignored;  // an untimed overhead record is not a lost event
  TimeNs start, end;
  if (ToTimes(r.start, r.end, ignored, &start, &end)) overhead_ns_[OverheadName(r.overheadKind)] += end - start;
}

void ActivityConverter::Device(const CUpti_ActivityDevice5& r, Trace& batch) {
  tg::Device d;
  d.id = static_cast<int32_t>(r.id);
  if (r.name) d.name = r.name;
  d.sm_count = static_cast<int32_t>(r.numMultiprocessors);
  d.memory_bytes = static_cast<int64_t>(r.globalMemorySize);
  d.peak_bandwidth_gbs = static_cast<double>(r.globalMemoryBandwidth) / 1e6;  // kB/s -> GB/s
  d.compute_major = static_cast<int32_t>(r.computeCapabilityMajor);
  d.compute_minor = static_cast<int32_t>(r.computeCapabilityMinor);
  for (tg::Device& known : batch.devices)
    if (known.id == d.id) {
      known = d;
      return;
    }
  batch.devices.push_back(std::move(d));
}

int32_t ActivityConverter::DeviceOfContext(uint32_t context) const {
  auto it = context_device_.find(context);
  return it == context_device_.end() ? -1 : it->second;
}

// The store keeps demangled names, as nsys' demangledName and Kineto do; one demangling per
// distinct kernel.
StringId ActivityConverter::KernelName(const char* mangled, Trace& batch) {
  const auto bits = reinterpret_cast<uintptr_t>(mangled);
  RecentName& slot = recent_names_[((bits >> 3) ^ (bits >> 13)) % kRecentNames];
  uint32_t index;
  if (slot.pointer == mangled && std::strcmp(names_[slot.index].mangled.c_str(), mangled) == 0) {
    index = slot.index;
  } else if (auto at = by_pointer_.find(mangled);
             at != by_pointer_.end() && std::strcmp(names_[at->second].mangled.c_str(), mangled) == 0) {
    index = at->second;
  } else {  // a pointer not seen, or seen with other text (reused after its module was unloaded)
    std::string_view text(mangled);
    auto known = by_text_.find(text);
    if (known == by_text_.end()) {
      known = by_text_.emplace(std::string(text), static_cast<uint32_t>(names_.size())).first;
      names_.push_back({std::string(text), Demangle(text), 0, 0});
    }
    index = known->second;
    by_pointer_.insert_or_assign(mangled, index);
  }
  slot = {mangled, index};
  KernelNameEntry& e = names_[index];
  if (e.batch_of != batch_serial_) {
    e.id = batch.strings.Intern(e.demangled);
    e.batch_of = batch_serial_;
  }
  return e.id;
}

namespace {
std::string UnknownApiName(ApiKind kind, uint32_t cbid) {
  return StrFormat("%s API %u", kind == ApiKind::kDriver ? "driver" : "runtime", cbid);
}
}  // namespace

StringId ActivityConverter::ApiName(ApiKind kind, uint32_t cbid, Trace& batch) {
  if (cbid >= kMaxCachedCbid) {
    std::string name = api_name_ ? api_name_(kind, cbid) : std::string();
    return batch.strings.Intern(name.empty() ? UnknownApiName(kind, cbid) : name);
  }
  std::vector<ApiNameEntry>& table = api_names_[kind == ApiKind::kDriver ? 1 : 0];
  if (cbid >= table.size()) table.resize(cbid + 1);
  ApiNameEntry& e = table[cbid];
  if (e.name.empty()) {
    e.name = api_name_ ? api_name_(kind, cbid) : std::string();
    if (e.name.empty()) e.name = UnknownApiName(kind, cbid);
  }
  if (e.batch_of != batch_serial_) {
    e.id = batch.strings.Intern(e.name);
    e.batch_of = batch_serial_;
  }
  return e.id;
}

}  // namespace tg::cupti
