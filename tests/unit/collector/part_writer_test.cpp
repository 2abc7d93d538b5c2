// PartWriter: what a recorded process writes. Every Flush is in the file for a reader at once
// and survives SIGKILL; the state (devices, processes, metadata, quality) is rewritten at each
// flush; Finish marks the part complete.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <thread>

#include "collector/src/part_writer.h"
#include "collector/src/parts.h"
#include "record_test_util.h"

namespace tg {

using internal::kPartCompleteKey;
using internal::PartWriter;
using internal::PartWriterOptions;
namespace {

using testing::Kernels;
using testing::ReadPart;
using testing::ScratchDir;

std::unique_ptr<PartWriter> OpenPart(const std::string& path, int64_t flush_ms = 3'600'000) {
  std::unique_ptr<PartWriter> w;
  PartWriterOptions o;
  o.path = path;
  o.flush_interval_ms = flush_ms;  // default: an hour, so only explicit flushes write
  Status s = PartWriter::Open(o, &w);
  EXPECT_TRUE(s.ok()) << s.message();
  return w;
}

bool Complete(const Trace& t) {
  auto it = t.metadata.find(kPartCompleteKey);
  return it != t.metadata.end() && it->second == "1";
}

TEST(PartWriterTest, FlushedEventsAreReadableWhileRecordingAndFinishMarksThePartComplete) {
  ScratchDir dir;
  std::string path = dir.Path("part-42.db");
  auto w = OpenPart(path);
  Trace batch = Kernels("gemm", 3);
  ApiCall a;
  a.start = 900;
  a.end = 950;
  a.name = batch.strings.Intern("cudaLaunchKernel");
  a.pid = 42;
  a.tid = 43;
  a.correlation = 1;
  batch.api_calls.Add(a);
  w->Submit(std::move(batch));
  w->AddProcess({42, "python"});
  w->SetMetadata("cuda_version", "13.0");
  ASSERT_TRUE(w->Flush().ok());
  EXPECT_EQ(w->EventsSubmitted(), 4u);  // 3 kernels + 1 API call

  Trace mid;
  ASSERT_TRUE(ReadPart(path, &mid).ok());
  ASSERT_EQ(mid.kernels.size(), 3u);
  EXPECT_EQ(mid.Name(mid.kernels.name[2]), "gemm");
  EXPECT_EQ(mid.kernels.start[2], 1200);  // 1000 + 2 * 100
  EXPECT_EQ(mid.kernels.end[2], 1250);
  EXPECT_EQ(mid.kernels.pid[2], 42);
  ASSERT_EQ(mid.api_calls.size(), 1u);
  EXPECT_EQ(mid.Name(mid.api_calls.name[0]), "cudaLaunchKernel");
  EXPECT_EQ(mid.api_calls.tid[0], 43);
  ASSERT_EQ(mid.processes.size(), 1u);
  EXPECT_EQ(mid.processes[0].name, "python");
  EXPECT_EQ(mid.metadata.at("cuda_version"), "13.0");
  EXPECT_FALSE(Complete(mid));

  w->Submit(Kernels("relu", 2, 5000));
  ASSERT_TRUE(w->Finish().ok());
  ASSERT_TRUE(w->Finish().ok());  // a no-op returning the first result
  Trace done;
  ASSERT_TRUE(ReadPart(path, &done).ok());
  EXPECT_EQ(done.kernels.size(), 5u);  // 3 + 2
  EXPECT_TRUE(Complete(done));
  EXPECT_FALSE(std::filesystem::exists(path + "-journal"));
}

TEST(PartWriterTest, StateIsReplacedAtEveryFlush) {
  ScratchDir dir;
  std::string path = dir.Path("part-1.db");
  auto w = OpenPart(path);
  Device d;
  d.id = 0;
  d.name = "first name";
  d.sm_count = 132;
  w->AddDevice(d);
  w->AddQuality(Quality::kSourceDroppedRecords, 2);
  ASSERT_TRUE(w->Flush().ok());
  d.name = "NVIDIA H200";
  w->AddDevice(d);  // same id: replaces
  Device d1 = d;
  d1.id = 1;
  w->AddDevice(d1);
  w->AddQuality(Quality::kSourceDroppedRecords, 3);
  ASSERT_TRUE(w->Flush().ok());
  Trace t;
  ASSERT_TRUE(ReadPart(path, &t).ok());
  ASSERT_EQ(t.devices.size(), 2u);
  EXPECT_EQ(t.devices[0].name, "NVIDIA H200");
  EXPECT_EQ(t.devices[0].sm_count, 132);
  EXPECT_EQ(t.quality.Get(Quality::kSourceDroppedRecords), 5u);  // 2 + 3, written once
  ASSERT_TRUE(w->Finish().ok());
}

TEST(PartWriterTest, BackgroundThreadFlushesEveryInterval) {
  ScratchDir dir;
  std::string path = dir.Path("part-2.db");
  auto w = OpenPart(path, 20);
  w->Submit(Kernels("k", 7));
  Trace t;
  // Up to 2 s for a 20 ms interval. A read that meets the writer mid-commit may fail (the
  // launcher only reads parts after their process ended): try again.
  for (int i = 0; i < 200 && t.kernels.size() < 7; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    t = Trace();
    if (!ReadPart(path, &t).ok()) t = Trace();
  }
  EXPECT_EQ(t.kernels.size(), 7u);
  EXPECT_FALSE(Complete(t));
  ASSERT_TRUE(w->Finish().ok());
}

// The CUPTI collector's writer has no thread of its own (one flush thread per recorded process):
// nothing reaches the file until the owner flushes.
TEST(PartWriterTest, WithoutBackgroundOnlyTheOwnersFlushWrites) {
  ScratchDir dir;
  std::string path = dir.Path("part-3.db");
  std::unique_ptr<PartWriter> w;
  PartWriterOptions o;
  o.path = path;
  o.flush_interval_ms = 10;
  o.background = false;
  ASSERT_TRUE(PartWriter::Open(o, &w).ok());
  w->Submit(Kernels("k", 5));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // ten intervals
  Trace t;
  if (ReadPart(path, &t).ok()) {
    EXPECT_EQ(t.kernels.size(), 0u);
  }
  ASSERT_TRUE(w->Flush().ok());
  t = Trace();
  ASSERT_TRUE(ReadPart(path, &t).ok());
  EXPECT_EQ(t.kernels.size(), 5u);
  EXPECT_FALSE(Complete(t));
  ASSERT_TRUE(w->Finish().ok());
  t = Trace();
  ASSERT_TRUE(ReadPart(path, &t).ok());
  EXPECT_TRUE(Complete(t));
}

TEST(PartWriterTest, AFailedWriteStopsTheRecordingAndKeepsWhatWasWritten) {
  ScratchDir dir;
  std::string path = dir.Path("part-3.db");
  auto w = OpenPart(path);
  w->Submit(Kernels("first", 10));
  ASSERT_TRUE(w->Flush().ok());
  const auto written = std::filesystem::file_size(path);
  // A file-size limit a little above the part's size makes the next, much larger flush fail
  // part-way, as a full disk would (SIGXFSZ ignored: the write returns EFBIG instead).
  rlimit old_limit{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit small = old_limit;
  small.rlim_cur = written + 64 * 1024;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  w->Submit(Kernels("second", 50000));
  ::testing::internal::CaptureStderr();
  Status flushed = w->Flush();
  const std::string err = ::testing::internal::GetCapturedStderr();
  w->Submit(Kernels("third", 5));  // after the failure: dropped, not queued
  Status finished = w->Finish();
  setrlimit(RLIMIT_FSIZE, &old_limit);
  std::signal(SIGXFSZ, old_handler);

  EXPECT_FALSE(flushed.ok());
  EXPECT_FALSE(finished.ok());
  // One line, at once, naming the part and saying what happens next.
  EXPECT_NE(err.find("tracegate: "), std::string::npos) << err;
  EXPECT_NE(err.find(path), std::string::npos) << err;
  EXPECT_NE(err.find("recording in this process stops; what was written before stays readable"), std::string::npos)
      << err;
  EXPECT_EQ(w->EventsDropped(), 5u);
  Trace t;
  ASSERT_TRUE(ReadPart(path, &t).ok());
  EXPECT_EQ(t.kernels.size(), 10u);  // the first flush, whole; nothing of the failed one
  EXPECT_EQ(t.Name(t.kernels.name[0]), "first");
  EXPECT_FALSE(Complete(t));  // record then marks the process's data incomplete
}

TEST(PartWriterTest, OpenFailsWithThePath) {
  std::unique_ptr<PartWriter> w;
  PartWriterOptions o;
  o.path = "/nonexistent-dir/part-1.db";
  Status s = PartWriter::Open(o, &w);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message().rfind("/nonexistent-dir/part-1.db: ", 0), 0u) << s.message();
}

// The child writes batches of `batch` kernels and reports on `fd` the kernel count after each
// Flush returned; with `then_hang` it writes one report, submits more without flushing and waits.
[[noreturn]] void WriterChild(const std::string& path, int fd, int batch, bool then_hang) {
  auto w = OpenPart(path);
  for (int64_t sent = 0;;) {
    w->Submit(Kernels("k", batch, 1000 + sent * 100));
    if (!w->Flush().ok()) ::_exit(3);
    sent += batch;
    if (::write(fd, &sent, sizeof sent) != sizeof sent) ::_exit(4);
    if (then_hang) {
      w->Submit(Kernels("never_flushed", batch));
      for (;;) ::pause();
    }
  }
}

// Forks a WriterChild, lets it report `reports` flushes, kills it with SIGKILL (after `delay_us`
// more), and returns the last count it reported.
int64_t KillWriterAfter(const std::string& path, int batch, bool then_hang, int reports, int delay_us) {
  int fds[2];
  EXPECT_EQ(::pipe(fds), 0);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    WriterChild(path, fds[1], batch, then_hang);
  }
  ::close(fds[1]);
  int64_t last = -1;
  for (int i = 0; i < reports; ++i) EXPECT_EQ(::read(fds[0], &last, sizeof last), static_cast<ssize_t>(sizeof last));
  if (delay_us > 0) ::usleep(static_cast<useconds_t>(delay_us));
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  // Counts reported after `last` and before the kill are flushed too: take the newest.
  int64_t newer = 0;
  while (::read(fds[0], &newer, sizeof newer) == static_cast<ssize_t>(sizeof newer)) last = newer;
  ::close(fds[0]);
  return last;
}

TEST(PartWriterTest, SigkillLeavesExactlyTheFlushedEvents) {
  ScratchDir dir;
  std::string path = dir.Path("part-3.db");
  int64_t flushed = KillWriterAfter(path, 100, /*then_hang=*/true, 1, 0);
  EXPECT_EQ(flushed, 100);
  Trace t;
  Status s = ReadPart(path, &t);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(t.kernels.size(), 100u);  // the 100 "never_flushed" kernels were only queued
  EXPECT_EQ(t.strings.Find("never_flushed"), StringTable::kNotFound);
  EXPECT_FALSE(Complete(t));
}

// Killed at a random moment of a busy writer, often inside a transaction (measured over 20 runs:
// 3 to 6 of the 6 rounds leave a non-empty journal): the part rolls back to its last commit, so
// it holds whole batches and at least every batch reported flushed.
TEST(PartWriterTest, SigkillDuringWritesRollsBackToTheLastCommit) {
  ScratchDir dir;
  int journals = 0;
  for (int round = 0; round < 6; ++round) {
    std::string path = dir.Path("part-" + std::to_string(round) + ".db");
    int64_t flushed = KillWriterAfter(path, 500, /*then_hang=*/false, 3, 700 * round);
    std::error_code ec;
    journals += std::filesystem::file_size(path + "-journal", ec) > 0 && !ec;
    Trace t;
    Status s = ReadPart(path, &t);
    ASSERT_TRUE(s.ok()) << "round " << round << ": " << s.message();
    EXPECT_GE(static_cast<int64_t>(t.kernels.size()), flushed) << "round " << round;
    EXPECT_EQ(t.kernels.size() % 500, 0u) << "round " << round;
    // A journal may stay behind (one whose header was not yet written is not "hot": the file is
    // consistent without it, and SQLite leaves it to the next writer); the launcher removes the
    // parts directory.
  }
  RecordProperty("rounds_killed_inside_a_transaction", journals);
}

}  // namespace
}  // namespace tg
