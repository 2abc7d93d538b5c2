// Reads the rows of an SQLite table straight from the database file's pages (the file format:
// sqlite.org/fileformat2.html), for the importer's full scans of the event tables. SQLite's own
// `SELECT a, b FROM t` spends most of its time in the statement machine and in one call per
// column; this decodes each record once and hands out the selected columns with the same reads
// as Stmt (IsNull, Int, Get, GetInteger, GetReal, IntOr) and the same values, conversions
// included (a REAL or TEXT read as an integer converts as sqlite3_column_int64 does).
//
// Only what SQLite itself would read from the main file alone is read here. PageFile::Open says
// the file cannot be read this way (SQLite must) when it is in WAL mode, has a journal beside it,
// is not UTF-8, or its header is not one this reader knows; TableScan::Open says the same of a
// table that is not a plain rowid table (WITHOUT ROWID, generated columns, a non-NULL column
// default: an ALTER TABLE'd record shorter than the schema would need it). The caller holds an
// SQLite read transaction on the same file meanwhile, so no writer changes it.
//
// Closing any descriptor of a file drops every POSIX lock the process holds on it, SQLite's
// included. So the descriptor pages are read through is shared by every PageFile of the same
// file in the process and closed when the last of them goes, and a PageFile must outlive the
// SQLite connection it reads beside (declare it before the Db).
//
// Damage to the file is an error ("not a valid SQLite database", as SQLite would say), never a
// read out of bounds: every offset is checked, each page is entered at most once, the tree's
// depth is bounded.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/sqlite/sqlite_db.h"
#include "tracegate/analyzer/status.h"

namespace tg::internal {

// For tests: false makes every PageFile decline its file, so SQLite reads every table (the
// reference the direct reads are compared with). True by default.
void SetDirectReadsForTesting(bool on);

// The fields of an SQLite file's 100-byte header that tracegate reads (sqlite.org/fileformat2.html,
// "The Database Header").
struct FileHeader {
  uint32_t page_size = 0;    // bytes (a stored 1 means 65536)
  uint32_t reserved = 0;     // bytes at the end of each page
  uint32_t page_count = 0;   // as the header says; current only when pages_valid
  bool pages_valid = false;  // nonzero, and written by the version that last changed the file
  bool rollback = false;     // read and write versions 1: no WAL
  bool fractions = false;    // the payload fractions every valid file has (64, 32, 32)
  bool utf8 = false;         // text encoding 1
};
FileHeader ParseFileHeader(const unsigned char* h);

// For tests: scans opened for direct reads, and scans kept to part of their root's children,
// since the process started.
struct ScanCounts {
  uint64_t opened = 0, split = 0;
};
ScanCounts ScanCountsForTesting();

// The database file: its header and a descriptor pages are read through.
class PageFile {
 public:
  PageFile() = default;
  PageFile(const PageFile&) = delete;
  PageFile& operator=(const PageFile&) = delete;
  ~PageFile();

  // Opens `path` (errors name `label`). `usable` false: SQLite must read this file (why() says
  // why); not an error.
  [[nodiscard]] Status Open(const std::string& path, const std::string& label);
  bool usable() const { return usable_; }
  const std::string& why() const { return why_; }

  uint32_t page_size() const { return page_size_; }
  uint32_t usable_size() const { return usable_size_; }
  uint32_t page_count() const { return page_count_; }
  const std::string& label() const { return label_; }

  // Reads `count` pages from page `first` (1-based) into out; past the file's end the pages read
  // as zeros (as SQLite's pager reads them). False on an I/O error.
  bool Read(uint32_t first, uint32_t count, unsigned char* out) const;

  Status Corrupt() const;  // "not a valid SQLite database (...: database disk image is malformed)"
  Status IoFailure() const;

 private:
  int fd_ = -1;  // shared by the PageFiles of one file (table_scan.cpp: SharedDescriptors)
  bool usable_ = false;
  uint32_t page_size_ = 0, usable_size_ = 0, page_count_ = 0;
  std::string label_, why_;
};

// One full scan of a table: its rows in rowid order, as `SELECT columns FROM table` returns them.
class TableScan {
 public:
  TableScan();
  ~TableScan();
  TableScan(const TableScan&) = delete;
  TableScan& operator=(const TableScan&) = delete;

  // Prepares the scan of `table` over `file` (open and usable), the columns named in `columns`
  // in that order (a name the table lacks reads as NULL). `usable` false: SQLite must read this
  // table; not an error. `db` is the SQLite connection to the same file (its schema is read).
  [[nodiscard]] Status Open(const Db& db, const PageFile& file, const std::string& table,
                            const std::vector<std::string_view>& columns, bool& usable);

  // Steps to the next row: true with a row, false when done or on error (then `status` says why).
  bool Next(Status& status);

  // Splitting one table between two scans (each opened on it, before their first Next): the
  // root page's children (0 when the root is a leaf) hold the rows in order, so a scan kept to
  // children [from, to) reads a contiguous run of the table's rows.
  size_t RootChildren() const;
  void KeepRootChildren(size_t from, size_t to);

  // Reads of the current row's selected column c (0-based), as Stmt's.
  bool IsNull(int c) const { return values_[static_cast<size_t>(c)].type == kNull; }
  int64_t Int(int c) const { return AsInt(values_[static_cast<size_t>(c)]); }
  bool Get(int c, int64_t& v) const {
    const Value& x = values_[static_cast<size_t>(c)];
    if (x.type == kNull) return false;
    v = AsInt(x);
    return true;
  }
  int GetInteger(int c, int64_t& v) const {
    const Value& x = values_[static_cast<size_t>(c)];
    if (x.type == kInteger) {
      v = x.i;
      return 1;
    }
    return x.type == kNull ? 0 : -1;
  }
  bool GetReal(int c, double& v) const {
    const Value& x = values_[static_cast<size_t>(c)];
    if (x.type != kReal) return false;
    v = x.r;
    return true;
  }
  int64_t IntOr(int c, int64_t fallback) const {
    Get(c, fallback);
    return fallback;
  }

  // The value types, as SQLite numbers them (SQLITE_INTEGER ... SQLITE_NULL).
  static constexpr uint8_t kInteger = 1, kReal = 2, kText = 3, kBlob = 4, kNull = 5;
  struct Value {
    uint8_t type = kNull;
    int64_t i = 0;
    double r = 0;
    const unsigned char* p = nullptr;  // text or blob bytes (valid until the next row)
    uint32_t n = 0;
  };
  // sqlite3_column_int64 of a value: REAL clamped to int64, TEXT and BLOB as sqlite3Atoi64.
  static int64_t AsInt(const Value& v) { return v.type == kInteger ? v.i : AsIntSlow(v); }
  static int64_t AsIntSlow(const Value& v);

 private:
  struct Frame;
  bool Fail(Status& status, Status why);
  bool EnterPage(uint32_t page, const unsigned char* data, Status& status);
  bool NextChild(Status& status);
  bool DecodeCell(Status& status);
  bool DecodeRecord(const unsigned char* payload, uint64_t size);

  const PageFile* file_ = nullptr;
  std::vector<int> want_;               // record column -> selected slot, or -1
  int rowid_slot_ = -1;                 // the selected slot that is the rowid (INTEGER PRIMARY KEY), or -1
  std::vector<uint8_t> real_affinity_;  // per slot: an INTEGER read converts to REAL
  bool any_real_affinity_ = false;
  std::vector<Value> values_;
  std::vector<std::unique_ptr<Frame>> stack_;
  size_t depth_ = 0;                 // frames in use
  std::vector<unsigned char> leaf_;  // the leaf page being read (when not in a frame's window)
  const unsigned char* leaf_data_ = nullptr;
  uint32_t leaf_cells_ = 0, leaf_next_ = 0, leaf_hdr_ = 0;
  std::vector<unsigned char> payload_;  // a record spilled to overflow pages, reassembled
  std::vector<unsigned char> overflow_page_;
  // What a serial type reads as, decided once per plan (StepKindOf): each row's values are then
  // read with one switch and no loop over their bytes.
  enum class StepKind : uint8_t {
    kNull,
    kInt8,
    kInt16,
    kInt24,
    kInt32,
    kInt48,
    kInt64,
    kReal,
    kZero,
    kOne,
    kText,
    kBlob
  };
  static StepKind StepKindOf(uint64_t type);
  static void DecodeStep(Value& v, StepKind kind, const unsigned char* p, uint32_t length);
  // Plans of the records read: the header bytes read (the key) and each wanted value's kind and
  // place. A record whose header starts with a plan's key has that plan; rows of a
  // table repeat a few headers (the same types, so the same offsets), and a few plans are kept.
  struct Step {
    int slot;
    uint32_t offset, length;
    StepKind kind;
  };
  struct Plan {
    std::vector<unsigned char> key;
    std::vector<Step> steps;
    uint64_t end = 0;    // where the last value read ends
    bool exact = false;  // the whole header was read: the record ends at `end`
  };
  static constexpr size_t kPlans = 16;
  const Plan* FindPlan(const unsigned char* payload, uint64_t size);
  std::vector<Plan> plans_;
  size_t last_plan_ = 0, next_plan_ = 0;
  uint64_t pages_entered_ = 0;
  bool done_ = false;
};

}  // namespace tg::internal
