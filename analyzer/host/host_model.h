// The host model: per host thread, the nesting of its ranges (Kineto cpu_op, python_function and
// user annotations, NVTX ranges) and runtime/driver calls, and what the thread was doing at any
// instant (HostState). The idle causes read it to say what the host did while the GPU had no work
// (docs/RULES.md, "Idle causes").
//
// Only threads that made at least one runtime/driver call are modelled (the threads that launch
// or wait; Python frames of other threads say nothing about the GPU's idle time). Per event the
// model keeps 9 bytes (its row, its parent, whether it launches); times, names and domains are
// read from the trace's columns, so traces with 10^6 Python frames cost 9 MB here, and 4 bytes
// per launching call (its row). Building it is one counting sort by thread, one sort per thread
// (in place, through the columns: a merge of the table's sorted runs, or of a few rows written
// out of order), then one stack sweep: O(n log n).
//
// The state of a thread at instant t, from the innermost event containing t outwards (the first
// rule that applies):
//   kCapture  t lies between a stream-capture begin and end call of the thread
//             (cudaStreamBeginCapture ... cudaStreamEndCapture, hip likewise);
//   kSync     the innermost call is a wait: a *Synchronize call, a synchronous copy (a Memcpy
//             call without "Async", hipMemcpyWithStream), or cudaFree / hipFree / cuMemFree,
//             which synchronise the device;
//   kJit      an enclosing frame or call compiles code: Dynamo's convert_frame, Inductor's
//             compile_fx / codecache / async_compile / graph, AOTAutograd's aot_autograd.py,
//             Triton's compiler and backends, torch.utils.cpp_extension, NVRTC, and module /
//             library loads (cuModuleLoad*, cuLibraryLoad*, hipModuleLoad*);
//   kCompute  the outermost enclosing range that launches no GPU work in its whole extent (a
//             launch-free block) lasts at least compute_block_min_ns: NumPy, SciPy, PIL,
//             tokenizers, CPU tensor ops, Python outside the model;
//   kLaunch   any other event encloses t: a launch call, frames that launch GPU work (the
//             framework's dispatch, the model's forward), or a short launch-free block inside them
//             (a 5 us aten::empty inside aten::addmm);
//   kIdle     (before kCompute) a launch-free frame that waits (threading / queue / selectors /
//             socket / asyncio / sleep) encloses t; or no event but annotations (the step's marker,
//             NVTX ranges; one that launches nothing and is long enough is kCompute) encloses t,
//             and either the thread has Python frames (with a Python tracer,
//             a thread outside every frame is not running Python) or the empty stretch around t
//             lasts at least 100 x compute_block_min_ns; a shorter empty stretch on a thread without
//             Python frames is the untraced interpreter between two ops: kLaunch.
// A call "launches GPU work" when a kernel, copy or memset of its process carries its correlation
// id. Ranges are taken as nested (FinalizeTrace counts those that are not); a range that overlaps
// its parent's end is still treated as its child.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "tracegate/analyzer/model.h"

namespace tg::internal {

enum class HostState : uint8_t { kLaunch, kCompute, kJit, kSync, kIdle, kCapture };

// What the model reads from a range's name: whether it is a frame that compiles code (kJit above)
// or one that waits (kIdle's frames), by the patterns in host_model.cpp.
struct FrameKind {
  bool jit = false, wait = false;
};
FrameKind ClassifyFrameName(std::string_view name);

// A piece of one thread's time with one state. `frame`: the event that decided it (the launch-free
// block, the compile frame, the wait call, the innermost event for kLaunch), kNoEvent for kIdle.
struct HostPiece {
  TimeNs start, end;
  HostState state;
  uint32_t frame;
};

// A frame inside an interval: the path from the innermost frame that encloses the whole interval
// down to it ("video_classification.py: preprocess > image_processing_videomae.py: preprocess"),
// its full name, and its overlap with the interval.
struct HostFrame {
  std::string path;
  std::string name;
  TimeNs overlap_ns = 0;
};

struct HostModelOptions {
  HostModelOptions() = default;
  explicit HostModelOptions(TimeNs compute_block_min) : compute_block_min_ns(compute_block_min) {}
  TimeNs compute_block_min_ns = 100'000;  // a launch-free block at least this long is host compute
  // Whether the second core is free now (null: it is): the model is built on two cores where it
  // is (its largest steps shared: a thread's walk, sorts and merges, the events' placing), on one
  // where another analysis keeps it busy. Asked before each step; the model is the same either way.
  std::function<bool()> spare_core;
  // A thread with at least this many events is walked in two parts on two cores (the tests set it
  // low to walk small traces in parts).
  uint32_t split_walk_events = uint32_t{1} << 16;
};

class HostModel {
 public:
  static constexpr uint32_t kNoEvent = UINT32_MAX;
  static constexpr int32_t kNoThread = -1;

  // `launched`: per API call row, whether GPU work carries its correlation id (LaunchedCalls in
  // analyzer/analysis/summary_internal.h).
  HostModel(const Trace& t, const std::vector<uint8_t>& launched, HostModelOptions options);

  bool empty() const { return threads_.empty(); }
  const HostModelOptions& options() const { return options_; }
  // The modelled thread of a (pid, tid), or kNoThread.
  int32_t ThreadOf(int64_t pid, int64_t tid) const;
  int32_t ThreadOfCall(size_t api_row) const;
  int64_t Pid(int32_t thread) const { return threads_[static_cast<size_t>(thread)].pid; }
  int64_t Tid(int32_t thread) const { return threads_[static_cast<size_t>(thread)].tid; }

  // Where the last Split of a caller stopped searching: a caller whose intervals move forward in
  // time (an idle walk) passes the same hint to each, and the search for the next interval's start
  // then reads a few events after the last one instead of log2(n) events all over the thread.
  struct Hint {
    int32_t thread = kNoThread;
    uint32_t next = 0;
  };
  // Calls on_piece(const HostPiece&) for consecutive pieces that cover [a, b) exactly, in order:
  // one search, then a walk over the thread's events inside [a, b).
  template <class F>
  void Split(int32_t thread, TimeNs a, TimeNs b, F&& on_piece, Hint* hint = nullptr) const {
    const Thread& th = threads_[static_cast<size_t>(thread)];
    Cursor c = Begin(th, a, hint && hint->thread == thread ? hint->next : th.begin);
    if (hint) *hint = Hint{thread, c.next};
    for (TimeNs cur = a; cur < b;) {
      const HostPiece p = Piece(th, c, cur, b);
      on_piece(p);
      cur = p.end;
      Advance(th, c, cur);
    }
  }
  // The piece that starts at `t` (its state at t) and ends where the state may change, at most at `limit`.
  HostPiece StateAt(int32_t thread, TimeNs t, TimeNs limit) const;

  // Up to `top` frames inside [a, b) on `thread`, the largest overlap first. With `anchors` (the
  // events that decided the interval's pieces, HostPiece::frame), those frames, and below each
  // range among them its largest children and grandchildren; without, the children of the
  // innermost event enclosing all of [a, b) (or the top-level events) followed down three levels.
  // A frame whose child covers the same time is left out for the child.
  // Anchors are (event, the time it decided), and rank by that time; the frames below them and
  // those of the search without anchors rank by their overlap.
  std::vector<HostFrame> Frames(int32_t thread, TimeNs a, TimeNs b, size_t top,
                                const std::vector<std::pair<uint32_t, TimeNs>>& anchors = {}) const;

  std::string_view EventName(uint32_t ev) const;
  StringId NameId(uint32_t ev) const { return (ev & 1u) ? t_.api_calls.name[ev >> 1] : t_.ranges.name[ev >> 1]; }
  bool IsCall(uint32_t ev) const { return (ev & 1u) != 0; }
  // "image_processing_videomae.py: normalize" for a Python frame, the name otherwise.
  std::string ShortName(uint32_t ev) const;

  // Stream captures: calls made inside a capture region that would launch GPU work outside one
  // (kernel launches, async copies and memsets) and carry no GPU record of their own.
  uint64_t captured_launches() const { return captured_launches_; }
  uint64_t capture_regions() const { return capture_regions_; }
  std::string capture_name() const { return capture_name_; }

 private:
  struct Thread {
    int64_t pid, tid;
    uint32_t begin, end;                // events_[begin, end), by (start, longer first)
    uint32_t launch_begin, launch_end;  // launch_rows_[...): this thread's launching calls
    uint32_t capture_begin, capture_end;
    bool python = false;  // has Python frames
  };
  // A position on a thread: the first event that starts after the current instant, and the
  // innermost event containing it (indexes into events_, kNoEvent for none).
  struct Cursor {
    uint32_t next, inner;
  };
  // `from`: a position among th's events (the last search's answer): the search gallops from
  // there when the answer lies at or after it, else searches the whole thread.
  Cursor Begin(const Thread& th, TimeNs t, uint32_t from) const;
  Cursor Begin(const Thread& th, TimeNs t) const { return Begin(th, t, th.begin); }
  void Advance(const Thread& th, Cursor& c, TimeNs t) const;
  HostPiece Piece(const Thread& th, const Cursor& c, TimeNs t, TimeNs limit) const;
  // An event's start, end (never before its start) and name, from the trace's columns.
  TimeNs Start(uint32_t ev) const { return (ev & 1u) ? t_.api_calls.start[ev >> 1] : t_.ranges.start[ev >> 1]; }
  TimeNs End(uint32_t ev) const {
    return (ev & 1u) ? std::max(t_.api_calls.start[ev >> 1], t_.api_calls.end[ev >> 1])
                     : std::max(t_.ranges.start[ev >> 1], t_.ranges.end[ev >> 1]);
  }
  TimeNs StartAt(uint32_t i) const { return Start(events_[i]); }  // i: index into events_
  uint8_t NameClass(uint32_t ev) const;
  // Whether event i (index into events_) is a user annotation or NVTX range: a range of neither
  // the Python frames' nor the ops' domain. It marks a region; it is not the thread working.
  bool Annotation(uint32_t i) const {
    const uint32_t ev = events_[i];
    if (ev & 1u) return false;
    const StringId domain = t_.ranges.domain[ev >> 1];
    return domain != python_ && domain != cpu_op_;
  }
  bool LaunchFree(uint32_t i, const Thread& th) const;  // i: index into events_
  // Index into events_ of the innermost event of `th` enclosing t, or kNoEvent.
  uint32_t Innermost(const Thread& th, TimeNs t) const { return Begin(th, t).inner; }
  bool InCapture(const Thread& th, TimeNs t, TimeNs* until) const;

  const Trace& t_;
  HostModelOptions options_;
  StringId python_, cpu_op_;           // the domains of Python frames and ops (StringTable::kNotFound: none)
  std::vector<Thread> threads_;        // by (pid, tid)
  std::vector<uint32_t> events_;       // (row << 1) | is_call
  std::vector<uint32_t> parent_;       // index into events_, kNoEvent at the top
  mutable std::vector<uint8_t> free_;  // launch-free cache: 0 unknown, 1 launches, 2 free (atomic_ref access)
  std::vector<uint32_t> launch_rows_;  // API rows of the launching calls, by thread, in start order
  std::vector<std::pair<TimeNs, TimeNs>> captures_;
  std::vector<uint8_t> name_class_;  // per StringId, NameClass bits
  // Index into events_ of event `ev` of `th`, or kNoEvent.
  uint32_t IndexOf(const Thread& th, uint32_t ev) const;
  uint64_t captured_launches_ = 0, capture_regions_ = 0;
  std::string capture_name_;
};

}  // namespace tg::internal
