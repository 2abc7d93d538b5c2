// Issue 29: the huge-page hint (analyzer/util/huge_pages.h) changes no value, and where the
// kernel's THP mode is "madvise" it covers only whole 2 MiB stretches inside the block.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "analyzer/util/huge_pages.h"

namespace tg::internal {
namespace {

TEST(HugePages, WholeVectorHoldsWhatTheConstructorWould) {
  for (size_t n : {size_t{0}, size_t{1}, size_t{1000}, size_t{3} << 20}) {
    const std::vector<uint32_t> v = WholeVector<uint32_t>(n, 7u);
    EXPECT_EQ(v, std::vector<uint32_t>(n, 7u)) << n;
    const std::vector<int64_t> z = WholeVector<int64_t>(n);
    EXPECT_EQ(z, std::vector<int64_t>(n)) << n;
  }
}

TEST(HugePages, AssignWholeReusesRoomAndRefills) {
  std::vector<int32_t> v(10, 1);
  v.reserve(100);
  const int32_t* before = v.data();
  AssignWhole(v, 50, int32_t{-1});  // room enough: the same block, as vector::assign
  EXPECT_EQ(v.data(), before);
  EXPECT_EQ(v, std::vector<int32_t>(50, -1));
  AssignWhole(v, size_t{5} << 20, int32_t{3});  // a new block
  EXPECT_EQ(v.size(), size_t{5} << 20);
  EXPECT_TRUE(std::all_of(v.begin(), v.end(), [](int32_t x) { return x == 3; }));
  AssignWhole(v, 0, int32_t{3});
  EXPECT_TRUE(v.empty());
}

TEST(HugePages, SmallOrUnalignedRangesAreLeftAlone) {
  // Nothing to hint (no whole aligned 2 MiB inside): no call, no crash, whatever the pointer.
  std::vector<char> small(1 << 20, 'x');
  AdviseHugePages(small.data(), small.size());
  AdviseHugePages(small.data() + 1, small.size() - 1);
  AdviseHugePages(nullptr, 0);
  EXPECT_TRUE(std::all_of(small.begin(), small.end(), [](char c) { return c == 'x'; }));
}

#if defined(__linux__)
std::string ReadFile(const char* path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The /proc/self/smaps block of the mapping that holds `p`.
std::string SmapsOf(const void* p) {
  const uintptr_t at = reinterpret_cast<uintptr_t>(p);
  std::istringstream smaps(ReadFile("/proc/self/smaps"));
  std::string line, block;
  bool inside = false;
  while (std::getline(smaps, line)) {
    unsigned long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2) {  // a mapping's first line
      if (inside) return block;
      inside = at >= lo && at < hi;
      block.clear();
    }
    if (inside) block += line + "\n";
  }
  return inside ? block : std::string();
}

TEST(HugePages, OnlyWholeAlignedStretchesAreHinted) {
  if (ReadFile("/sys/kernel/mm/transparent_hugepage/enabled").find("[madvise]") == std::string::npos)
    GTEST_SKIP() << "THP mode is not madvise here: the hint changes nothing to check";
  const std::vector<uint64_t> v = WholeVector<uint64_t>(size_t{1} << 20, 1);  // 8 MiB
  const uintptr_t begin = reinterpret_cast<uintptr_t>(v.data()), end = begin + v.size() * sizeof(uint64_t);
  const uintptr_t first = (begin + kHugePageBytes - 1) & ~uintptr_t{kHugePageBytes - 1};
  const uintptr_t last = end & ~uintptr_t{kHugePageBytes - 1};
  ASSERT_GT(last, first);
  // The hinted stretch is its own mapping, marked for huge pages; the bytes before it are not.
  const std::string inside = SmapsOf(reinterpret_cast<const void*>(first));
  ASSERT_FALSE(inside.empty());
  EXPECT_NE(inside.find("VmFlags:"), std::string::npos);
  EXPECT_NE(inside.substr(inside.find("VmFlags:")).find(" hg"), std::string::npos) << inside;
  if (first > begin) {
    const std::string before = SmapsOf(reinterpret_cast<const void*>(first - 1));
    ASSERT_FALSE(before.empty());
    EXPECT_EQ(before.substr(before.find("VmFlags:")).find(" hg"), std::string::npos) << before;
  }
}
#endif

}  // namespace
}  // namespace tg::internal
