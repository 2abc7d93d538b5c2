// history.db: one row per baseline save and per gate (see reports/gate/history.h).
//
// Many CI jobs gate against one checkout's baselines/ at once. What keeps every row:
// - the file's layout is created and its version stamped once, by whoever finds it new, inside a
//   write transaction; every later open only reads the stamp (writing it on every open made
//   concurrent jobs fail with "database is locked");
// - WAL mode where the file system supports it (readers never block the writer); on a file
//   system without shared memory (NFS, some container mounts) SQLite refuses WAL and the file
//   stays in rollback-journal mode, which is slower under contention but equally correct;
// - each row is one BEGIN IMMEDIATE ... COMMIT: the write lock is taken up front, so a
//   transaction never has to upgrade a read lock (which SQLite would refuse without waiting);
// - a busy timeout on every statement and, for the rare waits SQLite does not retry itself (a
//   WAL recovery, a journal-mode switch), a bounded retry of the whole transaction.
#include "reports/gate/history.h"

#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <random>
#include <thread>

#include "tracegate/reports/report_provenance.h"

namespace tg {

namespace {

namespace fs = std::filesystem;

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

// How long one statement waits for another connection's lock, and how often a whole
// transaction is tried again when SQLite gives up waiting by itself. 64 jobs writing one short
// row each finish well inside the first; the bound keeps a wedged file from hanging CI forever.
constexpr int kBusyTimeoutMs = 20000;
constexpr int kAttempts = 5;

// A short random pause before another attempt, so retrying jobs do not collide in step.
void Backoff(int attempt) {
  thread_local std::minstd_rand rng(static_cast<unsigned>(::getpid()));
  std::uniform_int_distribution<int> ms(5, 50 << attempt);
  std::this_thread::sleep_for(std::chrono::milliseconds(ms(rng)));
}

// Binds a metric, NULL when absent (HistoryRow keeps 0 for "absent": latencies are positive).
void BindMetric(internal::Stmt& q, int i, double v) { v != 0 ? q.Real(i, v) : q.Null(i); }
void BindText(internal::Stmt& q, int i, const std::string& v) { v.empty() ? q.Null(i) : q.Text(i, v); }

// The version stamp (0 for a new file). `what` is what the caller was doing, for the message:
// the first statement on a file is where a read-only directory or a size limit shows.
Status ReadVersion(internal::Db& db, std::string_view what, int64_t* version) {
  internal::Stmt q;
  TG_RETURN_IF_ERROR(q.Prepare(db, "PRAGMA user_version"));
  Status s;
  *version = q.Next(s) ? q.Int(0) : 0;
  return s.ok() ? s : db.Error(sqlite3_extended_errcode(db.handle()), what);
}

Status CheckVersion(const internal::Db& db, int64_t version) {
  if (version > kHistoryVersion)
    return Unsupported(db.label() + ": history written by a newer tracegate (version " + std::to_string(version) + ")");
  return Status::Ok();
}

// Opens history.db to read. A WAL file in a directory this process cannot write has no -shm
// file to map once its last writer closed; it is then read as an immutable file, which is what
// it is to a process that cannot write beside it.
// *version is 0 for a file whose creation never committed (its creator was killed or failed).
Status OpenForReading(const std::string& path, internal::Db& db, int64_t* version) {
  Status s = db.Open(path, path, SQLITE_OPEN_READONLY);
  if (s.ok()) {
    s = ReadVersion(db, "cannot read the history", version);
    if (s.ok()) return CheckVersion(db, *version);
  }
  std::string uri = "file:" + path + "?immutable=1";
  internal::Db immutable;
  if (!immutable.Open(uri, path, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI).ok()) return s;
  if (!ReadVersion(immutable, "cannot read the history", version).ok()) return s;
  db.Close();
  TG_RETURN_IF_ERROR(db.Open(uri, path, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI));
  return CheckVersion(db, *version);
}

}  // namespace

namespace internal {

std::string NowIso() {
  std::string iso;
  EpochNsToIso(static_cast<TimeNs>(std::time(nullptr)) * 1'000'000'000, &iso);
  return iso;
}

HistoryWrite::~HistoryWrite() { Rollback(); }

void HistoryWrite::Rollback() {
  if (open_txn_) sqlite3_exec(db_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
  open_txn_ = false;
}

Status HistoryWrite::Begin(const std::string& dir) {
  Rollback();
  const std::string path = HistoryPath(dir);
  TG_RETURN_IF_ERROR(db_.Open(path, path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE));
  sqlite3_busy_timeout(db_.handle(), kBusyTimeoutMs);
  int64_t version = 0;
  TG_RETURN_IF_ERROR(ReadVersion(db_, "cannot open the history for writing", &version));
  TG_RETURN_IF_ERROR(CheckVersion(db_, version));
  if (version == 0) {
    // New (or being created by another job right now). The journal mode can only change outside
    // a transaction; a file system that refuses WAL leaves the mode as it was, which is fine.
    TG_RETURN_IF_ERROR(db_.Exec("PRAGMA journal_mode = WAL", "cannot set up the history"));
  }
  TG_RETURN_IF_ERROR(db_.Exec("BEGIN IMMEDIATE", "cannot lock the history for writing"));
  open_txn_ = true;
  if (version == 0) {
    // Another job may have created it meanwhile.
    TG_RETURN_IF_ERROR(ReadVersion(db_, "cannot open the history for writing", &version));
    if (version == 0) {
      TG_RETURN_IF_ERROR(db_.Exec(kCreateHistory, "cannot create the history table"));
      TG_RETURN_IF_ERROR(db_.Exec("PRAGMA user_version = " + std::to_string(kHistoryVersion),
                                  "cannot stamp the history version"));
    }
  }
  return Status::Ok();
}

Status HistoryWrite::Insert(const HistoryRow& row) {
  Stmt q;
  TG_RETURN_IF_ERROR(q.Prepare(db_, kInsertRow));
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

Status HistoryWrite::Commit() {
  TG_RETURN_IF_ERROR(db_.Exec("COMMIT", "cannot write the history"));
  open_txn_ = false;
  return Status::Ok();
}

bool HistoryWrite::Busy() const { return db_.LastErrorIsBusy(); }

Status WithHistoryRetry(const std::function<Status(HistoryWrite&)>& write, const std::string& dir) {
  Status s;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    HistoryWrite h;
    s = h.Begin(dir);
    if (s.ok()) s = write(h);
    if (s.ok()) return Status::Ok();
    if (!h.Busy()) return s;
    h.Rollback();
    Backoff(attempt);
  }
  return s;
}

}  // namespace internal

Status AppendHistory(const std::string& dir, const HistoryRow& row) {
  TG_RETURN_IF_ERROR(ValidateBaselineName(row.name));
  if (row.kind != "saved" && row.kind != "gated")
    return InvalidInput("history row kind '" + row.kind + "': expected saved or gated");
  return internal::WithHistoryRetry(
      [&](internal::HistoryWrite& h) {
        TG_RETURN_IF_ERROR(h.Insert(row));
        return h.Commit();
      },
      dir);
}

Status ReadHistory(const std::string& dir, const std::string& name, std::vector<HistoryRow>* out) {
  TG_RETURN_IF_ERROR(ValidateBaselineName(name));
  std::string path = HistoryPath(dir);
  const Status none = NotFound(path + ": no history yet (tracegate baseline save and gate record it)");
  std::error_code ec;
  if (!fs::exists(path, ec)) return none;
  internal::Db db;
  int64_t version = 0;
  TG_RETURN_IF_ERROR(OpenForReading(path, db, &version));
  if (version == 0) return none;
  sqlite3_busy_timeout(db.handle(), kBusyTimeoutMs);
  internal::Stmt q;
  TG_RETURN_IF_ERROR(q.Prepare(db, kSelectRows));
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
