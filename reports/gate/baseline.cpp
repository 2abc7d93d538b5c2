// Baselines: <dir>/<NAME>.json written atomically, and <dir>/history.db (SQLite) with one row
// per save and per gate. See tracegate/baseline.h.
#include "tracegate/reports/baseline.h"

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <system_error>

#include "analyzer/store/sqlite_db.h"  // the store's SQLite wrappers (history.db)
#include "tracegate/reports/analysis_report.h"
#include "analyzer/util/fileio.h"
#include "reports/document/report_document.h"
#include "tracegate/reports/json_out.h"
#include "tracegate/reports/report_provenance.h"

namespace tg {

namespace {

using nlohmann::json;
using internal::Number;
using internal::Text;
namespace fs = std::filesystem;

constexpr size_t kMaxNameLength = 100;
constexpr const char* kJsonSuffix = ".json";

// history.db layout. user_version says which layout a file has; a newer one is refused.
constexpr int kHistoryVersion = 1;
constexpr const char* kCreateHistory =
    "CREATE TABLE IF NOT EXISTS history ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " name TEXT NOT NULL,"
    " kind TEXT NOT NULL CHECK (kind IN ('saved', 'gated')),"
    " recorded_at TEXT NOT NULL,"          // ISO-8601 UTC
    " commit_id TEXT,"                     // NULL when the report has none
    " avg_latency_ms REAL, p95_latency_ms REAL, throughput_fps REAL,"  // NULL when absent
    " verdict TEXT,"                       // NULL for saves
    " source TEXT NOT NULL);"
    "CREATE INDEX IF NOT EXISTS history_name ON history (name, id);";
constexpr const char* kInsertRow =
    "INSERT INTO history (name, kind, recorded_at, commit_id, avg_latency_ms, p95_latency_ms, throughput_fps,"
    " verdict, source) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)";
constexpr const char* kSelectRows =
    "SELECT id, name, kind, recorded_at, commit_id, avg_latency_ms, p95_latency_ms, throughput_fps, verdict,"
    " source FROM history WHERE name = ? ORDER BY id";

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string NowIso() {
  std::string iso;
  EpochNsToIso(static_cast<TimeNs>(std::time(nullptr)) * 1'000'000'000, &iso);
  return iso;
}

// Binds a metric, NULL when absent (HistoryRow keeps 0 for "absent": latencies are positive).
void BindMetric(internal::Stmt& q, int i, double v) { v != 0 ? q.Real(i, v) : q.Null(i); }
void BindText(internal::Stmt& q, int i, const std::string& v) { v.empty() ? q.Null(i) : q.Text(i, v); }

// Opens history.db for writing (creating it and its table) or for reading.
Status OpenHistory(const std::string& dir, bool write, internal::Db& db) {
  std::string path = HistoryPath(dir);
  int flags = write ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY;
  TG_RETURN_IF_ERROR(db.Open(path, path, flags));
  sqlite3_busy_timeout(db.handle(), 5000);  // two CI jobs gating at once wait for each other
  internal::Stmt q;
  TG_RETURN_IF_ERROR(q.Prepare(db, "PRAGMA user_version"));
  Status s;
  int64_t version = q.Next(s) ? q.Int(0) : 0;
  if (!s.ok()) return s;
  if (version > kHistoryVersion)
    return Unsupported(path + ": history written by a newer tracegate (version " + std::to_string(version) + ")");
  if (!write) return Status::Ok();
  if (Status e = db.Exec(kCreateHistory, "cannot create the history table"); !e.ok()) return e;
  return db.Exec("PRAGMA user_version = " + std::to_string(kHistoryVersion), "cannot stamp the history version");
}

// OpenHistory, then prepares `sql` on it.
Status PrepareHistory(const std::string& dir, bool write, const std::string& sql, internal::Db& db, internal::Stmt& q) {
  TG_RETURN_IF_ERROR(OpenHistory(dir, write, db));
  return q.Prepare(db, sql);
}

Status ReadInfo(const std::string& dir, const std::string& name, BaselineInfo* info) {
  json report;
  info->name = name;
  TG_RETURN_IF_ERROR(LoadBaseline(dir, name, &report, &info->path));
  info->model = Text(report, "model");
  info->precision = Text(report, "precision");
  info->commit = Text(report, "commit");
  info->profiling_date = Text(report, "profiling_date");
  info->has_avg_latency = Number(report, "avg_latency_ms").has_value();
  info->avg_latency_ms = Number(report, "avg_latency_ms").value_or(0);
  return Status::Ok();
}

}  // namespace

std::string BaselinePath(const std::string& dir, const std::string& name) {
  return (dir.empty() ? std::string(".") : dir) + "/" + name + kJsonSuffix;
}

std::string HistoryPath(const std::string& dir) { return (dir.empty() ? std::string(".") : dir) + "/history.db"; }

Status ValidateBaselineName(const std::string& name) {
  auto allowed = [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
           c == '-';
  };
  if (name.empty() || name.size() > kMaxNameLength || name[0] == '.' ||
      !std::all_of(name.begin(), name.end(), allowed))
    return InvalidInput("baseline name '" + name + "' is not allowed: use 1-" + std::to_string(kMaxNameLength) +
                        " characters from A-Z a-z 0-9 . _ - (no path separators), not starting with '.'");
  return Status::Ok();
}

HistoryRow HistoryRowFor(const std::string& name, const std::string& kind, const json& report,
                         const std::string& source) {
  HistoryRow row;
  row.name = name;
  row.kind = kind;
  row.recorded_at = NowIso();
  row.commit = Text(report, "commit");
  row.avg_latency_ms = Number(report, "avg_latency_ms").value_or(0);
  row.p95_latency_ms = Number(report, "p95_latency_ms").value_or(0);
  row.throughput_fps = Number(report, "throughput_fps").value_or(0);
  row.source = source;
  return row;
}

Status SaveBaseline(const std::string& dir, const std::string& name, const json& report,
                    const std::string& source) {
  TG_RETURN_IF_ERROR(ValidateBaselineName(name));
  TG_RETURN_IF_ERROR(CheckReport(report, source));
  if (!Number(report, "avg_latency_ms"))
    return InvalidInput(source + ": no avg_latency_ms to gate against (" +
                        Text(report, "avg_latency_ms_reason") + "); a baseline needs iterations");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return IoError(dir + ": cannot create the baseline directory: " + ec.message());
  std::string path = BaselinePath(dir, name);
  TG_RETURN_IF_ERROR(WriteJsonFile(path, report));
  if (Status s = AppendHistory(dir, HistoryRowFor(name, "saved", report, source)); !s.ok())
    return Status(s.code(), "saved " + path + ", but the history was not updated: " + s.message());
  return Status::Ok();
}

Status LoadBaseline(const std::string& dir, const std::string& name_or_file, json* report,
                    std::string* resolved_path) {
  std::string path = name_or_file;
  bool is_file = name_or_file.find('/') != std::string::npos || EndsWith(name_or_file, kJsonSuffix);
  if (!is_file) {
    TG_RETURN_IF_ERROR(ValidateBaselineName(name_or_file));
    path = BaselinePath(dir, name_or_file);
    std::error_code ec;
    if (!fs::exists(path, ec))
      return NotFound(path + ": no baseline named '" + name_or_file + "' (see tracegate baseline list --dir " +
                      dir + ")");
  }
  TG_RETURN_IF_ERROR(CheckReadableFile(path));
  json doc;
  TG_RETURN_IF_ERROR(internal::LoadReportFile(path, "baseline", &doc));
  TG_RETURN_IF_ERROR(CheckReport(doc, path));
  *report = std::move(doc);
  if (resolved_path) *resolved_path = path;
  return Status::Ok();
}

Status ListBaselines(const std::string& dir, std::vector<BaselineInfo>* out) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return NotFound(dir + ": no baseline directory (tracegate baseline save creates it)");
  std::vector<std::string> names;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string file = it->path().filename().string();
    if (!EndsWith(file, kJsonSuffix)) continue;
    std::string name = file.substr(0, file.size() - std::string_view(kJsonSuffix).size());
    if (ValidateBaselineName(name).ok()) names.push_back(std::move(name));
  }
  if (ec) return IoError(dir + ": cannot list the baseline directory: " + ec.message());
  std::sort(names.begin(), names.end());
  out->clear();
  for (const std::string& name : names) {
    BaselineInfo info;
    if (Status s = ReadInfo(dir, name, &info); !s.ok()) {
      info.path = BaselinePath(dir, name);
      info.error = s.message();
    }
    out->push_back(std::move(info));
  }
  return Status::Ok();
}

Status AppendHistory(const std::string& dir, const HistoryRow& row) {
  TG_RETURN_IF_ERROR(ValidateBaselineName(row.name));
  if (row.kind != "saved" && row.kind != "gated")
    return InvalidInput("history row kind '" + row.kind + "': expected saved or gated");
  internal::Db db;
  internal::Stmt q;
  TG_RETURN_IF_ERROR(PrepareHistory(dir, true, kInsertRow, db, q));
  std::string when = row.recorded_at.empty() ? NowIso() : row.recorded_at;
  q.Text(1, row.name);
  q.Text(2, row.kind);
  q.Text(3, when);
  BindText(q, 4, row.commit);
  BindMetric(q, 5, row.avg_latency_ms);
  BindMetric(q, 6, row.p95_latency_ms);
  BindMetric(q, 7, row.throughput_fps);
  BindText(q, 8, row.verdict);
  q.Text(9, row.source);
  return q.Run("cannot append to the history");
}

Status ReadHistory(const std::string& dir, const std::string& name, std::vector<HistoryRow>* out) {
  TG_RETURN_IF_ERROR(ValidateBaselineName(name));
  std::string path = HistoryPath(dir);
  std::error_code ec;
  if (!fs::exists(path, ec))
    return NotFound(path + ": no history yet (tracegate baseline save and gate record it)");
  internal::Db db;
  internal::Stmt q;
  TG_RETURN_IF_ERROR(PrepareHistory(dir, false, kSelectRows, db, q));
  q.Text(1, name);
  out->clear();
  Status s;
  while (q.Next(s)) {
    HistoryRow r;
    r.id = q.Int(0);
    r.name = q.Text(1);
    r.kind = q.Text(2);
    r.recorded_at = q.Text(3);
    r.commit = q.Text(4);
    r.avg_latency_ms = q.Real(5);  // NULL reads as 0
    r.p95_latency_ms = q.Real(6);
    r.throughput_fps = q.Real(7);
    r.verdict = q.Text(8);
    r.source = q.Text(9);
    out->push_back(std::move(r));
  }
  return s;
}

}  // namespace tg
