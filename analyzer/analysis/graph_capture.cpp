// CUDA / HIP graphs traced back to their ops (tracegate/analyzer/graph_capture.h).
#include "tracegate/analyzer/graph_capture.h"

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "analyzer/analysis/correlation.h"
#include "tracegate/analyzer/serving.h"

namespace tg {

namespace {

using Thread = std::pair<int64_t, int64_t>;  // (pid, tid)

// A frame of the framework or a built-in, which says how a kernel was launched, not who asked:
// "<built-in method ...>", "<string>(1): launcher", and files under torch/ or triton/ (the
// dispatcher, Inductor's runtime, Triton's driver).
bool FrameworkFrame(std::string_view frame) {
  if (frame.empty() || frame[0] == '<') return true;
  const std::string_view path = frame.substr(0, frame.find('('));
  for (std::string_view dir : {"torch/", "triton/"}) {
    for (size_t at = path.find(dir); at != std::string_view::npos; at = path.find(dir, at + 1))
      if (at == 0 || path[at - 1] == '/') return true;
  }
  return false;
}

// The caller's frame of each of `calls` (rows of capture.api_calls, all on `thread`, sorted by
// start): the innermost enclosing python_function range of the thread that FrameworkFrame does
// not skip. One sweep over the thread's frames, sorted by start (outer first on a tie).
std::vector<std::string> CallerFrames(const Trace& capture, const Thread& thread, const std::vector<uint32_t>& calls) {
  std::vector<std::string> out(calls.size());
  const RangeTable& r = capture.ranges;
  const StringId python = capture.strings.Find("python_function");
  if (python == StringTable::kNotFound) return out;
  std::vector<uint32_t> frames;
  for (size_t i = 0; i < r.size(); ++i)
    if (r.domain[i] == python && r.pid[i] == thread.first && r.tid[i] == thread.second)
      frames.push_back(static_cast<uint32_t>(i));
  std::sort(frames.begin(), frames.end(), [&](uint32_t a, uint32_t b) {
    return std::tie(r.start[a], r.end[b], a) < std::tie(r.start[b], r.end[a], b);
  });
  std::vector<uint8_t> skip(capture.strings.size(), 2);  // per name: 1 framework, 0 caller, 2 unseen
  std::vector<uint32_t> open;
  size_t next = 0;
  for (size_t c = 0; c < calls.size(); ++c) {
    const TimeNs at = capture.api_calls.start[calls[c]];
    for (; next < frames.size() && r.start[frames[next]] <= at; ++next) {
      while (!open.empty() && r.end[open.back()] <= r.start[frames[next]]) open.pop_back();
      open.push_back(frames[next]);
    }
    while (!open.empty() && r.end[open.back()] <= at) open.pop_back();
    for (size_t k = open.size(); k-- > 0;) {
      const uint32_t f = open[k];
      if (r.end[f] <= at) continue;  // ended, under a frame still open
      uint8_t& s = skip[r.name[f]];
      if (s == 2) s = FrameworkFrame(capture.Name(r.name[f])) ? 1 : 0;
      if (s == 1) continue;
      out[c] = std::string(capture.Name(r.name[f]));
      break;
    }
  }
  return out;
}

struct Window {
  Thread thread;
  TimeNs start = 0, end = 0;
  std::vector<uint32_t> launches;  // api rows, by start
};

}  // namespace

std::vector<CapturedGraph> ExtractCapturedGraphs(const Trace& capture, const std::string& source) {
  const ApiTable& api = capture.api_calls;
  std::vector<int8_t> role_of(capture.strings.size(), -1);
  auto role = [&](size_t i) {
    int8_t& r = role_of[api.name[i]];
    if (r < 0) r = static_cast<int8_t>(ApiRoleOf(capture.Name(api.name[i])));
    return static_cast<ApiRole>(r);
  };
  std::vector<uint32_t> calls;  // begin, end and kernel launch calls
  bool any_begin = false;
  for (size_t i = 0; i < api.size(); ++i) {
    const ApiRole r = role(i);
    any_begin = any_begin || r == ApiRole::kCaptureBegin;
    if (r == ApiRole::kCaptureBegin || r == ApiRole::kCaptureEnd || r == ApiRole::kKernelLaunch)
      calls.push_back(static_cast<uint32_t>(i));
  }
  std::sort(calls.begin(), calls.end(), [&](uint32_t a, uint32_t b) {
    return std::tuple(api.pid[a], api.tid[a], api.start[a], a) < std::tuple(api.pid[b], api.tid[b], api.start[b], b);
  });

  // The capture annotations: host ranges named capture_<size>_<MODE>.
  struct Annotation {
    size_t row;
    int64_t size;
  };
  std::vector<Annotation> annotations;
  {
    std::vector<int8_t> is_capture(capture.strings.size(), -1);
    std::vector<int64_t> size_of(capture.strings.size(), -1);
    const RangeTable& r = capture.ranges;
    for (size_t i = 0; i < r.size(); ++i) {
      if (r.on_gpu[i]) continue;
      int8_t& v = is_capture[r.name[i]];
      if (v < 0) {
        int64_t size = -1;
        std::string mode;
        v = ParseCaptureStep(capture.Name(r.name[i]), &size, &mode) ? 1 : 0;
        size_of[r.name[i]] = size;
      }
      if (v == 1) annotations.push_back({i, size_of[r.name[i]]});
    }
  }

  std::vector<Window> windows;
  if (any_begin) {
    // Each capture of a thread: from the begin call that opens it to the end call that closes it.
    int depth = 0;
    for (size_t k = 0; k < calls.size(); ++k) {
      const uint32_t i = calls[k];
      const Thread thread{api.pid[i], api.tid[i]};
      if (k > 0 && thread != Thread{api.pid[calls[k - 1]], api.tid[calls[k - 1]]}) depth = 0;
      const ApiRole r = role(i);
      if (r == ApiRole::kCaptureBegin) {
        if (depth++ == 0) windows.push_back(Window{thread, api.start[i], api.start[i], {}});
      } else if (r == ApiRole::kCaptureEnd) {
        if (depth > 0 && --depth == 0) windows.back().end = api.start[i];
      } else if (depth > 0) {
        windows.back().launches.push_back(i);
      }
    }
  } else {
    // No begin / end calls: each capture annotation's span on its thread.
    const RangeTable& r = capture.ranges;
    for (const Annotation& a : annotations) {
      Window w{{r.pid[a.row], r.tid[a.row]}, r.start[a.row], r.end[a.row], {}};
      for (uint32_t i : calls)
        if (role(i) == ApiRole::kKernelLaunch && Thread{api.pid[i], api.tid[i]} == w.thread &&
            api.start[i] >= w.start && api.start[i] < w.end)
          w.launches.push_back(i);
      windows.push_back(std::move(w));
    }
  }
  std::stable_sort(windows.begin(), windows.end(), [](const Window& a, const Window& b) { return a.start < b.start; });

  std::vector<CapturedGraph> out;
  if (windows.empty()) return out;
  const OpLinks links = LinkOps(capture);
  // The caller's frames, one sweep per thread over its captures' launches.
  std::map<Thread, std::vector<uint32_t>> by_thread;
  for (const Window& w : windows)
    by_thread[w.thread].insert(by_thread[w.thread].end(), w.launches.begin(), w.launches.end());
  std::unordered_map<uint32_t, std::string> frame_of;
  for (auto& [thread, rows] : by_thread) {
    std::sort(rows.begin(), rows.end(),
              [&](uint32_t a, uint32_t b) { return std::tie(api.start[a], a) < std::tie(api.start[b], b); });
    std::vector<std::string> frames = CallerFrames(capture, thread, rows);
    for (size_t k = 0; k < rows.size(); ++k) frame_of[rows[k]] = std::move(frames[k]);
  }
  const RangeTable& r = capture.ranges;
  for (const Window& w : windows) {
    if (w.launches.empty()) continue;
    CapturedGraph g;
    g.source = source;
    // The innermost capture annotation of the thread that encloses the capture's start.
    const Annotation* best = nullptr;
    for (const Annotation& a : annotations)
      if (Thread{r.pid[a.row], r.tid[a.row]} == w.thread && r.start[a.row] <= w.start && w.start < r.end[a.row] &&
          (!best || r.start[a.row] >= r.start[best->row]))
        best = &a;
    if (best) {
      g.annotation = std::string(capture.Name(r.name[best->row]));
      g.size = best->size;
    }
    for (uint32_t i : w.launches) {
      const StringId op = links.api[i];
      g.launches.push_back(
          CapturedLaunch{op == StringTable::kEmpty ? std::string() : std::string(capture.Name(op)), frame_of[i]});
    }
    out.push_back(std::move(g));
  }
  return out;
}

namespace {

// The serving steps' spans per thread (vLLM / SGLang annotations), to find the step a graph
// launch belongs to.
class StepSpans {
 public:
  explicit StepSpans(const Trace& t) {
    const RangeTable& r = t.ranges;
    std::vector<int8_t> is_step(t.strings.size(), -1);
    std::vector<int64_t> tokens(t.strings.size(), -1);
    for (size_t i = 0; i < r.size(); ++i) {
      if (r.on_gpu[i]) continue;
      int8_t& v = is_step[r.name[i]];
      if (v < 0) {
        ServingStep s;
        v = ParseServingStep(t.Name(r.name[i]), &s) ? 1 : 0;
        tokens[r.name[i]] = s.tokens;
      }
      if (v == 1 && tokens[r.name[i]] >= 0)
        spans_[{r.pid[i], r.tid[i]}].push_back({r.start[i], r.end[i], tokens[r.name[i]]});
    }
  }
  // The tokens of the step whose span holds `at` on `thread`, -1 when none does.
  int64_t TokensAt(const Thread& thread, TimeNs at) const {
    auto it = spans_.find(thread);
    if (it == spans_.end()) return -1;
    for (const Span& s : it->second)
      if (s.start <= at && at < s.end) return s.tokens;
    return -1;
  }

 private:
  struct Span {
    TimeNs start, end;
    int64_t tokens;
  };
  std::map<Thread, std::vector<Span>> spans_;
};

bool SameOps(const CapturedGraph& a, const CapturedGraph& b) {
  if (a.launches.size() != b.launches.size()) return false;
  for (size_t i = 0; i < a.launches.size(); ++i)
    if (a.launches[i].op != b.launches[i].op) return false;
  return true;
}

}  // namespace

GraphCaptureMapping MapGraphKernels(const Trace& replay, const internal::ApiIndex& index,
                                    const std::vector<CapturedGraph>& graphs, OpLinks* links) {
  GraphCaptureMapping out;
  out.asked = true;
  out.graphs = graphs.size();
  for (const CapturedGraph& g : graphs)
    if (std::find(out.sources.begin(), out.sources.end(), g.source) == out.sources.end())
      out.sources.push_back(g.source);
  const KernelTable& k = replay.kernels;
  const ApiTable& api = replay.api_calls;
  // The graph-launched kernels (LinkOps marked them), grouped by their launch call.
  std::vector<std::pair<uint32_t, uint32_t>> launched;  // (call, kernel row)
  for (size_t i = 0; i < k.size() && i < links->kernel_launch_found.size(); ++i) {
    if (links->kernel_launch_found[i] != OpLinks::kGraphLaunched) continue;
    const int64_t call = index.Find(k.correlation[i], k.pid[i]);
    launched.emplace_back(static_cast<uint32_t>(call), static_cast<uint32_t>(i));
  }
  std::sort(launched.begin(), launched.end(), [&](const auto& a, const auto& b) {
    return std::tie(api.start[a.first], a.first, k.start[a.second], a.second) <
           std::tie(api.start[b.first], b.first, k.start[b.second], b.second);
  });
  std::map<size_t, std::vector<size_t>> by_launches;  // captured graphs by their launch count
  for (size_t g = 0; g < graphs.size(); ++g) by_launches[graphs[g].launches.size()].push_back(g);
  std::unordered_map<std::string, StringId> op_id;
  auto intern = [&](const std::string& op) {
    if (op.empty()) return StringTable::kEmpty;
    auto [it, fresh] = op_id.try_emplace(op, 0);
    if (fresh) {
      if (const StringId found = replay.strings.Find(op); found != StringTable::kNotFound) {
        it->second = found;
      } else {
        it->second = static_cast<StringId>(replay.strings.size() + links->extra_names.size());
        links->extra_names.push_back(op);
      }
    }
    return it->second;
  };
  std::map<std::pair<std::string, std::string>, GraphOpShare> shares;  // by (op base name, frame)
  std::optional<StepSpans> steps;
  for (size_t b = 0; b < launched.size();) {
    size_t e = b;
    while (e < launched.size() && launched[e].first == launched[b].first) ++e;
    const size_t n = e - b;
    ++out.launches;
    out.kernels += n;
    const CapturedGraph* match = nullptr;
    auto it = by_launches.find(n);
    if (it == by_launches.end()) {
      ++out.no_match;
    } else {
      const std::vector<size_t>& cands = it->second;
      bool same = true;
      for (size_t c = 1; c < cands.size() && same; ++c) same = SameOps(graphs[cands[0]], graphs[cands[c]]);
      if (same) {
        match = &graphs[cands[0]];
        ++out.by_count;
      } else {
        if (!steps) steps.emplace(replay);
        const uint32_t call = launched[b].first;
        const int64_t tokens = steps->TokensAt({api.pid[call], api.tid[call]}, api.start[call]);
        // The smallest capture size that holds the step's tokens; ambiguous when two graphs of
        // that size name other ops.
        const CapturedGraph* fit = nullptr;
        bool unique = true;
        for (size_t c : cands) {
          const CapturedGraph& g = graphs[c];
          if (tokens < 0 || g.size < tokens) continue;
          if (!fit || g.size < fit->size) {
            fit = &g;
            unique = true;
          } else if (g.size == fit->size && !SameOps(g, *fit)) {
            unique = false;
          }
        }
        if (unique && fit) {
          match = fit;
          ++out.by_size;
        } else {
          ++out.ambiguous;
        }
      }
    }
    if (match) {
      ++out.launches_mapped;
      for (size_t j = 0; j < n; ++j) {
        const uint32_t row = launched[b + j].second;
        const CapturedLaunch& l = match->launches[j];
        links->kernels[row] = intern(l.op);
        const TimeNs d = std::max<TimeNs>(0, k.end[row] - k.start[row]);
        ++out.kernels_mapped;
        out.kernel_ns += d;
        GraphOpShare& s = shares[{std::string(internal::OpBaseName(l.op)), l.frame}];
        s.kernels++;
        s.kernel_ns += d;
      }
    }
    b = e;
  }
  for (auto& [key, s] : shares) {
    s.op = key.first;
    s.frame = key.second;
    out.ops.push_back(std::move(s));
  }
  std::stable_sort(out.ops.begin(), out.ops.end(),
                   [](const GraphOpShare& a, const GraphOpShare& b) { return a.kernel_ns > b.kernel_ns; });
  return out;
}

}  // namespace tg
