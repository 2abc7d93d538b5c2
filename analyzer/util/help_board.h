// HelpBoard: where one thread posts work in numbered chunks and another thread, once it has
// nothing of its own left, takes chunks of it. The owner's Run(n, work) runs work(chunk, worker)
// for every chunk in [0, n) (worker 0: the owner, 1: a helper), claiming chunks one at a time
// with any helper, and returns once all are done. HelpUntilClosed() takes chunks of each job
// posted until the owner calls Close(). A job's chunks write only their own results; the owner
// joins them in chunk order after Run, so the result does not depend on who ran which chunk.
//
// The owner must Close() the board on every path (CloseOnExit does), or a helper waits forever.
// An exception thrown by a chunk stops the claiming and is rethrown by Run on the owner's thread
// once no helper runs a chunk any more.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <utility>

namespace tg::internal {

class HelpBoard {
 public:
  using Work = std::function<void(size_t chunk, int worker)>;

  void Run(size_t n, const Work& work) {
    {
      std::lock_guard<std::mutex> lock(m_);
      job_ = &work;
      n_ = n;
      next_.store(0, std::memory_order_relaxed);
      ++generation_;
    }
    cv_.notify_all();
    try {
      for (size_t c; (c = next_.fetch_add(1, std::memory_order_relaxed)) < n;) work(c, 0);
    } catch (...) {
      Stop(std::current_exception());
    }
    std::unique_lock<std::mutex> lock(m_);
    job_ = nullptr;
    cv_.wait(lock, [this] { return helpers_ == 0; });
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  }

  void HelpUntilClosed() {
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(m_);
    for (;;) {
      cv_.wait(lock, [&] { return closed_ || (job_ != nullptr && generation_ != seen); });
      if (job_ == nullptr || generation_ == seen) return;  // closed, with no new job
      seen = generation_;
      const Work* job = job_;
      const size_t n = n_;
      ++helpers_;
      lock.unlock();
      try {
        for (size_t c; (c = next_.fetch_add(1, std::memory_order_relaxed)) < n;) (*job)(c, 1);
      } catch (...) {
        Stop(std::current_exception());
      }
      lock.lock();
      --helpers_;
      cv_.notify_all();
    }
  }

  void Close() {
    {
      std::lock_guard<std::mutex> lock(m_);
      closed_ = true;
    }
    cv_.notify_all();
  }

 private:
  // No more chunks are claimed; the first error is kept for Run.
  void Stop(std::exception_ptr e) {
    next_.store(SIZE_MAX / 2, std::memory_order_relaxed);
    std::lock_guard<std::mutex> lock(m_);
    if (!error_) error_ = std::move(e);
  }

  std::mutex m_;
  std::condition_variable cv_;
  const Work* job_ = nullptr;
  size_t n_ = 0;
  std::atomic<size_t> next_{0};
  uint64_t generation_ = 0;
  int helpers_ = 0;
  bool closed_ = false;
  std::exception_ptr error_;
};

// Closes the board when it goes out of scope (an early return or an exception included).
class CloseOnExit {
 public:
  explicit CloseOnExit(HelpBoard* board) : board_(board) {}
  ~CloseOnExit() {
    if (board_) board_->Close();
  }
  CloseOnExit(const CloseOnExit&) = delete;
  CloseOnExit& operator=(const CloseOnExit&) = delete;

 private:
  HelpBoard* board_;
};

}  // namespace tg::internal
