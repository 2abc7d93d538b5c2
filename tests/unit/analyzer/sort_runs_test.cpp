// Issue 7: the faster paths behind the analysis give exactly what the plain ones gave: run merging
// against std::sort, ApiIndex's direct table against its binary search, the bootstrap on two
// threads against one.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <utility>
#include <vector>

#include "analyzer/analysis/correlation.h"
#include "analyzer/util/sort_runs.h"
#include "tracegate/analyzer/significance.h"

namespace tg {

using internal::ApiIndex;
namespace {

using Item = std::pair<int64_t, int>;  // (key, unique tag): a strict total order

// `runs` sorted runs of random keys (many equal keys, told apart by the tag) concatenated.
std::vector<Item> Runs(size_t runs, size_t per_run, std::mt19937& rng) {
  std::vector<Item> v;
  int tag = 0;
  for (size_t r = 0; r < runs; ++r) {
    std::vector<Item> run;
    for (size_t i = 0; i < per_run; ++i) run.emplace_back(static_cast<int64_t>(rng() % 50), tag++);
    std::sort(run.begin(), run.end());
    v.insert(v.end(), run.begin(), run.end());
  }
  return v;
}

TEST(SortRuns, GivesWhatStdSortGivesForAnyNumberOfRuns) {
  std::mt19937 rng(7);
  for (size_t runs : {0, 1, 2, 3, 5, 8, 9, 40}) {
    for (size_t per_run : {0, 1, 2, 17, 300}) {
      std::vector<Item> v = Runs(runs, per_run, rng);
      std::shuffle(v.begin(), v.begin() + static_cast<ptrdiff_t>(v.size() / 3), rng);  // some disorder too
      for (bool shuffled : {false, true}) {
        std::vector<Item> input = shuffled ? v : Runs(runs, per_run, rng);
        std::vector<Item> expected = input;
        std::sort(expected.begin(), expected.end());
        internal::SortMostlySorted(input.data(), input.data() + input.size(), std::less<Item>());
        EXPECT_EQ(input, expected) << runs << " runs of " << per_run;
      }
    }
  }
}

// Sorted data with a share of elements moved out of place (parents written after children), from
// none to all: the same result as std::sort on both sides of the fallback.
TEST(SortRuns, NearlySortedGivesWhatStdSortGives) {
  std::mt19937 rng(11);
  for (size_t n : {0, 1, 2, 10, 1000, 20000}) {
    for (double displaced : {0.0, 0.01, 0.1, 0.125, 0.2, 1.0}) {
      std::vector<Item> v = Runs(1, n, rng);
      for (size_t i = 0; i < n; ++i)
        if (std::uniform_real_distribution<double>(0, 1)(rng) < displaced) {
          const size_t j = rng() % n;  // move element i to position j
          Item x = v[i];
          v.erase(v.begin() + static_cast<ptrdiff_t>(i));
          v.insert(v.begin() + static_cast<ptrdiff_t>(j), x);
        }
      std::vector<Item> expected = v;
      std::sort(expected.begin(), expected.end());
      internal::SortNearlySorted(v, std::less<Item>());
      EXPECT_EQ(v, expected) << n << " elements, " << displaced << " displaced";
    }
  }
}

// Sorted sequences dealt into one another at random (streams' work in the order it completed),
// 1 to 20 of them: the same result as std::sort, through the piles (up to 8) or the fallback; and
// with a weak order (keys only, ties kept in any order), a sorted permutation of the input.
TEST(SortRuns, InterleavedGivesWhatStdSortGives) {
  std::mt19937 rng(13);
  internal::InterleavedScratch<Item> scratch;
  for (size_t sequences : {1, 2, 3, 4, 5, 8, 9, 20}) {
    for (size_t per : {0, 1, 2, 7, 50, 400}) {
      std::vector<Item> all = Runs(sequences, per, rng);
      std::vector<Item> dealt;
      std::vector<size_t> next(sequences);
      for (size_t s = 0; s < sequences; ++s) next[s] = s * per;
      while (dealt.size() < all.size()) {
        const size_t s = rng() % sequences;
        if (next[s] < (s + 1) * per) dealt.push_back(all[next[s]++]);
      }
      std::vector<Item> expected = dealt;
      std::sort(expected.begin(), expected.end());
      std::vector<Item> v = dealt;
      internal::SortInterleaved(v.data(), v.data() + v.size(), std::less<Item>(), scratch);
      EXPECT_EQ(v, expected) << sequences << " sequences of " << per;
      // Keys only: ties in any order, but every element kept and the keys in order.
      v = dealt;
      auto by_key = [](const Item& a, const Item& b) { return a.first < b.first; };
      internal::SortInterleaved(v.data(), v.data() + v.size(), by_key, scratch, 3);
      EXPECT_TRUE(std::is_sorted(v.begin(), v.end(), by_key));
      std::sort(v.begin(), v.end());
      EXPECT_EQ(v, expected) << sequences << " sequences of " << per << ", keys only";
    }
  }
}

// Blocks of categories in no order among themselves (a thread's ops, each step's range after
// them, then its Python frames), each nearly sorted, cut anywhere by the block size: the same
// result as std::sort, and TryMergeSortedRuns leaves data with too many runs as it was.
TEST(SortRuns, ByBlocksGivesWhatStdSortGives) {
  std::mt19937 rng(17);
  for (size_t n : {0, 1, 2, 100, 5000}) {
    for (size_t block : {1, 3, 64, 1000, 100000}) {
      std::vector<Item> v;
      for (size_t part = 0; part < 3; ++part) {
        std::vector<Item> run = Runs(1, n, rng);
        for (Item& x : run) x.second += static_cast<int>(part * n);  // tags stay unique
        if (part == 1)                                               // a parent after its children now and then
          for (size_t i = 0; i + 5 < run.size(); i += 7) std::swap(run[i], run[i + 5]);
        v.insert(v.end(), run.begin(), run.end());
      }
      std::vector<Item> expected = v;
      std::sort(expected.begin(), expected.end());
      internal::SortByBlocks(v.data(), v.data() + v.size(), std::less<Item>(), block);
      EXPECT_EQ(v, expected) << n << " per part, blocks of " << block;
    }
  }
  std::vector<Item> many = Runs(40, 10, rng);
  const std::vector<Item> before = many;
  EXPECT_FALSE(internal::TryMergeSortedRuns(many.data(), many.data() + many.size(), std::less<Item>(), 16));
  EXPECT_EQ(many, before);
  EXPECT_TRUE(internal::TryMergeSortedRuns(many.data(), many.data() + many.size(), std::less<Item>(), 40));
  EXPECT_TRUE(std::is_sorted(many.begin(), many.end()));
}

// The two-core version (ComputeRangeDepth's) on the same kinds of data, at sizes from under four
// blocks (one core) to many, and with halves that already follow each other: std::sort's result.
TEST(SortRuns, ByBlocksOnTwoGivesWhatStdSortGives) {
  std::mt19937 rng(23);
  for (size_t n : {10, 300, 2000, 7777}) {
    for (size_t block : {64, 500}) {
      for (int shape = 0; shape < 3; ++shape) {
        std::vector<Item> v;
        if (shape == 0) {  // three categories, each nearly sorted, one after another
          for (size_t part = 0; part < 3; ++part) {
            std::vector<Item> run = Runs(1, n, rng);
            for (Item& x : run) x.second += static_cast<int>(part * n);
            if (part == 1)
              for (size_t i = 0; i + 5 < run.size(); i += 7) std::swap(run[i], run[i + 5]);
            v.insert(v.end(), run.begin(), run.end());
          }
        } else if (shape == 1) {  // in no order at all
          v = Runs(1, 3 * n, rng);
          std::shuffle(v.begin(), v.end(), rng);
        } else {  // sorted already: the halves need no merge
          v = Runs(1, 3 * n, rng);
        }
        std::vector<Item> expected = v;
        std::sort(expected.begin(), expected.end());
        internal::SortByBlocksOnTwo(v.data(), v.data() + v.size(), std::less<Item>(), block);
        EXPECT_EQ(v, expected) << 3 * n << " elements, blocks of " << block << ", shape " << shape;
      }
    }
  }
}

// TrySortNearlySorted sorts what SortNearlySorted sorts without falling back, and gives up on data
// in no order with its elements still all there (the caller then sorts them another way).
TEST(SortRuns, TryNearlySortedSortsOrGivesUpKeepingTheElements) {
  std::mt19937 rng(13);
  for (size_t n : {0, 1, 2, 10, 1000, 20000}) {
    std::vector<Item> nearly = Runs(1, n, rng);
    if (n > 2)
      std::rotate(nearly.begin() + static_cast<ptrdiff_t>(n / 3), nearly.begin() + static_cast<ptrdiff_t>(n / 3 + 1),
                  nearly.end());  // one parent written after its children
    std::vector<Item> expected = nearly;
    std::sort(expected.begin(), expected.end());
    EXPECT_TRUE(internal::TrySortNearlySorted(nearly.data(), nearly.data() + n, std::less<Item>())) << n;
    EXPECT_EQ(nearly, expected) << n;
    std::vector<Item> shuffled = Runs(1, n, rng);
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    std::vector<Item> elements = shuffled;
    const bool sorted = internal::TrySortNearlySorted(shuffled.data(), shuffled.data() + n, std::less<Item>());
    if (n >= 1000) {
      EXPECT_FALSE(sorted) << n;
    }
    if (sorted) {
      EXPECT_TRUE(std::is_sorted(shuffled.begin(), shuffled.end())) << n;
    }
    std::sort(shuffled.begin(), shuffled.end());
    std::sort(elements.begin(), elements.end());
    EXPECT_EQ(shuffled, elements) << n;
  }
}

TEST(SortRuns, MergesGivenBlocks) {
  std::vector<Item> v{{1, 0}, {5, 1}, {9, 2}, {2, 3}, {3, 4}, {0, 5}, {7, 6}, {8, 7}};
  std::vector<Item> expected = v;
  std::sort(expected.begin(), expected.end());
  internal::MergeSortedBlocks(v.data(), {0, 3, 5, 6, 8}, std::less<Item>());  // blocks of 3, 2, 1, 2
  EXPECT_EQ(v, expected);
  // Empty blocks anywhere (a stream with no rows), blocks already in order: nothing read outside.
  std::vector<Item> w{{4, 0}, {6, 1}, {1, 2}, {9, 3}};
  internal::MergeSortedBlocks(w.data(), {0, 0, 2, 2, 3, 4, 4}, std::less<Item>());
  EXPECT_EQ(w, (std::vector<Item>{{1, 2}, {4, 0}, {6, 1}, {9, 3}}));
  std::vector<Item> none;
  internal::MergeSortedBlocks(none.data(), {0, 0, 0}, std::less<Item>());
}

// Find through the index against a plain scan with ApiIndex's rule: among calls with the id, the
// one of `pid` when pid is known and one matches, else the first.
int64_t Scan(const ApiTable& a, int64_t corr, int64_t pid) {
  if (corr == kUnknownId) return -1;
  int64_t first = -1;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a.correlation[i] != corr) continue;
    if (first < 0) first = static_cast<int64_t>(i);
    if (pid != kUnknownId && a.pid[i] == pid) return static_cast<int64_t>(i);
  }
  return first;
}

// The two-core check and merge answer as std::is_sorted and std::inplace_merge do, with the
// middle anywhere (the two cores' parts meet at any pair), on one core or two.
TEST(SortRuns, OnTwoCheckAndMergeGiveWhatTheStdOnesGive) {
  std::mt19937 rng(41);
  for (size_t n : {0u, 1u, 2u, 3u, 17u, 1000u, 4097u}) {
    for (size_t min_two : {size_t{2}, size_t{1} << 16}) {
      std::vector<int> v(n);
      for (size_t i = 0; i < n; ++i) v[i] = static_cast<int>(i * 3);
      EXPECT_TRUE(internal::IsSortedOnTwo(v.data(), v.data() + n, std::less<>(), min_two));
      for (size_t at = 1; at < n; at += 1 + n / 7) {  // one pair out of order, wherever
        std::vector<int> w = v;
        std::swap(w[at - 1], w[at]);
        EXPECT_EQ(internal::IsSortedOnTwo(w.data(), w.data() + n, std::less<>(), min_two),
                  std::is_sorted(w.begin(), w.end()))
            << n << " " << at;
      }
      for (size_t mid = 0; mid <= n; mid += 1 + n / 5) {
        std::vector<int> w(n);
        for (int& x : w)
          x = static_cast<int>(rng() % 100000) * 2 + static_cast<int>(&x - w.data() < static_cast<ptrdiff_t>(mid));
        std::sort(w.begin(), w.begin() + static_cast<ptrdiff_t>(mid));
        std::sort(w.begin() + static_cast<ptrdiff_t>(mid), w.end());
        std::vector<int> want = w;
        std::inplace_merge(want.begin(), want.begin() + static_cast<ptrdiff_t>(mid), want.end());
        internal::MergeOnTwo(w.data(), w.data() + mid, w.data() + n, std::less<>(), min_two);
        EXPECT_EQ(w, want) << n << " " << mid;
      }
    }
  }
}

// MergeAdjacent and MergeOnTwo give std::inplace_merge's order, ties included (of equal keys,
// the first range's elements first), whether a few elements are out of place on either side
// (the parts set aside) or many are (std::inplace_merge, or the two-core merge).
TEST(SortRuns, MergeAdjacentIsAStableInplaceMerge) {
  std::mt19937 rng(43);
  using P = std::pair<int, int>;  // key, position before the merge
  const auto by_key = [](const P& a, const P& b) { return a.first < b.first; };
  for (int round = 0; round < 400; ++round) {
    const size_t n = 1 + rng() % (round % 4 == 0 ? 5000 : 300);
    const size_t mid = rng() % (n + 1);
    const int spread = 1 + static_cast<int>(rng() % 50);
    std::vector<P> v(n);
    for (size_t i = 0; i < n; ++i) v[i].first = static_cast<int>(rng() % static_cast<uint32_t>(spread) * 10);
    // Some rounds: the second range mostly after the first, a few of its keys early (or the
    // first mostly before, a few late), as when parents are written after their children.
    std::sort(v.begin(), v.begin() + static_cast<ptrdiff_t>(mid), by_key);
    if (round % 3 == 1)
      for (size_t i = mid; i < n; ++i) v[i].first += rng() % 20 == 0 ? 0 : 1000;
    if (round % 3 == 2)
      for (size_t i = 0; i < mid; ++i) v[i].first -= rng() % 20 == 0 ? 0 : 1000;
    std::sort(v.begin(), v.begin() + static_cast<ptrdiff_t>(mid), by_key);
    std::sort(v.begin() + static_cast<ptrdiff_t>(mid), v.end(), by_key);
    for (size_t i = 0; i < n; ++i) v[i].second = static_cast<int>(i);
    std::vector<P> want = v;
    std::inplace_merge(want.begin(), want.begin() + static_cast<ptrdiff_t>(mid), want.end(), by_key);
    std::vector<P> got = v;
    internal::MergeAdjacent(got.data(), got.data() + mid, got.data() + n, by_key);
    ASSERT_EQ(got, want) << round;
    got = v;
    internal::MergeOnTwo(got.data(), got.data() + mid, got.data() + n, by_key, 64);
    ASSERT_EQ(got, want) << round;
  }
}

TEST(ApiIndexLookup, DenseUniqueIdsAndDuplicatesFindTheSameCall) {
  std::mt19937 rng(3);
  // Dense unique ids (direct table), sparse ids, and ids two processes reuse (binary search).
  for (int shape = 0; shape < 3; ++shape) {
    ApiTable a;
    for (int64_t i = 0; i < 500; ++i) {
      ApiCall c;
      c.correlation = shape == 0 ? 1000 + i : shape == 1 ? i * 1000003 : i / 2;
      if (i % 7 == 0) c.correlation = kUnknownId;
      c.pid = shape == 2 ? i % 2 : 9;
      a.Add(c);
    }
    std::vector<size_t> perm(a.size());
    for (size_t i = 0; i < perm.size(); ++i) perm[i] = i;
    std::shuffle(perm.begin(), perm.end(), rng);  // calls out of correlation order
    ApiTable shuffled;
    for (size_t i : perm) shuffled.Add(a.Row(i));
    ApiIndex index(shuffled);
    for (int64_t corr = -2; corr < 600000; corr += corr < 2000 ? 1 : 997) {
      for (int64_t pid : {kUnknownId, int64_t{0}, int64_t{1}, int64_t{9}}) {
        ASSERT_EQ(index.Find(corr, pid), Scan(shuffled, corr, pid)) << shape << " " << corr << " " << pid;
      }
    }
  }
}

TEST(BootstrapThreads, SplittingTheResamplesChangesNothing) {
  std::mt19937 rng(5);
  std::vector<double> base, next;
  for (int i = 0; i < 301; ++i) base.push_back(10 + rng() % 1000 / 100.0);
  for (int i = 0; i < 257; ++i) next.push_back(11 + rng() % 1000 / 100.0);
  for (int resamples : {1, 2, 999, 10000}) {
    BootstrapResult one = BootstrapRatioOfMeans(base, next, resamples, 0.95, kBootstrapSeed, 1);
    BootstrapResult two = BootstrapRatioOfMeans(base, next, resamples, 0.95, kBootstrapSeed, 2);
    BootstrapResult plain = BootstrapRatioOfMeans(base, next, resamples);
    ASSERT_TRUE(one.ok);
    EXPECT_EQ(one.lo, two.lo) << resamples;  // exactly: the same draws in the same order
    EXPECT_EQ(one.hi, two.hi) << resamples;
    EXPECT_EQ(one.lo, plain.lo) << resamples;
    EXPECT_EQ(one.hi, plain.hi) << resamples;
  }
}

}  // namespace
}  // namespace tg
