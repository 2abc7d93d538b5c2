// Keeping the N largest of a stream of items without sorting them all: the gaps, idle intervals,
// path segments and timeline items the reports list as "the largest".
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace tg::internal {

// Keeps in `heap` the `cap` largest items offered so far under `larger` (larger(a, b): a ranks
// above b). `heap` is a heap whose front is the smallest it keeps; nothing is kept when cap is 0.
template <class T, class Larger>
void KeepLargest(std::vector<T>& heap, size_t cap, const T& item, Larger larger) {
  if (cap == 0) return;
  if (heap.size() < cap) {
    heap.push_back(item);
    std::push_heap(heap.begin(), heap.end(), larger);
  } else if (larger(item, heap.front())) {
    std::pop_heap(heap.begin(), heap.end(), larger);
    heap.back() = item;
    std::push_heap(heap.begin(), heap.end(), larger);
  }
}

}  // namespace tg::internal
