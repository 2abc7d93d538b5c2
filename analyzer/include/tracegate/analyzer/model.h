// The trace model: one CUDA-free, columnar representation that every importer fills and every
// analysis reads. Times are int64 nanoseconds on one clock per trace. Names are interned
// (StringTable). Each table keeps one std::vector (or SparseColumn) per column; `Add(row)`
// appends and `Row(i)` reads one back. Every column is declared once, in the TG_*_COLUMNS lists. Enum values follow CUPTI / Nsight Systems numbering so the store can use the
// same integers as nsys exports.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "tracegate/analyzer/quality.h"
#include "tracegate/analyzer/strings.h"
#include "tracegate/analyzer/types.h"

namespace tg {

// Our own vocabulary of event kinds (one name table; mapping from CUPTI lives in collector/cupti).
enum class EventKind : uint8_t { kKernel, kMemcpy, kMemset, kSync, kRuntime, kDriver, kRange, kSample };
inline constexpr std::string_view kEventKindNames[] = {"kernel", "memcpy",  "memset", "sync",
                                                       "runtime", "driver", "range",  "sample"};
constexpr std::string_view EventKindName(EventKind k) { return kEventKindNames[static_cast<int>(k)]; }

// Values as ENUM_CUDA_MEMCPY_OPER in nsys exports (= CUpti_ActivityMemcpyKind).
enum class CopyKind : uint8_t {
  kUnknown = 0, kHtoD = 1, kDtoH = 2, kHtoA = 3, kAtoH = 4, kAtoA = 5, kAtoD = 6, kDtoA = 7,
  kDtoD = 8, kHtoH = 9, kPtoP = 10,
};
std::string_view CopyKindName(CopyKind k);  // "HtoD", "DtoH", ...

// Values as ENUM_CUDA_MEM_KIND in nsys exports (= CUpti_ActivityMemoryKind minus one).
enum class MemKind : uint8_t {
  kPageable = 0, kPinned = 1, kDevice = 2, kArray = 3, kManaged = 4, kDeviceStatic = 5,
  kManagedStatic = 6, kUnknown = 7,
};
std::string_view MemKindName(MemKind k);

// Values as ENUM_CUPTI_SYNC_TYPE in nsys exports.
enum class SyncKind : uint8_t {
  kUnknown = 0, kEventSync = 1, kStreamWaitEvent = 2, kStreamSync = 3, kContextSync = 4,
};
std::string_view SyncKindName(SyncKind k);

enum class ApiKind : uint8_t { kRuntime = 0, kDriver = 1 };

struct Device {
  int32_t id = -1;
  std::string name;
  int32_t sm_count = 0;
  int64_t memory_bytes = 0;
  double peak_bandwidth_gbs = 0;  // 0 = unknown
  int32_t compute_major = 0, compute_minor = 0;
};

struct Process {
  int64_t pid = kUnknownId;
  std::string name;
};

// Reads a column that stores its rows in another form row by row, by value.
template <class Column, class T>
class RowIterator {
 public:
  using iterator_category = std::forward_iterator_tag;
  using value_type = T;
  using difference_type = std::ptrdiff_t;
  using pointer = void;
  using reference = T;
  RowIterator() = default;
  RowIterator(const Column* c, size_t i) : c_(c), i_(i) {}
  T operator*() const { return (*c_)[i_]; }
  RowIterator& operator++() {
    ++i_;
    return *this;
  }
  RowIterator operator++(int) {
    RowIterator old = *this;
    ++i_;
    return old;
  }
  friend bool operator==(const RowIterator& a, const RowIterator& b) { return a.i_ == b.i_; }

 private:
  const Column* c_ = nullptr;
  size_t i_ = 0;
};

// What the columns that store their rows in another form (SparseColumn, NarrowColumn,
// CodedColumn) share, from the size() and operator[] each defines: empty(), reading the rows in
// order by value (`for (int64_t pid : trace.kernels.pid)`), and comparing row by row.
template <class Column, class T>
class RowColumn {
 public:
  bool empty() const { return self().size() == 0; }
  using const_iterator = RowIterator<Column, T>;
  const_iterator begin() const { return {&self(), 0}; }
  const_iterator end() const { return {&self(), self().size()}; }
  friend bool operator==(const Column& a, const Column& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (a[i] != b[i]) return false;
    return true;
  }

 private:
  const Column& self() const { return static_cast<const Column&>(*this); }
};

// A column that nearly always holds one value (`fill`): the CUDA graph ids, kUnknownId outside
// graph launches. Only the rows that differ are stored, as (row, value) pairs in row order, until
// they would take more memory than a plain vector (half the rows for 8-byte values, a third for
// 4-byte ones); then the column turns into one. Reads are O(1) without exceptions or once dense,
// O(log exceptions) in between.
template <class T>
class SparseColumn : public RowColumn<SparseColumn<T>, T> {
 public:
  explicit SparseColumn(T fill = T{}) : fill_(fill) {}
  size_t size() const { return size_; }
  void reserve(size_t n) {
    if (dense_) values_.reserve(n);
  }
  // f(first byte, bytes) of the block the first `rows` rows take: only once dense (memory advice:
  // the nsys import's huge-page hint, analyzer/util/huge_pages.h).
  template <class F>
  void RowBlock(size_t rows, F&& f) const {
    if (dense_) f(values_.data(), rows * sizeof(T));
  }
  void push_back(T v) {
    const size_t row = size_++;
    if (dense_) {
      values_.push_back(v);
    } else if (v != fill_) {
      rows_.push_back(row);
      values_.push_back(v);
      DensifyIfLarger();
    }
  }
  T operator[](size_t i) const {
    if (dense_) return values_[i];
    if (rows_.empty()) return fill_;
    auto it = std::lower_bound(rows_.begin(), rows_.end(), i);
    return it != rows_.end() && *it == i ? values_[static_cast<size_t>(it - rows_.begin())] : fill_;
  }
  // Appends every row of `from` (same fill), then empties it and frees its memory.
  void Append(SparseColumn& from) {
    const size_t base = size_;
    if (from.dense_ && dense_) {
      values_.insert(values_.end(), from.values_.begin(), from.values_.end());
      size_ = base + from.size_;
    } else if (from.dense_) {
      for (const T& v : from.values_) push_back(v);
    } else if (dense_) {
      values_.resize(base + from.size_, fill_);
      for (size_t k = 0; k < from.rows_.size(); ++k) values_[base + from.rows_[k]] = from.values_[k];
      size_ = base + from.size_;
    } else {
      for (size_t k = 0; k < from.rows_.size(); ++k) {
        rows_.push_back(base + from.rows_[k]);
        values_.push_back(from.values_[k]);
      }
      size_ = base + from.size_;
      DensifyIfLarger();
    }
    from = SparseColumn(from.fill_);
  }
  // Replaces each value v of rows >= `first` by f(v); f must map `fill` to itself (rows holding
  // `fill` are not visited while sparse). Used to re-map string ids after a merge.
  template <class F>
  void MapFrom(size_t first, F f) {
    if (dense_) {
      for (size_t i = first; i < values_.size(); ++i) values_[i] = f(values_[i]);
      return;
    }
    auto it = std::lower_bound(rows_.begin(), rows_.end(), first);
    for (size_t k = static_cast<size_t>(it - rows_.begin()); k < values_.size(); ++k) values_[k] = f(values_[k]);
  }
  // Rows that are not `fill` (all rows once dense): what the column costs.
  size_t stored() const { return values_.size(); }

 private:
  void DensifyIfLarger() {
    if (values_.size() > 64 && values_.size() * (sizeof(size_t) + sizeof(T)) > size_ * sizeof(T)) Densify();
  }
  [[gnu::noinline]] void Densify() {
    std::vector<T> dense(size_, fill_);
    for (size_t k = 0; k < rows_.size(); ++k) dense[rows_[k]] = values_[k];
    values_ = std::move(dense);
    std::vector<size_t>().swap(rows_);
    dense_ = true;
  }
  T fill_;
  size_t size_ = 0;
  bool dense_ = false;
  std::vector<size_t> rows_;  // sparse: the rows that differ from fill_, ascending
  std::vector<T> values_;     // sparse: their values; dense: every row
};

// An int64 column whose values nearly always fit 32 bits (correlation ids: CUPTI's are 32-bit
// counters): 4 bytes a row until a value does not fit, then 8.
class NarrowColumn : public RowColumn<NarrowColumn, int64_t> {
 public:
  static bool Fits(int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; }
  size_t size() const { return wide_ ? values_.size() : narrow_.size(); }
  void reserve(size_t n) {
    if (wide_) {
      values_.reserve(n);
    } else {
      narrow_.reserve(n);
    }
  }
  // f(first byte, bytes) of the block the first `rows` rows take (as SparseColumn::RowBlock).
  template <class F>
  void RowBlock(size_t rows, F&& f) const {
    if (wide_) {
      f(values_.data(), rows * sizeof(int64_t));
    } else {
      f(narrow_.data(), rows * sizeof(int32_t));
    }
  }
  void push_back(int64_t v) {
    if (!wide_ && Fits(v)) {
      narrow_.push_back(static_cast<int32_t>(v));
      return;
    }
    if (!wide_) Widen();
    values_.push_back(v);
  }
  [[gnu::always_inline]] int64_t operator[](size_t i) const { return wide_ ? values_[i] : narrow_[i]; }
  void set(size_t i, int64_t v) {
    if (!wide_ && !Fits(v)) Widen();
    if (wide_) {
      values_[i] = v;
    } else {
      narrow_[i] = static_cast<int32_t>(v);
    }
  }
  // Appends every row of `from`, then empties it and frees its memory. Stored as push_back would
  // leave them: 32-bit while every value of both fits.
  void Append(NarrowColumn& from) {
    const bool fits = !from.wide_ || std::all_of(from.values_.begin(), from.values_.end(), Fits);
    if (!wide_ && fits) {
      narrow_.reserve(narrow_.size() + from.size());
      if (from.wide_) {
        for (int64_t v : from.values_) narrow_.push_back(static_cast<int32_t>(v));
      } else {
        narrow_.insert(narrow_.end(), from.narrow_.begin(), from.narrow_.end());
      }
    } else {
      if (!wide_) Widen();
      if (from.wide_) {
        values_.insert(values_.end(), from.values_.begin(), from.values_.end());
      } else {
        values_.insert(values_.end(), from.narrow_.begin(), from.narrow_.end());
      }
    }
    from = NarrowColumn();
  }
  size_t stored() const { return size(); }

 private:
  [[gnu::noinline]] void Widen() {
    values_.reserve(std::max(narrow_.capacity(), narrow_.size() + 1));
    values_.assign(narrow_.begin(), narrow_.end());
    std::vector<int32_t>().swap(narrow_);
    wide_ = true;
  }
  bool wide_ = false;
  std::vector<int32_t> narrow_;  // while every value fits
  std::vector<int64_t> values_;  // once one does not
};

// A column of few distinct values (process, thread, stream and device ids; kernels' grid and
// block sizes, registers and static shared memory): each row holds a 16-bit code into the
// column's dictionary of its values, 2 bytes a row instead of 4 or 8, until a 65,537th distinct
// value turns it into a plain vector. Reads are O(1); appends look the value up among the last
// one, then the dictionary (a scan while it is small, a hash map beyond).
template <class T>
class CodedColumn : public RowColumn<CodedColumn<T>, T> {
 public:
  size_t size() const { return dense_ ? values_.size() : codes_.size(); }
  void reserve(size_t n) {
    if (dense_) {
      values_.reserve(n);
    } else {
      codes_.reserve(n);
    }
  }
  // f(first byte, bytes) of the block the first `rows` rows take (as SparseColumn::RowBlock).
  template <class F>
  void RowBlock(size_t rows, F&& f) const {
    if (dense_) {
      f(values_.data(), rows * sizeof(T));
    } else {
      f(codes_.data(), rows * sizeof(uint16_t));
    }
  }
  void push_back(T v) {
    if (dense_) {
      values_.push_back(v);
    } else if (!dict_.empty() && dict_[last_] == v) {
      codes_.push_back(last_);
    } else {
      PushNew(v);
    }
  }
  // Inlined always: sort comparators read ids through it in the hot loop.
  [[gnu::always_inline]] T operator[](size_t i) const { return dense_ ? values_[i] : dict_[codes_[i]]; }
  // Changes row i (tests build traces this way; the importers only append).
  void set(size_t i, T v) {
    push_back(v);  // codes v, or turns the column plain
    if (dense_) {
      values_[i] = values_.back();
      values_.pop_back();
    } else {
      codes_[i] = codes_.back();
      codes_.pop_back();
    }
  }
  // Appends every row of `from`, then empties it and frees its memory.
  void Append(CodedColumn& from) {
    reserve(size() + from.size());
    if (dense_ && from.dense_) {
      values_.insert(values_.end(), from.values_.begin(), from.values_.end());
    } else if (!dense_ && !from.dense_ && dict_.size() + from.dict_.size() <= size_t{UINT16_MAX} + 1) {
      // Both coded, with room for all of `from`'s values: each value of its rows coded once, in
      // the order of its dictionary (the order its rows first hold them, as appending row by row
      // would add them), then the rows' codes translated.
      std::vector<uint8_t> used(from.dict_.size(), 0);
      for (uint16_t c : from.codes_) used[c] = 1;
      std::vector<uint16_t> code(from.dict_.size(), 0);
      for (size_t k = 0; k < from.dict_.size(); ++k)
        if (used[k]) code[k] = CodeOf(from.dict_[k]);
      const size_t at = codes_.size();
      codes_.resize(at + from.codes_.size());
      uint16_t* out = codes_.data() + at;
      for (size_t k = 0; k < from.codes_.size(); ++k) out[k] = code[from.codes_[k]];
      if (!from.codes_.empty()) last_ = code[from.codes_.back()];
    } else if (from.dense_) {
      for (const T& v : from.values_) push_back(v);
    } else {
      for (uint16_t c : from.codes_) push_back(from.dict_[c]);
    }
    from = CodedColumn();
  }
  // Replaces each value v of rows >= `first` by f(v).
  template <class F>
  void MapFrom(size_t first, F f) {
    const size_t n = size();
    std::vector<T> tail;
    tail.reserve(n - std::min(first, n));
    for (size_t i = first; i < n; ++i) tail.push_back(f((*this)[i]));
    Truncate(first);
    for (const T& v : tail) push_back(v);
  }
  // Distinct values held (every row once plain).
  size_t stored() const { return dense_ ? values_.size() : dict_.size(); }

 private:
  static constexpr size_t kScan = 16;  // dictionaries up to this size are scanned
  // The code of `v` in the dictionary, or -1.
  int Find(T v) const {
    if (dict_.size() <= kScan) {
      for (size_t k = 0; k < dict_.size(); ++k)
        if (dict_[k] == v) return static_cast<int>(k);
    } else if (auto it = index_.find(v); it != index_.end()) {
      return it->second;
    }
    return -1;
  }
  // The code of `v`, added to the dictionary when new (the caller knows there is room).
  uint16_t CodeOf(T v) {
    if (const int k = Find(v); k >= 0) return static_cast<uint16_t>(k);
    const auto code = static_cast<uint16_t>(dict_.size());
    dict_.push_back(v);
    if (dict_.size() > kScan) {
      if (index_.empty()) {
        for (size_t k = 0; k < dict_.size(); ++k) index_.emplace(dict_[k], static_cast<uint16_t>(k));
      } else {
        index_.emplace(v, code);
      }
    }
    return code;
  }
  [[gnu::noinline]] void PushNew(T v) {
    if (const int k = Find(v); k >= 0) {
      last_ = static_cast<uint16_t>(k);
      codes_.push_back(last_);
      return;
    }
    if (dict_.size() > UINT16_MAX) {  // the 65,537th value: plain from here on
      values_.reserve(codes_.capacity() > codes_.size() ? codes_.capacity() : codes_.size() + 1);
      for (uint16_t c : codes_) values_.push_back(dict_[c]);
      values_.push_back(v);
      std::vector<uint16_t>().swap(codes_);
      std::vector<T>().swap(dict_);
      index_.clear();
      dense_ = true;
      return;
    }
    last_ = CodeOf(v);
    codes_.push_back(last_);
  }
  void Truncate(size_t n) {
    if (dense_) {
      values_.resize(std::min(n, values_.size()));
    } else {
      codes_.resize(std::min(n, codes_.size()));
    }
  }
  bool dense_ = false;
  uint16_t last_ = 0;
  std::vector<uint16_t> codes_;            // coded: one per row
  std::vector<T> dict_;                    // coded: the distinct values, in order of first appearance
  std::unordered_map<T, uint16_t> index_;  // coded, beyond kScan values: value -> code
  std::vector<T> values_;                  // plain: one per row
};

// ---- The columns: one declaration per column ----------------------------------------------------
// Each event table is declared once, as a list of X(type, name, row default, storage): the row
// struct (Kernel, ...), the columnar table (KernelTable, ...), their Add/Row/Reserve/Columns and
// the column names and indexes are generated from it. Storage is Dense (one std::vector),
// Sparse<fill> (a SparseColumn for a column that nearly always holds `fill`), Coded (a
// CodedColumn for ids and launch configurations that take few distinct values: 2 bytes a row) or
// Narrow (a NarrowColumn for int64 ids that fit 32 bits: 4 bytes a row). The store
// (analyzer/store/store_columns.h), the Kineto builder, the CUPTI converter and the Chrome export
// are checked against these lists at compile time (ColumnCheck), so a new column that one of
// them does not handle fails the build there. Comments inside a list are /* */: a // comment
// would swallow the line continuation.

struct Dense {};
template <auto Fill>
struct Sparse {};
struct Coded {};
struct Narrow {};  // int64 only

namespace internal {
template <class T, class Storage>
struct ColumnStorage {
  using Type = std::vector<T>;
  static Type Make() { return {}; }
};
// std::vector<bool> packs bits: a byte per row reads faster and can be handed out by reference.
template <>
struct ColumnStorage<bool, Dense> {
  using Type = std::vector<uint8_t>;
  static Type Make() { return {}; }
};
template <class T, auto Fill>
struct ColumnStorage<T, Sparse<Fill>> {
  using Type = SparseColumn<T>;
  static Type Make() { return Type(static_cast<T>(Fill)); }
};
template <class T>
struct ColumnStorage<T, Narrow> {
  static_assert(std::is_same_v<T, int64_t>);
  using Type = NarrowColumn;
  static Type Make() { return {}; }
};
template <class T>
struct ColumnStorage<T, Coded> {
  using Type = CodedColumn<T>;
  static Type Make() { return {}; }
};
}  // namespace internal

#define TG_KERNEL_COLUMNS(X)                                                                      \
  X(TimeNs, start, 0, Dense)                                                                      \
  X(TimeNs, end, 0, Dense)                                                                        \
  X(StringId, name, 0, Dense) /* as the source gives it (demangled when the source demangles) */  \
  X(int32_t, device, -1, Coded)                                                                   \
  X(int64_t, stream, kUnknownId, Coded)                                                           \
  X(int64_t, correlation, kUnknownId, Narrow)                                                     \
  X(int32_t, grid_x, 0, Coded) /* 1-D launches (most of them) have y = z = 1 */                   \
  X(int32_t, grid_y, 0, Sparse<1>)                                                                \
  X(int32_t, grid_z, 0, Sparse<1>)                                                                \
  X(int32_t, block_x, 0, Coded)                                                                   \
  X(int32_t, block_y, 0, Sparse<1>)                                                               \
  X(int32_t, block_z, 0, Sparse<1>)                                                               \
  X(int32_t, registers, 0, Coded)          /* per thread */                                       \
  X(int32_t, shared_static, 0, Coded)      /* bytes */                                            \
  X(int32_t, shared_dynamic, 0, Sparse<0>) /* bytes; mostly 0 */                                  \
  X(int64_t, pid, kUnknownId, Coded)                                                              \
  /* CUDA graph launches keep their graph and node ids; kUnknownId outside graphs */              \
  X(int64_t, graph_id, kUnknownId, Sparse<kUnknownId>)                                            \
  X(int64_t, graph_node_id, kUnknownId, Sparse<kUnknownId>)                                       \
  /* Collective metadata PyTorch writes into an NCCL kernel's args (empty / -1 / 0 elsewhere): */ \
  /* "Collective name", "dtype", "In/Out msg nelems", "Group size", "Process Group Name", */      \
  /* "Process Group Ranks" (as written, e.g. "[0, 1]"), "Seq" (per process group) */              \
  X(StringId, collective, 0, Sparse<0>)                                                           \
  X(StringId, coll_dtype, 0, Sparse<0>)                                                           \
  X(int64_t, coll_in_nelems, kUnknownId, Sparse<kUnknownId>)                                      \
  X(int64_t, coll_out_nelems, kUnknownId, Sparse<kUnknownId>)                                     \
  X(int32_t, coll_group_size, 0, Sparse<0>)                                                       \
  X(StringId, coll_group, 0, Sparse<0>)                                                           \
  X(StringId, coll_group_ranks, 0, Sparse<0>)                                                     \
  X(int64_t, coll_seq, kUnknownId, Sparse<kUnknownId>)

// The first columns of copies, memsets and syncs (kernels have their name between end and device).
#define TG_GPU_ACTIVITY_COLUMNS(X)      \
  X(TimeNs, start, 0, Dense)            \
  X(TimeNs, end, 0, Dense)              \
  X(int32_t, device, -1, Coded)         \
  X(int64_t, stream, kUnknownId, Coded) \
  X(int64_t, correlation, kUnknownId, Narrow)

#define TG_MEMCPY_COLUMNS(X)                     \
  TG_GPU_ACTIVITY_COLUMNS(X)                     \
  X(int64_t, bytes, 0, Dense)                    \
  X(CopyKind, kind, CopyKind::kUnknown, Dense)   \
  X(MemKind, src_kind, MemKind::kUnknown, Dense) \
  X(MemKind, dst_kind, MemKind::kUnknown, Dense) \
  X(int64_t, pid, kUnknownId, Coded)

#define TG_MEMSET_COLUMNS(X)                     \
  TG_GPU_ACTIVITY_COLUMNS(X)                     \
  X(int64_t, bytes, 0, Dense)                    \
  X(int32_t, value, 0, Dense)                    \
  X(MemKind, mem_kind, MemKind::kUnknown, Dense) \
  X(int64_t, pid, kUnknownId, Coded)

// Syncs: stream is -1 for context / event syncs without a stream (for a stream wait event: the
// waiting stream). For an event sync or a stream wait event, the event's record: the stream it
// was recorded on (wait_stream) and the correlation id of its cudaEventRecord call
// (record_correlation); kUnknownId where the source does not say. From Kineto's wait_on_stream
// and wait_on_cuda_event_record_corr_id (-1 there reads as unknown), or an nsys export's
// CUPTI_ACTIVITY_KIND_CUDA_EVENT row with the sync's eventSyncId, or the CUPTI collector's CUDA
// event record with the sync's cudaEventSyncId (collector/cupti/convert.cpp).
#define TG_SYNC_COLUMNS(X)                                \
  TG_GPU_ACTIVITY_COLUMNS(X)                              \
  X(SyncKind, kind, SyncKind::kUnknown, Dense)            \
  X(int64_t, event_id, kUnknownId, Dense)                 \
  X(int64_t, pid, kUnknownId, Coded)                      \
  X(int64_t, wait_stream, kUnknownId, Sparse<kUnknownId>) \
  X(int64_t, record_correlation, kUnknownId, Sparse<kUnknownId>)

#define TG_API_COLUMNS(X)                     \
  X(TimeNs, start, 0, Dense)                  \
  X(TimeNs, end, 0, Dense)                    \
  X(StringId, name, 0, Dense)                 \
  X(ApiKind, kind, ApiKind::kRuntime, Dense)  \
  X(int64_t, pid, kUnknownId, Coded)          \
  X(int64_t, tid, kUnknownId, Coded)          \
  X(int64_t, correlation, kUnknownId, Narrow) \
  X(int32_t, return_value, 0, Sparse<0>) /* cudaSuccess nearly always */

#define TG_RANGE_COLUMNS(X)                                                                                            \
  X(TimeNs, start, 0, Dense)                                                                                           \
  X(TimeNs, end, 0, Dense)                                                                                             \
  X(StringId, name, 0, Dense)                                                                                          \
  X(StringId, domain, 0, Sparse<0>) /* empty for the default domain (most NVTX ranges) */                              \
  X(int64_t, pid, kUnknownId, Coded)                                                                                   \
  X(int64_t, tid, kUnknownId, Coded)                                                                                   \
  X(int32_t, depth, 0, Dense)                        /* nesting level on its thread, 0 = outermost */                  \
  X(bool, on_gpu, false, Dense)                      /* Kineto gpu_user_annotation: a range projected onto a stream */ \
  X(int64_t, stream, kUnknownId, Sparse<kUnknownId>) /* set for GPU-projected ranges only */

// NaN / -1 where not sampled.
#define TG_SAMPLE_COLUMNS(X)            \
  X(TimeNs, time, 0, Dense)             \
  X(int32_t, device, -1, Dense)         \
  X(double, temperature_c, -1, Dense)   \
  X(double, sm_clock_mhz, -1, Dense)    \
  X(double, mem_clock_mhz, -1, Dense)   \
  X(double, memory_used_mb, -1, Dense)  \
  X(double, power_w, -1, Dense)

// What the lists above generate. Row structs stay aggregates in list order, so Kernel{start,
// end, name, ...} keeps working.
#define TG_ROW_FIELD(T, n, def, S) T n = def;
#define TG_COLUMN_NAME(T, n, def, S) #n,
#define TG_COLUMN_INDEX(T, n, def, S)                          \
  if constexpr (std::is_same_v<M, T>) {                        \
    if (m == &Self::n) return i;                               \
  }                                                            \
  ++i;
#define TG_TABLE_COLUMN(T, n, def, S) \
  typename internal::ColumnStorage<T, S>::Type n = internal::ColumnStorage<T, S>::Make();
#define TG_TIE_COLUMN(T, n, def, S) std::tie(n),

// In a row struct: its column names and ColumnIndex(&Row::field), both in list order.
#define TG_ROW_COLUMNS(R, COLUMNS)                                                   \
  static constexpr std::string_view kColumnNames[] = {COLUMNS(TG_COLUMN_NAME)};      \
  template <class M>                                                                 \
  static constexpr int ColumnIndex(M R::*m) {                                        \
    using Self = R;                                                                  \
    int i = 0;                                                                       \
    COLUMNS(TG_COLUMN_INDEX)                                                         \
    return -1;                                                                       \
  }

// In a table: Add / Row / Reserve (model.cpp) and every column as a tuple of references, in list
// order, for per-column loops.
#define TG_TABLE_METHODS(R, COLUMNS, FIRST)                                                  \
  using RowType = R;                                                                         \
  size_t size() const { return FIRST.size(); }                                               \
  void Add(const R& r);                                                                      \
  R Row(size_t i) const;                                                                     \
  void Reserve(size_t n);                                                                    \
  auto Columns() { return std::tuple_cat(COLUMNS(TG_TIE_COLUMN) std::tuple<>()); }           \
  auto Columns() const { return std::tuple_cat(COLUMNS(TG_TIE_COLUMN) std::tuple<>()); }

// A row struct (one field per column, in list order) and its columnar table (one column per
// field, all of the same length).
#define TG_ROW_AND_TABLE(R, Table, COLUMNS, FIRST) \
  struct R {                                       \
    COLUMNS(TG_ROW_FIELD)                          \
    TG_ROW_COLUMNS(R, COLUMNS)                     \
  };                                               \
  struct Table {                                   \
    COLUMNS(TG_TABLE_COLUMN)                       \
    TG_TABLE_METHODS(R, COLUMNS, FIRST)            \
  };

TG_ROW_AND_TABLE(Kernel, KernelTable, TG_KERNEL_COLUMNS, start)
TG_ROW_AND_TABLE(Memcpy, MemcpyTable, TG_MEMCPY_COLUMNS, start)
TG_ROW_AND_TABLE(Memset, MemsetTable, TG_MEMSET_COLUMNS, start)
TG_ROW_AND_TABLE(Sync, SyncTable, TG_SYNC_COLUMNS, start)
TG_ROW_AND_TABLE(ApiCall, ApiTable, TG_API_COLUMNS, start)
// NVTX ranges (push/pop and start/end), NVTX marks (start == end) and profiler user annotations.
TG_ROW_AND_TABLE(Range, RangeTable, TG_RANGE_COLUMNS, start)
// Telemetry (NVML): one row per device per sampling tick.
TG_ROW_AND_TABLE(Sample, SampleTable, TG_SAMPLE_COLUMNS, time)

// Which columns of `Row` a stage handles, from member pointers: each stage that must carry
// every column (store, importers, collector, export) static_asserts
// ColumnCheck<Row>().With(&Row::a, ...).All(), so a new column it does not handle (or explicitly
// skip) fails the build there.
template <class Row>
class ColumnCheck {
 public:
  template <class... M>
  constexpr ColumnCheck With(M Row::*... m) const {
    ColumnCheck c = *this;
    ((c.seen_[static_cast<size_t>(Row::ColumnIndex(m))] = true), ...);
    return c;
  }
  template <class... M>
  constexpr ColumnCheck With(const std::tuple<M Row::*...>& m) const {
    return std::apply([c = *this](auto... f) { return c.With(f...); }, m);
  }
  constexpr bool All() const {
    for (bool s : seen_)
      if (!s) return false;
    return true;
  }

 private:
  bool seen_[std::size(Row::kColumnNames)] = {};
};

// Well-known metadata keys (free-form keys are allowed too).
namespace meta {
inline constexpr std::string_view kSourceFormat = "source_format";    // kineto_json, nsys_sqlite, tracegate
inline constexpr std::string_view kSourceVersion = "source_version";  // format/schema version
inline constexpr std::string_view kSourcePath = "source_path";
inline constexpr std::string_view kProducer = "producer";             // tool + version that wrote it
inline constexpr std::string_view kCudaVersion = "cuda_version";
inline constexpr std::string_view kDriverVersion = "driver_version";
inline constexpr std::string_view kCuptiVersion = "cupti_version";
inline constexpr std::string_view kHost = "host";
// The peak device memory a recording's collector saw a process allocate (MB, "%.1f"; MergeParts
// sums it over processes), and where that figure came from: the report's memory_peak_mb and its
// memory_peak_mb_source.
inline constexpr std::string_view kMemoryPeakMb = "memory_peak_mb";
inline constexpr std::string_view kMemoryPeakMbSource = "memory_peak_mb_source";
}  // namespace meta

struct Trace {
  StringTable strings;
  KernelTable kernels;
  MemcpyTable memcpys;
  MemsetTable memsets;
  SyncTable syncs;
  ApiTable api_calls;
  RangeTable ranges;
  SampleTable samples;
  std::vector<Device> devices;
  std::vector<Process> processes;
  std::map<std::string, std::string, std::less<>> metadata;
  QualityCounters quality;
  // Derived, not stored: the range rows by (pid, tid, on_gpu), then start, the longer first, then
  // row, as FinalizeTrace nests them (empty before it). A hint for readers that walk each thread's
  // ranges in time order (the host model): they check it is a permutation of the rows and that
  // each thread's rows come out in that order, so a stale one costs a sort, never a wrong answer.
  std::vector<uint32_t> range_order;

  std::string_view Name(StringId id) const { return strings.View(id); }
  // Earliest start / latest end over every event; {0, 0} for an empty trace.
  std::pair<TimeNs, TimeNs> Window() const;
  size_t GpuEventCount() const { return kernels.size() + memcpys.size() + memsets.size(); }
  const Device* FindDevice(int32_t id) const;
};

// What an API call does, from its name (nsys' version suffix "_v7000" and the per-thread-stream
// suffixes _ptsz / _ptds / _spt removed): a kernel launch of the runtime, driver or HIP API
// (cudaLaunchKernel, cuLaunchKernel, hipModuleLaunchKernel, ...), a graph launch (cudaGraphLaunch,
// cuGraphLaunch, hipGraphLaunch), a device-wide sync, or the begin / end of a stream capture.
enum class ApiRole : uint8_t { kOther, kKernelLaunch, kGraphLaunch, kDeviceSync, kCaptureBegin, kCaptureEnd };
ApiRole ApiRoleOf(std::string_view name);

// After import: counts GPU activities whose correlation id has no API call (kUnmatchedCorrelation)
// and computes range nesting depth per thread. Importers call it once at the end.
void FinalizeTrace(Trace& trace);

}  // namespace tg
