// Test helper shared by the store and nsys tests: run SQL on a database file.
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <string>

namespace tg::testing_util {

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

}  // namespace tg::testing_util
