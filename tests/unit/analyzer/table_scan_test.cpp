// TableScan (analyzer/sqlite/table_scan.h) reads an SQLite table from the file's pages: every
// row and every read must equal what SQLite's own `SELECT columns FROM table` gives, on page
// sizes from 512 to 65536 B, deep trees, records spilled to overflow pages, every serial type,
// text and reals read as integers, columns added by ALTER TABLE, rowid aliases, REAL affinity.
// Tables SQLite must read (WITHOUT ROWID, defaults, WAL) are declined; a damaged file is an
// error or odd values, never a read out of bounds (ci/sanitize.sh runs this under ASan).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include <sqlite3.h>

#include "analyzer/sqlite/table_scan.h"
#include "sqlite_test_util.h"
#include "temp_file.h"

namespace tg {
namespace {

using internal::Db;
using internal::PageFile;
using internal::Stmt;
using internal::TableScan;
using testing::ExecSql;
using testing::TempPath;

struct ScanResult {
  bool usable = false;
  size_t rows = 0;
  Status status;
};

// Scans `table` both ways and compares every read of every row; `compare` false only counts.
ScanResult ScanAndCompare(const std::string& path, const std::string& table,
                          const std::vector<std::string_view>& columns, bool compare = true) {
  ScanResult out;
  Db db;
  EXPECT_TRUE(db.Open(path, path, SQLITE_OPEN_READONLY).ok());
  EXPECT_TRUE(db.Exec("BEGIN", "begin").ok());
  PageFile file;
  EXPECT_TRUE(file.Open(path, path).ok());
  TableScan scan;
  Status s = scan.Open(db, file, table, columns, out.usable);
  if (!s.ok()) {
    out.status = s;
    return out;
  }
  if (!out.usable) return out;
  // The reference: SQLite, with NULL for a column the table lacks.
  std::string sql = "SELECT ";
  std::unordered_set<std::string> have;
  EXPECT_TRUE(internal::ColumnNames(db, table, have).ok());
  for (size_t i = 0; i < columns.size(); ++i)
    sql += (i ? ", " : "") + (have.count(std::string(columns[i])) ? internal::Quote(columns[i]) : std::string("NULL"));
  sql += " FROM " + internal::Quote(table);
  Stmt q;
  EXPECT_TRUE(q.Prepare(db, sql).ok());
  Status qs;
  while (scan.Next(out.status)) {
    ++out.rows;
    if (!compare) continue;
    EXPECT_TRUE(q.Next(qs)) << "the scan has more rows than SQLite: row " << out.rows;
    for (int c = 0; c < static_cast<int>(columns.size()); ++c) {
      SCOPED_TRACE("row " + std::to_string(out.rows) + " column " + std::string(columns[c]));
      int64_t a = -1, b = -1;
      EXPECT_EQ(scan.GetInteger(c, a), q.GetInteger(c, b));
      EXPECT_EQ(a, b);
      double x = -1, y = -1;
      EXPECT_EQ(scan.GetReal(c, x), q.GetReal(c, y));
      EXPECT_EQ(std::memcmp(&x, &y, sizeof x), 0) << x << " vs " << y;
      EXPECT_EQ(scan.IsNull(c), q.IsNull(c));
      EXPECT_EQ(scan.Int(c), q.Int(c));
      EXPECT_EQ(scan.IntOr(c, 77), q.IntOr(c, 77));
      a = b = -1;
      EXPECT_EQ(scan.Get(c, a), q.Get(c, b));
      EXPECT_EQ(a, b);
    }
  }
  if (compare && out.status.ok()) {
    EXPECT_FALSE(q.Next(qs)) << "SQLite has more rows than the scan";
  }
  return out;
}

// ScanAndCompare of table t, which must be usable and read without an error: the rows read.
size_t ScanAllRows(const std::string& path, const std::vector<std::string_view>& columns) {
  ScanResult r = ScanAndCompare(path, "t", columns);
  EXPECT_TRUE(r.usable);
  EXPECT_TRUE(r.status.ok()) << r.status.message();
  return r.rows;
}

std::string NewDb(const std::string& name, int page_size) {
  std::string path = TempPath(name);
  std::filesystem::remove(path);
  ExecSql(path, "PRAGMA page_size = " + std::to_string(page_size) + "; PRAGMA journal_mode = DELETE;");
  return path;
}

// A database opened both ways: SQLite for the schema, the file for the pages (declared first:
// it closes after SQLite, table_scan.h).
struct Opened {
  PageFile file;
  Db db;
  explicit Opened(const std::string& path) {
    EXPECT_TRUE(db.Open(path, path, SQLITE_OPEN_READONLY).ok());
    EXPECT_TRUE(file.Open(path, path).ok());
  }
  // Opens a scan of table t; false when it is not usable.
  bool Scan(TableScan& scan, const std::vector<std::string_view>& columns) {
    bool usable = false;
    EXPECT_TRUE(scan.Open(db, file, "t", columns, usable).ok());
    return usable;
  }
};

// Integers of every width and sign, reals, texts and blobs that convert in every way SQLite does.
const char* const kOddValues[] = {"NULL",
                                  "0",
                                  "1",
                                  "-1",
                                  "127",
                                  "-128",
                                  "128",
                                  "32767",
                                  "-32769",
                                  "8388607",
                                  "-8388609",
                                  "2147483647",
                                  "-2147483649",
                                  "140737488355327",
                                  "-140737488355329",
                                  "9223372036854775807",
                                  "-9223372036854775808",
                                  "1.5",
                                  "-2.5",
                                  "1e300",
                                  "-1e300",
                                  "9.3e18",
                                  "-9.3e18",
                                  "4503599627370497.0",
                                  "0.0",
                                  "-0.0",
                                  "'12'",
                                  "'  -7x'",
                                  "'1e3'",
                                  "'99999999999999999999'",
                                  "'-9223372036854775808'",
                                  "'9223372036854775808'",
                                  "'9223372036854775807'",
                                  "'-9223372036854775809'",
                                  "''",
                                  "'+0042'",
                                  "'abc'",
                                  "x'3132'",
                                  "x''",
                                  "'00000000000000000000000000012'",
                                  "'1234567890123456789'",
                                  "'-1234567890123456789 '",
                                  "' 9223372036854775806'"};

TEST(TableScan, EveryValueTypeAndConversionAsSqlite) {
  for (int page : {512, 4096, 65536}) {
    SCOPED_TRACE("page size " + std::to_string(page));
    const std::string path = NewDb("odd_" + std::to_string(page), page);
    std::string sql = "CREATE TABLE t (a INTEGER, b, c REAL, d TEXT, e INTEGER NOT NULL); BEGIN;";
    int n = 0;
    for (const char* x : kOddValues)
      for (const char* y : kOddValues) {
        if (++n % 3) continue;  // a third of the pairs keeps the test fast; every value is in each column
        sql += std::string("INSERT INTO t VALUES (") + x + ", " + y + ", " + x + ", " + y + ", 5);";
      }
    for (const char* x : kOddValues)
      sql += std::string("INSERT INTO t VALUES (") + x + ", " + x + ", " + x + ", " + x + ", 6);";
    ExecSql(path, sql + "COMMIT;");
    EXPECT_GT(ScanAllRows(path, {"a", "b", "c", "d", "e", "missing"}), 500u);
  }
}

TEST(TableScan, DeepTreesOverflowPagesAndDeletedRows) {
  for (int page : {512, 1024, 4096}) {
    SCOPED_TRACE("page size " + std::to_string(page));
    const std::string path = NewDb("deep_" + std::to_string(page), page);
    // A long text before the wanted columns puts them on overflow pages in some rows.
    ExecSql(path,
            "CREATE TABLE t (start INTEGER, pad TEXT, x INTEGER, y REAL); BEGIN;"
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000) "
            "INSERT INTO t SELECT i * 1000003, CASE WHEN i % 97 = 0 THEN printf('%.*c', i % 9000, 'z') ELSE NULL END, "
            "i * i - 5000000, i / 7.0 FROM n;"
            "DELETE FROM t WHERE start % 13 = 0; COMMIT;");
    EXPECT_EQ(ScanAllRows(path, {"y", "x", "start", "pad"}), 20000u - 20000u / 13);
  }
}

TEST(TableScan, ColumnsAddedLaterRowidAliasAndRealAffinity) {
  const std::string path = NewDb("altered", 4096);
  ExecSql(path,
          "CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER, f DOUBLE); "
          "INSERT INTO t (v, f) VALUES (1, 2), (3, 4.5), (NULL, NULL); "
          "ALTER TABLE t ADD COLUMN later INTEGER; INSERT INTO t (v, f, later) VALUES (7, 8, 9); "
          "INSERT INTO t (id, v) VALUES (1000, 10);");
  EXPECT_EQ(ScanAllRows(path, {"later", "id", "f", "v"}), 5u);
  // INTEGER PRIMARY KEY DESC is no alias of the rowid (SQLite indexes it instead).
  const std::string desc = NewDb("desc", 4096);
  ExecSql(desc, "CREATE TABLE t (id INTEGER PRIMARY KEY DESC, v); INSERT INTO t VALUES (50, 1), (7, 2), (-3, 3);");
  EXPECT_EQ(ScanAllRows(desc, {"id", "v"}), 3u);
}

// Pages with reserved bytes at their end (an extension's space): the usable size, not the page
// size, bounds the cells and the overflow arithmetic.
TEST(TableScan, ReservedBytesAtThePagesEnd) {
  for (int reserve : {8, 32, 100}) {
    SCOPED_TRACE("reserved " + std::to_string(reserve));
    const std::string path = NewDb("reserved_" + std::to_string(reserve), 1024);
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    int n = reserve;
    ASSERT_EQ(sqlite3_file_control(db, "main", SQLITE_FCNTL_RESERVE_BYTES, &n), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db,
                           "CREATE TABLE t (a INTEGER, pad TEXT, b REAL); BEGIN;"
                           "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000) "
                           "INSERT INTO t SELECT i, printf('%.*c', (i * 37) % 2500, 'r'), i / 3.0 FROM n; COMMIT;",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
    std::ifstream in(path, std::ios::binary);
    char header[100];
    in.read(header, sizeof header);
    ASSERT_EQ(static_cast<unsigned char>(header[20]), reserve);  // the file really has them
    EXPECT_EQ(ScanAllRows(path, {"b", "pad", "a"}), 3000u);
  }
}

// Records SQLite reads in its own way, made by patching a file: serial types 10 and 11 (NULL), a
// stored NaN (NULL), and values that end short of the record (damage when the whole header is
// read, not otherwise). The scan gives what SQLite gives, errors included.
TEST(TableScan, PatchedRecordsReadAsSqliteReadsThem) {
  const std::string path = NewDb("patched_source", 4096);
  ExecSql(path, "CREATE TABLE t (a, b, c); INSERT INTO t VALUES (NULL, 'QQQQQQQ', 1.5), (5, 'WWWWWWW', 6);");
  std::ifstream in(path, std::ios::binary);
  const std::string original((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Row 1: header 04 00 1b 07, then 'QQQQQQQ' and 1.5; row 2: header 04 01 1b 01, then 05 'WWWWWWW' 06.
  const size_t at1 = original.find(std::string("\x04\x00\x1b\x07QQQQQQQ", 11));
  const size_t at2 = original.find(std::string("\x04\x01\x1b\x01\x05WWWWWWW", 12));
  ASSERT_NE(at1, std::string::npos);
  ASSERT_NE(at2, std::string::npos);
  const char nan[8] = {'\x7f', '\xf8', 0, 0, 0, 0, 0, 0};
  struct Patch {
    const char* what;
    size_t at;
    std::string bytes;
  };
  const Patch patches[] = {
      {"serial type 10", at1 + 1, "\x0a"},
      {"serial type 11", at1 + 1, "\x0b"},
      {"a stored NaN", at1 + 11, std::string(nan, 8)},
      {"values short of the record, whole header read", at2 + 2, "\x19"},
      {"a header longer than the record", at2, "\x7f"},
  };
  for (const Patch& p : patches) {
    SCOPED_TRACE(p.what);
    std::string bytes = original;
    bytes.replace(p.at, p.bytes.size(), p.bytes);
    const std::string patched = TempPath("patched");
    std::ofstream(patched, std::ios::binary | std::ios::trunc) << bytes;
    for (const std::vector<std::string_view>& columns :
         {std::vector<std::string_view>{"a", "b", "c"}, std::vector<std::string_view>{"a"}}) {
      // Both readers, every read of every row, and whether each ended in an error.
      auto read_all = [&](auto& q, Status& s) {
        std::vector<std::string> rows;
        while (q.Next(s)) {
          std::string row;
          for (int c = 0; c < static_cast<int>(columns.size()); ++c) {
            int64_t v = 0;
            double r = 0;
            const int got = q.GetInteger(c, v);
            const bool real = q.GetReal(c, r);
            row += std::to_string(got) + ":" + std::to_string(v) + ":" + std::to_string(real) + ":" +
                   std::to_string(r) + ":" + std::to_string(q.IsNull(c)) + ":" + std::to_string(q.Int(c)) + " ";
          }
          rows.push_back(row);
        }
        return rows;
      };
      Opened opened(patched);
      TableScan scan;
      ASSERT_TRUE(opened.Scan(scan, columns));
      std::string sql = "SELECT ";
      for (size_t i = 0; i < columns.size(); ++i) sql += (i ? ", " : "") + std::string(columns[i]);
      Stmt q;
      ASSERT_TRUE(q.Prepare(opened.db, sql + " FROM t").ok());
      Status scan_status, sqlite_status;
      EXPECT_EQ(read_all(scan, scan_status), read_all(q, sqlite_status)) << columns.size() << " columns";
      EXPECT_EQ(scan_status.ok(), sqlite_status.ok()) << scan_status.message() << " / " << sqlite_status.message();
    }
  }
}

TEST(TableScan, DeclinesWhatOnlySqliteCanRead) {
  const std::string path = NewDb("declined", 4096);
  ExecSql(path,
          "CREATE TABLE nr (k INTEGER PRIMARY KEY, v) WITHOUT ROWID; INSERT INTO nr VALUES (1, 2);"
          "CREATE TABLE d (a, b DEFAULT 5); INSERT INTO d (a) VALUES (1);"
          "CREATE TABLE g (a, b AS (a * 2)); INSERT INTO g (a) VALUES (1);"
          "CREATE TABLE plain (a); INSERT INTO plain VALUES (1);");
  EXPECT_FALSE(ScanAndCompare(path, "nr", {"k", "v"}).usable);
  EXPECT_FALSE(ScanAndCompare(path, "d", {"a", "b"}).usable);
  EXPECT_TRUE(ScanAndCompare(path, "d", {"a"}).usable);  // the default is not read
  EXPECT_FALSE(ScanAndCompare(path, "g", {"a"}).usable);
  EXPECT_FALSE(ScanAndCompare(path, "no_such_table", {"a"}).usable);
  EXPECT_TRUE(ScanAndCompare(path, "plain", {"a"}).usable);

  // WAL mode: the pages may be in the WAL file, not in the database file.
  ExecSql(path, "PRAGMA journal_mode = WAL;");
  PageFile wal;
  ASSERT_TRUE(wal.Open(path, path).ok());
  EXPECT_FALSE(wal.usable());
}

// Damage anywhere in the file: an error or some values, never a read out of bounds or a hang.
TEST(TableScan, DamagedPagesNeverReadOutOfBounds) {
  const std::string path = NewDb("damaged_source", 512);
  ExecSql(path,
          "CREATE TABLE t (start INTEGER, pad TEXT, x INTEGER); BEGIN;"
          "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000) "
          "INSERT INTO t SELECT i, CASE WHEN i % 50 = 0 THEN printf('%.*c', 2000, 'z') ELSE 'p' END, -i FROM n;"
          "COMMIT;");
  std::ifstream in(path, std::ios::binary);
  const std::string original((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(original.size(), 100000u);
  std::mt19937 rng(29);
  const std::string damaged = TempPath("damaged");
  int failed = 0, usable = 0;
  for (int trial = 0; trial < 300; ++trial) {
    std::string bytes = original;
    const int flips = 1 + trial % 8;
    for (int f = 0; f < flips; ++f) {
      // Anywhere; the header in one trial of eight (damage there mostly makes the file one SQLite
      // reads itself or rejects).
      std::uniform_int_distribution<size_t> at(trial % 8 == 0 ? 0 : 100, bytes.size() - 1);
      bytes[at(rng)] = static_cast<char>(rng());
    }
    std::ofstream(damaged, std::ios::binary | std::ios::trunc) << bytes;
    Db db;
    if (!db.Open(damaged, damaged, SQLITE_OPEN_READONLY).ok()) continue;
    PageFile file;
    ASSERT_TRUE(file.Open(damaged, damaged).ok());
    TableScan scan;
    bool ok = false;
    if (!scan.Open(db, file, "t", {"start", "pad", "x"}, ok).ok() || !ok) continue;
    ++usable;
    Status s;
    size_t rows = 0;
    while (scan.Next(s)) {
      ++rows;
      int64_t v;
      scan.Get(0, v), scan.Get(1, v), scan.Get(2, v);
    }
    if (!s.ok()) {
      ++failed;
      EXPECT_NE(s.message().find("not a valid SQLite database"), std::string::npos) << s.message();
    }
    EXPECT_LE(rows, 3000u * 4);
  }
  EXPECT_GT(usable, 100);
  EXPECT_GT(failed, 10);  // most damage to the tree's pages is seen
}

TEST(TableScan, FileCutShortUnderAScanIsAnError) {
  const std::string path = NewDb("cut", 4096);
  ExecSql(path,
          "CREATE TABLE t (a); BEGIN; WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 50000) "
          "INSERT INTO t SELECT i FROM n; COMMIT;");
  Opened opened(path);
  TableScan scan;
  ASSERT_TRUE(opened.Scan(scan, {"a"}));
  std::filesystem::resize_file(path, 8192);
  Status s;
  size_t rows = 0;
  while (scan.Next(s)) ++rows;
  EXPECT_LT(rows, 50000u);
  EXPECT_FALSE(s.ok());
}

// Two scans kept to the root's first and last children read every row once, in order.
TEST(TableScan, SplitAtTheRootReadsEveryRowOnceInOrder) {
  const std::string path = NewDb("split", 1024);
  ExecSql(path,
          "CREATE TABLE t (a INTEGER); BEGIN; WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE "
          "i < 30000) INSERT INTO t SELECT i * 3 FROM n; DELETE FROM t WHERE a % 7 = 0; COMMIT;");
  Opened opened(path);
  std::vector<int64_t> want;
  for (int64_t i = 1; i <= 30000; ++i)
    if (i * 3 % 7 != 0) want.push_back(i * 3);
  TableScan whole;
  ASSERT_TRUE(opened.Scan(whole, {"a"}));
  const size_t n = whole.RootChildren();
  ASSERT_GE(n, 3u);
  for (size_t keep : {size_t{1}, n / 2, n - 1}) {
    TableScan first, second;
    ASSERT_TRUE(opened.Scan(first, {"a"}) && opened.Scan(second, {"a"}));
    first.KeepRootChildren(0, keep);
    second.KeepRootChildren(keep, n);
    std::vector<int64_t> rows;
    Status s;
    while (first.Next(s)) rows.push_back(first.Int(0));
    const size_t split_at = rows.size();
    while (second.Next(s)) rows.push_back(second.Int(0));
    ASSERT_TRUE(s.ok());
    EXPECT_GT(split_at, 0u);
    EXPECT_LT(split_at, rows.size());
    EXPECT_EQ(rows, want) << "split after " << keep << " of " << n << " children";
  }
}

}  // namespace
}  // namespace tg
