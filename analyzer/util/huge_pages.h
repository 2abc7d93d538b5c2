// Transparent huge pages for the analyzer's largest buffers: the per-row vectors that are sized
// once and written whole right away. Where the kernel's THP mode is "madvise" (Debian's and
// Ubuntu's default), such a vector's 4 KiB pages each cost a page fault at first touch; a hinted
// 2 MiB-aligned stretch costs one fault per 2 MiB. On a paravirtualised guest, where a fault
// costs 6-13 us, that is most of the time an nsys export's analyze spends in the kernel
// (docs/PERFORMANCE.md, "Huge pages where the rows are written whole").
//
// Only memory that will be written whole is hinted: a huge page is resident as a whole once any
// byte of it is touched, so a hint over a vector's spare capacity (a growing column, a reserve
// from an estimate) would add up to 2 MiB of RSS per vector. Elsewhere (THP "always" or
// "never", other systems) the hint changes nothing. What a huge page costs depends on the host:
// one VM of 2026-12-01 charged more per 4 KiB of a huge page than per small page, so
// TRACEGATE_NO_HUGE_PAGES=1 turns the hint off. Internal to the analyzer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace tg::internal {

inline constexpr size_t kHugePageBytes = size_t{2} << 20;

// Asks for huge pages behind the whole 2 MiB-aligned stretches of [p, p + bytes): those the
// caller is about to write in full. A failed madvise (no THP in the kernel) is ignored.
inline void AdviseHugePages(const void* p, size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  static const bool off = [] {
    const char* v = std::getenv("TRACEGATE_NO_HUGE_PAGES");
    return v != nullptr && *v != '\0' && *v != '0';
  }();
  if (bytes < kHugePageBytes || off) return;
  const uintptr_t first = (reinterpret_cast<uintptr_t>(p) + kHugePageBytes - 1) & ~uintptr_t{kHugePageBytes - 1};
  const uintptr_t last = (reinterpret_cast<uintptr_t>(p) + bytes) & ~uintptr_t{kHugePageBytes - 1};
  if (last > first) (void)madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}

// Makes v hold n copies of value, in a fresh block hinted for huge pages when its capacity is
// short (as vector::assign, which then allocates anew too).
template <class T>
void AssignWhole(std::vector<T>& v, size_t n, const T& value) {
  if (v.capacity() < n) {
    std::vector<T>().swap(v);
    v.reserve(n);
    AdviseHugePages(v.data(), n * sizeof(T));
  }
  v.assign(n, value);
}

// std::vector<T>(n, value), hinted for huge pages.
template <class T>
std::vector<T> WholeVector(size_t n, const T& value = T{}) {
  std::vector<T> v;
  AssignWhole(v, n, value);
  return v;
}

}  // namespace tg::internal
