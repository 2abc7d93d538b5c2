#include "analyzer/import/kineto/kineto_builder.h"

#include <algorithm>
#include <array>
#include <climits>
#include <tuple>
#include <utility>

#include "analyzer/import/kineto/kineto_numbers.h"
#include "analyzer/import/kineto/kineto_vocab.h"
#include "analyzer/model/move_columns.h"
#include "analyzer/util/two_core_jobs.h"
#include "analyzer/vocab/kineto_names.h"

namespace tg::internal {

namespace {

// A stable negative id for a string pid/tid ("Spans", "PyTorch Profiler"): FNV-1a mapped below
// -1, so it never meets kUnknownId or a real (non-negative) process or thread id.
int64_t HashId(std::string_view s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return -2 - static_cast<int64_t>(h >> 2);
}

// pid / tid: integers, or strings (numeric strings read as the number, others hashed).
struct Id {
  int64_t value = kUnknownId;
  bool numeric = false;  // given as a number or numeric string
};
bool ReadId(const Field& f, Id& id) {
  id = Id{};
  switch (f.type) {
    case FieldType::kAbsent:
    case FieldType::kNull:
      return true;
    case FieldType::kNumber:
      id.numeric = FieldToInt64(f, 0, true, id.value) == NumberStatus::kOk;
      return id.numeric;
    case FieldType::kString:
      if (IsJsonNumber(f.text) && NumberToInt64(f.text, 0, true, id.value) == NumberStatus::kOk) {
        id.numeric = true;
      } else {
        id.value = HashId(f.text);
      }
      return true;
    case FieldType::kOther:
      break;
  }
  return false;
}

// An integer argument; absent or null gives `def`. False when present with the wrong type.
bool ArgInt(const Field& f, int64_t def, int64_t& out) {
  if (f.type == FieldType::kAbsent || f.type == FieldType::kNull) {
    out = def;
    return true;
  }
  return f.type == FieldType::kNumber && FieldToInt64(f, 0, true, out) == NumberStatus::kOk;
}
bool ArgInt32(const Field& f, int32_t def, int32_t& out) {
  int64_t v = 0;
  if (!ArgInt(f, def, v) || v < INT32_MIN || v > INT32_MAX) return false;
  out = static_cast<int32_t>(v);
  return true;
}

// Reads PyTorch's collective metadata of an NCCL kernel into `k`. It describes the kernel; it
// is not needed to place it, so a value of the wrong type is left unknown, not a malformed event.
void ReadCollective(const RawEvent& ev, StringTable& strings, Kernel& k) {
  if (ev.coll_name.type != FieldType::kString || ev.coll_name.text.empty()) return;
  auto name = [&](const Field& f) {
    return f.type == FieldType::kString ? strings.Intern(f.text) : StringTable::kEmpty;
  };
  auto count = [](const Field& f, int64_t& out) {
    int64_t v = 0;
    if (f.type == FieldType::kNumber && ArgInt(f, kUnknownId, v) && v >= 0) out = v;
  };
  k.collective = name(ev.coll_name);
  k.coll_dtype = name(ev.coll_dtype);
  k.coll_group = name(ev.coll_group);
  k.coll_group_ranks = name(ev.coll_group_ranks);
  count(ev.coll_in_nelems, k.coll_in_nelems);
  count(ev.coll_out_nelems, k.coll_out_nelems);
  count(ev.coll_seq, k.coll_seq);
  int64_t group = 0;
  count(ev.coll_group_size, group);
  if (group <= INT32_MAX) k.coll_group_size = static_cast<int32_t>(group);
}

enum class TimeRead { kOk, kMissing, kMalformed, kOverflow };
TimeRead ReadMicros(const Field& f, int64_t& ns) {
  if (f.type == FieldType::kAbsent || f.type == FieldType::kNull) return TimeRead::kMissing;
  if (f.type != FieldType::kNumber) return TimeRead::kMalformed;
  switch (FieldToInt64(f, 3, false, ns)) {
    case NumberStatus::kOk: return TimeRead::kOk;
    case NumberStatus::kOverflow: return TimeRead::kOverflow;
    default: return TimeRead::kMalformed;
  }
}

// CUPTI's "no stream" (a uint32 -1), which Kineto writes as args.stream of context and event
// syncs: the model's kUnknownId, as the store and nsys exports read it (U32FromDb).
constexpr int64_t kCuptiNoStream = 0xFFFFFFFFLL;

// The stream of a GPU event: args.stream, else its tid (Kineto writes the stream id there; old
// files write "stream 7").
bool GpuStream(const RawEvent& ev, const Id& tid, int64_t& stream) {
  if (ev.stream.type != FieldType::kAbsent && ev.stream.type != FieldType::kNull) {
    if (!ArgInt(ev.stream, kUnknownId, stream)) return false;
    if (stream == kCuptiNoStream) stream = kUnknownId;
    return true;
  }
  stream = kUnknownId;
  if (tid.numeric) {
    stream = tid.value;
  } else if (ev.tid.type == FieldType::kString) {
    std::string_view t = ev.tid.text;
    constexpr std::string_view kPrefix = "stream ";
    if (t.substr(0, kPrefix.size()) == kPrefix) {
      t.remove_prefix(kPrefix.size());
      size_t n = 0;
      while (n < t.size() && t[n] >= '0' && t[n] <= '9') ++n;
      int64_t v = 0;
      if (n > 0 && NumberToInt64(t.substr(0, n), 0, true, v) == NumberStatus::kOk) stream = v;
    }
  }
  return true;
}

// The device of a GPU event: args.device (old copies: inDevice), else its pid, which Kineto
// sets to the device id for GPU events.
bool GpuDevice(const RawEvent& ev, const Id& pid, int32_t& device) {
  if (ev.device.type != FieldType::kAbsent) return ArgInt32(ev.device, -1, device);
  if (ev.in_device.type != FieldType::kAbsent) return ArgInt32(ev.in_device, -1, device);
  device = pid.numeric && pid.value >= 0 && pid.value <= INT32_MAX ? static_cast<int32_t>(pid.value) : -1;
  return true;
}

}  // namespace

// What AddComplete fills from a Kineto event, and (second list) what Kineto traces do not have,
// left at the row default or computed later: a new model column must be added to one of them.
static_assert(ColumnCheck<Kernel>()
                  .With(&Kernel::start, &Kernel::end, &Kernel::name, &Kernel::device, &Kernel::stream,
                        &Kernel::correlation, &Kernel::grid_x, &Kernel::grid_y, &Kernel::grid_z, &Kernel::block_x,
                        &Kernel::block_y, &Kernel::block_z, &Kernel::registers, &Kernel::shared_static, &Kernel::pid,
                        &Kernel::collective, &Kernel::coll_dtype, &Kernel::coll_in_nelems, &Kernel::coll_out_nelems,
                        &Kernel::coll_group_size, &Kernel::coll_group, &Kernel::coll_group_ranks, &Kernel::coll_seq)
                  // "shared memory" is static + dynamic in one number: all of it goes to shared_static.
                  .With(&Kernel::shared_dynamic, &Kernel::graph_id, &Kernel::graph_node_id)
                  .All());
static_assert(ColumnCheck<Memcpy>()
                  .With(&Memcpy::start, &Memcpy::end, &Memcpy::device, &Memcpy::stream, &Memcpy::correlation,
                        &Memcpy::bytes, &Memcpy::kind, &Memcpy::src_kind, &Memcpy::dst_kind, &Memcpy::pid)
                  .All());
static_assert(ColumnCheck<Memset>()
                  .With(&Memset::start, &Memset::end, &Memset::device, &Memset::stream, &Memset::correlation,
                        &Memset::bytes, &Memset::mem_kind, &Memset::pid)
                  .With(&Memset::value)
                  .All());
static_assert(ColumnCheck<Sync>()
                  .With(&Sync::start, &Sync::end, &Sync::device, &Sync::stream, &Sync::correlation, &Sync::kind,
                        &Sync::event_id, &Sync::pid, &Sync::wait_stream, &Sync::record_correlation)
                  .All());
static_assert(ColumnCheck<ApiCall>()
                  .With(&ApiCall::start, &ApiCall::end, &ApiCall::name, &ApiCall::kind, &ApiCall::pid,
                        &ApiCall::tid, &ApiCall::correlation)
                  .With(&ApiCall::return_value)
                  .All());
static_assert(ColumnCheck<Range>()
                  .With(&Range::start, &Range::end, &Range::name, &Range::domain, &Range::pid, &Range::tid,
                        &Range::on_gpu, &Range::stream)
                  .With(&Range::depth)  // FinalizeTrace computes it
                  .All());

KinetoBuilder::KinetoBuilder(Trace& trace)
    : trace_(trace),
      quality_(trace.quality),
      cpu_op_domain_(trace.strings.Intern(kineto_cat::kCpuOp)),
      python_domain_(trace.strings.Intern(kineto_cat::kPythonFunction)) {}

void KinetoBuilder::Add(const RawEvent& ev) {
  if (!ev.is_object || ev.ph.type != FieldType::kString) {
    quality_.Add(Quality::kMalformedEvent);
    return;
  }
  if (ev.duplicate_key) quality_.Add(Quality::kDuplicateKey);
  char ph = ev.ph.text.size() == 1 ? ev.ph.text[0] : '\0';
  switch (ph) {
    case 'X': AddComplete(ev); return;
    case 'M': AddMetadata(ev); return;
    case 's': case 'f': AddFlow(ev, ph); return;
    case 't': case 'i': case 'I': return;  // flow steps and instant markers: nothing to model
    default: quality_.Add(Quality::kUnknownCategorySkipped); return;
  }
}

void KinetoBuilder::AddComplete(const RawEvent& ev) {
  Cat cat = ev.cat.type == FieldType::kString ? Classify(ev.cat.text) : Cat::kUnmodelled;
  // The legacy autograd profiler's export (torch.autograd.profiler, and torch.profiler in a PyTorch
  // built without Kineto, such as Debian's 1.13): 'X' events without "cat", every one on pid "CPU
  // functions" (profiler_util.py), its operators and record_function ranges, ProfilerStep#N among
  // them. They are CPU ops: a CPU-only trace whose iterations are its profiler steps.
  const bool legacy = ev.cat.type == FieldType::kAbsent && ev.pid.type == FieldType::kString &&
                      ev.pid.text == kLegacyCpuPid;
  if (legacy) cat = Cat::kCpuOp;
  if (cat == Cat::kUnmodelled) {
    quality_.Add(Quality::kUnknownCategorySkipped);
    const std::string_view name = ev.cat.type == FieldType::kString ? ev.cat.text : std::string_view("(no category)");
    if (auto it = unmodelled_.find(name); it != unmodelled_.end()) it->second++;
    else unmodelled_.emplace(name, 1);
    return;
  }
  int64_t start = 0, dur = 0, end = 0;
  switch (ReadMicros(ev.ts, start)) {
    case TimeRead::kOk: break;
    case TimeRead::kMissing: quality_.Add(Quality::kMissingTimestamp); return;
    case TimeRead::kMalformed: quality_.Add(Quality::kMalformedEvent); return;
    case TimeRead::kOverflow: quality_.Add(Quality::kTimestampOverflow); return;
  }
  switch (ReadMicros(ev.dur, dur)) {
    case TimeRead::kOk: break;
    case TimeRead::kMissing:  // a complete event needs its duration
    case TimeRead::kMalformed: quality_.Add(Quality::kMalformedEvent); return;
    case TimeRead::kOverflow: quality_.Add(Quality::kTimestampOverflow); return;
  }
  if (dur < 0) {
    quality_.Add(Quality::kNegativeDuration);
    return;
  }
  if (__builtin_add_overflow(start, dur, &end)) {
    quality_.Add(Quality::kTimestampOverflow);
    return;
  }
  Id pid, tid;
  bool ok = ReadId(ev.pid, pid) && ReadId(ev.tid, tid);
  ok = ok && (ev.name.type == FieldType::kString || ev.name.type == FieldType::kAbsent);
  ok = ok && (ev.args == FieldType::kAbsent || ev.args == FieldType::kNull || ev.args_is_object);
  if (!ok) {
    quality_.Add(Quality::kMalformedEvent);
    return;
  }
  std::string_view name = ev.name.type == FieldType::kString ? ev.name.text : std::string_view();

  int32_t device = -1;
  int64_t stream = kUnknownId, correlation = kUnknownId, gpu_pid = kUnknownId;
  const bool gpu = cat == Cat::kKernel || cat == Cat::kMemcpy || cat == Cat::kMemset || cat == Cat::kSync;
  if (gpu) {
    ok = GpuDevice(ev, pid, device) && GpuStream(ev, tid, stream) &&
         ArgInt(ev.correlation, kUnknownId, correlation) && ArgInt(ev.arg_pid, kUnknownId, gpu_pid);
  } else if (cat == Cat::kRuntime || cat == Cat::kDriver) {
    ok = ArgInt(ev.correlation, kUnknownId, correlation);
  }
  if (!ok) {
    quality_.Add(Quality::kMalformedEvent);
    return;
  }
  auto pending = [&](Table table, uint64_t row) {
    if (correlation == kUnknownId) pending_.push_back(Pending{pid.value, tid.value, start, row, table});
  };

  switch (cat) {
    case Cat::kKernel: {
      Kernel k;
      k.start = start; k.end = end; k.device = device; k.stream = stream;
      k.correlation = correlation; k.pid = gpu_pid;
      if (ev.grid.type == FieldType::kOther || ev.block.type == FieldType::kOther ||
          !ArgInt32(ev.registers, 0, k.registers) || !ArgInt32(ev.shared_memory, 0, k.shared_static)) {
        quality_.Add(Quality::kMalformedEvent);
        return;
      }
      k.grid_x = ev.grid.v[0]; k.grid_y = ev.grid.v[1]; k.grid_z = ev.grid.v[2];
      k.block_x = ev.block.v[0]; k.block_y = ev.block.v[1]; k.block_z = ev.block.v[2];
      k.name = trace_.strings.Intern(name);
      ReadCollective(ev, trace_.strings, k);
      pending(Table::kKernel, trace_.kernels.size());
      trace_.kernels.Add(k);
      break;
    }
    case Cat::kMemcpy: {
      Memcpy m;
      m.start = start; m.end = end; m.device = device; m.stream = stream;
      m.correlation = correlation; m.pid = gpu_pid;
      if (!ArgInt(ev.bytes, 0, m.bytes) || m.bytes < 0) {
        quality_.Add(Quality::kMalformedEvent);
        return;
      }
      ParseMemcpyName(name, m);
      if (m.kind == CopyKind::kUnknown) quality_.Add(Quality::kUnknownCopyKind);
      pending(Table::kMemcpy, trace_.memcpys.size());
      trace_.memcpys.Add(m);
      break;
    }
    case Cat::kMemset: {
      Memset m;
      m.start = start; m.end = end; m.device = device; m.stream = stream;
      m.correlation = correlation; m.pid = gpu_pid;
      if (!ArgInt(ev.bytes, 0, m.bytes) || m.bytes < 0) {
        quality_.Add(Quality::kMalformedEvent);
        return;
      }
      m.mem_kind = ParseMemsetName(name);
      pending(Table::kMemset, trace_.memsets.size());
      trace_.memsets.Add(m);
      break;
    }
    case Cat::kSync: {
      Sync s;
      s.start = start; s.end = end; s.device = device; s.stream = stream;
      s.correlation = correlation; s.pid = gpu_pid;
      if (!ArgInt(ev.wait_event_id, kUnknownId, s.event_id) || !ArgInt(ev.wait_stream, kUnknownId, s.wait_stream) ||
          !ArgInt(ev.wait_record_corr, kUnknownId, s.record_correlation) ||
          (ev.sync_kind.type != FieldType::kAbsent && ev.sync_kind.type != FieldType::kString)) {
        quality_.Add(Quality::kMalformedEvent);
        return;
      }
      // Kineto writes -1 where the sync waits on no recorded event.
      if (s.wait_stream < 0) s.wait_stream = kUnknownId;
      if (s.record_correlation < 0) s.record_correlation = kUnknownId;
      s.kind = SyncKindFrom(ev.sync_kind.type == FieldType::kString ? ev.sync_kind.text : name);
      pending(Table::kSync, trace_.syncs.size());
      trace_.syncs.Add(s);
      break;
    }
    case Cat::kRuntime:
    case Cat::kDriver: {
      ApiCall a;
      a.start = start; a.end = end; a.name = trace_.strings.Intern(name);
      a.kind = cat == Cat::kRuntime ? ApiKind::kRuntime : ApiKind::kDriver;
      a.pid = pid.value; a.tid = tid.value; a.correlation = correlation;
      pending(Table::kApi, trace_.api_calls.size());
      trace_.api_calls.Add(a);
      break;
    }
    case Cat::kUserAnnotation:
    case Cat::kGpuUserAnnotation:
    case Cat::kCpuOp:
    case Cat::kPythonFunction: {
      Range r;
      r.start = start; r.end = end; r.name = trace_.strings.Intern(name);
      r.pid = pid.value; r.tid = tid.value;
      r.domain = cat == Cat::kCpuOp ? cpu_op_domain_ : cat == Cat::kPythonFunction ? python_domain_ : 0;
      if (cat == Cat::kGpuUserAnnotation) {
        r.on_gpu = true;
        // The range's pid is its device: Kineto's GPU pid, or args.device where given (tracegate's
        // export puts devices on pids of their own).
        int32_t device = -1;
        if (!GpuStream(ev, tid, r.stream) || !GpuDevice(ev, pid, device)) {
          quality_.Add(Quality::kMalformedEvent);
          return;
        }
        if (device >= 0) r.pid = device;
      }
      trace_.ranges.Add(r);
      legacy_ += legacy ? 1 : 0;
      break;
    }
    case Cat::kUnmodelled:
      return;
  }
  ++kept_;
}

void KinetoBuilder::AddFlow(const RawEvent& ev, char phase) {
  // Only CPU -> GPU launch flows carry correlation ids; fwd/bwd flows are left alone. A flow we
  // cannot read is not an event we model, so it is not counted either.
  if (ev.cat.type != FieldType::kString || !IsLaunchFlow(ev.cat.text)) return;
  FlowPoint p{};
  p.phase = phase;
  Id pid, tid;
  if (!ReadId(ev.pid, pid) || !ReadId(ev.tid, tid) || ReadMicros(ev.ts, p.ts) != TimeRead::kOk) return;
  // A kNumber id is valid JSON already (both readers check every number); a string must hold one.
  if ((ev.id.type != FieldType::kNumber && ev.id.type != FieldType::kString) ||
      (ev.id.type == FieldType::kString && !IsJsonNumber(ev.id.text)) ||
      FieldToInt64(ev.id, 0, true, p.id) != NumberStatus::kOk) {
    return;
  }
  p.pid = pid.value;
  p.tid = tid.value;
  ++flows_seen_;
  if (pending_.empty() && flows_.size() == kFlowRing) {
    flows_[ring_next_] = p;
    ring_next_ = (ring_next_ + 1) % kFlowRing;
  } else {
    flows_.push_back(p);
  }
}

void KinetoBuilder::AddMetadata(const RawEvent& ev) {
  // thread_name, *_sort_index, process_labels: display hints, not counted.
  if (ev.name.type != FieldType::kString || ev.name.text != "process_name") return;
  Id pid;
  if (!ReadId(ev.pid, pid) || ev.arg_name.type != FieldType::kString) return;
  auto [it, inserted] = process_index_.emplace(pid.value, trace_.processes.size());
  if (inserted) {
    trace_.processes.push_back(Process{pid.value, std::string(ev.arg_name.text)});
  } else {
    trace_.processes[it->second].name = std::string(ev.arg_name.text);
  }
}

namespace {

auto Tables(Trace& t) { return std::tie(t.kernels, t.memcpys, t.memsets, t.syncs, t.api_calls, t.ranges); }

// Ids of `from` mapped onto the strings of `to`.
void MapNames(std::vector<StringId>& names, size_t first, const std::vector<StringId>& map) {
  for (size_t i = first; i < names.size(); ++i) names[i] = map[names[i]];
}
void MapNames(SparseColumn<StringId>& names, size_t first, const std::vector<StringId>& map) {
  names.MapFrom(first, [&](StringId id) { return map[id]; });  // map[kEmpty] == kEmpty
}

}  // namespace

void KinetoBuilder::ReserveFor(double scale) {
  // `scale` holds half again over the estimate already: a table is moved to a larger one only
  // when its new estimate outgrows what it has by more than a quarter. Estimates made later in a
  // file creep up a few percent at a time (its first megabytes hold fewer of its GPU rows), and
  // each move copies every row so far (dense: 133 thousand kernels at 64 MiB for 2% more room).
  auto grow = [scale](auto& table) {
    auto want = static_cast<size_t>(static_cast<double>(table.size()) * scale) + 256;
    const size_t room = table.start.capacity();
    if (want > table.size() && want > room + room / 4) table.Reserve(want);
  };
  std::apply([&](auto&... table) { (grow(table), ...); }, Tables(trace_));
}

void KinetoBuilder::ReserveRows(const TableRows& rows) {
  static_assert(std::tuple_size_v<TableRows> == std::tuple_size_v<decltype(Tables(trace_))>);
  size_t i = 0;
  auto reserve = [&](auto& table) {
    const auto want = static_cast<size_t>(rows[i++]);
    if (want > table.start.capacity()) table.Reserve(want);
  };
  std::apply([&](auto&... table) { (reserve(table), ...); }, Tables(trace_));
}

bool KinetoBuilder::Append(KinetoBuilder& next) {
  if (!pending_.empty() || !next.pending_.empty()) return false;
  Trace& part = next.trace_;
  std::vector<StringId> map(part.strings.size());
  for (size_t id = 0; id < map.size(); ++id) map[id] = trace_.strings.Intern(part.strings.View(static_cast<StringId>(id)));
  // Every column's rows on whichever core has less to copy (most of it is the page faults on the
  // new rows), each name column's ids re-mapped by the core that appended it.
  const std::array<const void*, 8> name_columns{&trace_.kernels.name,
                                                &trace_.kernels.collective,
                                                &trace_.kernels.coll_dtype,
                                                &trace_.kernels.coll_group,
                                                &trace_.kernels.coll_group_ranks,
                                                &trace_.api_calls.name,
                                                &trace_.ranges.name,
                                                &trace_.ranges.domain};
  const auto map_names = [&](auto& column, size_t first) {
    if constexpr (requires { MapNames(column, first, map); }) {
      if (std::find(name_columns.begin(), name_columns.end(), &column) != name_columns.end())
        MapNames(column, first, map);
    }
  };
  ColumnMoves moves;
  Zip(Tables(trace_), Tables(part), [&](auto& to, auto& from) { moves.Add(to, from, map_names); });
  moves.Run();
  for (size_t q = 0; q < static_cast<size_t>(Quality::kCount); ++q) {
    quality_.Add(static_cast<Quality>(q), next.quality_.Get(static_cast<Quality>(q)));
  }
  for (const Process& p : part.processes) {
    auto [it, inserted] = process_index_.emplace(p.pid, trace_.processes.size());
    if (inserted) {
      trace_.processes.push_back(p);
    } else {
      trace_.processes[it->second].name = p.name;
    }
  }
  kept_ += next.kept_;
  legacy_ += next.legacy_;
  for (const auto& [name, count] : next.unmodelled_) unmodelled_[name] += count;
  // The flow ring as one builder would have left it: flow k of all (in order) in slot k % size.
  auto in_order = [](const KinetoBuilder& b) {
    std::vector<FlowPoint> v;
    v.reserve(b.flows_.size());
    size_t first = b.flows_.size() == kFlowRing ? b.ring_next_ : 0;
    for (size_t i = 0; i < b.flows_.size(); ++i) v.push_back(b.flows_[(first + i) % b.flows_.size()]);
    return v;
  };
  std::vector<FlowPoint> all = in_order(*this);
  std::vector<FlowPoint> later = in_order(next);
  all.insert(all.end(), later.begin(), later.end());
  const uint64_t total = flows_seen_ + next.flows_seen_;
  if (total <= kFlowRing) {
    flows_ = std::move(all);
    ring_next_ = 0;
  } else {
    flows_.assign(kFlowRing, FlowPoint{});
    // all holds flows total - all.size() .. total - 1; the ring keeps the last kFlowRing.
    for (uint64_t k = total - kFlowRing; k < total; ++k) flows_[k % kFlowRing] = all[all.size() - (total - k)];
    ring_next_ = total % kFlowRing;
  }
  flows_seen_ = total;
  std::vector<FlowPoint>().swap(next.flows_);
  return true;
}

void KinetoBuilder::BindFlows() {
  if (!pending_.empty() && !flows_.empty()) {
    auto key = [](const FlowPoint& f) { return std::tie(f.phase, f.pid, f.tid, f.ts); };
    std::stable_sort(flows_.begin(), flows_.end(),
                     [&](const FlowPoint& a, const FlowPoint& b) { return key(a) < key(b); });
    for (const Pending& p : pending_) {
      FlowPoint probe{p.pid, p.tid, p.ts, 0, p.table == Table::kApi ? 's' : 'f'};
      auto it = std::lower_bound(flows_.begin(), flows_.end(), probe,
                                 [&](const FlowPoint& a, const FlowPoint& b) { return key(a) < key(b); });
      if (it == flows_.end() || key(*it) != key(probe)) continue;
      switch (p.table) {
        case Table::kKernel: trace_.kernels.correlation.set(p.row, it->id); break;
        case Table::kMemcpy: trace_.memcpys.correlation.set(p.row, it->id); break;
        case Table::kMemset: trace_.memsets.correlation.set(p.row, it->id); break;
        case Table::kSync: trace_.syncs.correlation.set(p.row, it->id); break;
        case Table::kApi: trace_.api_calls.correlation.set(p.row, it->id); break;
      }
    }
  }
  flows_ = {};
  pending_ = {};
}

namespace {
// Adds `base` to start/end of every row of a table where some time overflows: those rows are
// dropped and counted.
template <class T>
void AddBaseDroppingOverflow(T& table, int64_t base, QualityCounters& quality) {
  size_t overflow = 0;
  int64_t s = 0, e = 0;
  for (size_t i = 0; i < table.size(); ++i) {
    if (__builtin_add_overflow(table.start[i], base, &s) || __builtin_add_overflow(table.end[i], base, &e)) ++overflow;
  }
  T kept;
  for (size_t i = 0; i < table.size(); ++i) {
    auto row = table.Row(i);
    if (__builtin_add_overflow(row.start, base, &row.start) || __builtin_add_overflow(row.end, base, &row.end)) continue;
    kept.Add(row);
  }
  table = std::move(kept);
  quality.Add(Quality::kTimestampOverflow, overflow);
}
}  // namespace

void KinetoBuilder::ApplyBase(int64_t base_ns) {
  if (base_ns == 0) return;
  // Whether any time of a table overflows follows from its extremes, so the rows are read one by
  // one only in a table where some do; elsewhere the base is added column by column. Both passes
  // share the columns between two cores (TwoCoreJobs), once there are enough rows for it.
  struct TimeColumn {
    std::vector<int64_t>* times;
    size_t table;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
  };
  std::vector<TimeColumn> columns;
  size_t t = 0;
  std::apply(
      [&](auto&... table) {
        ((columns.push_back({&table.start, t}), columns.push_back({&table.end, t}), ++t), ...);
      },
      Tables(trace_));
  const auto on_both = [&](auto f) {
    TwoCoreJobs jobs;
    for (TimeColumn& c : columns) jobs.Add(c.times->size(), [&f, &c] { f(c); });
    jobs.Run(size_t{1} << 16);
  };
  on_both([](TimeColumn& c) {
    int64_t lo = INT64_MAX, hi = INT64_MIN;  // locals: the loop is vectorised
    for (const int64_t x : *c.times) lo = std::min(lo, x), hi = std::max(hi, x);
    c.lo = lo;
    c.hi = hi;
  });
  std::array<bool, 6> overflows{};
  for (const TimeColumn& c : columns) {
    int64_t unused = 0;
    if (!c.times->empty() &&
        (__builtin_add_overflow(c.lo, base_ns, &unused) || __builtin_add_overflow(c.hi, base_ns, &unused)))
      overflows[c.table] = true;
  }
  on_both([&](TimeColumn& c) {
    if (overflows[c.table]) return;
    int64_t* x = c.times->data();
    const int64_t base = base_ns;
    for (size_t i = 0, n = c.times->size(); i < n; ++i) x[i] += base;
  });
  t = 0;
  std::apply(
      [&](auto&... table) { ((overflows[t++] ? AddBaseDroppingOverflow(table, base_ns, quality_) : void()), ...); },
      Tables(trace_));
}

void KinetoBuilder::Finish(int64_t base_ns) {
  BindFlows();
  ApplyBase(base_ns);
  if (legacy_ > 0 && legacy_ == kept_)
    trace_.metadata[std::string(meta::kProducer)] = "PyTorch profiler without Kineto (legacy autograd profiler trace)";
  if (unmodelled_.empty()) return;
  // "cpu_instant_event 12, mtia_kernel 7": the most frequent first, at most eight named.
  std::vector<std::pair<std::string, uint64_t>> v(unmodelled_.begin(), unmodelled_.end());
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string line;
  for (size_t i = 0; i < v.size() && i < 8; ++i) line += (i ? ", " : "") + v[i].first + " " + std::to_string(v[i].second);
  if (v.size() > 8) line += ", and " + std::to_string(v.size() - 8) + " more";
  trace_.metadata["unmodelled_categories"] = std::move(line);
}

}  // namespace tg::internal
