// The capped pool of CUPTI activity buffers.
#include "buffer_pool.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>

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

}  // namespace
}  // namespace tg::cupti
