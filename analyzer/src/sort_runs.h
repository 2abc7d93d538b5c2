// Sorting for data that is mostly in order already (trace rows of one stream are in time order,
// tables are concatenated): find the sorted runs and merge them, O(n log runs), instead of a full
// sort. Only for strict total orders (no two elements equal), where every correct sort gives the
// same result, so the outcome is exactly std::sort's. Internal to the analyzer.
#pragma once

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

namespace tg::internal {

// Merges the consecutive sorted blocks [first + bounds[i], first + bounds[i + 1]) into one.
template <class T, class Less>
void MergeSortedBlocks(T* first, std::vector<size_t> bounds, Less less) {
  while (bounds.size() > 2) {
    const size_t blocks = bounds.size() - 1;
    std::vector<size_t> merged{0};
    for (size_t b = 0; b + 1 < blocks; b += 2) {
      std::inplace_merge(first + bounds[b], first + bounds[b + 1], first + bounds[b + 2], less);
      merged.push_back(bounds[b + 2]);
    }
    if (blocks % 2 == 1) merged.push_back(bounds[blocks]);
    bounds = std::move(merged);
  }
}

// Sorts [first, last) by `less`, a strict total order: merges up to `max_runs` sorted runs, or
// falls back to std::sort when the data has more.
template <class T, class Less>
void SortMostlySorted(T* first, T* last, Less less, size_t max_runs = 8) {
  std::vector<size_t> bounds{0};
  const size_t n = static_cast<size_t>(last - first);
  for (size_t i = 1; i < n && bounds.size() <= max_runs; ++i)
    if (less(first[i], first[i - 1])) bounds.push_back(i);
  if (bounds.size() > max_runs) {
    std::sort(first, last, less);
    return;
  }
  bounds.push_back(n);
  MergeSortedBlocks(first, std::move(bounds), less);
}

}  // namespace tg::internal
