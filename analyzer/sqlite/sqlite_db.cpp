#include "analyzer/sqlite/sqlite_db.h"

#include <sys/resource.h>
#include <sys/statvfs.h>

#include <cstdint>
#include <string>

namespace tg::internal {

Status Db::Open(const std::string& file, const std::string& label, int flags) {
  Close();
  label_ = label;
  int rc = sqlite3_open_v2(file.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    Status s = Error(rc, "cannot open SQLite database");
    Close();
    return s;
  }
  sqlite3_extended_result_codes(db_, 1);
  return Status::Ok();
}

void Db::Close() {
  // Statements are finalized by their owners first; close_v2 defers if any are left.
  if (db_) sqlite3_close_v2(db_);
  db_ = nullptr;
}

Status Db::Exec(const std::string& sql, std::string_view what) {
  int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr);
  return rc == SQLITE_OK ? Status::Ok() : Error(rc, what);
}

// Why a write failed, as far as can be told afterwards (SQLite's errno is not kept reliably, and
// its rollback has already shrunk the file): " (no space left on the device)", " (a file size
// limit of N bytes is in force: ulimit -f)" or "".
std::string Db::WriteFailureCause() const {
  const char* file = db_ ? sqlite3_db_filename(db_, "main") : nullptr;
  if (!file || !*file) return "";
  rlimit limit{};
  if (::getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
    return " (a file size limit of " + std::to_string(limit.rlim_cur) + " bytes is in force: ulimit -f)";
  std::string dir(file);
  dir = dir.substr(0, dir.find_last_of('/') == std::string::npos ? 0 : dir.find_last_of('/'));
  struct statvfs fs {};
  if (::statvfs(dir.empty() ? "." : dir.c_str(), &fs) == 0 &&
      static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize < (1u << 20))
    return " (no space left on the device)";
  return "";
}

Status Db::Error(int rc, std::string_view what) const {
  std::string detail = std::string(what) + ": " + (db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc));
  // Any I/O error, not only a failed write: a WAL file's shared-memory file is created on the
  // first read, and a size limit or a full disk shows there first.
  if ((rc & 0xff) == SQLITE_IOERR || rc == SQLITE_FULL) detail += WriteFailureCause();
  switch (rc & 0xff) {  // the primary code of an extended one
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB: return InvalidInput(label_ + ": not a valid SQLite database (" + detail + ")");
    case SQLITE_CANTOPEN:
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_BUSY:
    case SQLITE_LOCKED: return IoError(label_ + ": " + detail);
    case SQLITE_CONSTRAINT:
    case SQLITE_MISMATCH:
    case SQLITE_TOOBIG: return InvalidInput(label_ + ": " + detail);
    default: return {StatusCode::kInternal, label_ + ": " + detail};
  }
}

Status Stmt::Prepare(const Db& db, const std::string& sql) {
  sqlite3_finalize(stmt_);
  stmt_ = nullptr;
  db_ = &db;
  int rc = sqlite3_prepare_v3(db.handle(), sql.c_str(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT, &stmt_,
                              nullptr);
  return rc == SQLITE_OK ? Status::Ok() : db.Error(rc, "cannot prepare \"" + sql.substr(0, 80) + "\"");
}

Status Stmt::Run(std::string_view what) {
  int rc = sqlite3_step(stmt_);
  sqlite3_reset(stmt_);
  return rc == SQLITE_DONE ? Status::Ok() : db_->Error(rc, what);
}

bool Stmt::Next(Status& status) {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc != SQLITE_DONE) status = db_->Error(rc, "cannot read rows");
  return false;
}

Status TableNames(const Db& db, std::unordered_set<std::string>& names) {
  Stmt q;
  TG_RETURN_IF_ERROR(q.Prepare(db, "SELECT name FROM sqlite_master WHERE type = 'table'"));
  Status s;
  while (q.Next(s)) names.emplace(q.Text(0));
  return s;
}

Status ColumnNames(const Db& db, const std::string& table, std::unordered_set<std::string>& names) {
  Stmt q;
  TG_RETURN_IF_ERROR(q.Prepare(db, "SELECT name FROM pragma_table_info(?)"));
  q.Text(1, table);
  Status s;
  while (q.Next(s)) names.emplace(q.Text(0));
  return s;
}

std::string Quote(std::string_view name) {
  std::string out = "\"";
  for (char c : name) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace tg::internal
