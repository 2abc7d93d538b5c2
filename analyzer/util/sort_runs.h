// Sorting for data that is mostly in order already (trace rows of one stream are in time order,
// tables are concatenated): find the sorted runs and merge them, O(n log runs), instead of a full
// sort. With a strict total order (no two elements equal) every correct sort gives the same
// result, so the outcome is exactly std::sort's; with a weaker order (ties) it is a correct order,
// for callers whose result does not depend on how ties are ordered. Internal to the analyzer.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "analyzer/util/side_task.h"

namespace tg::internal {

// Merges the consecutive sorted blocks [first + bounds[i], first + bounds[i + 1]) into one.
// Whether [first, last) is in order (no element less than the one before it), the two halves
// read on two cores when there are at least `min_two` elements.
template <class T, class Less>
bool IsSortedOnTwo(const T* first, const T* last, Less less, size_t min_two = size_t{1} << 16) {
  const auto sorted = [&](const T* a, const T* b) {
    for (const T* p = a + (a != b); p < b; ++p)
      if (less(*p, p[-1])) return false;
    return true;
  };
  const size_t n = static_cast<size_t>(last - first);
  if (n < min_two) return sorted(first, last);
  const T* mid = first + n / 2;
  bool low = false;
  {
    SideTask side([&] { low = sorted(first, mid); });
    const bool high = sorted(mid - 1, last);  // from the pair across the middle on
    side.Wait();
    return low && high;
  }
}

// Narrows a merge of [first, mid) and [mid, last) to what must move (MergeAdjacent's first step):
// false when nothing does.
template <class T, class Less>
bool TrimMerge(T*& first, T* mid, T*& last, Less less) {
  if (first == mid || mid == last || !less(*mid, mid[-1])) return false;
  first = std::upper_bound(first, mid, *mid, less);   // [first, mid) now: those after mid's first
  last = std::lower_bound(mid, last, mid[-1], less);  // [mid, last) now: those before the first's last
  return true;
}
// Whether one part of a trimmed merge is at most a sixteenth of the other (set aside, below).
template <class T>
bool OnePartSmall(const T* first, const T* mid, const T* last) {
  const size_t left = static_cast<size_t>(mid - first), right = static_cast<size_t>(last - mid);
  return right <= left / 16 || left <= right / 16;
}
// MergeAdjacent after TrimMerge.
template <class T, class Less>
void MergeTrimmed(T* first, T* mid, T* last, Less less) {
  const size_t left = static_cast<size_t>(mid - first), right = static_cast<size_t>(last - mid);
  if (right <= left / 16) {
    // The right part aside, placed from the back: each one's place among the left part found by
    // galloping back from the last place (comparisons grow with the log of the distance), the
    // left elements after it slid right in one move.
    std::vector<T> aside(std::make_move_iterator(mid), std::make_move_iterator(last));
    T* out = last;
    T* a = mid;  // [first, a): left elements not yet placed
    for (size_t b = aside.size(); b > 0; --b) {
      const T& x = aside[b - 1];
      T* hi = a;  // [hi, a) all come after x
      T* lo = first;
      for (size_t step = 1; static_cast<size_t>(hi - first) > step; step *= 2) {
        if (!less(x, hi[-static_cast<ptrdiff_t>(step)])) {
          lo = hi - step + 1;
          break;
        }
        hi -= step;
      }
      T* const at = std::upper_bound(lo, hi, x, less);  // equal left elements stay before x
      out = std::move_backward(at, a, out);
      a = at;
      *--out = std::move(aside[b - 1]);
    }
  } else if (left <= right / 16) {
    // The left part aside, placed from the front in the same way.
    std::vector<T> aside(std::make_move_iterator(first), std::make_move_iterator(mid));
    T* out = first;
    T* b = mid;  // [b, last): right elements not yet placed
    for (size_t a = 0; a < aside.size(); ++a) {
      const T& x = aside[a];
      T* lo = b;  // [b, lo) all come before x
      T* hi = last;
      for (size_t step = 1; static_cast<size_t>(last - lo) > step; step *= 2) {
        if (!less(lo[step - 1], x)) {
          hi = lo + step - 1;
          break;
        }
        lo += step;
      }
      T* const at = std::lower_bound(lo, hi, x, less);  // equal right elements stay after x
      out = std::move(b, at, out);
      b = at;
      *out++ = std::move(aside[a]);
    }
  } else {
    std::inplace_merge(first, mid, last, less);
  }
}
// std::inplace_merge(first, mid, last, less) (stable: of equal elements, those of the first range
// come first), moving only what must move: the first range's elements that come before the
// second's first element stay, as do the second's from the first range's last element on; and
// when one of the two parts left is small (a few ranges written out of place, such as the
// parents a profiler writes after their children), that part is set aside and the other slides
// over once, where std::inplace_merge would move both.
template <class T, class Less>
void MergeAdjacent(T* first, T* mid, T* last, Less less) {
  if (TrimMerge(first, mid, last, less)) MergeTrimmed(first, mid, last, less);
}

template <class T, class Less>
void MergeSortedBlocks(T* first, std::vector<size_t> bounds, Less less) {
  while (bounds.size() > 2) {
    const size_t blocks = bounds.size() - 1;
    std::vector<size_t> merged{0};
    for (size_t b = 0; b + 1 < blocks; b += 2) {
      // An empty block, or blocks already in order one after the other (a table's sorted
      // halves), need no pass.
      const size_t lo = bounds[b], mid = bounds[b + 1], hi = bounds[b + 2];
      if (lo < mid && mid < hi && less(first[mid], first[mid - 1]))
        MergeAdjacent(first + lo, first + mid, first + hi, less);
      merged.push_back(bounds[b + 2]);
    }
    if (blocks % 2 == 1) merged.push_back(bounds[blocks]);
    bounds = std::move(merged);
  }
}

// Sorts [first, last) by `less` when it is at most `max_runs` sorted runs (tables concatenated,
// each in order), merging them: true. False, leaving the data as it was, when it has more.
template <class T, class Less>
bool TryMergeSortedRuns(T* first, T* last, Less less, size_t max_runs) {
  std::vector<size_t> bounds{0};
  const size_t n = static_cast<size_t>(last - first);
  for (size_t i = 1; i < n && bounds.size() <= max_runs; ++i)
    if (less(first[i], first[i - 1])) bounds.push_back(i);
  if (bounds.size() > max_runs) return false;
  bounds.push_back(n);
  MergeSortedBlocks(first, std::move(bounds), less);
  return true;
}

// Sorts [first, last) by `less`, a strict total order: merges up to `max_runs` sorted runs, or
// falls back to std::sort when the data has more.
template <class T, class Less>
void SortMostlySorted(T* first, T* last, Less less, size_t max_runs = 8) {
  if (!TryMergeSortedRuns(first, last, less, max_runs)) std::sort(first, last, less);
}

// Sorts `v` by `less` (a strict weak order; the result equals std::sort's when it is a total
// order, else it is one correct order of the ties) when a few elements are out of place, such as parent
// ranges that a profiler writes after their children: one pass keeps the elements that continue
// the order in place and sets the others aside, which are then sorted and merged in. Falls back
// to std::sort once more than an eighth of the elements are out of place. TrySortNearlySorted
// gives up there instead (false; the range is then some permutation of its elements), for callers
// with a cheaper way to sort data in no order.
template <class T, class Less>
bool TrySortNearlySorted(T* first, T* last, Less less) {
  const size_t n = static_cast<size_t>(last - first);
  std::vector<T> aside;
  size_t kept = 0;
  for (size_t i = 0; i < n; ++i) {
    if (kept == 0 || !less(first[i], first[kept - 1])) {
      if (kept != i) first[kept] = std::move(first[i]);  // no self-move
      ++kept;
      continue;
    }
    aside.push_back(std::move(first[i]));
    if (aside.size() > n / 8 + 16) {
      // Everything before i + 1 is either kept or aside (kept + aside.size() == i + 1), and the
      // rest is still in place after it.
      std::move(aside.begin(), aside.end(), first + kept);
      return false;
    }
  }
  if (aside.empty()) return true;
  std::sort(aside.begin(), aside.end(), less);
  std::move(aside.begin(), aside.end(), first + kept);
  std::inplace_merge(first, first + kept, last, less);
  return true;
}
template <class T, class Less>
void SortNearlySorted(T* first, T* last, Less less) {
  if (!TrySortNearlySorted(first, last, less)) std::sort(first, last, less);
}

// Sorts [first, last) by `less`, a strict total order, for data made of long stretches that are
// each nearly sorted but lie in no order among themselves (a table that holds one category after
// another, each in time order): each block of `block` elements is sorted on its own (as
// SortNearlySorted), then the blocks are merged, skipping neighbours already in order. Never
// worse than O(n log n); O(n) comparisons when every block is in order.
template <class T, class Less>
void SortByBlocks(T* first, T* last, Less less, size_t block = size_t{1} << 16) {
  const size_t n = static_cast<size_t>(last - first);
  std::vector<size_t> bounds{0};
  for (size_t b = 0; b < n; b += block) {
    const size_t e = std::min(n, b + block);
    SortNearlySorted(first + b, first + e, less);
    bounds.push_back(e);
  }
  MergeSortedBlocks(first, std::move(bounds), less);
}
// Merges the sorted ranges [first, mid) and [mid, last) (std::inplace_merge's result, ties
// included) on two cores: into a buffer of n elements, each core writing one half of the output
// (the split found by a binary search: the first n / 2 outputs take the first i of one range and
// the first n / 2 - i of the other), then copied back. What stays in place is left out first, as
// in MergeAdjacent, which merges on one core when fewer than `min_two` elements are left or one
// of the two parts is small.
template <class T, class Less>
void MergeOnTwo(T* first, T* mid, T* last, Less less, size_t min_two = size_t{1} << 16) {
  if (!TrimMerge(first, mid, last, less)) return;
  if (static_cast<size_t>(last - first) < min_two || OnePartSmall(first, mid, last)) {
    MergeTrimmed(first, mid, last, less);
    return;
  }
  const T* a = first;
  const T* b = mid;
  const size_t na = static_cast<size_t>(mid - first), nb = static_cast<size_t>(last - mid), n = na + nb;
  const size_t half = n / 2;
  // The smallest i with a[i] after b[half - i - 1] (a[i] goes first unless b's is less: stable):
  // then a[i - 1] comes before b[half - i].
  size_t lo = half > nb ? half - nb : 0, hi = std::min(half, na);
  while (lo < hi) {
    const size_t i = lo + (hi - lo) / 2;
    if (!less(b[half - i - 1], a[i])) lo = i + 1;
    else hi = i;
  }
  const size_t i = lo, j = half - lo;
  std::vector<T> out(n);
  {
    SideTask low([&] { std::merge(a, a + i, b, b + j, out.data(), less); });
    std::merge(a + i, a + na, b + j, b + nb, out.data() + half, less);
    low.Wait();
  }
  std::copy(out.begin(), out.end(), first);
}

// SortByBlocks on two cores: each half of the blocks sorted and merged on its own, then the two
// halves merged into a buffer of n elements, each core writing one half of the output (the split
// found by a binary search: the first n / 2 outputs take the first i of one half and the first
// n / 2 - i of the other). `less` must be a strict total order, as for SortByBlocks: the result is
// then the same as its.
template <class T, class Less>
void SortByBlocksOnTwo(T* first, T* last, Less less, size_t block = size_t{1} << 16) {
  const size_t n = static_cast<size_t>(last - first);
  if (n < 4 * block) {
    SortByBlocks(first, last, less, block);
    return;
  }
  const size_t split = n / 2 / block * block;
  {
    SideTask left([&] { SortByBlocks(first, first + split, less, block); });
    SortByBlocks(first + split, last, less, block);
    left.Wait();
  }
  MergeOnTwo(first, first + split, last, less);
}

// Sorts [first, last) by `less` (a strict weak order; one correct order of any ties) when it is a
// few sorted sequences dealt into one another: the GPU work of one step on several streams, each
// stream's in start order, the streams' overlapping in time. Each element goes to the first of at
// most `max_piles` piles whose last element does not follow it, the piles are laid out one after
// the other in `scratch` and merged back pairwise: about n (piles / 2 + log2 piles) comparisons
// where std::sort makes 1.4 n log2 n. Falls back to SortNearlySorted when the data needs more
// piles (it was in no such order). The scratch is kept between calls (one sort per step).
template <class T>
struct InterleavedScratch {
  std::vector<T> items;
  std::vector<uint8_t> pile;  // each element's pile
};
template <class T, class Less>
void SortInterleaved(T* first, T* last, Less less, InterleavedScratch<T>& scratch, size_t max_piles = 8) {
  const size_t n = static_cast<size_t>(last - first);
  if (n < 2) return;
  constexpr size_t kMaxPiles = 16;
  max_piles = std::min(max_piles, kMaxPiles);
  // Pass 1: the pile of each element (its index into `tail`), counted per pile.
  std::vector<uint8_t>& pile = scratch.pile;
  pile.resize(n);
  T tail[kMaxPiles];
  size_t count[kMaxPiles] = {};
  size_t piles = 0;
  for (size_t i = 0; i < n; ++i) {
    size_t p = 0;
    while (p < piles && less(first[i], tail[p])) ++p;
    if (p == piles) {
      if (piles == max_piles) {
        SortNearlySorted(first, last, less);
        return;
      }
      ++piles;
    }
    tail[p] = first[i];
    pile[i] = static_cast<uint8_t>(p);
    ++count[p];
  }
  if (piles == 1) return;  // in order already
  // Pass 2: the piles one after the other in `scratch`, each in the order its elements came.
  size_t bounds[kMaxPiles + 1] = {0};
  for (size_t p = 0; p < piles; ++p) bounds[p + 1] = bounds[p] + count[p];
  size_t at[kMaxPiles];
  std::copy(bounds, bounds + piles, at);
  scratch.items.resize(n);
  for (size_t i = 0; i < n; ++i) scratch.items[at[pile[i]]++] = std::move(first[i]);
  // Pass 3: neighbouring piles merged pairwise, back and forth between scratch and [first, last),
  // until one is left; it is then in [first, last).
  T* from = scratch.items.data();
  T* to = first;
  while (piles > 1) {
    size_t merged = 0;
    for (size_t p = 0; p < piles; p += 2) {
      T* out = to + bounds[p];
      if (p + 1 < piles) {
        std::merge(std::make_move_iterator(from + bounds[p]), std::make_move_iterator(from + bounds[p + 1]),
                   std::make_move_iterator(from + bounds[p + 1]), std::make_move_iterator(from + bounds[p + 2]), out,
                   less);
      } else {
        std::move(from + bounds[p], from + bounds[p + 1], out);
      }
      bounds[merged++] = bounds[p];
    }
    bounds[merged] = n;
    piles = merged;
    std::swap(from, to);
  }
  if (from != first) std::move(from, from + n, first);
}

template <class T, class Less>
void SortNearlySorted(std::vector<T>& v, Less less) {
  SortNearlySorted(v.data(), v.data() + v.size(), less);
}

}  // namespace tg::internal
