// Appending one columnar table to another of the same type, column by column: the two-thread
// importers (Kineto JSON, SQLite) each fill a table of their own per thread and join them.
#pragma once

#include <tuple>
#include <type_traits>
#include <utility>

#include "tracegate/analyzer/model.h"

namespace tg::internal {

// Calls f(a_i, b_i) for the elements of two tuples of the same size, in order.
template <class A, class B, class F>
void Zip(A&& a, B&& b, F f) {
  [&]<size_t... I>(std::index_sequence<I...>) { (f(std::get<I>(a), std::get<I>(b)), ...); }
  (std::make_index_sequence<std::tuple_size_v<std::remove_reference_t<A>>>{});
}

// Appends `from` to `to` column by column, freeing each column of `from` once it is copied, so
// the two tables never exist whole twice.
template <class Table>
void MoveColumns(Table& to, Table& from) {
  Zip(to.Columns(), from.Columns(), [](auto& d, auto& s) {
    if constexpr (requires { d.Append(s); }) {
      d.Append(s);  // SparseColumn, NarrowColumn, CodedColumn
    } else {
      d.insert(d.end(), s.begin(), s.end());
      std::remove_reference_t<decltype(s)>().swap(s);  // `s = {}` would keep the capacity
    }
  });
}

}  // namespace tg::internal
