// history.db, written by many CI jobs at once: one short write transaction per row, taken with
// BEGIN IMMEDIATE and retried while another process holds the lock, so no row is ever dropped
// for contention. See docs/ROBUSTNESS.md ("Baselines and history under concurrent jobs").
#pragma once

#include <functional>
#include <string>

#include "analyzer/sqlite/sqlite_db.h"
#include "tracegate/reports/baseline.h"

namespace tg::internal {

// One write to <dir>/history.db. Begin() opens the file (creating it, its table and its version
// stamp once, in WAL mode where the file system allows it) and takes the write lock; the
// transaction is rolled back unless Commit() succeeds, so a caller can make another change (the
// baseline file's rename) depend on the row landing.
class HistoryWrite {
 public:
  HistoryWrite() = default;
  HistoryWrite(const HistoryWrite&) = delete;
  HistoryWrite& operator=(const HistoryWrite&) = delete;
  ~HistoryWrite();

  [[nodiscard]] Status Begin(const std::string& dir);
  [[nodiscard]] Status Insert(const HistoryRow& row);
  [[nodiscard]] Status Commit();
  void Rollback();
  // Whether the last failure was another process holding the lock (worth another attempt).
  bool Busy() const;

 private:
  Db db_;
  bool open_txn_ = false;
};

// The current time, ISO-8601 UTC to the second (history rows' recorded_at).
std::string NowIso();

// Runs `write` (Insert, then Commit, and whatever the caller does between) in a HistoryWrite on
// <dir>/history.db, again from Begin() when it failed only because the file was busy, a bounded
// number of times.
[[nodiscard]] Status WithHistoryRetry(const std::function<Status(HistoryWrite&)>& write, const std::string& dir);

}  // namespace tg::internal
