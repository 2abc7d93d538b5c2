// Appending one columnar table to another of the same type, column by column: the two-thread
// importers (Kineto JSON, SQLite) each fill a table of their own per thread and join them.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "analyzer/util/two_core_jobs.h"
#include "tracegate/analyzer/model.h"

namespace tg::internal {

// Calls f(a_i, b_i) for the elements of two tuples of the same size, in order.
template <class A, class B, class F>
void Zip(A&& a, B&& b, F f) {
  [&]<size_t... I>(std::index_sequence<I...>) { (f(std::get<I>(a), std::get<I>(b)), ...); }
  (std::make_index_sequence<std::tuple_size_v<std::remove_reference_t<A>>>{});
}

// Grows `v` to hold `n` more elements and maps the pages they will take in one call
// (MADV_POPULATE_WRITE): on fresh memory that costs about two thirds of a fault per page, the
// copy's cost otherwise. Only pages wholly past the last element; a kernel without the advice
// (EINVAL) leaves them to fault one by one.
template <class T>
void GrowMapped(std::vector<T>& v, size_t n) {
  v.reserve(v.size() + n);
#if defined(MADV_POPULATE_WRITE)
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto first = reinterpret_cast<uintptr_t>(v.data() + v.size());
  const auto last = reinterpret_cast<uintptr_t>(v.data() + v.size() + n);
  const uintptr_t lo = (first + page - 1) & ~(page - 1), hi = last & ~(page - 1);
  if (hi > lo && hi - lo >= 16 * page) madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_POPULATE_WRITE);
#endif
}

// Appends column `s` to `d`, then frees `s`'s memory.
template <class C>
void MoveColumn(C& d, C& s) {
  if constexpr (requires { d.Append(s); }) {
    d.Append(s);  // SparseColumn, NarrowColumn, CodedColumn
  } else {
    GrowMapped(d, s.size());
    d.insert(d.end(), s.begin(), s.end());
    C().swap(s);  // `s = {}` would keep the capacity
  }
}

template <class C>
inline constexpr bool kIsCoded = false;
template <class T>
inline constexpr bool kIsCoded<CodedColumn<T>> = true;
template <class C>
inline constexpr bool kIsSparse = false;
template <class T>
inline constexpr bool kIsSparse<SparseColumn<T>> = true;

// About the bytes a column's rows take (what its append copies).
template <class C>
size_t ColumnBytes(const C& c) {
  using T = std::remove_cvref_t<decltype(c[0])>;
  if constexpr (std::is_same_v<C, NarrowColumn>) {
    return c.size() * sizeof(int32_t);
  } else if constexpr (kIsCoded<C>) {
    return c.size() * sizeof(uint16_t);
  } else if constexpr (kIsSparse<C>) {
    return c.stored() * (sizeof(T) + sizeof(size_t));  // each stored value with its row
  } else {
    return c.size() * sizeof(T);
  }
}

// Appends `from` to `to` column by column, freeing each column of `from` once it is copied, so
// the two tables never exist whole twice.
template <class Table>
void MoveColumns(Table& to, Table& from) {
  Zip(to.Columns(), from.Columns(), [](auto& d, auto& s) { MoveColumn(d, s); });
}

// The columns' appends of one or more tables, shared between two cores (MoveColumns for several
// tables at once). Add queues a table; then(d, first) runs on the same core right after column d
// is appended (first: its first appended row), e.g. to re-map string ids. Run appends them all
// and returns when every one is done: the largest first, each to the core with less queued.
class ColumnMoves {
 public:
  template <class Table, class Then>
  void Add(Table& to, Table& from, Then then) {
    Zip(to.Columns(), from.Columns(), [&](auto& d, auto& s) {
      jobs_.Add(ColumnBytes(s), [&d, &s, then] {
        const size_t first = d.size();
        MoveColumn(d, s);
        then(d, first);
      });
    });
  }
  template <class Table>
  void Add(Table& to, Table& from) {
    Add(to, from, [](auto&, size_t) {});
  }
  void Run() { jobs_.Run(); }

 private:
  TwoCoreJobs jobs_;
};

}  // namespace tg::internal
