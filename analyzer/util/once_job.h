// OnceJob: work that whichever of two threads comes to it first runs, once. The thread that
// prepares its inputs opens it (Open); from then on either thread may take it with TryRun, which
// never waits: it runs the work there and then, or returns false at once when the job is not
// open yet or another thread has taken it. Finish() waits for the thread that took it (and
// rethrows what the work threw), or runs it when no thread has.
//
// RunAnalysis gives the summary's kernel statistics to the other thread this way when that
// thread would otherwise wait for the summary's busy union (the nsys export: ~35 ms).
#pragma once

#include <atomic>
#include <exception>
#include <functional>
#include <future>
#include <utility>

namespace tg::internal {

class OnceJob {
 public:
  // Makes the job available; `work` reads only what is ready from here on. Called once.
  void Open(std::function<void()> work) {
    work_ = std::move(work);
    open_.store(true, std::memory_order_release);
  }
  // Runs the job here when it is open and no thread has taken it: true. Otherwise false.
  bool TryRun() {
    if (!open_.load(std::memory_order_acquire) || taken_.exchange(true, std::memory_order_acq_rel)) return false;
    try {
      work_();
    } catch (...) {
      done_.set_exception(std::current_exception());
      throw;
    }
    done_.set_value();
    return true;
  }
  // Once the job is open: runs it here unless a thread has taken it, else waits for that thread
  // to be done with it (rethrowing what the work threw). A job never opened: nothing to do.
  void Finish() {
    if (TryRun() || !taken_.load(std::memory_order_acquire)) return;
    ready_.get();
  }

 private:
  std::function<void()> work_;
  std::atomic<bool> open_{false};
  std::atomic<bool> taken_{false};
  std::promise<void> done_;
  std::shared_future<void> ready_ = done_.get_future().share();
};

}  // namespace tg::internal
