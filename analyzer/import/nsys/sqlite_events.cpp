// Reads the event tables of a tracegate store or an Nsight Systems export into the model.
// Encodings (ids, GlobalIds, eventClass, NVTX event types): store_schema.h.
#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <utility>

#include "analyzer/import/nsys/sqlite_read.h"
#include "analyzer/store/store_schema.h"

namespace tg::internal {

using internal::U32FromDb;

namespace {

constexpr int64_t kNone = internal::kNoneU32;  // NULL device / stream / event ids read as "none"

// pid from a globalPid column, or from the tgPid column when the writer had to use it.
int64_t ReadPid(const internal::Stmt& q, int global_col, int tg_col) {
  int64_t v;
  if (q.Get(tg_col, v)) return v;
  return q.Get(global_col, v) ? internal::PidOf(v) : kUnknownId;
}

void ReadPidTid(const internal::Stmt& q, int global_col, int tg_col, int64_t& pid, int64_t& tid) {
  int64_t g;
  if (q.Get(tg_col, pid)) {
    tid = q.IntOr(tg_col + 1, kUnknownId);
  } else if (q.Get(global_col, g)) {
    pid = internal::PidOf(g);
    tid = internal::TidOf(g);
  } else {
    pid = tid = kUnknownId;
  }
}

// GetInteger, and a REAL that holds a whole number below 2^53 read as that integer: every such
// double is exactly one int64, so nothing is lost. Other REALs (a fraction, or so large that
// neighbouring integers share one double) cannot give the exact nanosecond: -2.
int GetTime(const internal::Stmt& q, int c, TimeNs& v) {
  const int got = q.GetInteger(c, v);
  double real;
  if (got >= 0 || !q.GetReal(c, real)) return got;
  constexpr double kExactLimit = 9007199254740992.0;  // 2^53
  if (!(std::abs(real) < kExactLimit) || std::trunc(real) != real) return -2;
  v = static_cast<TimeNs>(real);
  return 1;
}

// Checks start/end (columns 0 and 1): both INTEGER, end >= start; false when the row must be
// dropped (and counts why).
bool ReadTimes(const internal::Stmt& q, Source& src, TimeNs& start, TimeNs& end) {
  const int s = GetTime(q, 0, start), e = GetTime(q, 1, end);
  if (s == -2 || e == -2) {
    src.found.Add(Quality::kInexactTimestamp);
    return false;
  }
  if (s < 0 || e < 0) {  // a time stored as text or a blob
    src.found.Add(Quality::kMalformedEvent);
    return false;
  }
  if (s == 0 || e == 0) {
    src.found.Add(Quality::kMissingTimestamp);
    return false;
  }
  if (end < start) {
    src.found.Add(Quality::kNegativeDuration);
    return false;
  }
  return true;
}

template <size_t N>
std::string Join(const int (&values)[N]) {
  std::string out;
  for (int v : values) out += (out.empty() ? "" : ", ") + std::to_string(v);
  return out;
}

MemKind ToMemKind(const internal::Stmt& q, int col) {
  int64_t v = q.IntOr(col, static_cast<int64_t>(MemKind::kUnknown));
  return v >= 0 && v <= static_cast<int64_t>(MemKind::kUnknown) ? static_cast<MemKind>(v) : MemKind::kUnknown;
}

Status ReadKernels(Source& src) {
  const std::string table = "CUPTI_ACTIVITY_KIND_KERNEL";
  if (!src.Has(table)) return Status::Ok();
  internal::Stmt q;
  Status s = SelectColumns(src, table,
                           {"start", "end", "deviceId", "streamId", "correlationId", "globalPid",
                            "demangledName", "shortName", "registersPerThread", "gridX", "gridY", "gridZ",
                            "blockX", "blockY", "blockZ", "staticSharedMemory", "dynamicSharedMemory",
                            "graphId", "graphNodeId", "tgPid"},
                           "", q);
  if (!s.ok()) return s;
  KernelTable& t = src.trace.kernels;
  t.Reserve(t.size() + RowEstimate(src, table));
  Kernel k;
  while (q.Next(s)) {
    if (!ReadTimes(q, src, k.start, k.end)) continue;
    k.device = static_cast<int32_t>(U32FromDb(q.IntOr(2, kNone)));
    k.stream = U32FromDb(q.IntOr(3, kNone));
    k.correlation = q.IntOr(4, kUnknownId);
    k.pid = ReadPid(q, 5, 19);
    // The full (templated) name when the export has it, else the base name.
    int64_t name_id;
    k.name = q.Get(6, name_id) || q.Get(7, name_id) ? src.names(name_id) : StringTable::kEmpty;
    k.registers = static_cast<int32_t>(q.Int(8));
    k.grid_x = static_cast<int32_t>(q.Int(9));
    k.grid_y = static_cast<int32_t>(q.Int(10));
    k.grid_z = static_cast<int32_t>(q.Int(11));
    k.block_x = static_cast<int32_t>(q.Int(12));
    k.block_y = static_cast<int32_t>(q.Int(13));
    k.block_z = static_cast<int32_t>(q.Int(14));
    k.shared_static = static_cast<int32_t>(q.Int(15));
    k.shared_dynamic = static_cast<int32_t>(q.Int(16));
    k.graph_id = q.IntOr(17, kUnknownId);
    k.graph_node_id = q.IntOr(18, kUnknownId);
    t.Add(k);
  }
  return s;
}

Status ReadMemcpys(Source& src) {
  const std::string table = "CUPTI_ACTIVITY_KIND_MEMCPY";
  if (!src.Has(table)) return Status::Ok();
  internal::Stmt q;
  Status s = SelectColumns(src, table,
                           {"start", "end", "deviceId", "streamId", "correlationId", "globalPid", "bytes",
                            "copyKind", "srcKind", "dstKind", "tgPid"},
                           "", q);
  if (!s.ok()) return s;
  Memcpy m;
  while (q.Next(s)) {
    if (!ReadTimes(q, src, m.start, m.end)) continue;
    m.device = static_cast<int32_t>(U32FromDb(q.IntOr(2, kNone)));
    m.stream = U32FromDb(q.IntOr(3, kNone));
    m.correlation = q.IntOr(4, kUnknownId);
    m.pid = ReadPid(q, 5, 10);
    m.bytes = q.Int(6);
    int64_t kind = q.IntOr(7, 0);
    // ENUM_CUDA_MEMCPY_OPER goes beyond the model (11-13: unified-memory migrations): unknown.
    bool known = kind >= 1 && kind <= static_cast<int64_t>(CopyKind::kPtoP);
    m.kind = known ? static_cast<CopyKind>(kind) : CopyKind::kUnknown;
    if (!known && !src.is_store) src.found.Add(Quality::kUnknownCopyKind);
    m.src_kind = ToMemKind(q, 8);
    m.dst_kind = ToMemKind(q, 9);
    src.trace.memcpys.Add(m);
  }
  return s;
}

Status ReadMemsets(Source& src) {
  const std::string table = "CUPTI_ACTIVITY_KIND_MEMSET";
  if (!src.Has(table)) return Status::Ok();
  internal::Stmt q;
  Status s = SelectColumns(src, table,
                           {"start", "end", "deviceId", "streamId", "correlationId", "globalPid", "value",
                            "bytes", "memKind", "tgPid"},
                           "", q);
  if (!s.ok()) return s;
  Memset m;
  while (q.Next(s)) {
    if (!ReadTimes(q, src, m.start, m.end)) continue;
    m.device = static_cast<int32_t>(U32FromDb(q.IntOr(2, kNone)));
    m.stream = U32FromDb(q.IntOr(3, kNone));
    m.correlation = q.IntOr(4, kUnknownId);
    m.pid = ReadPid(q, 5, 9);
    m.value = static_cast<int32_t>(q.Int(6));
    m.bytes = q.Int(7);
    m.mem_kind = ToMemKind(q, 8);
    src.trace.memsets.Add(m);
  }
  return s;
}

Status ReadSyncs(Source& src) {
  const std::string table = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION";
  if (!src.Has(table)) return Status::Ok();
  internal::Stmt q;
  Status s = SelectColumns(src, table,
                           {"start", "end", "deviceId", "streamId", "correlationId", "globalPid",
                            "syncType", "eventId", "tgPid"},
                           "", q);
  if (!s.ok()) return s;
  Sync y;
  while (q.Next(s)) {
    if (!ReadTimes(q, src, y.start, y.end)) continue;
    y.device = static_cast<int32_t>(U32FromDb(q.IntOr(2, kNone)));
    y.stream = U32FromDb(q.IntOr(3, kNone));
    y.correlation = q.IntOr(4, kUnknownId);
    y.pid = ReadPid(q, 5, 8);
    int64_t kind = q.IntOr(6, 0);
    bool known = kind >= 0 && kind <= static_cast<int64_t>(SyncKind::kContextSync);
    y.kind = known ? static_cast<SyncKind>(kind) : SyncKind::kUnknown;
    y.event_id = U32FromDb(q.IntOr(7, kNone));
    src.trace.syncs.Add(y);
  }
  return s;
}

Status ReadApiCalls(Source& src) {
  const std::string table = "CUPTI_ACTIVITY_KIND_RUNTIME";
  if (!src.Has(table)) return Status::Ok();
  internal::Stmt q;
  Status s = SelectColumns(src, table,
                           {"start", "end", "eventClass", "globalTid", "correlationId", "nameId",
                            "returnValue", "tgPid", "tgTid"},
                           "", q);
  if (!s.ok()) return s;
  ApiTable& t = src.trace.api_calls;
  t.Reserve(t.size() + RowEstimate(src, table));
  ApiCall a;
  while (q.Next(s)) {
    if (!ReadTimes(q, src, a.start, a.end)) continue;
    a.kind = q.IntOr(2, internal::kEventClassRuntime) == internal::kEventClassDriver ? ApiKind::kDriver
                                                                              : ApiKind::kRuntime;
    ReadPidTid(q, 3, 7, a.pid, a.tid);
    a.correlation = q.IntOr(4, kUnknownId);
    int64_t name_id;
    a.name = q.Get(5, name_id) ? src.names(name_id) : StringTable::kEmpty;
    a.return_value = static_cast<int32_t>(q.Int(6));
    t.Add(a);
  }
  return s;
}

// NVTX_EVENTS (or tracegate_gpu_ranges): marks and ranges; domain names from eventType 75 rows,
// which belong to a process (nsys numbers domains per process).
Status ReadRanges(Source& src, const std::string& table, bool on_gpu) {
  std::unordered_set<std::string> columns;
  if (Status s = internal::ColumnNames(src.db, table, columns); !s.ok() || !columns.count("eventType")) return s;
  internal::Stmt dq;
  Status s = SelectColumns(src, table, {"domainId", "globalTid", "text", "textId", "tgPid"},
                           "WHERE eventType = " + std::to_string(internal::kNvtxDomainCreate), dq);
  if (!s.ok()) return s;
  std::map<std::pair<int64_t, int64_t>, StringId> domains;  // (domainId, pid) -> name
  int64_t text_id;
  while (dq.Next(s)) {
    StringId name = dq.Get(3, text_id) ? src.names(text_id) : src.trace.strings.Intern(dq.Text(2));
    domains.emplace(std::pair{dq.IntOr(0, 0), ReadPid(dq, 1, 4)}, name);
  }
  if (!s.ok()) return s;

  const int marks[] = {internal::kNvtxMark, internal::kNvtxtMark};
  const int ranges[] = {internal::kNvtxPushPop, internal::kNvtxStartEnd, internal::kNvtxtPushPop,
                        internal::kNvtxtStartEnd};
  internal::Stmt q;
  s = SelectColumns(src, table,
                    {"start", "end", "eventType", "text", "textId", "globalTid", "domainId", "tgPid", "tgTid",
                     "tgDepth", "tgStream"},
                    "WHERE eventType IN (" + Join(marks) + ", " + Join(ranges) + ")", q);
  if (!s.ok()) return s;
  Range r;
  r.on_gpu = on_gpu;
  while (q.Next(s)) {
    if (!q.Get(0, r.start)) {
      src.found.Add(Quality::kMissingTimestamp);
      continue;
    }
    int64_t type = q.Int(2);
    if (std::find(std::begin(marks), std::end(marks), type) != std::end(marks)) {
      r.end = r.start;
    } else if (!q.Get(1, r.end)) {
      src.found.Add(Quality::kUnmatchedRangeEnd);  // a range that was never closed
      continue;
    } else if (r.end < r.start) {
      src.found.Add(Quality::kNegativeDuration);
      continue;
    }
    r.name = q.Get(4, text_id) ? src.names(text_id) : src.trace.strings.Intern(q.Text(3));
    ReadPidTid(q, 5, 7, r.pid, r.tid);
    int64_t domain_id = q.IntOr(6, 0);
    r.domain = StringTable::kEmpty;  // domain 0 is NVTX's default domain
    if (domain_id != 0)
      if (auto it = domains.find({domain_id, r.pid}); it != domains.end()) r.domain = it->second;
    r.depth = static_cast<int32_t>(q.IntOr(9, 0));
    r.stream = q.IntOr(10, kUnknownId);
    src.trace.ranges.Add(r);
  }
  return s;
}

// NVTX_EVENTS, or the table nsys names with a suffix in some versions (the shortest match).
std::string NvtxTable(const Source& src) {
  std::string best;
  auto shorter = [](const std::string& a, const std::string& b) {
    return std::pair(a.size(), a) < std::pair(b.size(), b);
  };
  for (const std::string& t : src.tables)
    if (t.rfind("NVTX_EVENTS", 0) == 0 && (best.empty() || shorter(t, best))) best = t;
  return best;
}

Status ReadSamples(Source& src) {
  const std::string table = "tracegate_samples";
  if (!src.Has(table)) return Status::Ok();
  internal::Stmt q;
  Status s = SelectColumns(src, table,
                           {"time", "deviceId", "temperatureC", "smClockMHz", "memClockMHz", "memoryUsedMB",
                            "powerW"},
                           "", q);
  if (!s.ok()) return s;
  auto real = [&q](int c) { return q.IsNull(c) ? std::nan("") : q.Real(c); };  // NULL: not sampled
  while (q.Next(s)) {
    if (q.IsNull(0)) {
      src.found.Add(Quality::kMissingTimestamp);
      continue;
    }
    auto device = static_cast<int32_t>(U32FromDb(q.IntOr(1, kNone)));
    src.trace.samples.Add(Sample{q.Int(0), device, real(2), real(3), real(4), real(5), real(6)});
  }
  return s;
}

}  // namespace

Status ReadEvents(Source& src) {
  for (auto read : {ReadKernels, ReadMemcpys, ReadMemsets, ReadSyncs, ReadApiCalls, ReadSamples})
    TG_RETURN_IF_ERROR(read(src));
  if (std::string nvtx = NvtxTable(src); !nvtx.empty())
    TG_RETURN_IF_ERROR(ReadRanges(src, nvtx, false));
  if (src.Has(internal::kGpuRangeTable))
    TG_RETURN_IF_ERROR(ReadRanges(src, internal::kGpuRangeTable, true));
  return src.names.status();
}

}  // namespace tg::internal
