// Store and nsys-shaped SQLite from a generated Kineto trace (see gen_store.h).
#include "gen_store.h"

#include <sqlite3.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tracegate/analyzer/import.h"
#include "tracegate/analyzer/store.h"

namespace tg::bench {

namespace {

std::string Exec(sqlite3* db, const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err) == SQLITE_OK) return "";
  std::string message = err ? err : "sqlite error";
  sqlite3_free(err);
  return message + " in: " + sql;
}

std::vector<std::string> Column0(sqlite3* db, const std::string& sql) {
  std::vector<std::string> out;
  sqlite3_stmt* q = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &q, nullptr) != SQLITE_OK) return out;
  while (sqlite3_step(q) == SQLITE_ROW) out.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(q, 0)));
  sqlite3_finalize(q);
  return out;
}

// Turns a store (copied to `nsys`) into what `nsys export --type sqlite` writes for the same rows.
std::string StoreToNsys(const std::string& nsys) {
  sqlite3* db = nullptr;
  if (sqlite3_open(nsys.c_str(), &db) != SQLITE_OK) {
    sqlite3_close(db);
    return nsys + ": cannot open";
  }
  std::string sql = "BEGIN;";
  for (const std::string& t : Column0(db, "SELECT name FROM sqlite_master WHERE type = 'table'")) {
    if (t.rfind("tracegate_", 0) == 0) {
      sql += "DROP TABLE " + t + ";";
      continue;
    }
    for (const std::string& c : Column0(db, "SELECT name FROM pragma_table_info('" + t + "')")) {
      if (c.rfind("tg", 0) == 0) sql += "ALTER TABLE " + t + " DROP COLUMN " + c + ";";
    }
  }
  sql += "CREATE TABLE META_DATA_EXPORT(name TEXT, value TEXT);"
         "INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.0.0'), "
         "('EXPORT_PRODUCT_NAME', 'NVIDIA Nsight Systems'), ('EXPORT_PRODUCT_VERSION', '2025.1.1');"
         "COMMIT; VACUUM;";
  // Indexes on dropped columns go with them; the others stay, as nsys has its own.
  std::string e = Exec(db, sql);
  sqlite3_close(db);
  return e.empty() ? "" : nsys + ": " + e;
}

}  // namespace

std::string WriteStoreAndNsys(const std::string& json, const std::string& store, const std::string& nsys) {
  Trace trace;
  if (Status s = ImportTrace(json, &trace); !s.ok()) return s.message();
  std::string target = store.empty() ? nsys + ".store.tmp" : store;
  if (Status s = WriteStore(trace, target); !s.ok()) return s.message();
  if (nsys.empty()) return "";
  std::error_code ec;
  std::filesystem::copy_file(target, nsys, std::filesystem::copy_options::overwrite_existing, ec);
  if (store.empty()) std::filesystem::remove(target);
  if (ec) return nsys + ": " + ec.message();
  return StoreToNsys(nsys);
}

}  // namespace tg::bench
