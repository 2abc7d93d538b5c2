// The capped pool of CUPTI activity buffers.
#include "buffer_pool.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <atomic>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

namespace tg::cupti {
namespace {

TEST(CuptiBufferPool, RefusesBeyondTheCapAndCountsIt) {
  // 3 KiB + 100 B cap / 1 KiB buffers = 3 buffers at most.
  BufferPool pool(1024, 3 * 1024 + 100);
  EXPECT_EQ(pool.max_buffers(), 3u);
  std::set<uint8_t*> out;
  for (int i = 0; i < 3; ++i) {
    uint8_t* b = pool.Acquire();
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b) % 8, 0u);  // CUPTI's alignment
    out.insert(b);
  }
  EXPECT_EQ(out.size(), 3u);
  EXPECT_EQ(pool.Acquire(), nullptr);
  EXPECT_EQ(pool.Acquire(), nullptr);
  EXPECT_EQ(pool.refusals(), 2u);
  EXPECT_EQ(pool.allocated(), 3u);
  for (uint8_t* b : out) pool.Release(b);
}

TEST(CuptiBufferPool, ReleasedBufferIsReusedNotReallocated) {
  BufferPool pool(4096, 4096);
  uint8_t* a = pool.Acquire();
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(pool.Acquire(), nullptr);
  pool.Release(a);
  EXPECT_EQ(pool.Acquire(), a);
  EXPECT_EQ(pool.allocated(), 1u);
  EXPECT_EQ(pool.refusals(), 1u);
  pool.Release(a);
}

TEST(CuptiBufferPool, CapBelowOneBufferStillAllowsOne) {
  BufferPool pool(8 << 20, 1 << 20);
  EXPECT_EQ(pool.max_buffers(), 1u);
  uint8_t* a = pool.Acquire();
  EXPECT_NE(a, nullptr);
  EXPECT_EQ(pool.buffer_bytes(), size_t{8} << 20);
  pool.Release(a);
}

bool AllZero(const uint8_t* b, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (b[i] != 0) return false;
  return true;
}

// CUPTI is told the buffers come zeroed (CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER), so every
// buffer handed out is: a new one, and one CUPTI filled and gave back.
TEST(CuptiBufferPool, EveryBufferHandedOutIsZeroed) {
  BufferPool pool(64 << 10, 64 << 10);
  uint8_t* a = pool.Acquire();
  ASSERT_NE(a, nullptr);
  EXPECT_TRUE(AllZero(a, pool.buffer_bytes()));
  std::memset(a, 0xab, pool.buffer_bytes());  // CUPTI's records
  pool.Release(a);
  uint8_t* again = pool.Acquire();
  ASSERT_EQ(again, a);
  EXPECT_TRUE(AllZero(again, pool.buffer_bytes()));
  pool.Release(again);
}

// Reserve creates free buffers ahead of CUPTI's requests, within the cap; Acquire then takes them
// without allocating.
TEST(CuptiBufferPool, ReserveKeepsBuffersReadyWithinTheCap) {
  BufferPool pool(4096, 3 * 4096);
  pool.Reserve(2);
  EXPECT_EQ(pool.allocated(), 2u);
  EXPECT_EQ(pool.free_buffers(), 2u);
  pool.Reserve(2);  // already there
  EXPECT_EQ(pool.allocated(), 2u);
  uint8_t* a = pool.Acquire();
  uint8_t* b = pool.Acquire();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(pool.allocated(), 2u);  // taken from the free list
  EXPECT_TRUE(AllZero(a, 4096) && AllZero(b, 4096));
  pool.Reserve(5);  // the cap allows one more
  EXPECT_EQ(pool.allocated(), 3u);
  EXPECT_EQ(pool.free_buffers(), 1u);
  EXPECT_EQ(pool.refusals(), 0u);  // Reserve never counts as a refusal
  pool.Release(a);
  pool.Release(b);
  EXPECT_EQ(pool.free_buffers(), 3u);
}

// A buffer comes back with the bytes CUPTI wrote (its valid bytes): only those are zeroed, which
// is all that is needed, as the rest was never written. A used size past the buffer is clamped.
TEST(CuptiBufferPool, ReleaseZeroesOnlyTheUsedBytes) {
  BufferPool pool(4096, 4096);
  uint8_t* a = pool.Acquire();
  ASSERT_NE(a, nullptr);
  std::memset(a, 0xab, 100);  // CUPTI's records: 100 valid bytes
  pool.Release(a, 100);
  uint8_t* again = pool.Acquire();
  ASSERT_EQ(again, a);
  EXPECT_TRUE(AllZero(again, 4096));
  // Bytes past the used ones are left as they are (here a planted mark, to show it).
  std::memset(again, 0xcd, 200);
  pool.Release(again, 150);
  uint8_t* third = pool.Acquire();
  EXPECT_TRUE(AllZero(third, 150));
  EXPECT_EQ(third[150], 0xcd);
  EXPECT_EQ(third[199], 0xcd);
  std::memset(third, 0xee, 4096);
  pool.Release(third, size_t{1} << 30);
  uint8_t* fourth = pool.Acquire();
  EXPECT_TRUE(AllZero(fourth, 4096));
  pool.Release(fourth, 0);
}

// CUPTI asks for and completes buffers on many threads at once while the flush thread tops the
// pool up (run under TSan in CI, ci/sanitize.sh): every buffer is handed to one thread at a time,
// comes zeroed, and none is lost.
TEST(CuptiBufferPool, ConcurrentAcquireReleaseAndReserve) {
  BufferPool pool(1024, 16 * 1024);
  std::atomic<bool> bad{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 300; ++i) {
        uint8_t* b = pool.Acquire();
        if (!b) continue;  // the cap: CUPTI would drop records
        if (!AllZero(b, 1024)) bad.store(true);
        const size_t used = static_cast<size_t>(8 * (1 + (i + t) % 100));
        std::memset(b, 0x5a, used);
        pool.Release(b, used);
      }
    });
  threads.emplace_back([&] {
    for (int i = 0; i < 200; ++i) pool.Reserve(8);
  });
  for (std::thread& th : threads) th.join();
  EXPECT_FALSE(bad.load());
  EXPECT_LE(pool.allocated(), 16u);
  EXPECT_EQ(pool.free_buffers(), pool.allocated());  // every buffer came back
}

}  // namespace
}  // namespace tg::cupti
