#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <iterator>
#include <numeric>
#include <random>
#include <tuple>
#include <utility>
#include <vector>

#include "analyzer/model/move_columns.h"
#include "tracegate/analyzer/model.h"

namespace tg {
namespace {

TEST(StringTable, InternReturnsSameIdForSameString) {
  StringTable t;
  StringId a = t.Intern("gemm");
  EXPECT_EQ(a, t.Intern("gemm"));
  EXPECT_NE(a, t.Intern("relu"));
  EXPECT_EQ(t.View(a), "gemm");
  EXPECT_EQ(t.Intern(""), StringTable::kEmpty);
  EXPECT_EQ(t.Intern(std::string_view()), StringTable::kEmpty);  // data() is null: no memcpy from it
}

// Repeated names are answered from the recent-lookup slots; they must give the first id even
// when many other names share a slot in between.
TEST(StringTable, RepeatedNamesKeepTheirIdsAmongManyOthers) {
  StringTable t;
  const std::string long_prefix(120, 'k');  // kernel names share long prefixes
  std::vector<StringId> first;
  for (int i = 0; i < 5000; ++i) first.push_back(t.Intern(long_prefix + std::to_string(i)));
  for (int round = 0; round < 3; ++round)
    for (int i = 4999; i >= 0; --i) ASSERT_EQ(t.Intern(long_prefix + std::to_string(i)), first[i]) << i;
  EXPECT_EQ(t.size(), 5001u);
  // After Replace, the new text is a new name for Intern (as without the slots).
  StringId a = t.Intern("abc");
  t.Replace(a, "xyz");
  EXPECT_NE(t.Intern("xyz"), a);
  EXPECT_EQ(t.Intern("abc"), a);
}

TEST(StringTable, ViewsStayValidAcrossManyInserts) {
  StringTable t;
  StringId first = t.Intern("first");
  for (int i = 0; i < 200000; ++i) t.Intern("kernel_" + std::to_string(i));
  EXPECT_EQ(t.View(first), "first");
  EXPECT_EQ(t.View(t.Find("kernel_199999")), "kernel_199999");
}

// The column lists generate rows and tables that agree: one table column per row field, and
// Add/Row carry every column (sparse ones included) in list order.
template <class Table>
void ExpectRowRoundTrip(const typename Table::RowType& row) {
  using Row = typename Table::RowType;
  Table a, b;
  a.Reserve(2);
  a.Add(Row{});
  a.Add(row);
  b.Add(a.Row(0));
  b.Add(a.Row(1));
  EXPECT_EQ(std::tuple_size_v<decltype(a.Columns())>, std::size(Row::kColumnNames));
  EXPECT_EQ(a.size(), 2u);
  EXPECT_TRUE(a.Columns() == b.Columns());
}

TEST(ColumnLists, EveryTableRoundTripsEveryColumn) {
  ExpectRowRoundTrip<KernelTable>(Kernel{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18});
  ExpectRowRoundTrip<MemcpyTable>(Memcpy{1, 2, 3, 4, 5, 6, CopyKind::kDtoH, MemKind::kPinned, MemKind::kDevice, 7});
  ExpectRowRoundTrip<MemsetTable>(Memset{1, 2, 3, 4, 5, 6, 7, MemKind::kManaged, 8});
  ExpectRowRoundTrip<SyncTable>(Sync{1, 2, 3, 4, 5, SyncKind::kStreamSync, 6, 7});
  ExpectRowRoundTrip<ApiTable>(ApiCall{1, 2, 3, ApiKind::kDriver, 4, 5, 6, 7});
  ExpectRowRoundTrip<RangeTable>(Range{1, 2, 3, 4, 5, 6, 7, true, 8});
  ExpectRowRoundTrip<SampleTable>(Sample{1, 2, 3.5, 4.5, 5.5, 6.5, 7.5});
}

TEST(ColumnLists, RowDefaultsAndSparseFillsAreTheListed) {
  const Kernel k;
  EXPECT_EQ(k.device, -1);
  EXPECT_EQ(k.grid_y, 0);  // the row default; the table stores 1 as its common value
  EXPECT_EQ(k.graph_id, kUnknownId);
  KernelTable t;
  t.Add(Kernel{.grid_y = 1, .graph_id = kUnknownId});
  EXPECT_EQ(t.grid_y.stored(), 0u);
  EXPECT_EQ(t.graph_id.stored(), 0u);
  EXPECT_EQ(t.shared_dynamic.stored(), 0u);
}

// Column indexes and names come from the same list; ColumnCheck finds a column left out.
static_assert(Kernel::ColumnIndex(&Kernel::start) == 0);
static_assert(Kernel::kColumnNames[Kernel::ColumnIndex(&Kernel::graph_node_id)] == "graph_node_id");
static_assert(Range::kColumnNames[Range::ColumnIndex(&Range::on_gpu)] == "on_gpu");
static_assert(!ColumnCheck<Sync>().With(&Sync::start, &Sync::end).All());
static_assert(ColumnCheck<Sample>()
                  .With(&Sample::time, &Sample::device, &Sample::temperature_c, &Sample::sm_clock_mhz)
                  .With(&Sample::mem_clock_mhz, &Sample::memory_used_mb, &Sample::power_w)
                  .All());

TEST(KernelTable, RowRoundTripsEveryColumn) {
  KernelTable kt;
  Kernel k;
  k.start = 10;
  k.end = 20;
  k.name = 3;
  k.device = 1;
  k.stream = 7;
  k.correlation = 99;
  k.grid_x = 4;
  k.block_x = 128;
  k.registers = 32;
  k.shared_static = 1024;
  k.graph_id = 5;
  kt.Add(k);
  Kernel r = kt.Row(0);
  EXPECT_EQ(r.start, 10);
  EXPECT_EQ(r.end, 20);
  EXPECT_EQ(r.stream, 7);
  EXPECT_EQ(r.correlation, 99);
  EXPECT_EQ(r.grid_x, 4);
  EXPECT_EQ(r.block_x, 128);
  EXPECT_EQ(r.graph_id, 5);
}

TEST(SparseColumn, StoresOnlyTheRowsThatDiffer) {
  SparseColumn<int64_t> c(kUnknownId);
  for (int i = 0; i < 1000; ++i) c.push_back(i % 100 == 7 ? i : kUnknownId);  // rows 7, 107, ..., 907
  EXPECT_EQ(c.size(), 1000u);
  EXPECT_EQ(c.stored(), 10u);
  EXPECT_EQ(c[0], kUnknownId);
  EXPECT_EQ(c[7], 7);
  EXPECT_EQ(c[907], 907);
  EXPECT_EQ(c[999], kUnknownId);
}

TEST(SparseColumn, TurnsDenseWhenMostRowsDiffer) {
  SparseColumn<int64_t> c(kUnknownId), same(kUnknownId);
  // Every row a graph launch: past 64 exceptions that are over half of the rows, one value per row.
  for (int i = 0; i < 200; ++i) c.push_back(i);
  EXPECT_EQ(c.stored(), 200u);
  for (int i = 0; i < 200; ++i) ASSERT_EQ(c[static_cast<size_t>(i)], i);
  c.push_back(kUnknownId);
  EXPECT_EQ(c[200], kUnknownId);
  for (int i = 0; i < 200; ++i) same.push_back(i);
  same.push_back(kUnknownId);
  EXPECT_TRUE(c == same);  // equality is by rows, whatever the representation
}

// Every pairing of sparse and dense columns: the rows after Append are the two inputs' rows.
TEST(SparseColumn, AppendAcrossRepresentationsKeepsEveryRow) {
  auto make = [](int rows, int every, int32_t offset) {  // `every`-th row differs from the fill 1
    SparseColumn<int32_t> c(1);
    std::vector<int32_t> plain;
    for (int i = 0; i < rows; ++i) {
      const int32_t v = i % every == 0 ? offset + i : 1;
      c.push_back(v);
      plain.push_back(v);
    }
    return std::make_pair(std::move(c), plain);
  };
  for (int a_every : {1, 50}) {  // 1: every row differs (dense), 50: sparse
    for (int b_every : {1, 50}) {
      auto [a, expect] = make(300, a_every, 1000);
      auto [b, tail] = make(200, b_every, 5000);
      EXPECT_EQ(a.stored(), a_every == 1 ? 300u : 6u);
      expect.insert(expect.end(), tail.begin(), tail.end());
      a.Append(b);
      ASSERT_EQ(a.size(), expect.size());
      for (size_t i = 0; i < expect.size(); ++i)
        ASSERT_EQ(a[i], expect[i]) << a_every << "/" << b_every << " row " << i;
      EXPECT_EQ(b.size(), 0u);
    }
  }
  // 4-byte values turn dense past a third of the rows: 12 bytes per stored row against 4.
  SparseColumn<int32_t> c(0);
  for (int i = 0; i < 300; ++i) c.push_back(i % 2 == 0 ? 7 : 0);  // half the rows differ
  EXPECT_EQ(c.stored(), 300u);
}

TEST(SparseColumn, MapFromChangesOnlyTheRowsFromThere) {
  for (int dense = 0; dense < 2; ++dense) {
    SparseColumn<uint32_t> c(0);
    const int rows = dense ? 200 : 10;  // 200 rows of 1..200 turn dense; 10 with two set stay sparse
    for (int i = 0; i < rows; ++i) c.push_back(dense ? static_cast<uint32_t>(i + 1) : (i == 2 || i == 7 ? 5u : 0u));
    c.MapFrom(5, [](uint32_t v) { return v == 0 ? 0 : v + 100; });
    if (dense) {
      EXPECT_EQ(c[4], 5u);    // before row 5: unchanged
      EXPECT_EQ(c[5], 106u);  // 6 + 100
      EXPECT_EQ(c[199], 300u);
    } else {
      EXPECT_EQ(c.stored(), 2u);
      EXPECT_EQ(c[2], 5u);
      EXPECT_EQ(c[7], 105u);
      EXPECT_EQ(c[8], 0u);
    }
  }
}

TEST(SparseColumn, AppendKeepsRowsAndEmptiesTheSource) {
  SparseColumn<int64_t> a(kUnknownId), b(kUnknownId);
  a.push_back(kUnknownId);
  a.push_back(5);
  b.push_back(9);
  b.push_back(kUnknownId);
  a.Append(b);
  EXPECT_EQ(a.size(), 4u);
  EXPECT_EQ(a[1], 5);
  EXPECT_EQ(a[2], 9);
  EXPECT_EQ(a[3], kUnknownId);
  EXPECT_EQ(b.size(), 0u);
  EXPECT_EQ(b.stored(), 0u);
  SparseColumn<int64_t> other(kUnknownId);
  other.push_back(kUnknownId);
  EXPECT_FALSE(a == other);
}

TEST(CodedColumn, StoresTwoBytesARowAndReadsEveryValueBack) {
  CodedColumn<int64_t> c;
  std::vector<int64_t> plain;
  // Four streams in turn, then 40 threads' ids (past the scanned dictionary: the hash map).
  for (int i = 0; i < 1000; ++i) plain.push_back(7 + i % 4);
  for (int i = 0; i < 1000; ++i) plain.push_back(int64_t{1} << 40 | (i * 7919) % 40);
  plain.push_back(kUnknownId);
  for (int64_t v : plain) c.push_back(v);
  ASSERT_EQ(c.size(), plain.size());
  EXPECT_EQ(c.stored(), 4u + 40u + 1u);  // distinct values
  for (size_t i = 0; i < plain.size(); ++i) ASSERT_EQ(c[i], plain[i]) << i;
  EXPECT_TRUE(std::equal(c.begin(), c.end(), plain.begin(), plain.end()));
  c.set(3, 99);  // a new value, and one it has
  c.set(4, 8);
  EXPECT_EQ(c[3], 99);
  EXPECT_EQ(c[4], 8);
  EXPECT_EQ(c[5], plain[5]);
  EXPECT_EQ(c.size(), plain.size());
}

// 65,536 distinct values fit 16-bit codes; the next turns the column into one value per row, rows
// kept, and set / Append / MapFrom work in either form.
TEST(CodedColumn, TurnsPlainPastSixtyFiveThousandValues) {
  CodedColumn<int32_t> c;
  for (int32_t i = 0; i < 65536; ++i) c.push_back(i * 3);
  EXPECT_EQ(c.stored(), 65536u);
  c.push_back(-5);  // the 65,537th
  EXPECT_EQ(c.stored(), 65537u);
  c.push_back(6);
  ASSERT_EQ(c.size(), 65538u);
  for (int32_t i = 0; i < 65536; ++i) ASSERT_EQ(c[static_cast<size_t>(i)], i * 3);
  EXPECT_EQ(c[65536], -5);
  EXPECT_EQ(c[65537], 6);
  c.set(0, 11);
  EXPECT_EQ(c[0], 11);
  CodedColumn<int32_t> small;
  small.push_back(1);
  small.push_back(2);
  small.Append(c);  // coded + plain
  ASSERT_EQ(small.size(), 65540u);
  EXPECT_EQ(small[1], 2);
  EXPECT_EQ(small[2], 11);
  EXPECT_EQ(small[65539], 6);
  EXPECT_EQ(c.size(), 0u);
  small.MapFrom(65538, [](int32_t v) { return v + 1; });
  EXPECT_EQ(small[65537], 65535 * 3);
  EXPECT_EQ(small[65538], -4);
  EXPECT_EQ(small[65539], 7);
}

TEST(CodedColumn, AppendCodedToCodedMergesDictionaries) {
  CodedColumn<int64_t> a, b, expect;
  for (int64_t v : {5, 6, 5}) a.push_back(v), expect.push_back(v);
  for (int64_t v : {6, 9, 9}) b.push_back(v), expect.push_back(v);
  a.Append(b);
  EXPECT_TRUE(a == expect);
  EXPECT_EQ(a.stored(), 3u);
  EXPECT_EQ(b.size(), 0u);
  a.MapFrom(1, [](int64_t v) { return v * 10; });
  EXPECT_EQ(a[0], 5);
  EXPECT_EQ(a[1], 60);
  EXPECT_EQ(a[5], 90);
}

// Appending a whole column gives what appending its rows one by one gives, in every pair of
// forms: coded into coded (the values coded once each), into a dictionary with no room left for
// them (plain from the 65,537th value), plain into coded and coded into plain.
TEST(CodedColumn, AppendGivesWhatPushingEachRowGives) {
  auto make = [](int32_t first, int32_t distinct, size_t rows) {
    CodedColumn<int32_t> c;
    for (size_t i = 0; i < rows; ++i)
      c.push_back(first + static_cast<int32_t>(i * 7919 % static_cast<size_t>(distinct)));
    return c;
  };
  struct Case {
    int32_t a_first, a_distinct, b_first, b_distinct;
  };
  for (const Case& k : {Case{0, 4, 2, 6}, Case{0, 40, 100, 40}, Case{0, 60000, 50000, 20000}, Case{0, 65536, 70000, 3},
                        Case{0, 70000, 0, 5}, Case{0, 3, 0, 70000}}) {
    CodedColumn<int32_t> a = make(k.a_first, k.a_distinct, 80000), b = make(k.b_first, k.b_distinct, 80000);
    CodedColumn<int32_t> expect = make(k.a_first, k.a_distinct, 80000);
    for (int32_t v : b) expect.push_back(v);
    a.Append(b);
    EXPECT_TRUE(a == expect) << k.a_distinct << " + " << k.b_distinct;
    EXPECT_EQ(a.stored(), expect.stored()) << k.a_distinct << " + " << k.b_distinct;
    EXPECT_EQ(b.size(), 0u);
    a.push_back(k.b_first);  // the last value read back after the append
    EXPECT_EQ(a[a.size() - 1], k.b_first);
  }
}

// A wide column whose values all fit appends as 32-bit rows; a value that does not widens.
TEST(NarrowColumn, AppendKeepsFourBytesWhileEveryValueFits) {
  NarrowColumn a, wide_fitting, wide;
  a.push_back(1);
  wide_fitting.push_back(int64_t{1} << 40);
  wide_fitting.set(0, 7);  // wide now, though 7 fits
  wide_fitting.push_back(8);
  a.Append(wide_fitting);
  ASSERT_EQ(a.size(), 3u);
  EXPECT_EQ(a[1], 7);
  EXPECT_EQ(a[2], 8);
  wide.push_back(-(int64_t{1} << 35));
  a.Append(wide);
  ASSERT_EQ(a.size(), 4u);
  EXPECT_EQ(a[0], 1);
  EXPECT_EQ(a[3], -(int64_t{1} << 35));
  NarrowColumn narrow;
  narrow.push_back(kUnknownId);
  a.Append(narrow);  // narrow into wide
  EXPECT_EQ(a[4], kUnknownId);
}

TEST(NarrowColumn, KeepsFourBytesUntilAValueDoesNotFit) {
  NarrowColumn c;
  c.push_back(kUnknownId);
  c.push_back(INT32_MAX);
  c.push_back(INT32_MIN);
  EXPECT_EQ(c[0], kUnknownId);
  EXPECT_EQ(c[1], INT32_MAX);
  EXPECT_EQ(c[2], INT32_MIN);
  c.push_back(int64_t{1} << 33);  // widens, rows kept
  EXPECT_EQ(c[0], kUnknownId);
  EXPECT_EQ(c[2], INT32_MIN);
  EXPECT_EQ(c[3], int64_t{1} << 33);
  NarrowColumn d;
  d.push_back(1);
  d.push_back(2);
  d.set(0, -(int64_t{1} << 40));  // set widens too
  EXPECT_EQ(d[0], -(int64_t{1} << 40));
  EXPECT_EQ(d[1], 2);
  d.Append(c);
  ASSERT_EQ(d.size(), 6u);
  EXPECT_EQ(d[2], kUnknownId);
  EXPECT_EQ(d[5], int64_t{1} << 33);
  EXPECT_EQ(c.size(), 0u);
  const std::vector<int64_t> expect{-(int64_t{1} << 40), 2, kUnknownId, INT32_MAX, INT32_MIN, int64_t{1} << 33};
  EXPECT_TRUE(std::equal(d.begin(), d.end(), expect.begin(), expect.end()));
}

TEST(FinalizeTrace, CountsGpuWorkWithoutLaunch) {
  Trace t;
  t.api_calls.Add(ApiCall{0, 5, t.strings.Intern("cudaLaunchKernel"), ApiKind::kRuntime, 1, 1, 42, 0});
  Kernel k;
  k.start = 6;
  k.end = 9;
  k.correlation = 42;
  t.kernels.Add(k);
  k.correlation = 43;
  t.kernels.Add(k);
  FinalizeTrace(t);
  EXPECT_EQ(t.quality.Get(Quality::kUnmatchedCorrelation), 1u);
}

// Launches without a GPU record: matched per process (correlation ids are per process), the
// capture's tail excused, a later device sync or later GPU work of the process making it count.
TEST(FinalizeTrace, CountsLaunchesWithoutGpuRecordPerProcess) {
  Trace t;
  auto call = [&](const char* name, int64_t pid, int64_t corr, int32_t rv = 0) {
    t.api_calls.Add(ApiCall{0, 5, t.strings.Intern(name), ApiKind::kRuntime, pid, 1, corr, rv});
  };
  auto kernel = [&](int64_t pid, int64_t corr) {
    Kernel k;
    k.start = 6;
    k.end = 9;
    k.pid = pid;
    k.correlation = corr;
    t.kernels.Add(k);
  };
  call("cudaLaunchKernel_v7000", 10, 1);  // matched in process 10
  kernel(10, 1);
  call("cudaLaunchKernel", 11, 1);  // id 1 of process 11: the kernel of process 10 is not it
  call("cuLaunchKernelEx", 11, 2);  // matched
  kernel(11, 2);
  call("cudaLaunchKernel", 11, 3, 1);    // failed launch: no record expected
  call("cudaLaunchKernel", 11, 4);       // the tail of process 11 ...
  call("cudaLaunchHostFunc", 11, 5);     // not a GPU launch
  call("cudaLaunchKernel_ptsz", 10, 2);  // ... but process 10 synchronised the device after it
  call("cudaDeviceSynchronize_v3020", 10, 3);
  call("cudaLaunchKernel", 10, 4);  // tail of process 10
  FinalizeTrace(t);
  EXPECT_EQ(t.quality.Get(Quality::kUnmatchedLaunch), 2u);  // (11, 1) and (10, 2)
  EXPECT_TRUE(t.quality.HasErrors());
}

// A launch made while its thread captures a stream into a graph runs nothing (its work runs under
// the graph launch's id): not counted. tests/gpu/known_workload does that once (the fixture
// known_workload.db.gz, checked by tests/cli/collector/known_workload_fixture.sh). Another thread's launches
// during the capture, and launches after the capture ended, still count.
TEST(FinalizeTrace, LaunchesCapturedIntoAGraphAreNotLost) {
  Trace t;
  auto call = [&](const char* name, int64_t tid, int64_t corr, TimeNs start) {
    t.api_calls.Add(ApiCall{start, start + 1, t.strings.Intern(name), ApiKind::kRuntime, 7, tid, corr, 0});
  };
  call("cudaStreamBeginCapture_v10000", 1, 1, 10);
  call("cudaLaunchKernel_v7000", 1, 2, 11);  // captured
  call("cuLaunchKernel", 2, 3, 12);          // another thread: not captured, lost
  call("cudaStreamEndCapture_v10000", 1, 4, 13);
  call("cudaGraphLaunch_v10000", 1, 5, 14);   // the graph's kernel carries this id
  call("cudaLaunchKernel_v7000", 1, 6, 15);   // after the capture: lost
  call("cuStreamBeginCapture_v2", 1, 8, 17);  // a second capture (driver API), never ended
  call("cudaLaunchKernel_ptsz", 1, 9, 18);    // captured
  Kernel k;
  k.start = 20;
  k.end = 21;
  k.pid = 7;
  k.correlation = 5;
  t.kernels.Add(k);
  k.correlation = 10;  // later GPU work of the process: the launches before it are not the tail
  t.kernels.Add(k);
  FinalizeTrace(t);
  EXPECT_EQ(t.quality.Get(Quality::kUnmatchedLaunch), 2u);  // ids 3 and 6
}

// GPU records without a pid (Kineto) match any process; a trace without GPU records loses every launch.
TEST(FinalizeTrace, CountsLaunchesAgainstPidlessRecordsAndEmptyTables) {
  for (bool with_kernel : {true, false}) {
    Trace t;
    for (int64_t c : {7, 8, 9})
      t.api_calls.Add(ApiCall{0, 5, t.strings.Intern("cudaGraphLaunch"), ApiKind::kRuntime, 3, 1, c, 0});
    Kernel k;
    k.start = 6;
    k.end = 9;
    k.correlation = 9;  // pid unknown
    if (with_kernel) t.kernels.Add(k);
    FinalizeTrace(t);
    // With the kernel: 7 and 8 (9 is matched); without any GPU record: all three.
    EXPECT_EQ(t.quality.Get(Quality::kUnmatchedLaunch), with_kernel ? 2u : 3u);
  }
}

// The recorded ids come from the kernels, copies and memsets together, close together (a bitmap)
// or far apart (sorted): a launch is matched by a record of any of the three tables.
TEST(FinalizeTrace, MatchesLaunchesAcrossTheGpuTablesDenseOrSparse) {
  for (int64_t stride : {1, 1000000}) {
    Trace t;
    for (int64_t k = 1; k <= 5; ++k)
      t.api_calls.Add(ApiCall{k, k + 1, t.strings.Intern("cudaLaunchKernel"), ApiKind::kRuntime, 3, 1, k * stride, 0});
    Kernel kernel;
    kernel.start = 10;
    kernel.end = 11;
    kernel.correlation = 1 * stride;
    t.kernels.Add(kernel);
    Memcpy copy;
    copy.start = 12;
    copy.end = 13;
    copy.correlation = 3 * stride;
    t.memcpys.Add(copy);
    Memset set;
    set.start = 14;
    set.end = 15;
    set.correlation = 5 * stride;
    t.memsets.Add(set);
    FinalizeTrace(t);
    // 2 and 4 are lost (a later record, 5, exists); 1, 3 and 5 are matched, one in each table.
    EXPECT_EQ(t.quality.Get(Quality::kUnmatchedLaunch), 2u) << "stride " << stride;
  }
}

// Correlation ids are numbered per process: a kernel of process 2 does not match process 1's call
// with the same id; records or calls without a pid match any process.
TEST(FinalizeTrace, CountsUnmatchedCorrelationsPerProcess) {
  Trace t;
  const StringId launch = t.strings.Intern("cudaLaunchKernel");
  t.api_calls.Add(ApiCall{0, 5, launch, ApiKind::kRuntime, 1, 1, 10, 0});
  t.api_calls.Add(ApiCall{0, 5, launch, ApiKind::kRuntime, 2, 1, 11, 0});
  t.api_calls.Add(ApiCall{0, 5, launch, ApiKind::kRuntime, kUnknownId, 1, 12, 0});
  auto kernel = [&](int64_t pid, int64_t corr) {
    Kernel k;
    k.start = 6;
    k.end = 9;
    k.pid = pid;
    k.correlation = corr;
    t.kernels.Add(k);
  };
  kernel(1, 10);           // matched
  kernel(2, 10);           // id 10 belongs to process 1: unmatched
  kernel(2, 11);           // matched
  kernel(kUnknownId, 11);  // no pid: matches process 2's call
  kernel(1, 12);           // the call without a pid matches
  kernel(1, 13);           // no call at all: unmatched
  FinalizeTrace(t);
  EXPECT_EQ(t.quality.Get(Quality::kUnmatchedCorrelation), 2u);
}

// Narrow id ranges use a bitmap, wide ones a sorted vector: both count the same GPU rows.
TEST(FinalizeTrace, CountsUnmatchedCorrelationsForNarrowAndWideIds) {
  for (int64_t stride : {int64_t{1}, int64_t{1} << 40}) {
    Trace t;
    const StringId launch = t.strings.Intern("cudaLaunchKernel");
    for (int64_t i = 0; i < 100; ++i)  // API correlations 1000, 1000 + stride, ..., even i only
      if (i % 2 == 0) t.api_calls.Add(ApiCall{0, 5, launch, ApiKind::kRuntime, 1, 1, 1000 + i * stride, 0});
    t.api_calls.Add(ApiCall{0, 5, launch, ApiKind::kRuntime, 1, 1, kUnknownId, 0});
    Kernel k;
    for (int64_t i = -1; i <= 100; ++i) {  // 999 - stride (below), every i, 1000 + 100 * stride (above)
      k.correlation = 1000 + i * stride;
      t.kernels.Add(k);
    }
    k.correlation = kUnknownId;  // never counted
    t.kernels.Add(k);
    Memcpy m;
    m.correlation = 1000 + 3 * stride;  // odd: unmatched
    t.memcpys.Add(m);
    FinalizeTrace(t);
    // Kernels: i = -1, the 50 odd i in 0..99, and i = 100 -> 52; plus the copy -> 53.
    EXPECT_EQ(t.quality.Get(Quality::kUnmatchedCorrelation), 53u) << "stride " << stride;
  }
}

TEST(FinalizeTrace, ComputesRangeNestingPerThread) {
  Trace t;
  t.ranges.Add(Range{0, 100, t.strings.Intern("iteration"), 0, 1, 1, 0, false, -1});
  t.ranges.Add(Range{10, 20, t.strings.Intern("pre"), 0, 1, 1, 0, false, -1});
  t.ranges.Add(Range{12, 15, t.strings.Intern("inner"), 0, 1, 1, 0, false, -1});
  t.ranges.Add(Range{30, 40, t.strings.Intern("infer"), 0, 1, 1, 0, false, -1});
  t.ranges.Add(Range{30, 40, t.strings.Intern("other thread"), 0, 1, 2, 0, false, -1});
  FinalizeTrace(t);
  EXPECT_EQ(t.ranges.depth[0], 0);
  EXPECT_EQ(t.ranges.depth[1], 1);
  EXPECT_EQ(t.ranges.depth[2], 2);
  EXPECT_EQ(t.ranges.depth[3], 1);
  EXPECT_EQ(t.ranges.depth[4], 0);
}

// A tree of ranges written as a profiler writes them (each after what it encloses), on one thread
// (no lanes to number) and the same tree again on a second thread or on a GPU stream (lanes): each
// range's depth is its number of ancestors, counted as the tree was made, and the order is the
// rows by (lane, start, longer first).
TEST(FinalizeTrace, NestsOneThreadAsItNestsSeveral) {
  struct Made {
    TimeNs start, end;
    int32_t depth;
  };
  std::mt19937 rng(3);
  std::vector<Made> made;
  TimeNs now = 0;
  std::function<void(int32_t)> frame = [&](int32_t depth) {
    const TimeNs start = now;
    now += 1 + static_cast<TimeNs>(rng() % 5);
    const int children = depth < 6 ? static_cast<int>(rng() % 4) : 0;
    for (int c = 0; c < children; ++c) frame(depth + 1);
    now += 1 + static_cast<TimeNs>(rng() % 5);
    made.push_back({start, now, depth});
  };
  while (made.size() < 3000) frame(0);
  for (int variant = 0; variant < 3; ++variant) {  // one thread; and a second thread; and a GPU stream
    Trace t;
    const StringId name = t.strings.Intern("f");
    for (const Made& m : made) t.ranges.Add(Range{m.start, m.end, name, 0, 1, 1, 0, false, -1});
    if (variant > 0)
      for (const Made& m : made)
        t.ranges.Add(Range{m.start, m.end, name, 0, 1, variant == 1 ? 2 : 1, 0, variant == 2, 7});
    FinalizeTrace(t);
    for (size_t i = 0; i < t.ranges.size(); ++i)
      ASSERT_EQ(t.ranges.depth[i], made[i % made.size()].depth) << variant << " " << i;
    std::vector<uint32_t> want(t.ranges.size());
    std::iota(want.begin(), want.end(), 0u);
    std::sort(want.begin(), want.end(), [&](uint32_t a, uint32_t b) {
      const bool la = a >= made.size(), lb = b >= made.size();
      if (la != lb) return la < lb;  // (pid, tid, on_gpu): tid 2 after 1, on a GPU after not
      if (t.ranges.start[a] != t.ranges.start[b]) return t.ranges.start[a] < t.ranges.start[b];
      if (t.ranges.end[a] != t.ranges.end[b]) return t.ranges.end[a] > t.ranges.end[b];
      return a < b;
    });
    EXPECT_EQ(t.range_order, want) << variant;
  }
}

TEST(Quality, ErrorLevelCounterIsReported) {
  QualityCounters q;
  q.Add(Quality::kUnknownCategorySkipped, 5);
  EXPECT_FALSE(q.HasErrors());
  q.Add(Quality::kSourceDroppedRecords);
  EXPECT_TRUE(q.HasErrors());
  EXPECT_EQ(QualityFromKey("source_dropped_records"), Quality::kSourceDroppedRecords);
  EXPECT_EQ(QualityFromKey("nope"), Quality::kCount);
}

}  // namespace
}  // namespace tg

namespace tg {
namespace {

TEST(StringTable, LargeFirstStringIsNotOverwrittenBySmallOnes) {
  StringTable t;
  std::string big(600 * 1024, 'x');
  StringId b = t.Intern(big);
  StringId s = t.Intern("small");
  EXPECT_EQ(t.View(b), big);
  EXPECT_EQ(t.View(s), "small");
}

}  // namespace
}  // namespace tg

namespace tg {
namespace {

// A kernel table of `rows` rows whose every kind of column holds varied values: plain vectors,
// coded ids, correlations (one past 32 bits when `wide`), graph ids sparse or dense.
KernelTable VariedKernels(int rows, int offset, bool wide, int graph_every) {
  KernelTable t;
  for (int i = 0; i < rows; ++i) {
    Kernel k;
    k.start = offset + i * 10;
    k.end = k.start + 5;
    k.name = static_cast<StringId>(1 + i % 7);
    k.device = i % 2;
    k.stream = 7 + i % 3;
    k.correlation = wide && i == rows / 2 ? (int64_t{1} << 40) : offset + i;
    k.grid_x = i;
    k.block_x = 128;
    k.graph_id = i % graph_every == 0 ? i : kUnknownId;
    k.collective = i % 5 == 0 ? static_cast<StringId>(3) : 0;
    t.Add(k);
  }
  return t;
}

// ColumnMoves appends every column (on two cores) as MoveColumns does on one, runs each
// column's follow-up after its append with that column's first new row, and empties the source.
TEST(ColumnMoves, AppendsAsMoveColumnsAndFollowsUpEachColumn) {
  for (bool wide : {false, true}) {
    for (int graph_every : {1, 40}) {
      KernelTable expect = VariedKernels(3000, 0, false, 40);
      KernelTable tail = VariedKernels(5000, 100000, wide, graph_every);
      internal::MoveColumns(expect, tail);

      KernelTable to = VariedKernels(3000, 0, false, 40);
      KernelTable from = VariedKernels(5000, 100000, wide, graph_every);
      MemcpyTable copies, more_copies;
      more_copies.Add(Memcpy{});
      std::atomic<int> names_seen{0}, followed{0};
      internal::ColumnMoves moves;
      moves.Add(to, from, [&](auto& column, size_t first) {
        ++followed;
        EXPECT_EQ(first, 3000u);
        if (static_cast<const void*>(&column) == &to.name) {
          ++names_seen;
          EXPECT_EQ(column.size(), 8000u);  // appended before its follow-up
        }
      });
      moves.Add(copies, more_copies);
      moves.Run();
      EXPECT_EQ(followed.load(), static_cast<int>(std::tuple_size_v<decltype(to.Columns())>));
      EXPECT_EQ(names_seen.load(), 1);
      ASSERT_EQ(to.size(), expect.size());
      internal::Zip(to.Columns(), expect.Columns(), [](const auto& a, const auto& b) { EXPECT_TRUE(a == b); });
      internal::Zip(from.Columns(), expect.Columns(), [](const auto& a, const auto&) { EXPECT_EQ(a.size(), 0u); });
      EXPECT_EQ(copies.size(), 1u);
      EXPECT_EQ(more_copies.size(), 0u);
    }
  }
}

TEST(ColumnMoves, GrowMappedKeepsTheValues) {
  std::vector<int64_t> v(1000, 3);
  internal::GrowMapped(v, 1 << 20);  // pages mapped past the last value: nothing written
  EXPECT_EQ(v.size(), 1000u);
  EXPECT_GE(v.capacity(), 1000u + (1u << 20));
  EXPECT_TRUE(std::all_of(v.begin(), v.end(), [](int64_t x) { return x == 3; }));
  v.resize(v.size() + (1 << 20));
  EXPECT_EQ(v.back(), 0);
}

}  // namespace
}  // namespace tg
