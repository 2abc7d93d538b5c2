// HelpBoard: every chunk of every job runs exactly once, on the owner or a helper; a helper that
// arrives late, early or never leaves the owner's result the same; an error in a chunk reaches
// the owner; Close() lets a waiting helper go.
#include "analyzer/util/help_board.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

namespace tg::internal {
namespace {

TEST(HelpBoard, EveryChunkOnceWithAndWithoutAHelper) {
  for (bool with_helper : {false, true}) {
    HelpBoard board;
    std::atomic<int> by_helper{0};
    std::thread helper;
    if (with_helper) helper = std::thread([&] { board.HelpUntilClosed(); });
    for (size_t n : {size_t{0}, size_t{1}, size_t{7}, size_t{1000}}) {
      std::vector<std::atomic<int>> runs(n);
      board.Run(n, [&](size_t c, int worker) {
        runs[c]++;
        if (worker == 1) by_helper++;
        // Some work, so that a helper waiting on the board can take a share.
        volatile double x = 0;
        for (int i = 0; i < 2000; ++i) x = x + i;
      });
      for (size_t c = 0; c < n; ++c) EXPECT_EQ(runs[c].load(), 1) << n << " " << c;
    }
    board.Close();
    if (helper.joinable()) helper.join();
    if (!with_helper) {
      EXPECT_EQ(by_helper.load(), 0);
    }
  }
}

TEST(HelpBoard, AHelperAfterCloseReturnsAtOnce) {
  HelpBoard board;
  board.Run(3, [](size_t, int) {});
  board.Close();
  board.HelpUntilClosed();  // returns: nothing to wait for
  SUCCEED();
}

TEST(HelpBoard, AnErrorInAChunkReachesTheOwner) {
  HelpBoard board;
  std::thread helper([&] { board.HelpUntilClosed(); });
  std::atomic<int> ran{0};
  EXPECT_THROW(board.Run(500,
                         [&](size_t c, int) {
                           ran++;
                           if (c == 17) throw std::runtime_error("chunk 17");
                         }),
               std::runtime_error);
  EXPECT_GE(ran.load(), 18);  // chunks 0-17 at least (after the error no chunk is claimed)
  // The board still serves the next job.
  std::atomic<int> next{0};
  board.Run(10, [&](size_t, int) { next++; });
  EXPECT_EQ(next.load(), 10);
  board.Close();
  helper.join();
}

TEST(HelpBoard, CloseOnExitClosesOnAnEarlyExit) {
  HelpBoard board;
  std::thread helper([&] { board.HelpUntilClosed(); });
  try {
    const CloseOnExit close(&board);
    throw std::runtime_error("early");
  } catch (const std::runtime_error&) {
  }
  helper.join();  // would hang if the board stayed open
  SUCCEED();
}

}  // namespace
}  // namespace tg::internal
