// libFuzzer target for the SQLite readers (Nsight Systems exports and tracegate's store). Random
// bytes almost never make a SQLite file, so the input is SQL: it is run against an empty database
// (statements that fail are skipped), which is then imported. The seeds are `sqlite3 .dump`s of
// the nsys and store fixtures, so mutations produce tables with odd types, NULLs, missing columns,
// huge values and broken references - what our reader must survive.
#include <sqlite3.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "fuzz_util.h"
#include "tracegate/analyzer/analysis.h"
#include "tracegate/analyzer/import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = tg::fuzz::WriteInput(nullptr, 0, ".sqlite");
  std::string sql(reinterpret_cast<const char*>(data), size);
  ::unlink(path.c_str());
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) std::abort();
  sqlite3_exec(db, "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;", nullptr, nullptr, nullptr);
  // Run statement by statement so that one bad statement does not drop the rest.
  const char* tail = sql.c_str();
  int budget = 10000;
  while (*tail && budget-- > 0) {
    sqlite3_stmt* stmt = nullptr;
    const char* next = nullptr;
    if (sqlite3_prepare_v2(db, tail, -1, &stmt, &next) != SQLITE_OK || next == tail) {
      const char* semi = std::strchr(tail, ';');  // skip to the next statement
      if (!semi) break;
      tail = semi + 1;
      continue;
    }
    if (stmt) {
      for (int steps = 0; steps < 100000 && sqlite3_step(stmt) == SQLITE_ROW; ++steps) {
      }
      sqlite3_finalize(stmt);
    }
    tail = next;
  }
  sqlite3_close(db);
  tg::Trace trace;
  if (!tg::ImportTrace(path, &trace).ok()) return 0;
  tg::Analysis analysis;
  (void)tg::RunAnalysis(trace, tg::AnalysisConfig{}, &analysis);
  return 0;
}
