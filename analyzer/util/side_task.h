// SideTask: work for the second core. The constructor starts `f` on a thread of its own (or runs
// it right there when no thread can be had); Wait() joins and rethrows what `f` threw. The
// destructor joins as well, so an early return or an exception never leaves the thread running
// (a joinable std::thread would end the process).
#pragma once

#include <exception>
#include <system_error>
#include <thread>
#include <utility>

namespace tg::internal {

class SideTask {
 public:
  template <class F>
  explicit SideTask(F f) {
    auto body = [this, f = std::move(f)]() mutable {
      try {
        f();
      } catch (...) {
        error_ = std::current_exception();
      }
    };
    try {
      thread_ = std::thread(std::move(body));
    } catch (const std::system_error&) {
      body();  // std::thread leaves `body` alone when it cannot start one
    }
  }
  ~SideTask() {
    if (thread_.joinable()) thread_.join();
  }
  SideTask(const SideTask&) = delete;
  SideTask& operator=(const SideTask&) = delete;

  void Wait() {
    if (thread_.joinable()) thread_.join();
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  }

 private:
  std::thread thread_;
  std::exception_ptr error_;
};

}  // namespace tg::internal
