// Finding the API call that launched a GPU activity: (correlation, row) of every API call with a
// correlation id, sorted once for binary search (no hash map per event), or a direct table when
// the ids are unique and dense.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "analyzer/util/huge_pages.h"
#include "tracegate/analyzer/model.h"

namespace tg::internal {

class ApiIndex {
 public:
  explicit ApiIndex(const ApiTable& a) : api_(a) {
    if (TryDense()) return;
    by_corr_.reserve(a.size());
    for (size_t i = 0; i < a.size(); ++i)
      if (a.correlation[i] != kUnknownId) by_corr_.emplace_back(a.correlation[i], i);
    // Calls are usually in correlation order already; the pairs are unique, so skipping the sort
    // then changes nothing.
    if (!std::is_sorted(by_corr_.begin(), by_corr_.end())) std::sort(by_corr_.begin(), by_corr_.end());
    MakeDense();
  }
  // Row of the call with this correlation (the one of `pid` when several processes reuse the
  // id and pid is known), or -1.
  int64_t Find(int64_t correlation, int64_t pid) const {
    if (correlation == kUnknownId) return -1;
    if (dense_) {
      // Unique ids: the one call with it, whatever its pid (as the search below returns).
      uint64_t k = static_cast<uint64_t>(correlation) - static_cast<uint64_t>(dense_min_);
      return k < dense_row_.size() && dense_row_[k] != kNone ? static_cast<int64_t>(dense_row_[k]) : -1;
    }
    auto it = std::lower_bound(by_corr_.begin(), by_corr_.end(), std::pair<int64_t, size_t>{correlation, 0});
    int64_t found = -1;
    for (; it != by_corr_.end() && it->first == correlation; ++it) {
      if (found < 0) found = static_cast<int64_t>(it->second);
      if (pid != kUnknownId && api_.pid[it->second] == pid) return static_cast<int64_t>(it->second);
    }
    return found;
  }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  // The direct table, filled from the column when the ids are unique and dense (as CUPTI numbers
  // them): one pass for their range, one to fill, without the sorted pairs (16 bytes a call).
  // False, with nothing kept, when they are not.
  bool TryDense() {
    if (api_.size() >= kNone) return false;
    int64_t lo = 0, hi = 0;
    size_t known = 0;
    for (int64_t c : api_.correlation) {
      if (c == kUnknownId) continue;
      if (known++ == 0) lo = hi = c;
      lo = std::min(lo, c);
      hi = std::max(hi, c);
    }
    int64_t span = 0;
    if (known == 0 || __builtin_sub_overflow(hi, lo, &span) || static_cast<uint64_t>(span) >= 4 * known + 1024)
      return false;
    AssignWhole(dense_row_, static_cast<size_t>(span) + 1, kNone);
    for (size_t i = 0; i < api_.size(); ++i) {
      const int64_t c = api_.correlation[i];
      if (c == kUnknownId) continue;
      uint32_t& slot = dense_row_[static_cast<size_t>(c - lo)];
      if (slot != kNone) {  // an id used twice: the sorted pairs
        std::vector<uint32_t>().swap(dense_row_);
        return false;
      }
      slot = static_cast<uint32_t>(i);
    }
    dense_min_ = lo;
    dense_ = true;
    return true;
  }
  // When every id is unique and they are dense (as CUPTI numbers them), a direct table replaces
  // the binary search (and the sorted index is freed).
  void MakeDense() {
    if (by_corr_.empty() || api_.size() >= kNone) return;
    for (size_t i = 1; i < by_corr_.size(); ++i)
      if (by_corr_[i].first == by_corr_[i - 1].first) return;
    const int64_t lo = by_corr_.front().first, hi = by_corr_.back().first;
    int64_t span = 0;
    if (__builtin_sub_overflow(hi, lo, &span) || static_cast<uint64_t>(span) >= 4 * by_corr_.size() + 1024) return;
    dense_min_ = lo;
    AssignWhole(dense_row_, static_cast<size_t>(span) + 1, kNone);
    for (const auto& [corr, row] : by_corr_) dense_row_[static_cast<size_t>(corr - lo)] = static_cast<uint32_t>(row);
    dense_ = true;
    std::vector<std::pair<int64_t, size_t>>().swap(by_corr_);
  }

  const ApiTable& api_;
  std::vector<std::pair<int64_t, size_t>> by_corr_;
  bool dense_ = false;
  int64_t dense_min_ = 0;
  std::vector<uint32_t> dense_row_;
};

// An op's name without the per-call suffix of NVTX's emit_nvtx ranges ("aten::addmm, seq = 12,
// op_id = 40, sizes = [...]" -> "aten::addmm"), which would make every call's name its own; other
// names as they are ("CppNode<Foo<int, float>>" keeps its comma). For LinkOps' op names
// (tracegate/analyzer/op_links.h): the op classes and the report's per-kernel op read it.
std::string_view OpBaseName(std::string_view op);

// Every (i, kernel row) pair where the API call that launched the kernel (same correlation id)
// starts inside host range range_rows[i]: [start, end), same pid and tid. Nested ranges each get
// the kernel; kernels whose call is not in the trace get none. O((kernels + ranges) log) with one
// sort of launches and one of ranges, then a sweep per thread.
std::vector<std::pair<size_t, size_t>> KernelsLaunchedIn(const Trace& trace, const std::vector<size_t>& range_rows);

}  // namespace tg::internal
