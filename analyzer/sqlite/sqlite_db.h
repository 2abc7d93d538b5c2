// Thin RAII wrappers over the SQLite C API, shared by the store writer and the SQLite importer.
// Every error becomes a Status whose message starts with the user-facing path ("<path>: ...").
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>

#include "tracegate/analyzer/status.h"

namespace tg::internal {

class Db {
 public:
  Db() = default;
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;
  ~Db() { Close(); }

  // `file` is what SQLite opens; `label` is the path errors name (the user's path, not a temp file).
  [[nodiscard]] Status Open(const std::string& file, const std::string& label, int flags);
  void Close();
  [[nodiscard]] Status Exec(const std::string& sql, std::string_view what);
  // Turns SQLite result `rc` into a Status: "<label>: <what>: <sqlite message>".
  std::string WriteFailureCause() const;
  Status Error(int rc, std::string_view what) const;

  // Whether the last failed call failed because another connection holds a lock (BUSY or
  // LOCKED, any extended code): worth retrying, unlike every other failure.
  bool LastErrorIsBusy() const {
    const int rc = db_ ? sqlite3_errcode(db_) & 0xff : SQLITE_OK;
    return rc == SQLITE_BUSY || rc == SQLITE_LOCKED;
  }

  sqlite3* handle() const { return db_; }
  const std::string& label() const { return label_; }

 private:
  sqlite3* db_ = nullptr;
  std::string label_;
};

class Stmt {
 public:
  Stmt() = default;
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  ~Stmt() { sqlite3_finalize(stmt_); }

  [[nodiscard]] Status Prepare(const Db& db, const std::string& sql);

  // Binding (1-based parameter index, as SQLite numbers them).
  void Int(int i, int64_t v) { sqlite3_bind_int64(stmt_, i, v); }
  void Null(int i) { sqlite3_bind_null(stmt_, i); }
  // Binds NULL when v == none: nullable nsys columns hold NULL where the model says "unknown".
  void IntOrNull(int i, int64_t v, int64_t none) { v == none ? Null(i) : Int(i, v); }
  void Real(int i, double v) { sqlite3_bind_double(stmt_, i, v); }  // NaN is stored as NULL
  // The text must stay alive until the statement has run. An empty view may have no data
  // pointer, which SQLite would store as NULL: "" keeps it an empty string.
  void Text(int i, std::string_view s) {
    sqlite3_bind_text(stmt_, i, s.empty() ? "" : s.data(), static_cast<int>(s.size()), SQLITE_STATIC);
  }

  // Runs a statement that returns no rows (an INSERT) and resets it for the next row.
  [[nodiscard]] Status Run(std::string_view what);
  // Steps a query: true with a row, false when done or on error (then `status` says why).
  bool Next(Status& status);
  // Rewinds a query so it can run again with new bindings.
  void Reset() { sqlite3_reset(stmt_); }

  // Column reads (0-based, as SQLite numbers them). Reading a nullable column through
  // sqlite3_column_value costs one column access instead of two (type, then value).
  bool IsNull(int c) const { return sqlite3_column_type(stmt_, c) == SQLITE_NULL; }
  int64_t Int(int c) const { return sqlite3_column_int64(stmt_, c); }
  // False (and v untouched) when the column is NULL.
  bool Get(int c, int64_t& v) const {
    sqlite3_value* x = sqlite3_column_value(stmt_, c);
    if (sqlite3_value_type(x) == SQLITE_NULL) return false;
    v = sqlite3_value_int64(x);
    return true;
  }
  // One column access: 1 with an INTEGER value in v, 0 for NULL, -1 for any other type (text,
  // real, blob: SQLite would convert those to a number silently).
  int GetInteger(int c, int64_t& v) const {
    sqlite3_value* x = sqlite3_column_value(stmt_, c);
    switch (sqlite3_value_type(x)) {
      case SQLITE_NULL: return 0;
      case SQLITE_INTEGER: v = sqlite3_value_int64(x); return 1;
      default: return -1;
    }
  }
  // True with the value in v when the column holds a REAL (no conversion from other types).
  bool GetReal(int c, double& v) const {
    sqlite3_value* x = sqlite3_column_value(stmt_, c);
    if (sqlite3_value_type(x) != SQLITE_FLOAT) return false;
    v = sqlite3_value_double(x);
    return true;
  }
  int64_t IntOr(int c, int64_t fallback) const {
    Get(c, fallback);
    return fallback;
  }
  double Real(int c) const { return sqlite3_column_double(stmt_, c); }
  std::string_view Text(int c) const {
    auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, c));
    return p ? std::string_view(p, static_cast<size_t>(sqlite3_column_bytes(stmt_, c))) : std::string_view();
  }

 private:
  const Db* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
};

// Names of the tables in the database.
[[nodiscard]] Status TableNames(const Db& db, std::unordered_set<std::string>& names);
// Names of the columns of `table` (empty when the table does not exist).
[[nodiscard]] Status ColumnNames(const Db& db, const std::string& table, std::unordered_set<std::string>& names);

// `"name"`, quoted for use as an SQL identifier.
std::string Quote(std::string_view name);

}  // namespace tg::internal
