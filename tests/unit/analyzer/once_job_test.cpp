// OnceJob: the work runs exactly once, on whichever thread takes it first; TryRun never waits;
// nothing runs before Open; Finish waits for the thread that took it and rethrows its error.
#include "analyzer/util/once_job.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

namespace tg::internal {
namespace {

TEST(OnceJob, NothingRunsBeforeOpen) {
  OnceJob job;
  EXPECT_FALSE(job.TryRun());
  job.Finish();  // never opened: nothing to run or wait for
  int runs = 0;
  job.Open([&] { ++runs; });
  EXPECT_TRUE(job.TryRun());
  EXPECT_FALSE(job.TryRun());
  job.Finish();
  EXPECT_EQ(runs, 1);
}

TEST(OnceJob, FinishRunsAnUntakenJob) {
  OnceJob job;
  int runs = 0;
  job.Open([&] { ++runs; });
  job.Finish();
  EXPECT_EQ(runs, 1);
  EXPECT_FALSE(job.TryRun());
}

TEST(OnceJob, TwoThreadsRunItOnceAndFinishWaitsForTheTaker) {
  for (int round = 0; round < 50; ++round) {
    OnceJob job;
    std::atomic<int> runs{0};
    std::atomic<bool> done{false};
    job.Open([&] {
      ++runs;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      done = true;
    });
    std::atomic<bool> other_ran{false};
    std::thread other([&] { other_ran = job.TryRun(); });
    const bool here = job.TryRun();
    other.join();
    job.Finish();
    EXPECT_TRUE(done);
    EXPECT_EQ(runs, 1);
    EXPECT_NE(here, other_ran.load());  // exactly one of the two took it
  }
}

TEST(OnceJob, FinishRethrowsWhatTheTakerThrew) {
  OnceJob job;
  job.Open([] { throw std::runtime_error("no memory"); });
  std::thread taker([&] { EXPECT_THROW(job.TryRun(), std::runtime_error); });
  taker.join();
  EXPECT_FALSE(job.TryRun());
  EXPECT_THROW(job.Finish(), std::runtime_error);
}

}  // namespace
}  // namespace tg::internal
