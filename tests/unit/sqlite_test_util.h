// Test helper shared by the store and nsys tests: run SQL on a database file.
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <string>
#include <utility>
#include <vector>

namespace tg::testing {

// Runs `sql` on the database at `path` (created when absent); fails the test on an SQL error.
inline void ExecSql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  std::string msg = err ? err : "";
  sqlite3_free(err);
  sqlite3_close(db);
  ASSERT_EQ(rc, SQLITE_OK) << msg;
}

// The rows of a two-column integer query (e.g. start, end), read with the SQLite C API alone.
inline std::vector<std::pair<int64_t, int64_t>> QueryPairs(const std::string& path, const std::string& sql) {
  std::vector<std::pair<int64_t, int64_t>> rows;
  sqlite3* db = nullptr;
  sqlite3_stmt* stmt = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  while (stmt && sqlite3_step(stmt) == SQLITE_ROW)
    rows.emplace_back(sqlite3_column_int64(stmt, 0), sqlite3_column_int64(stmt, 1));
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return rows;
}

}  // namespace tg::testing
