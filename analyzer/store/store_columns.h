// The store's event tables column by column, in CREATE TABLE order: for each store column, how
// the writer binds it from a model row and how the reader (store files and nsys exports alike)
// reads it back. The writer's INSERTs and the reader's SELECTs are generated from these lists;
// store_schema.cpp static_asserts that each list equals its CREATE TABLE column list, and below
// each list is checked to carry every column of the model (ColumnCheck, model.h). Encodings:
// store_schema.h.
//
// A column kind has `name`, kFields (the model fields it carries), kSelected (the reader SELECTs
// it), kWritten (the writer INSERTs it) and, as applicable,
//   Bind(Stmt& q, int param, const Row& r, Names& names)   names(StringId): the file's string id
//   Read(const Q& q, int col, Row& r, Reader& rd)          rd.Name(int64_t): the trace's string id;
//                                                          rd.Unknown(Quality): a value out of range
// where q is the row being read: an SQLite statement (Stmt) or a direct scan of the file's pages
// (TableScan, table_scan.h), which answer the same reads with the same values.
// Reads run in list order, so a column may refine what one before it read (tgPid after
// globalPid, shortName after demangledName). Everything is resolved at compile time: a row costs
// the same binds and reads as hand-written code.
#pragma once

#include <cmath>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "analyzer/sqlite/sqlite_db.h"
#include "analyzer/store/store_schema.h"
#include "tracegate/analyzer/model.h"

namespace tg::internal {

template <class M>
struct FieldTraits;
template <class R, class T>
struct FieldTraits<T R::*> {
  using Row = R;
  using Type = T;
};
template <auto F>
using FieldType = typename FieldTraits<decltype(F)>::Type;

// What most kinds share: selected, written, carrying `Fields`.
// kName: the column is the one that reads its field from a StringIds id (Name, OptionalName).
template <auto... Fields>
struct StoreColumn {
  std::string_view name;
  static constexpr bool kSelected = true, kWritten = true, kByHand = false, kName = false;
  static constexpr auto kFields = std::tuple{Fields...};
};

// start / end / time: an integer; the reader checks the times of a row before reading the rest.
template <auto F>
struct Time : StoreColumn<F> {
  template <class Row, class Names>
  static void Bind(Stmt& q, int p, const Row& r, Names&) { q.Int(p, r.*F); }
  template <class Row, class Reader, class Q>
  static void Read(const Q&, int, Row&, Reader&) {}
};

// A NOT NULL integer as it is (NULL reads as 0).
template <auto F>
struct Int : StoreColumn<F> {
  template <class Row, class Names>
  static void Bind(Stmt& q, int p, const Row& r, Names&) { q.Int(p, r.*F); }
  template <class Row, class Reader, class Q>
  static void Read(const Q& q, int c, Row& r, Reader&) {
    r.*F = static_cast<FieldType<F>>(q.Int(c));
  }
};

// deviceId / streamId / eventId: unsigned 32-bit, kNoneU32 for the model's -1.
template <auto F>
struct U32 : StoreColumn<F> {
  template <class Row, class Names>
  static void Bind(Stmt& q, int p, const Row& r, Names&) { q.Int(p, U32ToDb(r.*F)); }
  template <class Row, class Reader, class Q>
  static void Read(const Q& q, int c, Row& r, Reader&) {
    r.*F = static_cast<FieldType<F>>(U32FromDb(q.IntOr(c, kNoneU32)));
  }
};

// A nullable id: NULL for kUnknownId.
template <auto F>
struct Nullable : StoreColumn<F> {
  template <class Row, class Names>
  static void Bind(Stmt& q, int p, const Row& r, Names&) { q.IntOrNull(p, r.*F, kUnknownId); }
  template <class Row, class Reader, class Q>
  static void Read(const Q& q, int c, Row& r, Reader&) {
    r.*F = q.IntOr(c, kUnknownId);
  }
};

// A name: an id into StringIds.
template <auto F>
struct Name : StoreColumn<F> {
  static constexpr bool kName = true;
  template <class Row, class Names>
  static void Bind(Stmt& q, int p, const Row& r, Names& names) { q.Int(p, names(r.*F)); }
  template <class Row, class Reader, class Q>
  static bool Read(const Q& q, int c, Row& r, Reader& rd) {
    int64_t id;
    const bool held = q.Get(c, id);
    r.*F = held ? rd.Name(id) : StringTable::kEmpty;
    return held;
  }
};

// A name that most rows lack (the kernels' collective metadata): NULL for the empty string, so
// rows without it cost no StringIds entry; NULL (and exports without the column) read as empty.
template <auto F>
struct OptionalName : StoreColumn<F> {
  static constexpr bool kName = true;
  template <class Row, class Names>
  static void Bind(Stmt& q, int p, const Row& r, Names& names) {
    if (r.*F == StringTable::kEmpty) q.Null(p);
    else q.Int(p, names(r.*F));
  }
  template <class Row, class Reader, class Q>
  static void Read(const Q& q, int c, Row& r, Reader& rd) {
    int64_t id;
    r.*F = q.Get(c, id) ? rd.Name(id) : StringTable::kEmpty;
  }
};

// A second name column for the same field, right after the first (kernels: shortName after
// demangledName). Written the same; read only when the first has no id.
template <auto F>
struct FallbackName : Name<F> {
  static constexpr bool kName = false;  // the same field as the Name before it
  template <class Row, class Reader, class Q>
  static void Read(const Q& q, int c, Row& r, Reader& rd, bool first_held) {
    int64_t id;
    if (!first_held && q.Get(c, id)) r.*F = rd.Name(id);
  }
};

// An enum column; values outside [Lo, Hi] (and NULL, unless the enum's kUnknown is in range)
// read as kUnknown and, with Counted, count as Counted.
template <auto F, auto Lo, auto Hi, Quality Counted = Quality::kCount>
struct Enum : StoreColumn<F> {
  template <class Row, class Names>
  static void Bind(Stmt& q, int p, const Row& r, Names&) { q.Int(p, static_cast<int>(r.*F)); }
  template <class Row, class Reader, class Q>
  static void Read(const Q& q, int c, Row& r, Reader& rd) {
    using E = FieldType<F>;
    const int64_t v = q.IntOr(c, static_cast<int64_t>(E::kUnknown));
    const bool known = v >= static_cast<int64_t>(Lo) && v <= static_cast<int64_t>(Hi);
    r.*F = known ? static_cast<E>(v) : E::kUnknown;
    if constexpr (Counted != Quality::kCount)
      if (!known) rd.Unknown(Counted);
  }
};

// eventClass of CUPTI_ACTIVITY_KIND_RUNTIME: runtime or driver API.
template <auto F>
struct EventClass : StoreColumn<F> {
  template <class Row, class Names>
  static void Bind(Stmt& q, int p, const Row& r, Names&) {
    q.Int(p, r.*F == ApiKind::kDriver ? kEventClassDriver : kEventClassRuntime);
  }
  template <class Row, class Reader, class Q>
  static void Read(const Q& q, int c, Row& r, Reader&) {
    r.*F = q.IntOr(c, kEventClassRuntime) == kEventClassDriver ? ApiKind::kDriver : ApiKind::kRuntime;
  }
};

// A REAL; NaN (not sampled) is stored as NULL and read back as NaN.
template <auto F>
struct Real : StoreColumn<F> {
  template <class Row, class Names>
  static void Bind(Stmt& q, int p, const Row& r, Names&) { q.Real(p, r.*F); }
  template <class Row, class Reader, class Q>
  static void Read(const Q& q, int c, Row& r, Reader&) {
    r.*F = q.IsNull(c) ? std::nan("") : q.Real(c);
  }
};

// globalPid: the pid as a GlobalId (tid field 0); NULL when unknown or when it does not fit.
template <auto Pid>
struct GlobalPid : StoreColumn<Pid> {
  template <class Row, class Names>
  static void Bind(Stmt& q, int p, const Row& r, Names&) {
    GlobalId g = EncodeGlobalPid(r.*Pid);
    g.null ? q.Null(p) : q.Int(p, g.value);
  }
  template <class Row, class Reader, class Q>
  static void Read(const Q& q, int c, Row& r, Reader&) {
    int64_t v;
    r.*Pid = q.Get(c, v) ? PidOf(v) : kUnknownId;
  }
};

// globalTid: pid and tid as one GlobalId.
template <auto Pid, auto Tid>
struct GlobalTid : StoreColumn<Pid, Tid> {
  template <class Row, class Names>
  static void Bind(Stmt& q, int p, const Row& r, Names&) {
    GlobalId g = EncodeGlobalId(r.*Pid, r.*Tid);
    g.null ? q.Null(p) : q.Int(p, g.value);
  }
  template <class Row, class Reader, class Q>
  static void Read(const Q& q, int c, Row& r, Reader&) {
    int64_t g;
    const bool known = q.Get(c, g);
    r.*Pid = known ? PidOf(g) : kUnknownId;
    r.*Tid = known ? TidOf(g) : kUnknownId;
  }
};

// tgPid: the exact pid when globalPid / globalTid could not hold it (then that one is NULL).
// With a Tid, the GlobalId it overflows is the globalTid of (pid, tid).
template <auto Pid, auto Tid = nullptr>
struct TgPid : StoreColumn<Pid> {
  template <class Row>
  static bool Fits(const Row& r) {
    if constexpr (Tid == nullptr) return EncodeGlobalPid(r.*Pid).fits;
    else return EncodeGlobalId(r.*Pid, r.*Tid).fits;
  }
  template <class Row, class Names>
  static void Bind(Stmt& q, int p, const Row& r, Names&) { Fits(r) ? q.Null(p) : q.Int(p, r.*Pid); }
  template <class Row, class Reader, class Q>
  static bool Read(const Q& q, int c, Row& r, Reader&) {
    int64_t v;
    const bool held = q.Get(c, v);
    if (held) r.*Pid = v;
    return held;
  }
};

// tgTid, right after tgPid: the exact tid, read when tgPid is set (then globalTid is NULL).
template <auto Pid, auto Tid>
struct TgTid : StoreColumn<Tid> {
  template <class Row, class Names>
  static void Bind(Stmt& q, int p, const Row& r, Names&) {
    TgPid<Pid, Tid>::Fits(r) ? q.Null(p) : q.Int(p, r.*Tid);
  }
  template <class Row, class Reader, class Q>
  static void Read(const Q& q, int c, Row& r, Reader&, bool tg_pid_held) {
    if (tg_pid_held) r.*Tid = q.IntOr(c, kUnknownId);
  }
};

// An nsys NOT NULL column the model has no data for: written as 0, not read.
struct Zero {
  std::string_view name;
  static constexpr bool kSelected = false, kWritten = true, kByHand = false, kName = false;
  static constexpr std::tuple<> kFields{};
  template <class Row, class Names>
  static void Bind(Stmt& q, int p, const Row&, Names&) { q.Int(p, 0); }
};

// An nsys column the model has no data for and that may be NULL: neither written nor read.
struct Unwritten {
  std::string_view name;
  static constexpr bool kSelected = false, kWritten = false, kByHand = false, kName = false;
  static constexpr std::tuple<> kFields{};
};

// A column the table's own code writes and reads (the NVTX tables: event types, marks, domains);
// it is selected and bound at its place in the list, by hand.
template <auto... Fields>
struct ByHand : StoreColumn<Fields...> {
  static constexpr bool kByHand = true;
};

template <class... C>
struct StoreTable {
  std::string_view name;
  std::tuple<C...> columns;
};
template <class... C>
constexpr StoreTable<C...> MakeStoreTable(std::string_view name, C... columns) {
  return {name, std::tuple<C...>{columns...}};
}

// ---- The tables -----------------------------------------------------------------------------

inline constexpr auto kKernelStore = MakeStoreTable(
    "CUPTI_ACTIVITY_KIND_KERNEL", Time<&Kernel::start>{"start"}, Time<&Kernel::end>{"end"},
    U32<&Kernel::device>{"deviceId"}, Zero{"contextId"}, U32<&Kernel::stream>{"streamId"},
    Nullable<&Kernel::correlation>{"correlationId"}, GlobalPid<&Kernel::pid>{"globalPid"},
    // The model keeps one name: the full (templated) one when the source has it.
    Name<&Kernel::name>{"demangledName"}, FallbackName<&Kernel::name>{"shortName"}, Unwritten{"mangledName"},
    Int<&Kernel::registers>{"registersPerThread"}, Int<&Kernel::grid_x>{"gridX"}, Int<&Kernel::grid_y>{"gridY"},
    Int<&Kernel::grid_z>{"gridZ"}, Int<&Kernel::block_x>{"blockX"}, Int<&Kernel::block_y>{"blockY"},
    Int<&Kernel::block_z>{"blockZ"}, Int<&Kernel::shared_static>{"staticSharedMemory"},
    Int<&Kernel::shared_dynamic>{"dynamicSharedMemory"}, Zero{"localMemoryPerThread"}, Zero{"localMemoryTotal"},
    Zero{"gridId"}, Nullable<&Kernel::graph_node_id>{"graphNodeId"}, Nullable<&Kernel::graph_id>{"graphId"},
    TgPid<&Kernel::pid>{"tgPid"}, OptionalName<&Kernel::collective>{"tgCollective"},
    OptionalName<&Kernel::coll_dtype>{"tgCollDtype"}, Nullable<&Kernel::coll_in_nelems>{"tgCollInNelems"},
    Nullable<&Kernel::coll_out_nelems>{"tgCollOutNelems"}, Int<&Kernel::coll_group_size>{"tgCollGroupSize"},
    OptionalName<&Kernel::coll_group>{"tgCollGroup"}, OptionalName<&Kernel::coll_group_ranks>{"tgCollGroupRanks"},
    Nullable<&Kernel::coll_seq>{"tgCollSeq"});

inline constexpr auto kMemcpyStore = MakeStoreTable(
    "CUPTI_ACTIVITY_KIND_MEMCPY", Time<&Memcpy::start>{"start"}, Time<&Memcpy::end>{"end"},
    U32<&Memcpy::device>{"deviceId"}, Zero{"contextId"}, U32<&Memcpy::stream>{"streamId"},
    Nullable<&Memcpy::correlation>{"correlationId"}, GlobalPid<&Memcpy::pid>{"globalPid"},
    Int<&Memcpy::bytes>{"bytes"},
    // ENUM_CUDA_MEMCPY_OPER goes beyond the model (11-13: unified-memory migrations): unknown.
    Enum<&Memcpy::kind, CopyKind::kHtoD, CopyKind::kPtoP, Quality::kUnknownCopyKind>{"copyKind"},
    Enum<&Memcpy::src_kind, MemKind::kPageable, MemKind::kUnknown>{"srcKind"},
    Enum<&Memcpy::dst_kind, MemKind::kPageable, MemKind::kUnknown>{"dstKind"}, TgPid<&Memcpy::pid>{"tgPid"});

inline constexpr auto kMemsetStore = MakeStoreTable(
    "CUPTI_ACTIVITY_KIND_MEMSET", Time<&Memset::start>{"start"}, Time<&Memset::end>{"end"},
    U32<&Memset::device>{"deviceId"}, Zero{"contextId"}, U32<&Memset::stream>{"streamId"},
    Nullable<&Memset::correlation>{"correlationId"}, GlobalPid<&Memset::pid>{"globalPid"},
    Int<&Memset::value>{"value"}, Int<&Memset::bytes>{"bytes"},
    Enum<&Memset::mem_kind, MemKind::kPageable, MemKind::kUnknown>{"memKind"}, TgPid<&Memset::pid>{"tgPid"});

inline constexpr auto kSyncStore = MakeStoreTable(
    "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", Time<&Sync::start>{"start"}, Time<&Sync::end>{"end"},
    U32<&Sync::device>{"deviceId"}, Zero{"contextId"}, U32<&Sync::stream>{"streamId"},
    Nullable<&Sync::correlation>{"correlationId"}, GlobalPid<&Sync::pid>{"globalPid"},
    Enum<&Sync::kind, SyncKind::kUnknown, SyncKind::kContextSync>{"syncType"}, U32<&Sync::event_id>{"eventId"},
    TgPid<&Sync::pid>{"tgPid"}, Nullable<&Sync::wait_stream>{"tgWaitStream"},
    Nullable<&Sync::record_correlation>{"tgRecordCorrelation"});

inline constexpr auto kApiStore = MakeStoreTable(
    "CUPTI_ACTIVITY_KIND_RUNTIME", Time<&ApiCall::start>{"start"}, Time<&ApiCall::end>{"end"},
    EventClass<&ApiCall::kind>{"eventClass"}, GlobalTid<&ApiCall::pid, &ApiCall::tid>{"globalTid"},
    Nullable<&ApiCall::correlation>{"correlationId"}, Name<&ApiCall::name>{"nameId"},
    Int<&ApiCall::return_value>{"returnValue"}, TgPid<&ApiCall::pid, &ApiCall::tid>{"tgPid"},
    TgTid<&ApiCall::pid, &ApiCall::tid>{"tgTid"});

// NVTX_EVENTS and tracegate_gpu_ranges (same columns). end is NULL for marks; eventType, text,
// textId and domainId carry NVTX's event types and domain declarations (store_write.cpp,
// sqlite_events.cpp).
inline constexpr auto kRangeStore = MakeStoreTable(
    "NVTX_EVENTS", Time<&Range::start>{"start"}, ByHand<&Range::end>{"end"}, ByHand<>{"eventType"},
    ByHand<>{"text"}, GlobalTid<&Range::pid, &Range::tid>{"globalTid"}, ByHand<&Range::name>{"textId"},
    ByHand<&Range::domain>{"domainId"}, TgPid<&Range::pid, &Range::tid>{"tgPid"},
    TgTid<&Range::pid, &Range::tid>{"tgTid"}, Int<&Range::depth>{"tgDepth"}, Nullable<&Range::stream>{"tgStream"});

inline constexpr auto kSampleStore = MakeStoreTable(
    "tracegate_samples", Time<&Sample::time>{"time"}, U32<&Sample::device>{"deviceId"},
    Real<&Sample::temperature_c>{"temperatureC"}, Real<&Sample::sm_clock_mhz>{"smClockMHz"},
    Real<&Sample::mem_clock_mhz>{"memClockMHz"}, Real<&Sample::memory_used_mb>{"memoryUsedMB"},
    Real<&Sample::power_w>{"powerW"});

// ---- Generated code -------------------------------------------------------------------------

// Every model field the table's columns carry.
template <class... C>
constexpr auto StoredFields(const StoreTable<C...>&) {
  return std::tuple_cat(C::kFields...);
}

static_assert(ColumnCheck<Kernel>().With(StoredFields(kKernelStore)).All(), "a kernel column is not stored");
static_assert(ColumnCheck<Memcpy>().With(StoredFields(kMemcpyStore)).All(), "a memcpy column is not stored");
static_assert(ColumnCheck<Memset>().With(StoredFields(kMemsetStore)).All(), "a memset column is not stored");
static_assert(ColumnCheck<Sync>().With(StoredFields(kSyncStore)).All(), "a sync column is not stored");
static_assert(ColumnCheck<ApiCall>().With(StoredFields(kApiStore)).All(), "an API call column is not stored");
// on_gpu is not a column of the store: it is the table a range is in (NVTX_EVENTS or
// tracegate_gpu_ranges).
static_assert(ColumnCheck<Range>().With(StoredFields(kRangeStore)).With(&Range::on_gpu).All(),
              "a range column is not stored");
static_assert(ColumnCheck<Sample>().With(StoredFields(kSampleStore)).All(), "a sample column is not stored");

// Position of a column among the written (INSERT) or selected (SELECT) ones; -1 when not there.
template <bool kWritten, class... C>
constexpr int ColumnPosition(const StoreTable<C...>& t, std::string_view name) {
  int at = 0, found = -1;
  std::apply([&](const auto&... c) {
    ((c.name == name ? void(found = at) : void(), at += (kWritten ? c.kWritten : c.kSelected)), ...);
  }, t.columns);
  return found;
}

// The INSERT column list ("start, end, ...") or the SELECT list.
template <class... C>
std::string WrittenColumns(const StoreTable<C...>& t) {
  std::string out;
  std::apply([&](const auto&... c) {
    ((c.kWritten ? void(out += (out.empty() ? "" : ", ") + std::string(c.name)) : void()), ...);
  }, t.columns);
  return out;
}
template <class... C>
std::vector<std::string_view> SelectedColumns(const StoreTable<C...>& t) {
  std::vector<std::string_view> out;
  std::apply([&](const auto&... c) { ((c.kSelected ? out.push_back(c.name) : void()), ...); }, t.columns);
  return out;
}

// Binds row r to parameters p + 1 .. p + written columns; ByHand columns are left to the caller.
template <class Row, class Names, class... C>
void BindRow(const StoreTable<C...>& t, Stmt& q, int p, const Row& r, Names& names) {
  std::apply([&](const auto&... c) {
    auto one = [&](const auto& col) {
      using K = std::remove_cvref_t<decltype(col)>;
      if constexpr (K::kWritten) {
        ++p;
        if constexpr (!K::kByHand) K::Bind(q, p, r, names);
      }
    };
    (one(c), ...);
  }, t.columns);
}

// Reads the selected columns of the current result row into r (times and ByHand columns aside).
// A Read that returns bool says whether its column held a value; a Read with a fifth parameter
// (FallbackName, TgTid) is handed that of the column right before it, so no column is read twice.
template <class Row, class Reader, class Q, class... C>
void ReadRow(const StoreTable<C...>& t, const Q& q, Row& r, Reader& rd) {
  int col = 0;
  bool held = false;
  std::apply([&](const auto&... c) {
    auto one = [&](const auto& column) {
      using K = std::remove_cvref_t<decltype(column)>;
      if constexpr (K::kSelected) {
        bool this_held = false;  // unknown: taken as "no value"
        if constexpr (K::kByHand) {
        } else if constexpr (requires { K::Read(q, col, r, rd, held); }) {
          K::Read(q, col, r, rd, held);
        } else if constexpr (std::is_same_v<decltype(K::Read(q, col, r, rd)), bool>) {
          this_held = K::Read(q, col, r, rd);
        } else {
          K::Read(q, col, r, rd);
        }
        held = this_held;
        ++col;
      }
    };
    (one(c), ...);
  }, t.columns);
}

}  // namespace tg::internal
