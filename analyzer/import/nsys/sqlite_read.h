// Internals of ImportSqlite shared by its two files: sqlite_import.cpp (opening, format detection,
// metadata, devices, processes, counters) and sqlite_events.cpp (the event tables).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "analyzer/sqlite/sqlite_db.h"
#include "analyzer/sqlite/table_scan.h"
#include "tracegate/analyzer/model.h"

namespace tg::internal {

// A slot per id: ids below 2^20 (nsys numbers its strings from 0 up) in a vector, the rest in a
// map. Slot(id) gives the id's slot and whether it was made just now (value-initialised).
template <class T>
class IdSlots {
 public:
  std::pair<T&, bool> Slot(int64_t id) {
    if (id >= 0 && id < kFlat) {
      const auto i = static_cast<size_t>(id);
      if (i >= flat_.size()) flat_.resize(std::max(i + 1, flat_.size() * 2));
      const bool fresh = !flat_[i].known;
      flat_[i].known = true;
      return {flat_[i].value, fresh};
    }
    auto [it, inserted] = other_.try_emplace(id);
    return {it->second, inserted};
  }

 private:
  static constexpr int64_t kFlat = int64_t{1} << 20;
  struct Flat {
    T value{};
    bool known = false;
  };
  std::vector<Flat> flat_;
  std::unordered_map<int64_t, T> other_;
};

// Resolves StringIds ids to the trace's StringIds, looking each id up once.
class NameResolver {
 public:
  [[nodiscard]] Status Init(const internal::Db& db, bool has_table, StringTable& strings);
  // An id StringIds does not have (or no StringIds table) resolves to "<StringIds id N missing>"
  // and counts in missing().
  // `uses`: the rows that name it (missing() counts each).
  StringId operator()(int64_t id, uint64_t uses = 1);
  Status status() const { return status_; }
  uint64_t missing() const { return missing_; }

 private:
  StringTable* strings_ = nullptr;
  bool has_table_ = false;
  internal::Stmt lookup_;
  struct Entry {
    StringId name = StringTable::kEmpty;
    bool missing = true;
  };
  void Resolve(Entry& e, int64_t id);
  IdSlots<Entry> cache_;
  uint64_t missing_ = 0;
  Status status_;
};

struct Source {
  internal::Db& db;
  const std::string& path;
  std::unordered_set<std::string> tables;
  Trace& trace;
  NameResolver names;
  // A tracegate store keeps the counters its producer found; row checks that only repeat them
  // (unknown copy kinds) are skipped there. Rows that cannot be kept are dropped and counted in
  // both formats.
  bool is_store = false;
  QualityCounters found;  // counted while reading
  // The ranges of NVTX domain "NCCL" (NCCL's own annotation of its API calls): their rows in
  // trace.ranges and their payloads as the export renders them (jsonText, or jsonTextId into
  // StringIds), for MarkNcclCollectives.
  struct NcclRange {
    size_t row;
    std::string json;
    int64_t json_id;
  };
  std::vector<NcclRange> nccl_ranges;

  // The file read directly where SQLite is not needed (table_scan.h): the event tables' full scans.
  // Declared before `db` by the caller: it must close after SQLite does.
  internal::PageFile& pages;

  bool Has(const std::string& table) const { return tables.count(table) != 0; }
};

// Prepares "SELECT c1, c2, ... FROM table <where>"; columns the table lacks read as NULL, since
// nsys creates tables and columns only when it has data for them, or as the expression `instead`
// gives for them (a column of a table `where` joins).
[[nodiscard]] Status SelectColumns(const Source& src, const std::string& table,
                                   const std::vector<std::string_view>& columns, std::string_view where,
                                   internal::Stmt& out,
                                   const std::unordered_map<std::string_view, std::string>* instead = nullptr);
// Rows in the table, for reserving (max(rowid): no full scan; an estimate when rows were deleted).
size_t RowEstimate(const Source& src, const std::string& table);

// The activity and range tables: kernels, memcpys, memsets, syncs, API calls, NVTX ranges, samples.
[[nodiscard]] Status ReadEvents(Source& src);

// Gives the kernels launched from inside NCCL's NVTX ranges (nccl_ranges) the collective
// metadata columns those ranges and their payloads carry (nccl_ranges.cpp).
[[nodiscard]] Status MarkNcclCollectives(Source& src);

}  // namespace tg::internal
