// Reads the event tables of a tracegate store or an Nsight Systems export into the model.
// Encodings (ids, GlobalIds, eventClass, NVTX event types): store_schema.h.
#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "analyzer/import/nsys/sqlite_read.h"
#include "analyzer/model/move_columns.h"
#include "analyzer/store/store_columns.h"
#include "analyzer/store/store_schema.h"
#include "analyzer/util/huge_pages.h"
#include "analyzer/util/side_task.h"

namespace tg::internal {

using internal::U32FromDb;

namespace {

// pid from a globalPid column, or from the tgPid column when the writer had to use it.
int64_t ReadPid(const internal::Stmt& q, int global_col, int tg_col) {
  int64_t v;
  if (q.Get(tg_col, v)) return v;
  return q.Get(global_col, v) ? internal::PidOf(v) : kUnknownId;
}

// GetInteger, and a REAL that holds a whole number below 2^53 read as that integer: every such
// double is exactly one int64, so nothing is lost. Other REALs (a fraction, or so large that
// neighbouring integers share one double) cannot give the exact nanosecond: -2.
template <class Q>
int GetTime(const Q& q, int c, TimeNs& v) {
  const int got = q.GetInteger(c, v);
  double real;
  if (got >= 0 || !q.GetReal(c, real)) return got;
  constexpr double kExactLimit = 9007199254740992.0;  // 2^53
  if (!(std::abs(real) < kExactLimit) || std::trunc(real) != real) return -2;
  v = static_cast<TimeNs>(real);
  return 1;
}

// Checks start/end (columns 0 and 1): both INTEGER, end >= start; false when the row must be
// dropped (and counts why).
template <class Q>
bool ReadTimes(const Q& q, QualityCounters& found, TimeNs& start, TimeNs& end) {
  const int s = GetTime(q, 0, start), e = GetTime(q, 1, end);
  if (s == -2 || e == -2) {
    found.Add(Quality::kInexactTimestamp);
    return false;
  }
  if (s < 0 || e < 0) {  // a time stored as text or a blob
    found.Add(Quality::kMalformedEvent);
    return false;
  }
  if (s == 0 || e == 0) {
    found.Add(Quality::kMissingTimestamp);
    return false;
  }
  if (end < start) {
    found.Add(Quality::kNegativeDuration);
    return false;
  }
  return true;
}

template <size_t N>
std::string Join(const int (&values)[N]) {
  std::string out;
  for (int v : values) out += (out.empty() ? "" : ", ") + std::to_string(v);
  return out;
}

// What the store columns' Read needs from the source (store_columns.h): names resolved by
// `Names` (the source's NameResolver, or DeferredNames on the second core), counters kept in
// `found`.
template <class Names>
struct RowReader {
  Names& names;
  QualityCounters& found;
  bool is_store;
  StringId Name(int64_t id) { return names(id); }
  // A tracegate store keeps the counters its producer found: only an nsys export counts here.
  void Unknown(Quality q) {
    if (!is_store) found.Add(q);
  }
};
RowReader<NameResolver> ReaderOf(Source& src) { return {src.names, src.found, src.is_store}; }

// Names read on the second core, where neither SQLite's connection nor the trace's strings may be
// touched: each distinct id gets a number of its own (1, 2, ... in order of first use; 0 stays
// the empty name), which Resolve turns into the trace's StringIds afterwards, in that same order,
// so the strings are interned as one thread reading the table would have.
class DeferredNames {
 public:
  StringId operator()(int64_t id) {
    auto [number, fresh] = numbers_.Slot(id);
    if (fresh) number = New(id);
    ++uses_[number - 1];
    return number;
  }
  // Local number -> the trace's StringId (index 0: the empty name), each id resolved once and
  // counted as often as it was used.
  std::vector<StringId> Resolve(NameResolver& names) const {
    std::vector<StringId> out{StringTable::kEmpty};
    for (size_t k = 0; k < ids_.size(); ++k) out.push_back(names(ids_[k], uses_[k]));
    return out;
  }

 private:
  StringId New(int64_t id) {
    ids_.push_back(id);
    uses_.push_back(0);
    return static_cast<StringId>(ids_.size());
  }
  IdSlots<StringId> numbers_;  // id -> its number
  std::vector<int64_t> ids_;
  std::vector<uint64_t> uses_;
};

// ReadTimes reads start and end from the first two selected columns.
template <class... C>
constexpr bool TimesFirst(const internal::StoreTable<C...>& t) {
  return internal::ColumnPosition<false>(t, "start") == 0 && internal::ColumnPosition<false>(t, "end") == 1;
}
static_assert(TimesFirst(internal::kKernelStore) && TimesFirst(internal::kMemcpyStore) &&
              TimesFirst(internal::kMemsetStore) && TimesFirst(internal::kSyncStore) &&
              TimesFirst(internal::kApiStore) && TimesFirst(internal::kRangeStore));

// Room for `rows` more rows in t, each column's block for them hinted for huge pages
// (analyzer/util/huge_pages.h; a sparse column's only once dense): max(rowid), RowEstimate, is the
// row count of a table written once, as an export's are, so the rows fill those blocks whole (but
// for rows without valid times).
template <class T>
void HintRows(const std::vector<T>& column, size_t n) {
  AdviseHugePages(column.data(), n * sizeof(T));
}
template <class Column>
void HintRows(const Column& column, size_t n) {  // coded, narrow and sparse columns
  column.RowBlock(n, AdviseHugePages);
}
template <class Table>
void ReserveRows(Table& t, size_t rows) {
  const size_t n = t.size() + rows;
  t.Reserve(n);
  std::apply([n](auto&... column) { (HintRows(column, n), ...); }, t.Columns());
}

// Every row of q with valid times into t, column by column as its store table list says.
template <class Q, class Table, class Names, class... C>
Status ReadRows(Q& q, const internal::StoreTable<C...>& columns, Table& t, RowReader<Names> rd) {
  typename Table::RowType row;
  Status s;
  while (q.Next(s)) {
    if (!ReadTimes(q, rd.found, row.start, row.end)) continue;
    internal::ReadRow(columns, q, row, rd);
    t.Add(row);
  }
  return s;
}

// Opens the direct scan of a store table (false in `direct` where SQLite must read it).
template <class... C>
Status OpenScan(Source& src, const internal::StoreTable<C...>& columns, internal::TableScan& scan, bool& direct) {
  return scan.Open(src.db, src.pages, std::string(columns.name), internal::SelectedColumns(columns), direct);
}

// Kernels, copies, memsets, syncs and API calls: from the file's pages where SQLite is not needed
// (table_scan.h), else through SQLite.
// `join` and `instead`: as SelectColumns' `where` and `instead` (SQLite only).
template <class Table, class... C>
Status ReadTable(Source& src, const internal::StoreTable<C...>& columns, Table& t, std::string_view join = {},
                 const std::unordered_map<std::string_view, std::string>* instead = nullptr) {
  const std::string table(columns.name);
  if (!src.Has(table)) return Status::Ok();
  ReserveRows(t, RowEstimate(src, table));
  if (join.empty() && !instead) {
    internal::TableScan scan;
    bool direct = false;
    TG_RETURN_IF_ERROR(OpenScan(src, columns, scan, direct));
    if (direct) return ReadRows(scan, columns, t, ReaderOf(src));
  }
  internal::Stmt q;
  TG_RETURN_IF_ERROR(SelectColumns(src, table, internal::SelectedColumns(columns), join, q, instead));
  return ReadRows(q, columns, t, ReaderOf(src));
}

Status ReadKernels(Source& src) { return ReadTable(src, internal::kKernelStore, src.trace.kernels); }
Status ReadMemcpys(Source& src) { return ReadTable(src, internal::kMemcpyStore, src.trace.memcpys); }
Status ReadMemsets(Source& src) { return ReadTable(src, internal::kMemsetStore, src.trace.memsets); }
// Syncs. An nsys export links an event sync or stream wait event to its event's record through
// eventSyncId: the record's stream and cudaEventRecord's correlation are in
// CUPTI_ACTIVITY_KIND_CUDA_EVENT (when nsys recorded CUDA events), read into the store's
// tgWaitStream / tgRecordCorrelation by a join (one record per eventSyncId and process).
Status ReadSyncs(Source& src) {
  const std::string sync(internal::kSyncStore.name), events = "CUPTI_ACTIVITY_KIND_CUDA_EVENT";
  if (src.is_store || !src.Has(sync) || !src.Has(events)) return ReadTable(src, internal::kSyncStore, src.trace.syncs);
  std::unordered_set<std::string> sc, ec;
  TG_RETURN_IF_ERROR(internal::ColumnNames(src.db, sync, sc));
  TG_RETURN_IF_ERROR(internal::ColumnNames(src.db, events, ec));
  for (const char* c : {"eventSyncId", "globalPid"})
    if (!sc.count(c) || !ec.count(c)) return ReadTable(src, internal::kSyncStore, src.trace.syncs);
  if (!ec.count("streamId") || !ec.count("correlationId")) return ReadTable(src, internal::kSyncStore, src.trace.syncs);
  const std::string s = internal::Quote(sync);
  const std::string join =
      "LEFT JOIN (SELECT eventSyncId AS tgSyncId, globalPid AS tgSyncPid, min(streamId) AS "
      "tgEventStream, min(correlationId) AS tgEventCorrelation FROM " +
      internal::Quote(events) +
      " WHERE eventSyncId IS NOT NULL GROUP BY eventSyncId, globalPid) AS tgEvent ON "
      "tgEvent.tgSyncId = " +
      s + ".eventSyncId AND tgEvent.tgSyncPid = " + s + ".globalPid";
  const std::unordered_map<std::string_view, std::string> instead{
      {"tgWaitStream", "tgEvent.tgEventStream"}, {"tgRecordCorrelation", "tgEvent.tgEventCorrelation"}};
  return ReadTable(src, internal::kSyncStore, src.trace.syncs, join, &instead);
}
Status ReadApiCalls(Source& src) { return ReadTable(src, internal::kApiStore, src.trace.api_calls); }

// NVTX_EVENTS (or tracegate_gpu_ranges): marks and ranges; domain names from eventType 75 rows,
// which belong to a process (nsys numbers domains per process).
Status ReadRanges(Source& src, const std::string& table, bool on_gpu) {
  std::unordered_set<std::string> columns;
  if (Status s = internal::ColumnNames(src.db, table, columns); !s.ok() || !columns.count("eventType")) return s;
  internal::Stmt dq;
  Status s = SelectColumns(src, table, {"domainId", "globalTid", "text", "textId", "tgPid"},
                           "WHERE eventType = " + std::to_string(internal::kNvtxDomainCreate), dq);
  if (!s.ok()) return s;
  std::map<std::pair<int64_t, int64_t>, StringId> domains;  // (domainId, pid) -> name
  int64_t text_id;
  while (dq.Next(s)) {
    StringId name = dq.Get(3, text_id) ? src.names(text_id) : src.trace.strings.Intern(dq.Text(2));
    domains.emplace(std::pair{dq.IntOr(0, 0), ReadPid(dq, 1, 4)}, name);
  }
  if (!s.ok()) return s;

  const int marks[] = {internal::kNvtxMark, internal::kNvtxtMark};
  const int ranges[] = {internal::kNvtxPushPop, internal::kNvtxStartEnd, internal::kNvtxtPushPop,
                        internal::kNvtxtStartEnd};
  // Columns read here rather than by ReadRow, at their place in the SELECT.
  using internal::ColumnPosition;
  constexpr int kEnd = ColumnPosition<false>(internal::kRangeStore, "end");
  constexpr int kType = ColumnPosition<false>(internal::kRangeStore, "eventType");
  constexpr int kText = ColumnPosition<false>(internal::kRangeStore, "text");
  constexpr int kTextId = ColumnPosition<false>(internal::kRangeStore, "textId");
  constexpr int kDomainId = ColumnPosition<false>(internal::kRangeStore, "domainId");
  // NCCL's payloads, after the store's columns (a store has none: they read as NULL).
  std::vector<std::string_view> selected = internal::SelectedColumns(internal::kRangeStore);
  const int kJsonText = static_cast<int>(selected.size()), kJsonTextId = kJsonText + 1;
  selected.insert(selected.end(), {"jsonText", "jsonTextId"});
  internal::Stmt q;
  s = SelectColumns(src, table, selected, "WHERE eventType IN (" + Join(marks) + ", " + Join(ranges) + ")", q);
  if (!s.ok()) return s;
  Range r;
  r.on_gpu = on_gpu;
  auto rd = ReaderOf(src);
  while (q.Next(s)) {
    if (!q.Get(0, r.start)) {
      src.found.Add(Quality::kMissingTimestamp);
      continue;
    }
    int64_t type = q.Int(kType);
    if (std::find(std::begin(marks), std::end(marks), type) != std::end(marks)) {
      r.end = r.start;
    } else if (!q.Get(kEnd, r.end)) {
      src.found.Add(Quality::kUnmatchedRangeEnd);  // a range that was never closed
      continue;
    } else if (r.end < r.start) {
      src.found.Add(Quality::kNegativeDuration);
      continue;
    }
    r.name = q.Get(kTextId, text_id) ? src.names(text_id) : src.trace.strings.Intern(q.Text(kText));
    internal::ReadRow(internal::kRangeStore, q, r, rd);  // thread, depth, stream
    int64_t domain_id = q.IntOr(kDomainId, 0);
    r.domain = StringTable::kEmpty;  // domain 0 is NVTX's default domain
    if (domain_id != 0)
      if (auto it = domains.find({domain_id, r.pid}); it != domains.end()) r.domain = it->second;
    if (!on_gpu && r.domain != StringTable::kEmpty && src.trace.Name(r.domain) == "NCCL")
      src.nccl_ranges.push_back({src.trace.ranges.size(), std::string(q.Text(kJsonText)), q.IntOr(kJsonTextId, kUnknownId)});
    src.trace.ranges.Add(r);
  }
  return s;
}

// NVTX_EVENTS, or the table nsys names with a suffix in some versions (the shortest match).
std::string NvtxTable(const Source& src) {
  std::string best;
  auto shorter = [](const std::string& a, const std::string& b) {
    return std::pair(a.size(), a) < std::pair(b.size(), b);
  };
  for (const std::string& t : src.tables)
    if (t.rfind("NVTX_EVENTS", 0) == 0 && (best.empty() || shorter(t, best))) best = t;
  return best;
}

Status ReadSamples(Source& src) {
  const std::string table(internal::kSampleStore.name);
  if (!src.Has(table)) return Status::Ok();
  internal::Stmt q;
  Status s = SelectColumns(src, table, internal::SelectedColumns(internal::kSampleStore), "", q);
  if (!s.ok()) return s;
  Sample sample;
  auto rd = ReaderOf(src);
  while (q.Next(s)) {
    if (q.IsNull(0)) {
      src.found.Add(Quality::kMissingTimestamp);
      continue;
    }
    sample.time = q.Int(0);
    internal::ReadRow(internal::kSampleStore, q, sample, rd);
    src.trace.samples.Add(sample);
  }
  return s;
}

// Deferred names (DeferredNames' numbers) of a name column mapped to the trace's StringIds.
void MapNames(std::vector<StringId>& names, size_t first, const std::vector<StringId>& resolved) {
  for (size_t i = first; i < names.size(); ++i) names[i] = resolved[names[i]];
}
void MapNames(SparseColumn<StringId>& names, size_t first, const std::vector<StringId>& resolved) {
  names.MapFrom(first, [&](StringId id) { return resolved[id]; });  // resolved[kEmpty] == kEmpty
}
// Every name column of t's rows from `first` (the columns that read a StringIds id).
template <class Table, class... C>
void MapNameColumns(const internal::StoreTable<C...>& columns, Table& t, size_t first,
                    const std::vector<StringId>& resolved) {
  auto table_columns = t.Columns();
  std::apply(
      [&](const auto&... c) {
        auto one = [&](const auto& column) {
          using K = std::remove_cvref_t<decltype(column)>;
          if constexpr (K::kName) {
            constexpr int index = Table::RowType::ColumnIndex(std::get<0>(K::kFields));
            MapNames(std::get<index>(table_columns), first, resolved);
          }
        };
        (one(c), ...);
      },
      columns.columns);
}

void AddCounts(QualityCounters& to, const QualityCounters& from) {
  for (const QualityInfo& q : kQualityInfo) to.Add(q.id, from.Get(q.id));
}

// This core reads the copies, memsets and syncs before the names read on the second core are
// resolved: so they must intern no string, or the trace's strings would come in another order.
template <class... C>
constexpr bool HasNameColumn(const internal::StoreTable<C...>&) {
  return (C::kName || ...);
}
static_assert(!HasNameColumn(internal::kMemcpyStore) && !HasNameColumn(internal::kMemsetStore) &&
              !HasNameColumn(internal::kSyncStore));

// The two largest tables of an export read side by side from the file's pages: the second core
// reads the API calls and, when the kernels outweigh them, the later part of the kernel table
// (the root page's later children); this core reads the rest of the kernels, then the copies,
// memsets and syncs. Everything that needs SQLite's connection or the trace's strings stays
// here: the scans are opened first, and the names read on the second core are numbered there
// and resolved after the join (DeferredNames) in the order one thread reading the tables in turn
// would have met them, so the trace is the one that thread would have built.
// `done`: kernels to syncs are read; `api_done`: the API calls too. Neither when the second core
// has nothing to read (a table SQLite must read, or a small one).
Status ReadOnTwoCores(Source& src, bool& done, bool& api_done) {
  done = api_done = false;
  const std::string kernels_table(internal::kKernelStore.name), api_table(internal::kApiStore.name);
  internal::TableScan api_scan, kernels_here, kernels_aside;
  bool api_direct = false, kernels_direct = false, split = false;
  if (src.Has(api_table)) TG_RETURN_IF_ERROR(OpenScan(src, internal::kApiStore, api_scan, api_direct));
  if (src.Has(kernels_table)) TG_RETURN_IF_ERROR(OpenScan(src, internal::kKernelStore, kernels_here, kernels_direct));
  const size_t kernel_rows = kernels_direct ? RowEstimate(src, kernels_table) : 0;
  const size_t api_rows = api_direct ? RowEstimate(src, api_table) : 0;
  const size_t n = kernels_here.RootChildren();  // the kernel table's root children (0: a leaf)
  size_t keep = n;
  if (kernels_direct && n >= 2) {
    // A kernel row costs ~kCost API rows (~2.3 before the launch configurations were coded: the
    // dense shape's export, 1.5 M of each, 240 vs 105 ms on one core; 1.6-2.0 read fastest
    // since); the second core's share f of the kernels evens the two:
    // kernels * kCost * (1 - f) = kernels * kCost * f + API.
    constexpr double kCost = 1.9;
    const double k = kCost * static_cast<double>(kernel_rows), a = static_cast<double>(api_rows);
    const double aside = k > a ? (k - a) / (2 * k) : 0;
    keep = n - static_cast<size_t>(aside * static_cast<double>(n) + 0.5);
    if (keep < n) {
      TG_RETURN_IF_ERROR(OpenScan(src, internal::kKernelStore, kernels_aside, split));
      split = split && kernels_aside.RootChildren() == n;
    }
    if (split) {
      kernels_here.KeepRootChildren(0, keep);
      kernels_aside.KeepRootChildren(keep, n);
    }
  }
  if (!split && (!api_direct || api_rows < 4096)) return Status::Ok();  // one core does it all

  KernelTable& kernels = src.trace.kernels;
  ApiTable& calls = src.trace.api_calls;
  if (kernels_direct) ReserveRows(kernels, kernel_rows);
  if (api_direct) ReserveRows(calls, api_rows);
  const size_t first_call = calls.size();
  KernelTable later_kernels;
  if (split) later_kernels.Reserve(kernel_rows / n * (n - keep + 1));  // the children share the rows about evenly
  DeferredNames kernel_names, api_names;
  QualityCounters kernel_found, api_found;
  Status here, kernels_status, api_status;
  {
    internal::SideTask side([&] {
      if (split)
        kernels_status = ReadRows(kernels_aside, internal::kKernelStore, later_kernels,
                                  RowReader<DeferredNames>{kernel_names, kernel_found, src.is_store});
      if (api_direct)
        api_status = ReadRows(api_scan, internal::kApiStore, calls,
                              RowReader<DeferredNames>{api_names, api_found, src.is_store});
    });
    here = kernels_direct ? ReadRows(kernels_here, internal::kKernelStore, kernels, ReaderOf(src)) : ReadKernels(src);
    for (auto read : {ReadMemcpys, ReadMemsets, ReadSyncs})
      if (here.ok()) here = read(src);
    side.Wait();
  }
  TG_RETURN_IF_ERROR(here);
  TG_RETURN_IF_ERROR(kernels_status);
  TG_RETURN_IF_ERROR(api_status);
  if (split) {  // the kernels' names first: their rows come before the API calls'
    MapNameColumns(internal::kKernelStore, later_kernels, 0, kernel_names.Resolve(src.names));
    internal::ColumnMoves moves;  // on both cores: the copy is mostly page faults on the new rows
    moves.Add(kernels, later_kernels);
    moves.Run();
    AddCounts(src.found, kernel_found);
  }
  if (api_direct) {
    MapNameColumns(internal::kApiStore, calls, first_call, api_names.Resolve(src.names));
    AddCounts(src.found, api_found);
  }
  done = true;
  api_done = api_direct;
  return Status::Ok();
}

}  // namespace

Status ReadEvents(Source& src) {
  bool done = false, api_done = false;
  TG_RETURN_IF_ERROR(ReadOnTwoCores(src, done, api_done));
  if (!done)
    for (auto read : {ReadKernels, ReadMemcpys, ReadMemsets, ReadSyncs}) TG_RETURN_IF_ERROR(read(src));
  if (!api_done) TG_RETURN_IF_ERROR(ReadApiCalls(src));
  TG_RETURN_IF_ERROR(ReadSamples(src));
  if (std::string nvtx = NvtxTable(src); !nvtx.empty())
    TG_RETURN_IF_ERROR(ReadRanges(src, nvtx, false));
  if (src.Has(internal::kGpuRangeTable))
    TG_RETURN_IF_ERROR(ReadRanges(src, internal::kGpuRangeTable, true));
  TG_RETURN_IF_ERROR(MarkNcclCollectives(src));
  return src.names.status();
}

}  // namespace tg::internal
