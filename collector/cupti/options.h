// The injected collector's settings, read from the environment `tracegate record` sets
// (collector/src/parts.h). CUDA-free so tests can feed any environment.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "tracegate/collector/recorder.h"

namespace tg::cupti {

struct CollectorOptions {
  std::string parts_dir;       // TRACEGATE_PARTS_DIR: where part-<pid>.db goes
  RecordingOptions recording;  // TRACEGATE_FLUSH_MS, _DRIVER_API, _BUFFER_MB, _BUFFER_CAP_MB, _API,
                               // _CUDA_GRAPH_TRACE, _CAPTURE_RANGE, _ITERATIONS
};

using GetEnv = std::function<const char*(const char* name)>;

// Reads the options. A value that is not an integer in range (or 0/1 for the driver switch, one of
// the named values, nvtx:NAME, K:N) keeps its default and adds one line to *warnings saying so;
// so does TRACEGATE_ITERATIONS without TRACEGATE_CAPTURE_RANGE. A missing TRACEGATE_PARTS_DIR leaves
// parts_dir empty: the caller decides (the injection does not record without it).
CollectorOptions ReadCollectorOptions(const GetEnv& getenv, std::vector<std::string>* warnings);

// Runs a start-up function once per process, safe against re-entry: a call made while the first
// one runs (on its own thread, as when starting CUPTI runs cuInit and the driver calls the
// injection entry point again, or on another thread) returns at once instead of waiting, which
// std::call_once would do, deadlocking on its own thread.
class StartOnce {
 public:
  // True when this call ran `start`.
  template <typename Start>
  bool Run(Start&& start) {
    int expected = kNotStarted;
    if (!state_.compare_exchange_strong(expected, kStarting)) return false;
    struct Done {
      std::atomic<int>& state;
      ~Done() { state.store(kStarted); }  // also when `start` throws: never run it twice
    } done{state_};
    start();
    return true;
  }
  bool started() const { return state_.load() == kStarted; }

 private:
  static constexpr int kNotStarted = 0, kStarting = 1, kStarted = 2;
  std::atomic<int> state_{kNotStarted};
};

}  // namespace tg::cupti
