// AnalyzeIterations(): markers -> assignment of every row to an iteration -> spans -> phases.
// Each regular expression runs once per distinct range name (verdicts cached by StringId), API
// calls are found by binary search in one sorted (correlation, row) index, and each iteration's
// phases come from its clipped intervals, gathered from each table's cursor a few iterations
// ahead (every interval at once only when a table's iterations decrease: ComputePhases).
// O(n log n) time; beyond the output, memory is a few iterations' intervals (24 bytes each).
#include "tracegate/analyzer/iterations.h"

#include "analyzer/util/huge_pages.h"
#include "analyzer/util/sort_runs.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <regex>
#include <string_view>
#include <tuple>
#include <utility>

#include "analyzer/analysis/correlation.h"
#include "analyzer/analysis/name_matcher.h"
#include "tracegate/analyzer/strings.h"

namespace tg {

using internal::ApiIndex;

namespace {

using internal::NameMatcher;

struct Marker {
  TimeNs start, end;
  int64_t pid;
  size_t row;
};

struct MarkerChoice {
  std::vector<Marker> markers;  // the chosen pid's outermost markers, by start
  int64_t pid = kUnknownId;
  size_t other_pids = 0;
};

// The pid with the most of `markers` (grouped by pid; ties keep the lower pid): c.pid and
// c.other_pids set, and the position and count of its markers returned.
std::pair<size_t, size_t> ChoosePid(const std::vector<Marker>& markers, MarkerChoice* c) {
  size_t best_begin = 0, best_count = 0;
  for (size_t b = 0; b < markers.size();) {
    size_t e = b;
    while (e < markers.size() && markers[e].pid == markers[b].pid) ++e;
    if (e - b > best_count) best_begin = b, best_count = e - b;  // strict: ties keep the lower pid
    c->other_pids += b > 0;
    b = e;
  }
  if (best_count > 0) c->pid = markers[best_begin].pid;
  return {best_begin, best_count};
}

// Outermost non-empty ranges with on_gpu == `on_gpu` whose names match, of the pid with the most.
MarkerChoice ChooseMarkers(const Trace& t, NameMatcher& match, uint8_t on_gpu) {
  const RangeTable& r = t.ranges;
  std::vector<Marker> all;
  for (size_t i = 0; i < r.size(); ++i) {
    // Zero-length ranges are NVTX marks: a point in time is not an iteration. The name's cached
    // verdict first: most ranges (ops, Python frames) are no marker, and their times go unread.
    if (match(r.name[i]) && r.on_gpu[i] == on_gpu && r.end[i] > r.start[i]) {
      all.push_back({r.start[i], r.end[i], r.pid[i], i});
    }
  }
  std::sort(all.begin(), all.end(), [](const Marker& a, const Marker& b) {
    if (a.pid != b.pid) return a.pid < b.pid;
    if (a.start != b.start) return a.start < b.start;
    if (a.end != b.end) return a.end > b.end;  // the enclosing one first
    return a.row < b.row;
  });
  // Every kept marker of a pid starts at or before the current one, so the current one lies
  // inside one of them exactly when it ends no later than the furthest kept end.
  size_t kept = 0;
  TimeNs reach = 0;
  for (const Marker& m : all) {
    bool new_pid = kept == 0 || all[kept - 1].pid != m.pid;
    if (!new_pid && m.end <= reach) continue;
    reach = new_pid ? m.end : std::max(reach, m.end);
    all[kept++] = m;
  }
  all.resize(kept);

  MarkerChoice c;
  const auto [best_begin, best_count] = ChoosePid(all, &c);
  auto first = all.begin() + static_cast<ptrdiff_t>(best_begin);
  c.markers.assign(first, first + static_cast<ptrdiff_t>(best_count));
  return c;
}

// LLM serving steps (serving.h) as markers, when the iteration expression is the default and
// matches nothing: non-empty ranges with on_gpu == `on_gpu` whose names parse as a step (each
// distinct name parsed once, a cheap prefix test first). Per pid, by start: a range that starts
// inside the current step and either lies inside it or is of a form the step does not have yet
// (SGLang writes execute_... and step[...] for one step, nested or overlapping) joins it: its
// fields fill the step's unknown ones and the step's end becomes the later end. The step keeps
// the row (name) of its first range. `steps[i]` is the merged step of `markers[i]`.
MarkerChoice ChooseServingMarkers(const Trace& t, uint8_t on_gpu, std::vector<ServingStep>* steps) {
  const RangeTable& r = t.ranges;
  std::vector<int8_t> verdict(t.strings.size(), -1);
  std::vector<Marker> all;
  for (size_t i = 0; i < r.size(); ++i) {
    if (r.on_gpu[i] != on_gpu || r.end[i] <= r.start[i]) continue;
    int8_t& v = verdict[r.name[i]];
    if (v < 0) {
      const std::string_view name = t.Name(r.name[i]);
      ServingStep unused;
      v = (name.starts_with("execute_") || name.starts_with("step[") || name.starts_with("executeStep: ") ||
           name.starts_with("[Executor] _forward_step ") || name.starts_with("_forward_step ")) &&
                  ParseServingStep(name, &unused)
              ? 1
              : 0;
    }
    if (v == 1) all.push_back({r.start[i], r.end[i], r.pid[i], i});
  }
  std::sort(all.begin(), all.end(), [](const Marker& a, const Marker& b) {
    if (a.pid != b.pid) return a.pid < b.pid;
    if (a.start != b.start) return a.start < b.start;
    if (a.end != b.end) return a.end > b.end;
    return a.row < b.row;
  });
  std::vector<Marker> kept;
  std::vector<ServingStep> merged;
  for (const Marker& m : all) {
    ServingStep s;
    ParseServingStep(t.Name(r.name[m.row]), &s);
    if (!kept.empty() && kept.back().pid == m.pid && m.start < kept.back().end &&
        (m.end <= kept.back().end || (merged.back().forms & s.forms) == 0)) {
      kept.back().end = std::max(kept.back().end, m.end);
      MergeServingStep(merged.back(), s);
      continue;
    }
    kept.push_back(m);
    merged.push_back(s);
  }
  MarkerChoice c;
  const auto [best_begin, best_count] = ChoosePid(kept, &c);
  const auto first = static_cast<ptrdiff_t>(best_begin), last = static_cast<ptrdiff_t>(best_begin + best_count);
  c.markers.assign(kept.begin() + first, kept.begin() + last);
  steps->assign(merged.begin() + first, merged.begin() + last);
  return c;
}

// Maps a time to the kept iteration whose marker contains it.
struct MarkerIndex {
  std::vector<TimeNs> start, end;  // every marker found, by start
  size_t skip = 0;
  bool whole_trace = false;        // no markers: everything is iteration 0

  int32_t At(TimeNs t) const {
    size_t hint = SIZE_MAX;
    return At(t, hint);
  }
  // The same, for times that mostly come in order: `hint` is the marker the last call found (the
  // last one starting at or before its time); the answer is looked for there and at the next one
  // before a binary search.
  int32_t At(TimeNs t, size_t& hint) const {
    if (whole_trace) return 0;
    const size_t n = start.size();
    auto last_by = [&](size_t i) { return i < n && start[i] <= t && (i + 1 == n || t < start[i + 1]); };
    size_t i = hint;
    if (!last_by(i) && !last_by(++i)) {
      auto it = std::upper_bound(start.begin(), start.end(), t);
      if (it == start.begin()) return -1;
      i = static_cast<size_t>(it - start.begin()) - 1;
    }
    hint = i;
    if (t >= end[i] || i < skip) return -1;
    return static_cast<int32_t>(i - skip);
  }
  // The marker containing the interval's start, else its last instant.
  int32_t Of(TimeNs s, TimeNs e, size_t& hint) const {
    int32_t k = At(s, hint);
    return k < 0 && e > s ? At(e - 1, hint) : k;
  }
};

struct Assigner {
  const ApiTable& api;
  const MarkerIndex& markers;
  const ApiIndex& index;
  int64_t pid;     // the chosen process; kUnknownId: no process filter
  bool by_launch;  // host markers: GPU work follows the API call that launched it

  bool Foreign(int64_t p) const { return pid != kUnknownId && p != kUnknownId && p != pid; }
  int32_t Api(size_t row, size_t& hint) const {
    if (markers.whole_trace) return 0;
    return Foreign(api.pid[row]) ? -1 : markers.At(api.start[row], hint);
  }
  // Every call's iteration (Api of each row).
  std::vector<int32_t> Calls() const {
    std::vector<int32_t> out = internal::WholeVector<int32_t>(api.size());
    size_t hint = SIZE_MAX;
    for (size_t i = 0; i < out.size(); ++i) out[i] = Api(i, hint);
    return out;
  }

  // Assigns every row of a GPU table (kernels, memcpys, memsets, syncs share these columns).
  // GPU markers (gpu_user_annotation) are GPU time, so there the work's own time decides and its
  // launching call follows it. `api_iteration` is Calls() (with host markers it stays so: a
  // launched row takes its call's entry).
  template <class Table>
  std::vector<int32_t> Gpu(const Table& tab, std::vector<int32_t>& api_iteration) const {
    std::vector<int32_t> out = internal::WholeVector<int32_t>(tab.size(), -1);
    size_t hint = SIZE_MAX;
    for (size_t i = 0; i < tab.size(); ++i) {
      if (markers.whole_trace) {
        out[i] = 0;
        continue;
      }
      int64_t call = index.Find(tab.correlation[i], tab.pid[i]);
      if (by_launch && call >= 0) {
        out[i] = api_iteration[static_cast<size_t>(call)];
      } else if (!by_launch || !Foreign(tab.pid[i])) {
        out[i] = markers.Of(tab.start[i], tab.end[i], hint);
        if (!by_launch && call >= 0) api_iteration[static_cast<size_t>(call)] = out[i];
      }
    }
    return out;
  }
};

// A piece of time one iteration's phase rules look at, clipped to the iteration's span.
enum Cls : uint8_t { kH2d, kD2h, kGpu, kPre, kPost, kInferRange };  // kH2d..kPost: priority order
constexpr std::array<Phase, 5> kPhaseOfCls{Phase::kH2d, Phase::kD2h, Phase::kInfer, Phase::kPre, Phase::kPost};

struct Piece {
  TimeNs start, end;
  int32_t iter;
  Cls cls;
};

// Adds the parts of the GPU work [s, e) that fall in the iterations' spans, whichever iteration
// launched it: an instant the device is busy is not idle in the iteration it falls in. The spans
// are disjoint and in order (SeparateSpans), so every instant lands in at most one iteration and
// the iterations' idle never sums to more than the device's. `hint`: the span the last call
// started in (work comes roughly in time order). Calls on_piece(const Piece&) for each, in order.
template <class OnPiece>
void ForGpuPieces(const std::vector<Iteration>& its, size_t& hint, TimeNs s, TimeNs e, Cls c, OnPiece&& on_piece) {
  if (e <= s) return;
  size_t k = hint;
  if (!(k < its.size() && its[k].end > s && (k == 0 || its[k - 1].end <= s))) {
    k = static_cast<size_t>(
        std::partition_point(its.begin(), its.end(), [s](const Iteration& it) { return it.end <= s; }) - its.begin());
    hint = k;
  }
  for (; k < its.size() && its[k].start < e; ++k) {
    TimeNs a = std::max(s, its[k].start), b = std::min(e, its[k].end);
    if (b > a) on_piece(Piece{a, b, static_cast<int32_t>(k), c});
  }
}

void AddPiece(std::vector<Piece>& pieces, const std::vector<Iteration>& its, int32_t k, TimeNs s, TimeNs e,
              Cls c) {
  if (k < 0) return;
  const Iteration& it = its[static_cast<size_t>(k)];
  s = std::max(s, it.start);
  e = std::min(e, it.end);
  if (e > s) pieces.push_back({s, e, k, c});
}

// Phases partition the span by priority: the instants whose first active class is c measure
// |union of classes <= c| - |union of classes < c|, so the sums are exact in int64.
// The length of the union of pieces given in start order, folded one piece at a time (touching
// pieces join): several unions in one pass over the pieces.
struct UnionFold {
  TimeNs total = 0, lo = 0, hi = 0;
  bool open = false;
  void Add(const Piece& p) {
    if (open && p.start <= hi) {
      hi = std::max(hi, p.end);
      return;
    }
    if (open) total += hi - lo;
    lo = p.start, hi = p.end, open = true;
  }
  TimeNs Length() const { return open ? total + (hi - lo) : total; }  // hi - lo first: total + hi can overflow
};

// The phases by priority: the union of the pieces of class <= c for each c up to kPost (each
// phase is what its class adds to the union of the classes before it), and the union of each
// range class alone. One pass: each piece goes into every union that takes its class, in order,
// as a pass per union would take it.
void FillPhases(const Piece* first, const Piece* last, Iteration& it) {
  std::array<UnionFold, kPost + 1> upto;         // upto[c]: classes <= c
  std::array<UnionFold, kInferRange + 1> alone;  // alone[c]: class c (ranges only)
  for (const Piece* p = first; p != last; ++p) {
    for (uint8_t c = p->cls; c <= kPost; ++c) upto[c].Add(*p);
    if (p->cls >= kPre) alone[p->cls].Add(*p);
  }
  TimeNs covered_before = 0;
  for (uint8_t c = kH2d; c <= kPost; ++c) {
    const TimeNs covered = upto[c].Length();
    it.phase_ns[static_cast<size_t>(kPhaseOfCls[c])] = covered - covered_before;
    if (c == kGpu) it.gpu_busy_ns = covered;
    covered_before = covered;
  }
  it.phase_ns[static_cast<size_t>(Phase::kIdle)] = it.latency_ns() - covered_before;
  it.pre_range_ns = alone[kPre].Length();
  it.post_range_ns = alone[kPost].Length();
  it.infer_range_ns = alone[kInferRange].Length();
}

template <class Table>
void Extend(const Table& tab, const std::vector<int32_t>& iter_of, std::vector<Iteration>& its,
            uint64_t Iteration::*count) {
  for (size_t i = 0; i < tab.size(); ++i) {
    if (iter_of[i] < 0) continue;
    Iteration& it = its[static_cast<size_t>(iter_of[i])];
    it.*count += 1;
    it.end = std::max(it.end, tab.end[i]);
  }
}

std::string Plural(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

struct Matchers {
  NameMatcher iteration, pre, infer, post;
};

Status CompileAll(const Trace& t, const IterationOptions& o, Matchers* m) {
  for (auto [matcher, pattern, option] : {std::tuple{&m->iteration, &o.iteration_regex, "--iteration"},
                                          std::tuple{&m->pre, &o.pre_regex, "--phase pre="},
                                          std::tuple{&m->infer, &o.infer_regex, "--phase infer="},
                                          std::tuple{&m->post, &o.post_regex, "--phase post="}}) {
    TG_RETURN_IF_ERROR(internal::CompileNameMatcher(t, *pattern, option, matcher));
  }
  return Status::Ok();
}

// Markers -> out->iterations (every one found, spans still equal to the markers), found, source,
// and the index that maps times to iterations (DropWarmup drops the warm-up from both).
Status FindIterations(const Trace& t, const IterationOptions& o, NameMatcher& match, IterationAnalysis* out,
                      MarkerIndex* index, bool* gpu_markers) {
  // Host markers; GPU-projected annotations only when no host range matches.
  MarkerChoice choice = ChooseMarkers(t, match, 0);
  *gpu_markers = false;
  if (choice.markers.empty()) {
    choice = ChooseMarkers(t, match, 1);
    *gpu_markers = !choice.markers.empty();
  }
  // No ProfilerStep (nor anything the default matches): the serving engine's step annotations.
  std::vector<ServingStep> steps;
  if (choice.markers.empty() && o.iteration_regex == kDefaultIterationRegex) {
    for (uint8_t on_gpu : {uint8_t{0}, uint8_t{1}}) {
      choice = ChooseServingMarkers(t, on_gpu, &steps);
      *gpu_markers = on_gpu == 1 && !choice.markers.empty();
      if (!choice.markers.empty()) break;
    }
  }
  const std::string quoted = "'" + o.iteration_regex + "'";
  if (choice.markers.empty()) {
    auto [w0, w1] = t.Window();
    index->whole_trace = true;
    Iteration it;
    it.marker_start = it.start = w0;
    it.marker_end = it.end = w1;
    out->iterations.push_back(it);
    out->found = 1;
    out->source = "no ranges match " + quoted +
                  ": the whole trace is one iteration (use --iteration REGEX to name the iteration ranges)";
  } else {
    out->from_markers = true;
    out->pid = choice.pid;
    out->found = choice.markers.size();
    const std::string where =
        choice.pid == kUnknownId ? std::string("an unknown process") : "pid " + std::to_string(choice.pid);
    if (!steps.empty()) {
      uint8_t forms = 0;
      for (const ServingStep& s : steps) forms |= s.forms;
      out->step_form = StepFormName(forms);
      const char* what = forms == kStepFormVllm     ? "vLLM execute_<tokens>_context_<n>..._generation_<m>..."
                         : forms == kStepFormSglang ? "SGLang step[<MODE> ...]"
                         : forms == kStepFormTrtllm
                             ? "TensorRT-LLM _forward_step / executeStep: <n> ctx reqs, <m> gen reqs"
                         : forms == (kStepFormVllm | kStepFormSglang) ? "vLLM execute_... and SGLang step[...]"
                                                                      : "serving step";
      out->source = Plural(out->found, "serving step", "serving steps") + " from " + what +
                    (*gpu_markers ? " GPU annotations in " : " annotations in ") + where + " (no ranges match " +
                    quoted + "; docs/SERVING.md)";
    } else {
      out->source =
          (*gpu_markers ? Plural(out->found, "GPU range", "GPU ranges") : Plural(out->found, "range", "ranges")) +
          " matching " + quoted + " in " + where;
    }
    if (choice.other_pids > 0) {
      out->source += " (" + Plural(choice.other_pids, "other process", "other processes") + " with markers ignored)";
    }
  }
  if (o.skip && *o.skip > 0 && *o.skip >= out->found) {
    return InvalidInput("--skip " + std::to_string(*o.skip) + " drops all " +
                        Plural(out->found, "iteration", "iterations") + " found; lower it");
  }
  // Sized once: grown by doubling, the rows (~1 KB each) would be moved and their pages faulted in
  // about twice.
  out->iterations.reserve(choice.markers.size());
  index->start.reserve(choice.markers.size());
  index->end.reserve(choice.markers.size());
  for (size_t i = 0; i < choice.markers.size(); ++i) {
    const Marker& m = choice.markers[i];
    index->start.push_back(m.start);
    index->end.push_back(m.end);
    Iteration it;
    it.index = i;
    it.name = std::string(t.Name(t.ranges.name[m.row]));
    it.marker_start = it.start = m.start;
    it.marker_end = it.end = m.end;
    it.tid = t.ranges.tid[m.row];
    // Serving markers carry their merged step; other markers whatever their name says (a user's
    // --iteration '^execute_' still gets the step's fields). A cheap prefix test first.
    if (!steps.empty()) {
      it.serving = steps[i];
    } else if (it.name.starts_with("execute_") || it.name.starts_with("step[")) {
      ParseServingStep(it.name, &it.serving);
    }
    out->iterations.push_back(std::move(it));
  }
  return Status::Ok();
}

// Counts, sync time, and span ends from the assigned GPU work (syncs wait; they do not extend).
void CountWork(const Trace& t, IterationAnalysis* out) {
  std::vector<Iteration>& its = out->iterations;
  Extend(t.kernels, out->kernel_iteration, its, &Iteration::kernels);
  Extend(t.memcpys, out->memcpy_iteration, its, &Iteration::memcpys);
  Extend(t.memsets, out->memset_iteration, its, &Iteration::memsets);
  for (size_t i = 0; i < t.syncs.size(); ++i) {
    if (out->sync_iteration[i] < 0) continue;
    Iteration& it = its[static_cast<size_t>(out->sync_iteration[i])];
    it.syncs++;
    it.sync_ns += std::max<TimeNs>(0, t.syncs.end[i] - t.syncs.start[i]);
  }
}

// Sorts a block of pieces by (iteration, start). Rows come in launch order, so their iterations
// usually do not decrease: then only each iteration's few pieces need sorting by start (work on
// several streams interleaves them). The order of pieces that start together does not matter to
// FillPhases (unions).
void SortPieceBlock(Piece* first, Piece* last) {
  auto by_iteration_and_start = [](const Piece& a, const Piece& b) {
    return a.iter != b.iter ? a.iter < b.iter : a.start < b.start;
  };
  if (std::is_sorted(first, last, [](const Piece& a, const Piece& b) { return a.iter < b.iter; })) {
    for (Piece* group = first; group != last;) {
      Piece* next = group;
      while (next != last && next->iter == group->iter) ++next;
      internal::SortNearlySorted(group, next, by_iteration_and_start);  // one iteration may be the whole trace
      group = next;
    }
  } else {
    internal::SortNearlySorted(first, last, by_iteration_and_start);
  }
}

// One GPU table's rows (kernels, memcpys or memsets) read as phase pieces, row by row.
struct GpuRows {
  const TimeNs* start;
  const TimeNs* end;
  const CopyKind* kind;  // memcpys: the direction decides the class; else every row is GPU work
  size_t size;
  size_t next = 0;  // the first row not read yet
  size_t hint = 0;  // ForGpuPieces' span of the last row

  Cls ClassOf(size_t i) const {
    if (kind == nullptr) return kGpu;
    return kind[i] == CopyKind::kHtoD ? kH2d : kind[i] == CopyKind::kDtoH ? kD2h : kGpu;
  }
  // Calls on_piece for each piece of the next row (ForGpuPieces) and moves past it.
  template <class OnPiece>
  void ReadRow(const std::vector<Iteration>& its, OnPiece&& on_piece) {
    const size_t r = next++;
    ForGpuPieces(its, hint, start[r], end[r], ClassOf(r), on_piece);
  }
};

// The phases iteration by iteration: each table's rows are read up to a few iterations ahead of
// the one being filled, their pieces kept in one reused vector per iteration of that window (and
// a heap for the pieces of later ones: work that spans iterations, a row read ahead), so the
// memory is a few iterations' pieces, not every row's. `ranges`: the phase ranges' pieces, sorted
// by (iteration, start). False, with some iterations filled, when a row has a piece in an
// iteration already filled (a table's iterations decrease by more than the window): the caller
// then takes the global path, which fills every iteration again.
bool StreamPhases(std::vector<GpuRows>& tables, const std::vector<Piece>& ranges, std::vector<Iteration>& its) {
  constexpr size_t kAhead = 2;  // iterations read ahead of the one being filled
  std::array<std::vector<Piece>, kAhead + 1> window;
  std::vector<Piece> later;  // a min-heap by iteration: pieces beyond the window
  internal::InterleavedScratch<Piece> scratch;  // SortInterleaved's
  auto after = [](const Piece& a, const Piece& b) { return a.iter > b.iter; };
  const Piece* range = ranges.data();
  const Piece* ranges_end = range + ranges.size();
  for (size_t i = 0; i < its.size(); ++i) {
    const size_t last = i + kAhead;
    for (GpuRows& tab : tables) {
      while (tab.next < tab.size) {
        bool first = true, ahead = false, behind = false;
        tab.ReadRow(its, [&](const Piece& p) {
          const auto k = static_cast<size_t>(p.iter);
          if (first) first = false, ahead = k > last;
          if (k < i) {
            behind = true;
          } else if (k <= last) {
            window[k % window.size()].push_back(p);
          } else {
            later.push_back(p);
            std::push_heap(later.begin(), later.end(), after);
          }
        });
        if (behind) return false;
        if (ahead) break;  // read far enough ahead
      }
    }
    std::vector<Piece>& group = window[i % window.size()];
    while (!later.empty() && static_cast<size_t>(later.front().iter) == i) {
      std::pop_heap(later.begin(), later.end(), after);
      group.push_back(later.back());
      later.pop_back();
    }
    for (; range != ranges_end && static_cast<size_t>(range->iter) == i; ++range) group.push_back(*range);
    // Each table's pieces are in start order per stream; the streams overlap in time.
    internal::SortInterleaved(
        group.data(), group.data() + group.size(), [](const Piece& a, const Piece& b) { return a.start < b.start; },
        scratch);
    FillPhases(group.data(), group.data() + group.size(), its[i]);
    group.clear();
  }
  return true;
}

// Phase pieces: the GPU work, then the pre / infer / post ranges that start inside a marker. The
// ranges' pieces are sorted by (iteration, start) on their own (the pre / post ones are the
// stages' pieces); the GPU work's are streamed iteration by iteration (StreamPhases). When a
// table's iterations decrease too far for that, the global path: each table's pieces sorted by
// (iteration, start), the blocks merged, and a linear pass per iteration.
void ComputePhases(const Trace& t, const Assigner& assign, Matchers& m, IterationAnalysis* out) {
  std::vector<Iteration>& its = out->iterations;
  std::vector<Piece> ranges;
  const RangeTable& r = t.ranges;
  // Which of the three expressions each name matches (bit k: pre, infer, post), found at its
  // first range: most ranges (a model's ops and Python frames) match none and are passed over
  // with one read.
  constexpr uint8_t kUnknown = 0xFF;
  std::vector<uint8_t> phases_of(t.strings.size(), kUnknown);
  const std::array<std::pair<NameMatcher*, Cls>, 3> phases{{{&m.pre, kPre}, {&m.infer, kInferRange}, {&m.post, kPost}}};
  for (size_t i = 0; i < r.size(); ++i) {
    uint8_t& bits = phases_of[r.name[i]];
    if (bits == kUnknown) {
      bits = 0;
      for (size_t k = 0; k < phases.size(); ++k) bits |= static_cast<uint8_t>((*phases[k].first)(r.name[i]) << k);
    }
    if (bits == 0 || r.on_gpu[i] != 0 || r.end[i] <= r.start[i] || assign.Foreign(r.pid[i])) continue;
    const int32_t iter = assign.markers.At(r.start[i]);
    for (size_t k = 0; k < phases.size(); ++k)
      if (bits >> k & 1u) AddPiece(ranges, its, iter, r.start[i], r.end[i], phases[k].second);
  }
  SortPieceBlock(ranges.data(), ranges.data() + ranges.size());
  for (const Piece& x : ranges)
    if (x.cls == kPre || x.cls == kPost) out->stage_pieces.push_back({x.iter, x.start, x.end, x.cls == kPost});

  const KernelTable& k = t.kernels;
  const MemcpyTable& c = t.memcpys;
  const MemsetTable& s = t.memsets;
  std::vector<GpuRows> tables{{k.start.data(), k.end.data(), nullptr, k.size()},
                              {c.start.data(), c.end.data(), c.kind.data(), c.size()},
                              {s.start.data(), s.end.data(), nullptr, s.size()}};
  if (StreamPhases(tables, ranges, its)) return;

  std::vector<Piece> pieces;
  pieces.reserve(t.GpuEventCount() + ranges.size());
  std::vector<size_t> blocks{0};
  for (GpuRows& tab : tables) {
    tab.next = 0;
    while (tab.next < tab.size) tab.ReadRow(its, [&](const Piece& p) { pieces.push_back(p); });
    SortPieceBlock(pieces.data() + blocks.back(), pieces.data() + pieces.size());
    blocks.push_back(pieces.size());
  }
  pieces.insert(pieces.end(), ranges.begin(), ranges.end());
  blocks.push_back(pieces.size());
  internal::MergeSortedBlocks(pieces.data(), std::move(blocks), [](const Piece& a, const Piece& b) {
    return a.iter != b.iter ? a.iter < b.iter : a.start < b.start;
  });
  const Piece* p = pieces.data();
  const Piece* end = p + pieces.size();
  for (size_t i = 0; i < its.size(); ++i) {
    const Piece* q = p;
    while (q != end && q->iter == static_cast<int32_t>(i)) ++q;
    FillPhases(p, q, its[i]);
    p = q;
  }
}

// Without markers the one iteration is the span of the work it explains, not the trace window:
// from the first launch call, GPU work or phase range (pre/infer/post) to the last. A script that
// imports and initialises for 30 s before 66 ms of GPU work would otherwise measure its start-up
// as the iteration's idle time, and every Amdahl bound over it as a gain. The span becomes the
// one marker, so host rows outside it (start-up allocations and syncs) belong to no iteration,
// and phase pieces are clipped to it (the phases still partition it exactly).
void NarrowWholeTrace(const Trace& t, const IterationOptions& o, const ApiIndex& api, Matchers& m,
                      IterationAnalysis* out, MarkerIndex* index) {
  TimeNs lo = std::numeric_limits<TimeNs>::max(), hi = std::numeric_limits<TimeNs>::min();
  // GPU work and the calls that launched it: the host's lead-in to the first work belongs to it.
  auto cover = [&](const auto& table) {
    for (size_t i = 0; i < table.size(); ++i) {
      lo = std::min(lo, table.start[i]), hi = std::max(hi, table.end[i]);
      if (const int64_t call = api.Find(table.correlation[i], table.pid[i]); call >= 0)
        lo = std::min(lo, t.api_calls.start[static_cast<size_t>(call)]);
    }
  };
  cover(t.kernels);
  cover(t.memcpys);
  cover(t.memsets);
  const RangeTable& r = t.ranges;
  for (size_t i = 0; i < r.size(); ++i) {
    if (r.on_gpu[i] != 0 || r.end[i] <= r.start[i]) continue;
    if (m.pre(r.name[i]) || m.infer(r.name[i]) || m.post(r.name[i])) lo = std::min(lo, r.start[i]), hi = std::max(hi, r.end[i]);
  }
  Iteration& it = out->iterations.front();
  if (hi < lo || (lo <= it.start && hi >= it.end)) return;  // nothing to narrow to, or nothing outside
  const TimeNs window = it.end - it.start;
  it.marker_start = it.start = std::max(it.start, lo);
  it.marker_end = it.end = std::min(it.end, hi);
  index->whole_trace = false;
  index->start = {it.start};
  // Rows that start exactly at the span's end (zero-length work) still belong to it; saturated,
  // as times reach INT64_MAX.
  index->end = {it.end < std::numeric_limits<TimeNs>::max() ? it.end + 1 : it.end};
  out->source = StrFormat("no ranges match '%s': one iteration, the span of the GPU work, its launches and phase "
                          "ranges (%.3f ms of the %.3f ms trace; use --iteration REGEX to name the iteration ranges)",
                          o.iteration_regex.c_str(), NsToMs(it.end - it.start), NsToMs(window));
}

// The warm-up: --skip N, or the warm-up rule (FindWarmup) on the latencies every iteration has
// with nothing dropped (its span separated from the one before, as SeparateSpans does). The first
// `skipped` iterations move to out->dropped, the rows assigned to them to none (-1), the others'
// indexes down, and the marker index skips them: the same as finding them with --skip N.
void DropWarmup(const IterationOptions& o, IterationAnalysis* out, MarkerIndex* index) {
  std::vector<Iteration>& its = out->iterations;
  std::vector<double> latency(its.size());
  std::vector<std::pair<TimeNs, TimeNs>> span(its.size());
  for (size_t i = 0; i < its.size(); ++i) {
    const TimeNs s = i > 0 ? std::max(its[i].start, span[i - 1].second) : its[i].start;
    span[i] = {s, std::max(its[i].end, s)};
    latency[i] = static_cast<double>(span[i].second - span[i].first);
  }
  size_t w = 0;
  if (o.skip) {
    w = *o.skip;  // FindIterations has checked it leaves an iteration
  } else {
    out->skip_auto = true;
    out->warmup = FindWarmup(latency);
    w = out->warmup.dropped;
  }
  out->skipped = w;
  if (w == 0) return;
  for (size_t i = 0; i < w; ++i) {
    out->dropped.push_back(std::move(its[i]));
    out->dropped.back().start = span[i].first;
    out->dropped.back().end = span[i].second;
  }
  its.erase(its.begin(), its.begin() + static_cast<ptrdiff_t>(w));
  index->skip = w;
  const auto drop = static_cast<int32_t>(w);
  for (std::vector<int32_t>* v : {&out->kernel_iteration, &out->memcpy_iteration, &out->memset_iteration,
                                  &out->sync_iteration, &out->api_iteration})
    for (int32_t& k : *v) k = k < drop ? -1 : k - drop;
}

// Iterations never overlap: when the host runs ahead, the GPU work of step N ends after step N+1's
// range begins, and N+1's GPU step is measured from the end of N's GPU work to the end of its own
// (its host step, the marker, stays in marker_start/marker_end). Latencies then add up to at most
// the window, and no instant is counted in two iterations.
void SeparateSpans(std::vector<Iteration>& its) {
  for (size_t i = 1; i < its.size(); ++i) {
    its[i].start = std::max(its[i].start, its[i - 1].end);
    its[i].end = std::max(its[i].end, its[i].start);
  }
}

}  // namespace

size_t MedianIterationPosition(const IterationAnalysis& it) {
  std::vector<double> ms;
  ms.reserve(it.iterations.size());
  for (const Iteration& i : it.iterations) ms.push_back(NsToMs(i.latency_ns()));
  if (ms.empty()) return 0;
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  const double median = NearestRank(sorted, 50);
  return static_cast<size_t>(std::find(ms.begin(), ms.end(), median) - ms.begin());
}

void internal::ComputeIterationStats(IterationAnalysis* out) {
  out->latency_ms = SampleStats{};
  out->total_ns = 0;
  std::vector<double> latency_ms;
  TimeNs first = out->iterations.front().start, last = out->iterations.front().end;
  for (const Iteration& it : out->iterations) {
    latency_ms.push_back(static_cast<double>(it.latency_ns()) / 1e6);
    out->total_ns += it.latency_ns();
    first = std::min(first, it.start);
    last = std::max(last, it.end);
  }
  out->latency_ms = Describe(std::move(latency_ms));
  const double kept = static_cast<double>(out->iterations.size());
  if (last > first) {
    out->has_throughput = true;
    out->throughput_fps = kept * static_cast<double>(out->batch) / (static_cast<double>(last - first) / 1e9);
  }
  ComputePhaseStats(out);
}

void internal::ComputePhaseStats(IterationAnalysis* out) {
  std::array<TimeNs, kPhaseCount> phase_total{};
  for (const Iteration& it : out->iterations)
    for (size_t p = 0; p < kPhaseCount; ++p) phase_total[p] += it.phase_ns[p];
  const double kept = static_cast<double>(out->iterations.size());
  for (size_t p = 0; p < kPhaseCount; ++p) {
    double total = static_cast<double>(phase_total[p]);
    out->phase_ratio[p] = out->total_ns > 0 ? total / static_cast<double>(out->total_ns) : 0;
    out->phase_mean_ms[p] = total / kept / 1e6;
  }
}

Status AnalyzeIterations(const Trace& trace, const IterationOptions& options, IterationAnalysis* out) {
  std::optional<ApiIndex> built;
  return AnalyzeIterations(
      trace, options, [&]() -> const ApiIndex& { return built.emplace(trace.api_calls); }, out);
}

Status AnalyzeIterations(const Trace& trace, const IterationOptions& options,
                         const std::function<const ApiIndex&()>& api_index_of, IterationAnalysis* out) {
  *out = IterationAnalysis{};
  if (options.batch < 1) {
    return InvalidInput("--batch " + std::to_string(options.batch) + " must be at least 1 (items per iteration)");
  }
  Matchers matchers;
  TG_RETURN_IF_ERROR(CompileAll(trace, options, &matchers));
  out->batch = options.batch;
  MarkerIndex index;
  bool gpu_markers = false;
  if (Status s = FindIterations(trace, options, matchers.iteration, out, &index, &gpu_markers); !s.ok()) {
    return s;
  }

  // Under GPU markers the chosen "pid" is a device's track, not a process: no process filter.
  const ApiTable& api = trace.api_calls;
  const ApiIndex& api_index = api_index_of();
  if (index.whole_trace) NarrowWholeTrace(trace, options, api_index, matchers, out, &index);
  Assigner assign{api, index, api_index, gpu_markers ? kUnknownId : out->pid, !gpu_markers};
  out->api_iteration = assign.Calls();
  out->kernel_iteration = assign.Gpu(trace.kernels, out->api_iteration);
  out->memcpy_iteration = assign.Gpu(trace.memcpys, out->api_iteration);
  out->memset_iteration = assign.Gpu(trace.memsets, out->api_iteration);
  out->sync_iteration = assign.Gpu(trace.syncs, out->api_iteration);

  CountWork(trace, out);
  DropWarmup(options, out, &index);
  SeparateSpans(out->iterations);
  ComputePhases(trace, assign, matchers, out);
  internal::ComputeIterationStats(out);
  return Status::Ok();
}

}  // namespace tg
