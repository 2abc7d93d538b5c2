// The store writer: multi-row INSERTs into a temp SQLite file, one transaction per Append,
// indexes built once at the end, then an atomic rename; or, in place, into the file itself with a
// rollback journal so that every commit survives a kill. Layout and encodings: store_schema.h.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <span>
#include <string_view>
#include <tuple>

#include "analyzer/store/sqlite_db.h"
#include "analyzer/store/store_schema.h"
#include "analyzer/util/fileio.h"
#include "tracegate/analyzer/store.h"

namespace tg {

using internal::U32ToDb;

namespace {

// The temp file is renamed into place only when complete, so nothing needs SQLite's crash
// safety while it is built: no journal, no fsync per transaction (one fsync before the rename).
constexpr const char* kBuildPragmas =
    "PRAGMA page_size = 65536; PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;"
    "PRAGMA locking_mode = EXCLUSIVE; PRAGMA temp_store = MEMORY; PRAGMA cache_size = -65536;";

// In place (a part file that a killed process leaves behind): a rollback journal makes every
// COMMIT atomic; a transaction cut short leaves "<path>-journal", rolled back by the next
// read-write open (RecoverStore). The journal only holds pages that existed before the
// transaction, so appending costs little (WAL would write every row twice). synchronous = OFF:
// the writes of a killed process are in the page cache and reach the file anyway; only a power
// loss could lose them. Normal locking, so a reader can look at the file while it grows (the
// writer waits out a reader's short lock).
constexpr const char* kInPlacePragmas =
    "PRAGMA page_size = 4096; PRAGMA journal_mode = DELETE; PRAGMA synchronous = OFF;"
    "PRAGMA temp_store = MEMORY; PRAGMA cache_size = -16384; PRAGMA busy_timeout = 10000;";

// Rows per INSERT statement: one statement for many rows costs SQLite far less per row than one
// statement per row (measured: ~1.4x more rows/s for kernel rows at 32).
constexpr size_t kRowsPerInsert = 32;

// Inserts the rows of one table kRowsPerInsert at a time. `bind(stmt, base, i)` binds row i to
// parameters base + 1 .. base + columns.
class BatchInsert {
 public:
  Status Prepare(const internal::Db& db, const std::string& table, const std::string& columns) {
    columns_ = 1 + static_cast<int>(std::count(columns.begin(), columns.end(), ','));
    std::string row = "(?" ;
    for (int c = 1; c < columns_; ++c) row += ", ?";
    row += ")";
    std::string sql = "INSERT INTO " + table + " (" + columns + ") VALUES " + row;
    TG_RETURN_IF_ERROR(one_.Prepare(db, sql));
    for (size_t r = 1; r < kRowsPerInsert; ++r) sql += ", " + row;
    return many_.Prepare(db, sql);
  }

  template <class Bind>
  Status Insert(size_t n, Bind&& bind, std::string_view what) {
    size_t i = 0;
    for (; i + kRowsPerInsert <= n; i += kRowsPerInsert) {
      for (size_t r = 0; r < kRowsPerInsert; ++r) bind(many_, static_cast<int>(r) * columns_, i + r);
      TG_RETURN_IF_ERROR(many_.Run(what));
    }
    for (; i < n; ++i) {
      bind(one_, 0, i);
      TG_RETURN_IF_ERROR(one_.Run(what));
    }
    return Status::Ok();
  }

 private:
  internal::Stmt one_, many_;
  int columns_ = 0;
};

// Maps one batch's string ids to the file's, interning new strings into the file's table. Ids
// are checked (CheckIds) before any row is bound.
class StringMap {
 public:
  StringMap(const StringTable& from, StringTable& to) : from_(from), to_(to), map_(from.size(), kUnmapped) {}
  StringId operator()(StringId id) {
    StringId& m = map_[id];
    if (m == kUnmapped) m = to_.Intern(from_.View(id));
    return m;
  }
  bool Has(StringId id) const { return id < map_.size(); }

 private:
  static constexpr StringId kUnmapped = StringTable::kNotFound;
  const StringTable& from_;
  StringTable& to_;
  std::vector<StringId> map_;
};

// A globalPid column (param p) and its tgPid overflow column (param tg).
void BindPid(internal::Stmt& s, int p, int tg, int64_t pid) {
  internal::GlobalId g = internal::EncodeGlobalPid(pid);
  g.null ? s.Null(p) : s.Int(p, g.value);
  g.fits ? s.Null(tg) : s.Int(tg, pid);
}

// A globalTid column (param p) and its tgPid / tgTid overflow columns (params tg, tg + 1).
void BindTid(internal::Stmt& s, int p, int tg, int64_t pid, int64_t tid) {
  internal::GlobalId g = internal::EncodeGlobalId(pid, tid);
  g.null ? s.Null(p) : s.Int(p, g.value);
  g.fits ? s.Null(tg) : s.Int(tg, pid);
  g.fits ? s.Null(tg + 1) : s.Int(tg + 1, tid);
}

constexpr const char* kRangeColumns =
    "start, end, eventType, text, globalTid, textId, domainId, tgPid, tgTid, tgDepth, tgStream";

}  // namespace

struct StoreWriter::Impl {
  std::string path, tmp;
  internal::Db db;
  StringTable strings;         // the file's StringIds: id in the file == id in this table
  size_t strings_written = 0;  // StringIds rows [0, strings_written) are in the file
  // (in tracegate_gpu_ranges?, domain, pid) whose domain-creation row (eventType 75) is written
  std::set<std::tuple<bool, StringId, int64_t>> domains_written;
  struct Statements {
    BatchInsert string, kernel, memcpy, memset, sync, api, sample;
    BatchInsert range[2];  // [0] NVTX_EVENTS, [1] tracegate_gpu_ranges
    internal::Stmt meta, device, process, quality;
  };
  std::unique_ptr<Statements> st = std::make_unique<Statements>();
  bool in_place = false;  // tmp == path: nothing to rename, nothing to remove
  bool failed = false, committed = false;

  ~Impl() {
    st.reset();  // statements before the connection
    db.Close();
    if (!committed && !in_place && !tmp.empty()) ::unlink(tmp.c_str());
  }

  Status Fail(Status s) {
    failed = true;
    return s;
  }
  Status Unusable() const { return InvalidInput(path + ": store writer used after it finished or failed"); }
  Status Prepare();
  Status Transaction(std::span<const Trace> batches, const Trace* state, bool final);
  Status CheckIds(const Trace& b, const StringMap& names) const;
  Status AppendRows(const Trace& b);
  Status AppendRanges(const RangeTable& r, StringMap& names);
  Status WriteStrings();
  Status WriteState(const Trace& t);
};

StoreWriter::StoreWriter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
StoreWriter::~StoreWriter() = default;

Status StoreWriter::Create(const std::string& path, std::unique_ptr<StoreWriter>* out) {
  return Create(path, StoreWriterOptions{}, out);
}

Status StoreWriter::Create(const std::string& path, const StoreWriterOptions& options,
                           std::unique_ptr<StoreWriter>* out) {
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->in_place = options.in_place;
  impl->tmp = options.in_place ? path : TempPathFor(path);
  // A leftover of a crashed process with the same pid (in place: and its journal, which would
  // otherwise be "rolled back" into the new file).
  ::unlink(impl->tmp.c_str());
  if (options.in_place) ::unlink((path + "-journal").c_str());
  // NOMUTEX: one connection used by one thread at a time; SQLite's own locking only costs here.
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
  if (Status s = impl->db.Open(impl->tmp, path, flags); !s.ok()) {
    impl->tmp.clear();  // nothing was created
    return s;
  }
  TG_RETURN_IF_ERROR(impl->Prepare());
  out->reset(new StoreWriter(std::move(impl)));
  return Status::Ok();
}

Status StoreWriter::Impl::Prepare() {
  if (Status s = db.Exec(in_place ? kInPlacePragmas : kBuildPragmas, "cannot configure store"); !s.ok())
    return s;
  // One transaction: a reader of an in-place file sees no tables or all of them, with the version.
  TG_RETURN_IF_ERROR(db.Exec("BEGIN", "cannot write store"));
  TG_RETURN_IF_ERROR(db.Exec(internal::kCreateTables, "cannot create store tables"));
  internal::Stmt version;
  Status s = version.Prepare(db, "INSERT INTO tracegate_schema (version, producer) VALUES (?, ?)");
  if (!s.ok()) return s;
  version.Int(1, kStoreSchemaVersion);
  version.Text(2, "tracegate " TRACEGATE_VERSION);
  if (s = version.Run("cannot write schema version"); !s.ok()) return s;
  if (s = db.Exec("COMMIT", "cannot write store"); !s.ok()) return s;

  const std::tuple<BatchInsert*, const char*, const char*> tables[] = {
      {&st->string, "StringIds", "id, value"},
      {&st->kernel, "CUPTI_ACTIVITY_KIND_KERNEL",
       "start, end, deviceId, contextId, streamId, correlationId, globalPid, demangledName, shortName,"
       " registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ, staticSharedMemory,"
       " dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, gridId, graphNodeId, graphId, tgPid"},
      {&st->memcpy, "CUPTI_ACTIVITY_KIND_MEMCPY",
       "start, end, deviceId, contextId, streamId, correlationId, globalPid, bytes, copyKind, srcKind,"
       " dstKind, tgPid"},
      {&st->memset, "CUPTI_ACTIVITY_KIND_MEMSET",
       "start, end, deviceId, contextId, streamId, correlationId, globalPid, value, bytes, memKind, tgPid"},
      {&st->sync, "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
       "start, end, deviceId, contextId, streamId, correlationId, globalPid, syncType, eventId, tgPid"},
      {&st->api, "CUPTI_ACTIVITY_KIND_RUNTIME",
       "start, end, eventClass, globalTid, correlationId, nameId, returnValue, tgPid, tgTid"},
      {&st->range[0], "NVTX_EVENTS", kRangeColumns},
      {&st->range[1], internal::kGpuRangeTable, kRangeColumns},
      {&st->sample, "tracegate_samples",
       "time, deviceId, temperatureC, smClockMHz, memClockMHz, memoryUsedMB, powerW"},
  };
  for (const auto& [insert, table, columns] : tables)
    if (s = insert->Prepare(db, table, columns); !s.ok()) return s;
  const std::pair<internal::Stmt*, const char*> singles[] = {
      {&st->meta, "INSERT OR REPLACE INTO tracegate_metadata (key, value) VALUES (?, ?)"},
      {&st->device,
       "INSERT INTO TARGET_INFO_GPU (vmId, id, name, totalMemory, memoryBandwidth, smCount, computeMajor,"
       " computeMinor) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"},
      {&st->process, "INSERT INTO PROCESSES (globalPid, pid, name) VALUES (?, ?, ?)"},
      {&st->quality, "INSERT OR REPLACE INTO tracegate_quality (key, count) VALUES (?, ?)"},
  };
  for (const auto& [stmt, sql] : singles)
    if (s = stmt->Prepare(db, sql); !s.ok()) return s;
  return Status::Ok();
}

Status StoreWriter::Append(const Trace& batch) {
  return impl_->Transaction(std::span<const Trace>(&batch, 1), nullptr, false);
}

Status StoreWriter::AppendWithState(std::span<const Trace> batches, const Trace& state) {
  return impl_->Transaction(batches, &state, false);
}

// One transaction: the rows of `batches`, their new strings, then (with `state`) the state
// tables, and (final) the indexes. A failed statement leaves the transaction open; the writer is
// then unusable and an in-place file keeps its last commit (the connection rolls back on close).
Status StoreWriter::Impl::Transaction(std::span<const Trace> batches, const Trace* state, bool final) {
  if (failed || committed) return Unusable();
  if (Status s = db.Exec("BEGIN", "cannot write store"); !s.ok()) return Fail(s);
  for (const Trace& b : batches)
    if (Status s = AppendRows(b); !s.ok()) return Fail(s);
  if (Status s = WriteStrings(); !s.ok()) return Fail(s);
  if (state)
    if (Status s = WriteState(*state); !s.ok()) return Fail(s);
  if (final)
    if (Status s = db.Exec(internal::kCreateIndexes, "cannot index store"); !s.ok()) return Fail(s);
  if (Status s = db.Exec("COMMIT", "cannot write store"); !s.ok()) return Fail(s);
  return Status::Ok();
}

Status StoreWriter::Impl::CheckIds(const Trace& b, const StringMap& names) const {
  auto unknown = [&](const char* what, StringId id) {
    return InvalidInput(path + ": " + what + " row names string id " + std::to_string(id) +
                        ", which the trace's string table does not have");
  };
  const std::pair<const char*, const std::vector<StringId>*> columns[] = {
      {"kernel", &b.kernels.name}, {"API call", &b.api_calls.name}, {"range", &b.ranges.name}};
  for (const auto& [what, ids] : columns)
    for (StringId id : *ids)
      if (!names.Has(id)) return unknown(what, id);
  for (size_t i = 0; i < b.ranges.domain.size(); ++i)
    if (!names.Has(b.ranges.domain[i])) return unknown("range domain", b.ranges.domain[i]);
  return Status::Ok();
}

Status StoreWriter::Impl::AppendRows(const Trace& b) {
  StringMap names(b.strings, strings);
  TG_RETURN_IF_ERROR(CheckIds(b, names));
  const KernelTable& k = b.kernels;
  Status s = st->kernel.Insert(k.size(), [&](internal::Stmt& q, int p, size_t i) {
    q.Int(p + 1, k.start[i]); q.Int(p + 2, k.end[i]); q.Int(p + 3, U32ToDb(k.device[i]));
    q.Int(p + 4, 0);  // contextId: not in the model
    q.Int(p + 5, U32ToDb(k.stream[i])); q.IntOrNull(p + 6, k.correlation[i], kUnknownId);
    BindPid(q, p + 7, p + 24, k.pid[i]);
    StringId name = names(k.name[i]);
    q.Int(p + 8, name); q.Int(p + 9, name);  // demangledName, shortName: the model keeps one name
    q.Int(p + 10, k.registers[i]);
    q.Int(p + 11, k.grid_x[i]); q.Int(p + 12, k.grid_y[i]); q.Int(p + 13, k.grid_z[i]);
    q.Int(p + 14, k.block_x[i]); q.Int(p + 15, k.block_y[i]); q.Int(p + 16, k.block_z[i]);
    q.Int(p + 17, k.shared_static[i]); q.Int(p + 18, k.shared_dynamic[i]);
    q.Int(p + 19, 0); q.Int(p + 20, 0); q.Int(p + 21, 0);  // local memory, gridId: not in the model
    q.IntOrNull(p + 22, k.graph_node_id[i], kUnknownId); q.IntOrNull(p + 23, k.graph_id[i], kUnknownId);
  }, "cannot write kernels");
  if (!s.ok()) return s;
  const MemcpyTable& m = b.memcpys;
  s = st->memcpy.Insert(m.size(), [&](internal::Stmt& q, int p, size_t i) {
    q.Int(p + 1, m.start[i]); q.Int(p + 2, m.end[i]); q.Int(p + 3, U32ToDb(m.device[i])); q.Int(p + 4, 0);
    q.Int(p + 5, U32ToDb(m.stream[i])); q.IntOrNull(p + 6, m.correlation[i], kUnknownId);
    BindPid(q, p + 7, p + 12, m.pid[i]);
    q.Int(p + 8, m.bytes[i]); q.Int(p + 9, static_cast<int>(m.kind[i]));
    q.Int(p + 10, static_cast<int>(m.src_kind[i])); q.Int(p + 11, static_cast<int>(m.dst_kind[i]));
  }, "cannot write memcpys");
  if (!s.ok()) return s;
  const MemsetTable& ms = b.memsets;
  s = st->memset.Insert(ms.size(), [&](internal::Stmt& q, int p, size_t i) {
    q.Int(p + 1, ms.start[i]); q.Int(p + 2, ms.end[i]); q.Int(p + 3, U32ToDb(ms.device[i])); q.Int(p + 4, 0);
    q.Int(p + 5, U32ToDb(ms.stream[i])); q.IntOrNull(p + 6, ms.correlation[i], kUnknownId);
    BindPid(q, p + 7, p + 11, ms.pid[i]);
    q.Int(p + 8, ms.value[i]); q.Int(p + 9, ms.bytes[i]); q.Int(p + 10, static_cast<int>(ms.mem_kind[i]));
  }, "cannot write memsets");
  if (!s.ok()) return s;
  const SyncTable& y = b.syncs;
  s = st->sync.Insert(y.size(), [&](internal::Stmt& q, int p, size_t i) {
    q.Int(p + 1, y.start[i]); q.Int(p + 2, y.end[i]); q.Int(p + 3, U32ToDb(y.device[i])); q.Int(p + 4, 0);
    q.Int(p + 5, U32ToDb(y.stream[i])); q.IntOrNull(p + 6, y.correlation[i], kUnknownId);
    BindPid(q, p + 7, p + 10, y.pid[i]);
    q.Int(p + 8, static_cast<int>(y.kind[i])); q.Int(p + 9, U32ToDb(y.event_id[i]));
  }, "cannot write synchronizations");
  if (!s.ok()) return s;
  const ApiTable& a = b.api_calls;
  s = st->api.Insert(a.size(), [&](internal::Stmt& q, int p, size_t i) {
    q.Int(p + 1, a.start[i]); q.Int(p + 2, a.end[i]);
    q.Int(p + 3, a.kind[i] == ApiKind::kDriver ? internal::kEventClassDriver : internal::kEventClassRuntime);
    BindTid(q, p + 4, p + 8, a.pid[i], a.tid[i]);
    q.IntOrNull(p + 5, a.correlation[i], kUnknownId); q.Int(p + 6, names(a.name[i]));
    q.Int(p + 7, a.return_value[i]);
  }, "cannot write API calls");
  if (!s.ok()) return s;
  if (s = AppendRanges(b.ranges, names); !s.ok()) return s;
  const SampleTable& sa = b.samples;
  return st->sample.Insert(sa.size(), [&](internal::Stmt& q, int p, size_t i) {
    q.Int(p + 1, sa.time[i]); q.Int(p + 2, U32ToDb(sa.device[i]));
    q.Real(p + 3, sa.temperature_c[i]); q.Real(p + 4, sa.sm_clock_mhz[i]); q.Real(p + 5, sa.mem_clock_mhz[i]);
    q.Real(p + 6, sa.memory_used_mb[i]); q.Real(p + 7, sa.power_w[i]);  // NaN (not sampled) -> NULL
  }, "cannot write samples");
}

Status StoreWriter::Impl::AppendRanges(const RangeTable& r, StringMap& names) {
  // A named domain is declared once per process and table, as nsys does with eventType 75 rows;
  // the first range of each (table, domain, pid) gives the row its time and thread.
  std::map<std::tuple<bool, StringId, int64_t>, size_t> new_domains;
  for (size_t i = 0; i < r.size(); ++i) {
    if (r.domain[i] == StringTable::kEmpty) continue;
    auto key = std::make_tuple(r.on_gpu[i] != 0, names(r.domain[i]), r.pid[i]);
    if (!domains_written.count(key)) new_domains.try_emplace(key, i);
  }
  for (const auto& entry : new_domains) {
    const auto& key = entry.first;
    const size_t i = entry.second;
    const auto [gpu, domain, pid] = key;
    auto bind = [&, domain = domain, i](internal::Stmt& q, int p, size_t) {
      q.Int(p + 1, r.start[i]); q.Null(p + 2); q.Int(p + 3, internal::kNvtxDomainCreate);
      q.Text(p + 4, strings.View(domain)); BindTid(q, p + 5, p + 8, r.pid[i], r.tid[i]);
      q.Null(p + 6); q.Int(p + 7, domain); q.Null(p + 10); q.Null(p + 11);
    };
    TG_RETURN_IF_ERROR(st->range[gpu].Insert(1, bind, "cannot write NVTX domains"));
    domains_written.insert(key);
  }
  // Ranges go to one of two tables; each table gets its rows through an index list.
  for (bool gpu : {false, true}) {
    std::vector<size_t> rows;
    for (size_t i = 0; i < r.size(); ++i)
      if ((r.on_gpu[i] != 0) == gpu) rows.push_back(i);
    Status s = st->range[gpu].Insert(rows.size(), [&](internal::Stmt& q, int p, size_t j) {
      size_t i = rows[j];
      bool mark = r.start[i] == r.end[i];
      q.Int(p + 1, r.start[i]);
      mark ? q.Null(p + 2) : q.Int(p + 2, r.end[i]);
      q.Int(p + 3, mark ? internal::kNvtxMark : internal::kNvtxPushPop);
      q.Null(p + 4); BindTid(q, p + 5, p + 8, r.pid[i], r.tid[i]);
      q.Int(p + 6, names(r.name[i])); q.Int(p + 7, names(r.domain[i]));
      q.Int(p + 10, r.depth[i]); q.IntOrNull(p + 11, r.stream[i], kUnknownId);
    }, "cannot write ranges");
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

Status StoreWriter::Impl::WriteStrings() {
  size_t first = strings_written;
  Status s = st->string.Insert(strings.size() - first, [&](internal::Stmt& q, int p, size_t i) {
    q.Int(p + 1, static_cast<int64_t>(first + i));
    q.Text(p + 2, strings.View(static_cast<StringId>(first + i)));
  }, "cannot write strings");
  if (s.ok()) strings_written = strings.size();
  return s;
}

// Replaces the state tables (in place they are rewritten at every flush of a recording).
Status StoreWriter::Impl::WriteState(const Trace& t) {
  if (Status s = db.Exec("DELETE FROM tracegate_metadata; DELETE FROM TARGET_INFO_GPU; DELETE FROM PROCESSES;"
                         " DELETE FROM tracegate_quality;",
                         "cannot write store state");
      !s.ok())
    return s;
  for (const auto& [key, value] : t.metadata) {
    st->meta.Text(1, key); st->meta.Text(2, value);
    TG_RETURN_IF_ERROR(st->meta.Run("cannot write metadata"));
  }
  for (const Device& d : t.devices) {
    internal::Stmt& q = st->device;
    q.Int(1, internal::kGlobalIdVm); q.Int(2, U32ToDb(d.id)); q.Text(3, d.name); q.Int(4, d.memory_bytes);
    q.Int(5, std::llround(d.peak_bandwidth_gbs * 1e9));  // B/s, as nsys
    q.Int(6, d.sm_count); q.Int(7, d.compute_major); q.Int(8, d.compute_minor);
    TG_RETURN_IF_ERROR(q.Run("cannot write devices"));
  }
  for (const Process& pr : t.processes) {
    internal::Stmt& q = st->process;
    internal::GlobalId g = internal::EncodeGlobalPid(pr.pid);
    g.null ? q.Null(1) : q.Int(1, g.value);  // the exact pid is in the pid column either way
    q.Int(2, pr.pid); q.Text(3, pr.name);
    TG_RETURN_IF_ERROR(q.Run("cannot write processes"));
  }
  for (const QualityInfo& info : kQualityInfo) {
    if (t.quality.Get(info.id) == 0) continue;
    st->quality.Text(1, info.key); st->quality.Int(2, static_cast<int64_t>(t.quality.Get(info.id)));
    TG_RETURN_IF_ERROR(st->quality.Run("cannot write quality counters"));
  }
  return Status::Ok();
}

Status StoreWriter::Finish(const Trace& final_state) {
  Impl& w = *impl_;
  TG_RETURN_IF_ERROR(w.Transaction({}, &final_state, true));
  w.st.reset();
  w.db.Close();
  // synchronous = OFF never fsyncs, so the file is made durable once, here, before the rename.
  int fd = ::open(w.tmp.c_str(), O_RDONLY | O_CLOEXEC);
  bool synced = fd >= 0 && ::fsync(fd) == 0;
  if (fd >= 0) ::close(fd);
  if (!synced) return w.Fail(IoError(w.path + ": cannot flush the store to disk"));
  w.committed = true;  // from here the temp file is CommitTempFile's: it removes it on failure
  return w.in_place ? Status::Ok() : CommitTempFile(w.tmp, w.path);
}

Status RecoverStore(const std::string& path) {
  internal::Db db;
  TG_RETURN_IF_ERROR(db.Open(path, path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX));
  // The first read takes a shared lock, which is when SQLite rolls a hot journal back. A file that
  // is not a database fails here; the reader will say so in its own words.
  if (Status s = db.Exec("PRAGMA busy_timeout = 10000; SELECT count(*) FROM sqlite_master;", "cannot read store");
      !s.ok() && std::string_view(s.message()).find("not a database") == std::string_view::npos)
    return s;
  return Status::Ok();
}

Status WriteStore(const Trace& trace, const std::string& path) {
  std::unique_ptr<StoreWriter> writer;
  TG_RETURN_IF_ERROR(StoreWriter::Create(path, &writer));
  TG_RETURN_IF_ERROR(writer->Append(trace));
  return writer->Finish(trace);
}

}  // namespace tg
