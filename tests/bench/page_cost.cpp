// What this machine charges for fresh memory: microseconds per 4 KiB page at first touch, for
// 64 MiB of anonymous memory written one byte a page, three ways, each twice (docs/PERFORMANCE.md,
// "Huge pages where the rows are written whole"):
//   small:     madvise(MADV_NOHUGEPAGE): a page fault per 4 KiB
//   populate:  madvise(MADV_POPULATE_WRITE) first (Linux 5.14+), then the writes
//   huge:      madvise(MADV_HUGEPAGE) on a 2 MiB-aligned range (where THP is "madvise")
// Usage: tracegate-page-cost [MiB]
#include <sys/mman.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

namespace {

double Seconds() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

}  // namespace

int main(int argc, char** argv) {
  const size_t mib = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 64;
  if (mib < 4 || mib > 4096) {
    std::fprintf(stderr, "tracegate-page-cost: MiB must be 4..4096\n");
    return 2;
  }
  constexpr size_t kPage = 4096, kHuge = size_t{2} << 20;
  const size_t bytes = mib << 20;
  const char* names[] = {"small", "populate", "huge"};
  for (int mode = 0; mode < 3; ++mode) {
    for (int round = 0; round < 2; ++round) {
      // One huge page more than asked, so that an aligned range of `bytes` fits.
      void* map = mmap(nullptr, bytes + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (map == MAP_FAILED) {
        std::perror("tracegate-page-cost: mmap");
        return 2;
      }
      char* p = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(map) + kHuge - 1) & ~uintptr_t{kHuge - 1});
      madvise(p, bytes, mode == 2 ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
      const double t0 = Seconds();
      double populate = 0;
      if (mode == 1) {
        if (madvise(p, bytes, MADV_POPULATE_WRITE) != 0) std::perror("tracegate-page-cost: MADV_POPULATE_WRITE");
        populate = Seconds() - t0;
      }
      for (size_t i = 0; i < bytes; i += kPage) p[i] = 1;
      const double total = Seconds() - t0;
      const double pages = static_cast<double>(bytes / kPage);
      std::printf("%-8s round %d: %6.2f us per 4 KiB page", names[mode], round + 1, total * 1e6 / pages);
      if (mode == 1) std::printf(" (the populate %.2f)", populate * 1e6 / pages);
      std::printf("\n");
      munmap(map, bytes + kHuge);
    }
  }
  return 0;
}
