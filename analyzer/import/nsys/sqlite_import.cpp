// ImportSqlite: a tracegate store or an Nsight Systems SQLite export (export schema 3.x). Both
// share table and column names (store_schema.h), so after detection one reader serves both; the
// differences are the metadata and where data-quality counters come from.
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <map>

#include "analyzer/import/nsys/sqlite_read.h"
#include "analyzer/store/store_schema.h"
#include "tracegate/analyzer/import.h"
#include "tracegate/analyzer/store.h"

namespace tg {
namespace internal {

Status NameResolver::Init(const internal::Db& db, bool has_table, StringTable& strings) {
  strings_ = &strings;
  has_table_ = has_table;
  return has_table ? lookup_.Prepare(db, "SELECT value FROM StringIds WHERE id = ?") : Status::Ok();
}

StringId NameResolver::operator()(int64_t id, uint64_t uses) {
  auto [entry, fresh] = cache_.Slot(id);
  if (fresh) Resolve(entry, id);
  if (entry.missing) missing_ += uses;
  return entry.name;
}

// Looks id up in StringIds once.
void NameResolver::Resolve(Entry& e, int64_t id) {
  Status s;
  if (has_table_) {
    lookup_.Int(1, id);
    if (lookup_.Next(s)) e = {strings_->Intern(lookup_.Text(0)), false};
    if (!s.ok() && status_.ok()) status_ = s;
    lookup_.Reset();
  }
  if (e.missing) e.name = strings_->Intern("<StringIds id " + std::to_string(id) + " missing>");
}

Status SelectColumns(const Source& src, const std::string& table, const std::vector<std::string_view>& columns,
                     std::string_view where, internal::Stmt& out,
                     const std::unordered_map<std::string_view, std::string>* instead) {
  std::unordered_set<std::string> have;
  TG_RETURN_IF_ERROR(internal::ColumnNames(src.db, table, have));
  std::string q = "SELECT ";
  for (std::string_view c : columns) {
    if (q.size() > 7) q += ", ";
    if (have.count(std::string(c))) {
      q += internal::Quote(c);
    } else if (instead && instead->count(c)) {
      q += instead->at(c);
    } else {
      q += "NULL";
    }
  }
  q += " FROM " + internal::Quote(table);
  if (!where.empty()) {  // appended piecewise: GCC 12's -O3 -Wrestrict misreads " " + std::string
    q += ' ';
    q += where;
  }
  return out.Prepare(src.db, q);
}

size_t RowEstimate(const Source& src, const std::string& table) {
  internal::Stmt q;
  Status s;
  if (!q.Prepare(src.db, "SELECT max(rowid) FROM " + internal::Quote(table)).ok() || !q.Next(s)) return 0;
  return static_cast<size_t>(std::clamp<int64_t>(q.IntOr(0, 0), 0, int64_t{1} << 26));
}

namespace {

// SQLite treats a file shorter than its header says as a smaller (even empty) database, so a
// truncated file would read as "no tables"; the header tells how long the file must be.
Status CheckNotTruncated(const std::string& path) {
  unsigned char h[100];
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return IoError(path + ": cannot open");
  size_t n = std::fread(h, 1, sizeof h, f);
  std::fclose(f);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return IoError(path + ": cannot stat");
  auto size = static_cast<uint64_t>(st.st_size);
  if (n < sizeof h)
    return InvalidInput(path + ": truncated SQLite file (" + std::to_string(size) + " bytes)");
  const FileHeader header = ParseFileHeader(h);
  const uint64_t page = header.page_size;
  const uint64_t need = header.pages_valid ? header.page_count * page : page;
  if (size < need)
    return InvalidInput(path + ": truncated SQLite file: its header describes " + std::to_string(need) +
                        " bytes, the file has " + std::to_string(size));
  return Status::Ok();
}

// name -> value of a two-column key/value table (META_DATA_EXPORT, tracegate_metadata, ...).
Status ReadPairs(const Source& src, const std::string& table, const char* key, const char* value,
                 std::map<std::string, std::string, std::less<>>& out) {
  if (!src.Has(table)) return Status::Ok();
  internal::Stmt q;
  TG_RETURN_IF_ERROR(SelectColumns(src, table, {key, value}, "", q));
  Status s;
  while (q.Next(s))
    if (!q.IsNull(0)) out.emplace(q.Text(0), q.Text(1));
  return s;
}

std::string Get(const std::map<std::string, std::string, std::less<>>& m, std::string_view key) {
  auto it = m.find(key);
  return it == m.end() ? std::string() : it->second;
}

Status ReadStoreHeader(Source& src) {
  internal::Stmt q;
  if (Status s = SelectColumns(src, "tracegate_schema", {"version", "producer"}, "", q); !s.ok())
    return s;
  Status s;
  if (!q.Next(s) || q.IsNull(0)) {
    return s.ok() ? InvalidInput(src.path + ": tracegate store without a schema version") : s;
  }
  int64_t version = q.Int(0);
  if (version > kStoreSchemaVersion)
    return Unsupported(src.path + ": written by a newer tracegate (store schema " + std::to_string(version) +
                       "); this build reads schema <= " + std::to_string(kStoreSchemaVersion));
  std::string producer(q.Text(1));
  auto& md = src.trace.metadata;
  if (Status r = ReadPairs(src, "tracegate_metadata", "key", "value", md); !r.ok()) return r;
  // The trace now comes from this store; where it was first recorded from is kept as origin_*
  // (once: a store written from a store keeps the first origin).
  const std::string_view source_keys[] = {meta::kSourceFormat, meta::kSourceVersion, meta::kSourcePath,
                                          meta::kProducer};
  if (!md.count("origin_source_format"))
    for (std::string_view key : source_keys)
      if (auto it = md.find(key); it != md.end()) md["origin_" + std::string(key)] = it->second;
  md[std::string(meta::kSourceFormat)] = "tracegate";
  md[std::string(meta::kSourceVersion)] = std::to_string(version);
  md[std::string(meta::kProducer)] = producer;
  return Status::Ok();
}

Status ReadNsysHeader(Source& src) {
  std::map<std::string, std::string, std::less<>> exp, env;
  TG_RETURN_IF_ERROR(ReadPairs(src, "META_DATA_EXPORT", "name", "value", exp));
  std::string version = Get(exp, "EXPORT_SCHEMA_VERSION");
  std::string major =
      version.empty() ? Get(exp, "EXPORT_SCHEMA_VERSION_MAJOR") : version.substr(0, version.find('.'));
  if (!major.empty() && major != "3")
    return Unsupported(src.path + ": Nsight Systems export schema " + (version.empty() ? major : version) +
                       " is not supported (this build reads export schema 3.x)");
  auto& md = src.trace.metadata;
  md[std::string(meta::kSourceFormat)] = "nsys_sqlite";
  md[std::string(meta::kSourceVersion)] = version;
  std::string producer = Get(exp, "EXPORT_PRODUCT_NAME");  // "NVIDIA Nsight Systems" + " " + version
  if (std::string v = Get(exp, "EXPORT_PRODUCT_VERSION"); !v.empty())
    producer += (producer.empty() ? "" : " ") + v;
  if (!producer.empty()) md[std::string(meta::kProducer)] = producer;
  TG_RETURN_IF_ERROR(ReadPairs(src, "TARGET_INFO_SYSTEM_ENV", "name", "value", env));
  if (std::string host = Get(env, "Hostname"); !host.empty()) md[std::string(meta::kHost)] = host;
  if (std::string d = Get(env, "NvDriverVersion"); !d.empty()) md[std::string(meta::kDriverVersion)] = d;
  // CUDA version the driver supports, encoded as 1000 * major + 10 * minor (13000 = 13.0).
  std::string cuda = Get(env, "CudaDriverVersion");
  if (!cuda.empty() && cuda.size() < 9 && cuda.find_first_not_of("0123456789") == std::string::npos) {
    long v = std::stol(cuda);
    md[std::string(meta::kCudaVersion)] = std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
  }
  return Status::Ok();
}

Status ReadDevices(Source& src) {
  if (!src.Has("TARGET_INFO_GPU")) return Status::Ok();
  internal::Stmt q;
  Status s = SelectColumns(src, "TARGET_INFO_GPU",
                           {"id", "cuDevice", "name", "totalMemory", "memoryBandwidth", "smCount",
                            "computeMajor", "computeMinor"},
                           "", q);
  if (!s.ok()) return s;
  while (q.Next(s)) {
    Device d;
    // Activity rows name the CUDA device; nsys keeps it in cuDevice when it differs from id.
    d.id = static_cast<int32_t>(internal::U32FromDb(q.IntOr(1, q.IntOr(0, internal::kNoneU32))));
    d.name = q.Text(2);
    d.memory_bytes = q.Int(3);
    d.peak_bandwidth_gbs = static_cast<double>(q.Int(4)) / 1e9;  // B/s
    d.sm_count = static_cast<int32_t>(q.Int(5));
    d.compute_major = static_cast<int32_t>(q.Int(6));
    d.compute_minor = static_cast<int32_t>(q.Int(7));
    src.trace.devices.push_back(std::move(d));
  }
  return s;
}

Status ReadProcesses(Source& src) {
  if (!src.Has("PROCESSES")) return Status::Ok();
  internal::Stmt q;
  Status s = SelectColumns(src, "PROCESSES", {"pid", "globalPid", "name"}, "", q);
  if (!s.ok()) return s;
  while (q.Next(s)) {
    int64_t pid = !q.IsNull(0) ? q.Int(0) : q.IsNull(1) ? kUnknownId : internal::PidOf(q.Int(1));
    src.trace.processes.push_back(Process{pid, std::string(q.Text(2))});
  }
  return s;
}

Status ReadStoredQuality(Source& src) {
  internal::Stmt q;
  if (!src.Has("tracegate_quality")) return Status::Ok();
  Status s = SelectColumns(src, "tracegate_quality", {"key", "count"}, "", q);
  if (!s.ok()) return s;
  while (q.Next(s)) {
    Quality id = QualityFromKey(q.Text(0));
    if (id != Quality::kCount) src.trace.quality.Set(id, static_cast<uint64_t>(q.IntOr(1, 0)));
  }
  return s;
}

bool HasNsysEventTable(const Source& src) {
  for (const std::string& t : src.tables)
    if (t.rfind("CUPTI_ACTIVITY_KIND_", 0) == 0 || t.rfind("NVTX_EVENTS", 0) == 0) return true;
  return false;
}

}  // namespace
}  // namespace internal

Status ImportSqlite(const std::string& path, Trace* out) {
  Trace& trace = *out;
  using namespace internal;
  TG_RETURN_IF_ERROR(CheckNotTruncated(path));
  internal::PageFile pages;  // before db: closes after it (table_scan.h)
  internal::Db db;
  TG_RETURN_IF_ERROR(db.Open(path, path, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX));
  // Read-only twice over. No mmap: it reads ~5% faster, but a file truncated while it is read
  // would kill the process (SIGBUS) instead of returning an error.
  // One read transaction for the whole import: the tables read are one state of the file, and
  // no writer can change the file while its pages are read directly (table_scan.h).
  if (Status s = db.Exec("PRAGMA query_only = 1; PRAGMA cache_size = -65536; BEGIN;", "cannot read database"); !s.ok())
    return s;
  Source src{db, path, {}, trace, {}, false, {}, {}, pages};
  TG_RETURN_IF_ERROR(internal::TableNames(db, src.tables));
  TG_RETURN_IF_ERROR(pages.Open(path, path));

  src.is_store = src.Has("tracegate_schema");
  if (src.is_store) {
    TG_RETURN_IF_ERROR(ReadStoreHeader(src));
  } else if (src.Has("META_DATA_EXPORT") || HasNsysEventTable(src)) {
    TG_RETURN_IF_ERROR(ReadNsysHeader(src));
  } else {
    return InvalidInput(path + ": SQLite database has no trace tables (expected a tracegate recording or an "
                               "Nsight Systems export)");
  }
  TG_RETURN_IF_ERROR(src.names.Init(db, src.Has("StringIds"), trace.strings));
  for (Status (*read)(Source&) : {ReadDevices, ReadProcesses, ReadEvents})
    TG_RETURN_IF_ERROR(read(src));
  if (src.is_store)
    TG_RETURN_IF_ERROR(ReadStoredQuality(src));
  src.found.Add(Quality::kUnresolvedName, src.names.missing());
  for (const QualityInfo& q : kQualityInfo) trace.quality.Add(q.id, src.found.Get(q.id));
  return Status::Ok();
}

}  // namespace tg
