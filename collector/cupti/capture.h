// `record --capture-range nvtx:NAME [--iterations K:N]`: which NVTX ranges open and close the
// recording window. The collector feeds it every NVTX range push/pop and start/end it sees (CUPTI's
// NVTX callbacks) and turns activity on at kStart and off at kStop, so nothing outside the window
// pays for recording. Only outermost occurrences count: a range named NAME inside another one
// named NAME on the same thread (push/pop) is neither counted nor a window of its own. One window
// is open at a time; a matching range that starts while one is open (another thread) is counted
// but opens nothing. CUDA-free and thread-safe, so its tests need no driver.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace tg::cupti {

class CaptureWindow {
 public:
  enum class Action { kNone, kStart, kStop };

  // name: the NVTX range name; skip: occurrences passed over first; count: windows recorded
  // after them (0: every one).
  CaptureWindow(std::string name, int64_t skip, int64_t count);

  // A push on thread `tid` of a range called `name`; the pop that ends the innermost push.
  Action Push(int64_t tid, std::string_view name);
  Action Pop(int64_t tid);
  // A process-wide range (nvtxRangeStart/End) with its id.
  Action Start(uint64_t id, std::string_view name);
  Action End(uint64_t id);

  // CUPTI's NVTX callback (domain CUPTI_CB_DOMAIN_NVTX, `data` a CUpti_NvtxData): range pushes
  // and pops (plain and domain), starts and ends; other NVTX calls and non-ASCII names: kNone.
  Action OnNvtxCallback(uint32_t cbid, const void* data, int64_t tid);

  const std::string& name() const { return name_; }
  int64_t seen() const;     // outermost occurrences of the name so far
  int64_t windows() const;  // windows opened so far
  bool open() const;

 private:
  enum class Entry : uint8_t { kOther, kCounted, kWindow };  // what a push was
  Entry Occurrence(bool matches, bool nested);              // under mu_

  const std::string name_;
  const int64_t skip_, count_;
  mutable std::mutex mu_;
  std::map<int64_t, std::vector<Entry>> stacks_;  // per thread, its open pushes
  std::map<uint64_t, Entry> started_;             // open start/end ranges that matched
  int64_t seen_ = 0, windows_ = 0;
  bool open_ = false;
};

}  // namespace tg::cupti
