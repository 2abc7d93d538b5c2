// HostModel: per-thread nesting of ranges and calls, and the state of a thread at an instant
// (host_model.h gives the rules).
#include "analyzer/host/host_model.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <functional>
#include <limits>
#include <tuple>

#include "analyzer/util/huge_pages.h"
#include "analyzer/util/side_task.h"
#include "analyzer/util/sort_runs.h"

namespace tg::internal {

namespace {

// Without a Python tracer an empty stretch may be untraced interpreter time: only one this many
// times the launch-free block threshold is taken for an idle host.
constexpr TimeNs kUntracedIdleFactor = 100;

enum NameBits : uint8_t {
  kSyncCall = 1,
  kJitName = 2,
  kCaptureBegin = 4,
  kCaptureEnd = 8,
  kLaunchLike = 16,
  kWaitName = 32,
  kClassified = 128,
};

bool Has(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

uint8_t ClassifyCall(std::string_view n) {
  uint8_t bits = kClassified;
  const bool copy = Has(n, "Memcpy") || Has(n, "memcpy");
  const bool async = Has(n, "Async") || Has(n, "async");
  if (Has(n, "Synchronize") || (copy && !async && !Has(n, "Peer") && !Has(n, "3DPeer")) || n == "cudaFree" ||
      n == "hipFree" || n.starts_with("cuMemFree") || n == "cudaFreeHost" || n == "hipHostFree")
    bits |= kSyncCall;
  if (Has(n, "ModuleLoad") || Has(n, "LibraryLoad") || Has(n, "nvrtc") || Has(n, "LinkComplete")) bits |= kJitName;
  if (Has(n, "BeginCapture")) bits |= kCaptureBegin;
  if (Has(n, "EndCapture")) bits |= kCaptureEnd;
  if (Has(n, "Launch") || ((copy || Has(n, "Memset")) && async)) bits |= kLaunchLike;
  return bits;
}

// Compiler frames (host_model.h lists them). Runtime wrappers of compiled code (Dynamo's
// eval_frame, AOTAutograd's runtime_wrappers, Triton's jit.py run) are not compiling.
uint8_t ClassifyFrame(std::string_view n) {
  static constexpr std::string_view kJit[] = {
      "_dynamo/convert_frame.py", "_inductor/compile_fx.py",
      "_inductor/codecache.py",   "_inductor/async_compile.py",
      "_inductor/graph.py",       "_functorch/aot_autograd.py",
      "triton/compiler/",         "triton/backends/",
      "utils/cpp_extension.py",   "nvrtc",
  };
  // Frames that wait (for a lock, a queue, a socket, a timer): an idle thread, not computing.
  static constexpr std::string_view kWait[] = {
      "threading.py",           "queue.py",         "selectors.py", "method sleep", "time.sleep",
      "select.select",          "select.poll",      "select.epoll", "socket.py",    "multiprocessing/connection.py",
      "asyncio/base_events.py", "asyncio/tasks.py",
  };
  // Which of '/', '.' and ' ' a text holds (bits 0-2): a pattern with one the name lacks cannot
  // be in it. Most frames of a serving engine or a step's own ranges hold no path and no file
  // ("execute_37_context_0(sq0sk0)"), and are then not searched for the patterns that do.
  static constexpr auto marks = [](std::string_view x) {
    unsigned m = 0;
    for (char c : x) m |= c == '/' ? 1u : c == '.' ? 2u : c == ' ' ? 4u : 0u;
    return m;
  };
  static constexpr auto marks_of = []<size_t N>(const std::string_view(&patterns)[N]) {
    std::array<unsigned, N> m{};
    for (size_t i = 0; i < N; ++i) m[i] = marks(patterns[i]);
    return m;
  };
  static constexpr auto kJitMarks = marks_of(kJit);
  static constexpr auto kWaitMarks = marks_of(kWait);
  const unsigned has = marks(n);
  uint8_t bits = kClassified;
  for (size_t i = 0; i < std::size(kJit); ++i)
    if ((kJitMarks[i] & ~has) == 0 && Has(n, kJit[i])) bits |= kJitName;
  for (size_t i = 0; i < std::size(kWait); ++i)
    if ((kWaitMarks[i] & ~has) == 0 && Has(n, kWait[i]) && !Has(n, "_bootstrap")) bits |= kWaitName;
  return bits;
}

}  // namespace

FrameKind ClassifyFrameName(std::string_view name) {
  const uint8_t bits = ClassifyFrame(name);
  return FrameKind{(bits & kJitName) != 0, (bits & kWaitName) != 0};
}

std::string_view HostModel::EventName(uint32_t ev) const { return t_.Name(NameId(ev)); }
uint8_t HostModel::NameClass(uint32_t ev) const { return name_class_[NameId(ev)]; }

HostModel::HostModel(const Trace& t, const std::vector<uint8_t>& launched, HostModelOptions options)
    : t_(t),
      options_(options),
      python_(t.strings.Find("python_function")),
      cpu_op_(t.strings.Find("cpu_op")),
      name_class_(t.strings.size(), 0) {
  const ApiTable& a = t.api_calls;
  const RangeTable& r = t.ranges;
  const auto spare = [this] { return !options_.spare_core || options_.spare_core(); };
  // f on the second core and g here when the second core is free and there are enough events to
  // share, else both here.
  const auto both = [&](size_t events, auto f, auto g) {
    if (events < (size_t{1} << 16) || !spare()) {
      f();
      g();
      return;
    }
    SideTask side(std::move(f));
    g();
    side.Wait();
  };
  // Threads with a call, by (pid, tid).
  std::vector<std::pair<int64_t, int64_t>> keys;
  for (size_t i = 0; i < a.size(); ++i)
    if (keys.empty() || keys.back() != std::pair{a.pid[i], a.tid[i]}) keys.emplace_back(a.pid[i], a.tid[i]);
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  if (keys.empty()) return;
  threads_.reserve(keys.size());
  for (const auto& [pid, tid] : keys) threads_.push_back(Thread{pid, tid, 0, 0, 0, 0, 0, 0, false});

  // Counting sort of the events by thread, then each thread's block by (start, longer first,
  // ranges before calls). The ranges' threads are found on the second core while the calls' are
  // found here and FinalizeTrace's order checked.
  const auto thread_finder = [this] {
    return [this, last = kNoThread](int64_t pid, int64_t tid) mutable {
      if (last != kNoThread && threads_[static_cast<size_t>(last)].pid == pid &&
          threads_[static_cast<size_t>(last)].tid == tid)
        return last;
      return last = ThreadOf(pid, tid);
    };
  };
  std::vector<int32_t> range_thread = WholeVector<int32_t>(r.size(), kNoThread);
  std::vector<uint32_t> range_count(threads_.size(), 0);
  std::vector<int32_t> call_thread = WholeVector<int32_t>(a.size());
  std::vector<uint32_t> count(threads_.size() + 1, 0);  // calls, then all, per thread (one later)
  // The ranges go in in FinalizeTrace's nesting order (Trace::range_order) when the trace has
  // one: it orders each thread's ranges as `less` below does, so their blocks come out sorted and
  // sort_block only confirms it (10^6 Python frames otherwise take a full sort). Used only when
  // it is a permutation of the rows; any other order is sorted below as row order would be.
  const std::vector<uint32_t>& hint = t.range_order;
  bool by_hint = hint.size() == r.size();
  both(
      r.size(),
      [&] {
        auto thread_of = thread_finder();
        for (size_t i = 0; i < r.size(); ++i) {
          if (r.on_gpu[i] != 0) continue;
          range_thread[i] = thread_of(r.pid[i], r.tid[i]);
          if (range_thread[i] != kNoThread) range_count[static_cast<size_t>(range_thread[i])]++;
        }
      },
      [&] {
        auto thread_of = thread_finder();
        for (size_t i = 0; i < a.size(); ++i) {
          call_thread[i] = thread_of(a.pid[i], a.tid[i]);
          count[static_cast<size_t>(call_thread[i]) + 1]++;
        }
        if (!by_hint) return;
        std::vector<uint8_t> seen(r.size(), 0);
        for (const uint32_t row : hint) {
          if (row >= r.size() || seen[row]) {
            by_hint = false;
            return;
          }
          seen[row] = 1;
        }
      });
  for (size_t k = 0; k < range_count.size(); ++k) count[k + 1] += range_count[k];
  for (size_t k = 1; k < count.size(); ++k) count[k] += count[k - 1];
  AssignWhole(events_, count.back(), uint32_t{0});
  std::vector<uint32_t> next(count.begin(), count.end() - 1);
  // The per-event arrays are filled on the second core while the events are placed here.
  both(
      events_.size(),
      [&] {
        AssignWhole(parent_, events_.size(), kNoEvent);
        AssignWhole(free_, events_.size(), uint8_t{0});
      },
      [&] {
        for (size_t k = 0; k < r.size(); ++k) {
          const size_t i = by_hint ? hint[k] : k;
          if (range_thread[i] != kNoThread)
            events_[next[static_cast<size_t>(range_thread[i])]++] = static_cast<uint32_t>(i << 1);
        }
        for (size_t i = 0; i < a.size(); ++i)
          events_[next[static_cast<size_t>(call_thread[i])]++] = static_cast<uint32_t>((i << 1) | 1u);
      });
  std::vector<int32_t>().swap(range_thread);
  std::vector<int32_t>().swap(call_thread);

  // Each thread's events by (start, then longer first, ranges before calls). Its ranges come
  // first, then its calls, each block in its table's order: time order in runs (a profiler writes
  // its ops, then its Python frames, step by step) or with a few parents written after their
  // children. Each block is sorted in place through the columns (the reads run in row order),
  // then the two merged. A block in no such order is sorted on contiguous keys instead, as an
  // indirect comparison would cost a cache miss each.
  auto less = [&](uint32_t x, uint32_t y) {
    const TimeNs sx = Start(x), sy = Start(y);
    if (sx != sy) return sx < sy;
    const TimeNs ex = End(x), ey = End(y);
    if (ex != ey) return ex > ey;
    if ((x & 1u) != (y & 1u)) return (x & 1u) < (y & 1u);
    return x < y;
  };
  struct Key {
    TimeNs start, neg_end;
    uint32_t ev;
    bool operator<(const Key& o) const {
      if (start != o.start) return start < o.start;
      if (neg_end != o.neg_end) return neg_end < o.neg_end;
      return ev < o.ev;  // one block holds only ranges or only calls
    }
  };
  std::vector<Key> keys_buf;
  std::vector<size_t> runs;
  auto sort_block = [&](uint32_t* b0, uint32_t* b1) {
    if (b1 - b0 < 2) return;
    const size_t n = static_cast<size_t>(b1 - b0);
    // FinalizeTrace's order for the ranges, most often.
    if (IsSortedOnTwo(b0, b1, less, spare() ? size_t{1} << 16 : SIZE_MAX)) return;
    // Sorted runs (a profiler writing its ranges, then its Python frames, step by step): merged
    // pairwise, each merge reading both runs in row order.
    runs.assign(1, 0);
    for (size_t i = 1; i < n && runs.size() <= n / 64 + 1; ++i)
      if (less(b0[i], b0[i - 1])) runs.push_back(i);
    if (runs.size() <= n / 64 + 1) {
      runs.push_back(n);
      MergeSortedBlocks(b0, runs, less);
      return;
    }
    if (TrySortNearlySorted(b0, b1, less)) return;
    keys_buf.clear();
    keys_buf.reserve(n);
    for (const uint32_t* e = b0; e != b1; ++e) keys_buf.push_back({Start(*e), -End(*e), *e});
    std::sort(keys_buf.begin(), keys_buf.end());
    for (size_t i = 0; i < n; ++i) b0[i] = keys_buf[i].ev;
  };
  const StringId python = python_;

  // Each thread's events in order, with a stack of the open ones: every event's parent, the
  // starts of the launching calls, the capture regions. What one stretch of a walk reads and
  // leaves: its stack, an open capture, and where its findings go.
  struct Walk {
    std::vector<uint32_t> stack;
    std::vector<TimeNs> stack_end;  // the ends of the events on `stack`
    TimeNs capture_open = -1;
    bool python = false;
    uint64_t captured = 0;
    std::vector<uint32_t>* launches;  // rows of the launching calls
    std::vector<std::pair<TimeNs, TimeNs>>* captures;
    std::string* capture_name;
    std::vector<uint8_t>* name_class;          // NameBits per StringId, filled as names are met
    std::vector<uint32_t>* orphans = nullptr;  // where given: the events met with an empty stack
  };
  auto walk = [&](uint32_t from, uint32_t to, Walk& w) {
    // Locals while it walks (two walks' Walks lie side by side: a push on one would share a cache
    // line with the other core's), and the columns through plain pointers, which the byte stores
    // below would otherwise make the compiler read again for every event.
    std::vector<uint32_t> stack = std::move(w.stack);
    std::vector<TimeNs> stack_end = std::move(w.stack_end);  // the ends of the events on `stack`
    std::vector<uint32_t> launches = std::move(*w.launches);
    // At most one launch an event: room taken once (never-written pages cost no memory), where
    // growing by doubling faults a long thread's list in about twice and copies it again.
    launches.reserve(launches.size() + (to - from));
    std::vector<uint32_t> orphans;
    if (w.orphans) orphans = std::move(*w.orphans);
    TimeNs capture_open = w.capture_open;
    bool has_python = w.python;
    uint64_t captured = w.captured;
    const bool watch_orphans = w.orphans != nullptr;
    const uint32_t* const events = events_.data();
    uint32_t* const parent = parent_.data();
    uint8_t* const name_class = w.name_class->data();
    const uint8_t* const launched_row = launched.data();
    const TimeNs* const call_start = a.start.data();
    const TimeNs* const call_end = a.end.data();
    const StringId* const call_name = a.name.data();
    const TimeNs* const range_start = r.start.data();
    const TimeNs* const range_end = r.end.data();
    const StringId* const range_name = r.name.data();
    for (uint32_t i = from; i < to; ++i) {
      const uint32_t ev = events[i];
      const size_t row = ev >> 1;
      const bool call = (ev & 1u) != 0;
      const TimeNs s = call ? call_start[row] : range_start[row];
      const TimeNs e = std::max(s, call ? call_end[row] : range_end[row]);  // End(ev)
      // Zero-length events contain nothing: never a parent.
      while (!stack_end.empty() && stack_end.back() <= s) {
        stack.pop_back();
        stack_end.pop_back();
      }
      if (!stack.empty()) {
        parent[i] = stack.back();
      } else if (watch_orphans) {
        orphans.push_back(i);
      }
      stack.push_back(i);
      stack_end.push_back(e);
      const StringId name = call ? call_name[row] : range_name[row];
      uint8_t bits = name_class[name];
      if (bits == 0) name_class[name] = bits = call ? ClassifyCall(t.Name(name)) : ClassifyFrame(t.Name(name));
      if (!call) {
        const StringId domain = r.domain[row];
        if (python != StringTable::kNotFound && domain == python) has_python = true;
        continue;
      }
      if (launched_row[row]) launches.push_back(static_cast<uint32_t>(row));
      if (bits & kCaptureBegin) {
        if (capture_open < 0) capture_open = s;
        if (w.capture_name->empty()) *w.capture_name = std::string(t.Name(name));
      } else if ((bits & kCaptureEnd) && capture_open >= 0) {
        w.captures->emplace_back(capture_open, e);
        capture_open = -1;
      } else if (capture_open >= 0 && (bits & kLaunchLike) && !launched_row[row]) {
        captured++;
      }
    }
    w.stack = std::move(stack);
    w.stack_end = std::move(stack_end);
    *w.launches = std::move(launches);
    if (w.orphans) *w.orphans = std::move(orphans);
    w.capture_open = capture_open;
    w.python = has_python;
    w.captured = captured;
  };
  // A long thread's walk is split at its middle: the later part is walked on the second core from
  // an empty stack, noting the events it found no parent for (its orphans: the stack was empty).
  // Those are the events that, walked in one piece, would have met the earlier part's open events
  // at the top of the stack instead, popped the ones that ended by their start and taken the
  // next as parent: that is done for them once the earlier part's stack is known. Two things
  // the later part cannot know make it walk again from the earlier part's state: a capture open
  // across the middle, and a name both parts classed differently (the class of a name is the one
  // its first event gave it).
  for (size_t k = 0; k < threads_.size(); ++k) {
    Thread& th = threads_[k];
    th.begin = count[k];
    th.end = count[k + 1];
    uint32_t* const first = events_.data() + th.begin;
    uint32_t* const mid = first + range_count[k];
    uint32_t* const last = events_.data() + th.end;
    sort_block(first, mid);
    sort_block(mid, last);
    MergeOnTwo(first, mid, last, less, spare() ? size_t{1} << 16 : SIZE_MAX);
    th.launch_begin = static_cast<uint32_t>(launch_rows_.size());
    th.capture_begin = static_cast<uint32_t>(captures_.size());
    Walk w{{}, {}, -1, false, 0, &launch_rows_, &captures_, &capture_name_, &name_class_};
    if (th.end - th.begin < std::max(options_.split_walk_events, uint32_t{2}) || !spare()) {
      walk(th.begin, th.end, w);
    } else {
      const uint32_t split = th.begin + (th.end - th.begin) / 2;
      std::vector<uint32_t> later_launches;
      std::vector<std::pair<TimeNs, TimeNs>> later_captures;
      std::string later_name;
      std::vector<uint8_t> later_class(name_class_.size(), 0);
      std::vector<uint32_t> orphans;
      Walk later{{}, {}, -1, false, 0, &later_launches, &later_captures, &later_name, &later_class, &orphans};
      {
        SideTask side([&] { walk(split, th.end, later); });
        walk(th.begin, split, w);
        side.Wait();
      }
      bool same = w.capture_open < 0;
      for (size_t n = 0; same && n < later_class.size(); ++n)
        same = later_class[n] == 0 || name_class_[n] == 0 || later_class[n] == name_class_[n];
      if (same) {
        for (const uint32_t i : orphans) {  // as the one-piece walk meets the earlier part's stack
          const TimeNs s = StartAt(i);
          while (!w.stack_end.empty() && w.stack_end.back() <= s) {
            w.stack.pop_back();
            w.stack_end.pop_back();
          }
          if (!w.stack.empty()) parent_[i] = w.stack.back();
        }
        for (size_t n = 0; n < later_class.size(); ++n)
          if (name_class_[n] == 0) name_class_[n] = later_class[n];
        launch_rows_.insert(launch_rows_.end(), later_launches.begin(), later_launches.end());
        captures_.insert(captures_.end(), later_captures.begin(), later_captures.end());
        if (capture_name_.empty()) capture_name_ = std::move(later_name);
        w.capture_open = later.capture_open;
        w.python = w.python || later.python;
        w.captured += later.captured;
      } else {
        std::fill(parent_.begin() + split, parent_.begin() + th.end, kNoEvent);
        walk(split, th.end, w);
      }
    }
    if (w.python) th.python = true;
    captured_launches_ += w.captured;
    if (w.capture_open >= 0) captures_.emplace_back(w.capture_open, std::numeric_limits<TimeNs>::max());
    th.launch_end = static_cast<uint32_t>(launch_rows_.size());
    th.capture_end = static_cast<uint32_t>(captures_.size());
  }
  capture_regions_ = captures_.size();
}

int32_t HostModel::ThreadOf(int64_t pid, int64_t tid) const {
  auto it = std::lower_bound(
      threads_.begin(), threads_.end(), std::pair{pid, tid},
      [](const Thread& th, const auto& k) { return std::tie(th.pid, th.tid) < std::tie(k.first, k.second); });
  if (it == threads_.end() || it->pid != pid || it->tid != tid) return kNoThread;
  return static_cast<int32_t>(it - threads_.begin());
}

int32_t HostModel::ThreadOfCall(size_t api_row) const {
  return ThreadOf(t_.api_calls.pid[api_row], t_.api_calls.tid[api_row]);
}

bool HostModel::LaunchFree(uint32_t i, const Thread& th) const {
  // The cache is filled by whichever thread reads an entry first (the analysis reads the model on
  // two threads at once): relaxed atomic byte accesses, the value being the same for every thread.
  std::atomic_ref<uint8_t> cached(free_[i]);
  uint8_t v = cached.load(std::memory_order_relaxed);
  if (v == 0) {
    const uint32_t ev = events_[i];
    const TimeNs s = Start(ev), e = End(ev);
    // The thread's launching calls are in start order (its walk's).
    const uint32_t* first = launch_rows_.data() + th.launch_begin;
    const uint32_t* last = launch_rows_.data() + th.launch_end;
    const TimeNs* call_start = t_.api_calls.start.data();
    const uint32_t* it =
        std::lower_bound(first, last, s, [call_start](uint32_t row, TimeNs x) { return call_start[row] < x; });
    // A call launches GPU work in its own extent (its start is in [s, e] for a zero-length one).
    v = (it != last && (call_start[*it] < e || call_start[*it] == s)) ? 1 : 2;
    cached.store(v, std::memory_order_relaxed);
  }
  return v == 2;
}

HostModel::Cursor HostModel::Begin(const Thread& th, TimeNs t, uint32_t from) const {
  const uint32_t* first = events_.data() + th.begin;
  const uint32_t* last = events_.data() + th.end;
  const uint32_t* lo = first;
  const uint32_t* hi = last;
  if (from > th.begin && from <= th.end && StartAt(from - 1) <= t) {
    // The first start after t is at `from` or later: steps doubling from there, then a binary
    // search inside the last step.
    lo = hi = events_.data() + from;
    for (ptrdiff_t step = 1; hi < last && Start(*hi) <= t; step *= 2) {
      lo = hi + 1;
      hi = last - lo > step ? lo + step : last;
    }
  }
  const uint32_t* it = std::upper_bound(lo, hi, t, [this](TimeNs x, uint32_t ev) { return x < Start(ev); });
  Cursor c{static_cast<uint32_t>(it - events_.data()), kNoEvent};
  if (it != first) {
    uint32_t i = c.next - 1;
    while (i != kNoEvent && End(events_[i]) <= t) i = parent_[i];
    c.inner = i;
  }
  return c;
}

void HostModel::Advance(const Thread& th, Cursor& c, TimeNs t) const {
  // Events that start by t: the last of them that contains t is the innermost (ties: the longer
  // one first, so the inner one comes later).
  for (; c.next < th.end && StartAt(c.next) <= t; ++c.next)
    if (End(events_[c.next]) > t) c.inner = c.next;
  while (c.inner != kNoEvent && End(events_[c.inner]) <= t) c.inner = parent_[c.inner];
}

bool HostModel::InCapture(const Thread& th, TimeNs t, TimeNs* until) const {
  for (uint32_t c = th.capture_begin; c < th.capture_end; ++c) {
    if (captures_[c].first <= t && t < captures_[c].second) {
      *until = captures_[c].second;
      return true;
    }
    if (captures_[c].first > t) *until = std::min(*until, captures_[c].first);
  }
  return false;
}

HostPiece HostModel::StateAt(int32_t thread, TimeNs t, TimeNs limit) const {
  const Thread& th = threads_[static_cast<size_t>(thread)];
  return Piece(th, Begin(th, t), t, limit);
}

HostPiece HostModel::Piece(const Thread& th, const Cursor& c, TimeNs t, TimeNs limit) const {
  HostPiece p{t, limit, HostState::kIdle, kNoEvent};
  TimeNs capture_until = limit;
  if (InCapture(th, t, &capture_until)) {
    p.end = std::min(limit, capture_until);
    p.state = HostState::kCapture;
    return p;
  }
  p.end = std::min(p.end, capture_until);
  // Where the stack next changes: the next event's start, or the innermost event's end.
  const bool more = c.next < th.end;
  if (more) p.end = std::min(p.end, StartAt(c.next));
  const uint32_t inner = c.inner;
  if (inner == kNoEvent) {
    // An empty stretch: from the end of the last top-level event before t to the next event.
    TimeNs from = std::numeric_limits<TimeNs>::min();
    if (c.next > th.begin) {
      uint32_t i = c.next - 1;
      while (parent_[i] != kNoEvent) i = parent_[i];
      from = End(events_[i]);
    }
    const TimeNs to = more ? StartAt(c.next) : std::numeric_limits<TimeNs>::max();
    const bool long_stretch = from == std::numeric_limits<TimeNs>::min() || to == std::numeric_limits<TimeNs>::max() ||
                              to - from >= kUntracedIdleFactor * options_.compute_block_min_ns;
    p.state = th.python || long_stretch ? HostState::kIdle : HostState::kLaunch;
    return p;
  }
  p.end = std::min(p.end, End(events_[inner]));
  // Only annotations (the step's marker, NVTX ranges) around t: the thread is in no op, frame or
  // call, as if no event enclosed it.
  bool only_annotations = true;
  for (uint32_t i = inner; i != kNoEvent && only_annotations; i = parent_[i]) only_annotations = Annotation(i);
  if (only_annotations) {
    // A named region that launches nothing (an NVTX "preprocess" around untraced CPU work) is the
    // host computing; a region that launches (the step's marker) says nothing about this instant.
    uint32_t region = kNoEvent;
    for (uint32_t i = inner; i != kNoEvent && LaunchFree(i, th); i = parent_[i]) region = i;
    if (region != kNoEvent && End(events_[region]) - Start(events_[region]) >= options_.compute_block_min_ns) {
      p.state = HostState::kCompute;
      p.frame = events_[region];
      return p;
    }
    TimeNs from = Start(events_[inner]);
    if (c.next > th.begin && c.next - 1 != inner) {
      uint32_t i = c.next - 1;
      while (parent_[i] != kNoEvent && parent_[i] != inner && !Annotation(parent_[i])) i = parent_[i];
      if (End(events_[i]) <= t) from = std::max(from, End(events_[i]));
    }
    const TimeNs to = more ? std::min(StartAt(c.next), End(events_[inner])) : End(events_[inner]);
    const bool long_stretch = to - from >= kUntracedIdleFactor * options_.compute_block_min_ns;
    p.state = th.python || long_stretch ? HostState::kIdle : HostState::kLaunch;
    p.frame = events_[inner];
    return p;
  }
  // Outwards from the innermost event: the innermost call, compile frames, the outermost
  // launch-free range (launch-freedom is inherited inwards, so the free ranges are a run of the
  // innermost events).
  uint32_t call = kNoEvent, jit = kNoEvent, block = kNoEvent, wait = kNoEvent;
  bool free_run = true;
  for (uint32_t i = inner; i != kNoEvent; i = parent_[i]) {
    const uint32_t ev = events_[i];
    const uint8_t bits = NameClass(ev);
    if ((ev & 1u) && call == kNoEvent) call = i;
    if (bits & kJitName) jit = i;
    if (free_run) {
      if (LaunchFree(i, th)) {
        if ((ev & 1u) == 0) block = i;
        if ((bits & kWaitName) && wait == kNoEvent) wait = i;
      } else {
        free_run = false;
      }
    }
  }
  if (call != kNoEvent && (NameClass(events_[call]) & kSyncCall)) {
    p.state = HostState::kSync;
    p.frame = call;
  } else if (jit != kNoEvent) {
    p.state = HostState::kJit;
    p.frame = jit;
  } else if (wait != kNoEvent) {
    p.state = HostState::kIdle;
    p.frame = wait;
  } else if (block != kNoEvent && End(events_[block]) - Start(events_[block]) >= options_.compute_block_min_ns) {
    p.state = HostState::kCompute;
    p.frame = block;
  } else {
    p.state = HostState::kLaunch;
    p.frame = inner;
  }
  if (p.frame != kNoEvent) p.frame = events_[p.frame];
  return p;
}

std::string HostModel::ShortName(uint32_t ev) const {
  std::string_view n = EventName(ev);
  // Python frames: "path/to/file.py(123): func" -> "file.py: func".
  const size_t paren = n.find(".py(");
  if (paren != std::string_view::npos) {
    const size_t close = n.find("): ", paren);
    if (close != std::string_view::npos) {
      const size_t slash = n.rfind('/', paren);
      std::string_view file = n.substr(slash == std::string_view::npos ? 0 : slash + 1,
                                       paren + 3 - (slash == std::string_view::npos ? 0 : slash + 1));
      return std::string(file) + ": " + std::string(n.substr(close + 3));
    }
  }
  return std::string(n);
}

uint32_t HostModel::IndexOf(const Thread& th, uint32_t ev) const {
  const uint32_t* first = events_.data() + th.begin;
  const uint32_t* last = events_.data() + th.end;
  const TimeNs s = Start(ev);
  for (const uint32_t *it = std::lower_bound(first, last, s, [this](uint32_t x, TimeNs t) { return Start(x) < t; });
       it != last && Start(*it) == s; ++it)
    if (*it == ev) return static_cast<uint32_t>(it - events_.data());
  return kNoEvent;
}

std::vector<HostFrame> HostModel::Frames(int32_t thread, TimeNs a, TimeNs b, size_t top,
                                         const std::vector<std::pair<uint32_t, TimeNs>>& anchors) const {
  std::vector<HostFrame> out;
  if (thread == kNoThread || b <= a || top == 0) return out;
  const Thread& th = threads_[static_cast<size_t>(thread)];
  struct Candidate {
    uint32_t i;
    TimeNs overlap;
    int depth;    // levels below where the search started
    TimeNs rank;  // what orders the list: the decided time of an anchor, else the overlap
  };
  std::vector<Candidate> found;
  auto overlap = [&](uint32_t i) { return std::min(End(events_[i]), b) - std::max(Start(events_[i]), a); };
  const uint32_t* first = events_.data() + th.begin;
  const uint32_t* last = events_.data() + th.end;
  // The children of p overlapping [a, b), at most kMaxChildren of them, by skipping each child's
  // subtree to the next sibling.
  constexpr size_t kMaxChildren = 64;
  auto children = [&](uint32_t p, std::vector<uint32_t>& into) {
    const TimeNs from = p == kNoEvent ? a : std::max(a, Start(events_[p]));
    const TimeNs to = p == kNoEvent ? b : std::min(b, End(events_[p]));
    if (to <= from) return;
    uint32_t i = Innermost(th, from);
    while (i != kNoEvent && parent_[i] != p) i = parent_[i];
    auto next_child = [&](TimeNs x) -> uint32_t {
      const uint32_t* it = std::lower_bound(first, last, x, [this](uint32_t ev, TimeNs t) { return Start(ev) < t; });
      while (it != last && Start(*it) < to && parent_[static_cast<size_t>(it - events_.data())] != p) ++it;
      return it != last && Start(*it) < to ? static_cast<uint32_t>(it - events_.data()) : kNoEvent;
    };
    if (i == kNoEvent) i = next_child(from);
    for (size_t n = 0; i != kNoEvent && n < kMaxChildren; ++n) {
      if (overlap(i) > 0 && (events_[i] & 1u) == 0) into.push_back(i);
      const TimeNs e =
          std::max(End(events_[i]),
                   Start(events_[i]) < std::numeric_limits<TimeNs>::max() ? Start(events_[i]) + 1 : Start(events_[i]));
      if (e >= to) break;
      i = next_child(e);
    }
  };
  // Down `depth` levels from `level`, the largest three of each level followed further.
  auto descend = [&](std::vector<uint32_t> level, int levels, int depth0, TimeNs cap) {
    std::vector<uint32_t> below;
    for (int depth = depth0 + 1; depth <= depth0 + levels && !level.empty(); ++depth) {
      below.clear();
      for (uint32_t p : level) children(p, below);
      std::sort(below.begin(), below.end(), [&](uint32_t x, uint32_t y) { return overlap(x) > overlap(y); });
      for (uint32_t i : below) found.push_back({i, overlap(i), depth, std::min(cap, overlap(i))});
      if (below.size() > 3) below.resize(3);
      std::swap(level, below);
    }
  };
  std::vector<uint32_t> anchored;
  std::vector<TimeNs> anchored_time;
  for (const auto& [ev, decided] : anchors) {
    const uint32_t i = ev == kNoEvent ? kNoEvent : IndexOf(th, ev);
    if (i == kNoEvent || std::find(anchored.begin(), anchored.end(), i) != anchored.end()) continue;
    anchored.push_back(i);
    anchored_time.push_back(decided);
    if (overlap(i) > 0) found.push_back({i, overlap(i), 0, decided});
  }
  if (!anchored.empty()) {
    // Below the largest ranges among the anchors (a launch-free block, a compile frame): what they
    // did, ranked no higher than the time their anchor decided.
    size_t followed = 0;
    for (size_t k = 0; k < anchored.size() && followed < 3; ++k) {
      if ((events_[anchored[k]] & 1u) != 0) continue;
      descend({anchored[k]}, 5, 0, anchored_time[k]);
      ++followed;
    }
  } else {
    // The innermost event enclosing all of [a, b), and three levels below it.
    uint32_t enclosing = Innermost(th, a);
    while (enclosing != kNoEvent && End(events_[enclosing]) < b) enclosing = parent_[enclosing];
    descend({enclosing}, 3, 0, std::numeric_limits<TimeNs>::max());
  }
  // A frame one of whose children covers (nearly) all of its time says nothing the child does not
  // (a wrapper around a call): only the child is listed.
  std::vector<Candidate> kept;
  for (const Candidate& c : found) {
    bool covered = false;
    for (const Candidate& d : found)
      if (d.i != c.i && parent_[d.i] == c.i && d.overlap >= c.overlap - c.overlap / 100) covered = true;
    for (const Candidate& k : kept)
      if (k.i == c.i) covered = true;
    if (!covered) kept.push_back(c);
  }
  std::sort(kept.begin(), kept.end(), [](const Candidate& x, const Candidate& y) {
    if (x.rank != y.rank) return x.rank > y.rank;
    return x.overlap != y.overlap ? x.overlap > y.overlap : x.depth > y.depth;
  });
  if (kept.size() > top) kept.resize(top);
  for (const Candidate& c : kept) {
    HostFrame f;
    const uint32_t p = parent_[c.i];
    f.path = (p != kNoEvent ? ShortName(events_[p]) + " > " : std::string()) + ShortName(events_[c.i]);
    f.name = std::string(EventName(events_[c.i]));
    f.overlap_ns = c.overlap;
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace tg::internal
