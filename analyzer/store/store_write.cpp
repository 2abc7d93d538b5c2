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

#include "analyzer/sqlite/sqlite_db.h"
#include "analyzer/store/store_columns.h"
#include "analyzer/store/store_schema.h"
#include "analyzer/util/fileio.h"
#include "tracegate/analyzer/store.h"

namespace tg {

using internal::CommitTempFile;
using internal::TempPathFor;

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

// Writes every row of `table` through the store table's column list.
template <class Table, class... C>
Status InsertTable(BatchInsert& insert, const internal::StoreTable<C...>& columns, const Table& table,
                   StringMap& names, std::string_view what) {
  return insert.Insert(table.size(), [&](internal::Stmt& q, int p, size_t i) {
    internal::BindRow(columns, q, p, table.Row(i), names);
  }, what);
}

// Parameter of a range column (1-based, before the batch offset).
constexpr int RangeParam(std::string_view column) {
  return internal::ColumnPosition<true>(internal::kRangeStore, column) + 1;
}

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

  using internal::WrittenColumns;
  const std::string range_columns = WrittenColumns(internal::kRangeStore);
  const std::tuple<BatchInsert*, std::string, std::string> tables[] = {
      {&st->string, "StringIds", "id, value"},
      {&st->kernel, std::string(internal::kKernelStore.name), WrittenColumns(internal::kKernelStore)},
      {&st->memcpy, std::string(internal::kMemcpyStore.name), WrittenColumns(internal::kMemcpyStore)},
      {&st->memset, std::string(internal::kMemsetStore.name), WrittenColumns(internal::kMemsetStore)},
      {&st->sync, std::string(internal::kSyncStore.name), WrittenColumns(internal::kSyncStore)},
      {&st->api, std::string(internal::kApiStore.name), WrittenColumns(internal::kApiStore)},
      {&st->range[0], std::string(internal::kRangeStore.name), range_columns},
      {&st->range[1], internal::kGpuRangeTable, range_columns},
      {&st->sample, std::string(internal::kSampleStore.name), WrittenColumns(internal::kSampleStore)},
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
  TG_RETURN_IF_ERROR(InsertTable(st->kernel, internal::kKernelStore, b.kernels, names, "cannot write kernels"));
  TG_RETURN_IF_ERROR(InsertTable(st->memcpy, internal::kMemcpyStore, b.memcpys, names, "cannot write memcpys"));
  TG_RETURN_IF_ERROR(InsertTable(st->memset, internal::kMemsetStore, b.memsets, names, "cannot write memsets"));
  TG_RETURN_IF_ERROR(InsertTable(st->sync, internal::kSyncStore, b.syncs, names, "cannot write synchronizations"));
  TG_RETURN_IF_ERROR(InsertTable(st->api, internal::kApiStore, b.api_calls, names, "cannot write API calls"));
  TG_RETURN_IF_ERROR(AppendRanges(b.ranges, names));
  return InsertTable(st->sample, internal::kSampleStore, b.samples, names, "cannot write samples");
}

Status StoreWriter::Impl::AppendRanges(const RangeTable& r, StringMap& names) {
  // The columns kRangeStore leaves to this code, and two it binds that domain rows leave NULL.
  constexpr int kEnd = RangeParam("end"), kEventType = RangeParam("eventType"), kText = RangeParam("text");
  constexpr int kTextId = RangeParam("textId"), kDomainId = RangeParam("domainId");
  constexpr int kDepth = RangeParam("tgDepth"), kStream = RangeParam("tgStream");
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
      internal::BindRow(internal::kRangeStore, q, p, r.Row(i), names);  // start and thread
      q.Null(p + kEnd); q.Int(p + kEventType, internal::kNvtxDomainCreate);
      q.Text(p + kText, strings.View(domain)); q.Null(p + kTextId); q.Int(p + kDomainId, domain);
      q.Null(p + kDepth); q.Null(p + kStream);
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
      internal::BindRow(internal::kRangeStore, q, p, r.Row(i), names);
      bool mark = r.start[i] == r.end[i];
      mark ? q.Null(p + kEnd) : q.Int(p + kEnd, r.end[i]);
      q.Int(p + kEventType, mark ? internal::kNvtxMark : internal::kNvtxPushPop);
      q.Null(p + kText); q.Int(p + kTextId, names(r.name[i])); q.Int(p + kDomainId, names(r.domain[i]));
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
