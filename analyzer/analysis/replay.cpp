// The what-if replay (tracegate/analyzer/replay.h): one pass over the trace's calls and GPU
// activities in recorded time order, each re-timed from what it depends on.
#include "tracegate/analyzer/replay.h"

#include "analyzer/analysis/replay_engine.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <tuple>
#include <utility>

#include "analyzer/analysis/correlation.h"
#include "analyzer/analysis/dense_ids.h"
#include "analyzer/util/demangle.h"
#include "analyzer/util/intervals.h"
#include "tracegate/analyzer/kernel_class.h"
#include "tracegate/analyzer/op_links.h"

namespace tg {

using internal::ActBound;
using internal::ApiIndex;
using internal::Demangle;
using internal::ReplayRecord;

namespace {

constexpr TimeNs kNever = internal::kReplayNever;

bool Contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

using internal::IsLaunchCall;
using internal::IsSyncCall;

using Activity = internal::ReplayActivity;
using internal::DenseIds;

// A stable sort of `v` by the unsigned key(x) (LSD radix, 11 bits a pass; digits all alike are skipped).
template <class T, class KeyOf>
void RadixSort(std::vector<T>* v, KeyOf key) {
  uint64_t bits = 0;
  for (const T& x : *v) bits |= key(x);
  std::vector<T> tmp(v->size());
  constexpr int kBits = 11;
  constexpr size_t kBuckets = size_t{1} << kBits;
  std::vector<size_t> count(kBuckets);
  for (int shift = 0; shift < 64 && (bits >> shift) != 0; shift += kBits) {
    std::fill(count.begin(), count.end(), 0);
    for (const T& x : *v) ++count[(key(x) >> shift) & (kBuckets - 1)];
    if (*std::max_element(count.begin(), count.end()) == v->size()) continue;
    size_t sum = 0;
    for (size_t& c : count) sum += std::exchange(c, sum);
    for (const T& x : *v) tmp[count[(key(x) >> shift) & (kBuckets - 1)]++] = x;
    v->swap(tmp);
  }
}

Status Compile(const std::string& pattern, const char* option, std::optional<std::regex>* out) {
  if (pattern.empty()) return Status::Ok();
  try {
    out->emplace(pattern, std::regex::ECMAScript | std::regex::icase);
  } catch (const std::regex_error& e) {
    return InvalidInput(std::string(option) + ": invalid regular expression '" + pattern + "': " + e.what());
  }
  return Status::Ok();
}

// The host ranges of each thread whose name matches `re`, merged into disjoint sorted pieces.
std::map<std::pair<int64_t, int64_t>, std::vector<std::pair<TimeNs, TimeNs>>> MatchingHostPieces(const Trace& t,
                                                                                                 const std::regex& re) {
  const RangeTable& r = t.ranges;
  std::vector<int8_t> match(t.strings.size(), -1);
  std::map<std::pair<int64_t, int64_t>, std::vector<std::pair<TimeNs, TimeNs>>> raw, merged;
  for (size_t i = 0; i < r.size(); ++i) {
    if (r.on_gpu[i] || r.end[i] <= r.start[i]) continue;
    int8_t& m = match[r.name[i]];
    if (m < 0) {
      const std::string_view n = t.Name(r.name[i]);
      m = std::regex_search(n.begin(), n.end(), re) ? 1 : 0;
    }
    if (m == 1) raw[{r.pid[i], r.tid[i]}].emplace_back(r.start[i], r.end[i]);
  }
  for (auto& [key, v] : raw) {
    std::sort(v.begin(), v.end());
    auto& out = merged[key];
    for (const auto& [s, e] : v) {
      if (!out.empty() && s <= out.back().second) out.back().second = std::max(out.back().second, e);
      else out.emplace_back(s, e);
    }
  }
  return merged;
}

// An activity its stream held back to back: launched at least the process's smallest launch delay
// before the previous activity of its stream ended, so the launch did not decide its start.
bool HeldBackToBack(TimeNs launch, TimeNs min_delay, TimeNs previous_end) { return launch + min_delay <= previous_end; }

}  // namespace

Status Replay(const Trace& t, const IterationAnalysis& its, const ReplayChange& change, ReplayResult* out) {
  return internal::ReplayEngine(t, its, change, nullptr, out, nullptr);
}

std::string LongerIterationsCaution(const ReplayResult& r) {
  const size_t n = r.longer();
  if (n == 0) return "";
  return std::to_string(n) + " of " + std::to_string(r.iterations.size()) +
         " iterations come out longer than recorded under a change that only removes time: the marker thread moved "
         "earlier while work the replay does not link to it (another thread's calls, GPU work without a launch call) "
         "stayed where it was recorded, so the iterations' spans are not predicted";
}

namespace internal {

bool IsSyncCall(std::string_view n) {
  const bool copy = Contains(n, "Memcpy") || Contains(n, "memcpy");
  return Contains(n, "Synchronize") || (copy && !Contains(n, "Async") && !Contains(n, "async") && !Contains(n, "Peer"));
}
bool IsLaunchCall(std::string_view n) { return Contains(n, "Launch"); }

std::vector<SpeedupPiece> MaxSpeedupPieces(const std::vector<LocatedSpeedup>& located, bool host) {
  // A sweep over the intervals' ends: at each instant the largest speedup of those covering it.
  std::vector<std::tuple<TimeNs, bool, double>> points;  // (time, starts, speedup)
  for (const LocatedSpeedup& l : located) {
    if (l.host != host) continue;
    for (const auto& [b, e] : l.intervals) {
      if (e <= b) continue;
      points.emplace_back(b, true, l.speedup);
      points.emplace_back(e, false, l.speedup);
    }
  }
  std::sort(points.begin(), points.end());
  std::vector<SpeedupPiece> out;
  std::multiset<double> active;
  for (size_t i = 0; i < points.size();) {
    const TimeNs at = std::get<0>(points[i]);
    for (; i < points.size() && std::get<0>(points[i]) == at; ++i) {
      if (std::get<1>(points[i])) active.insert(std::get<2>(points[i]));
      else active.erase(active.find(std::get<2>(points[i])));
    }
    if (!out.empty() && out.back().end == kNever) out.back().end = at;  // the open piece ends here
    if (active.empty()) continue;
    const double s = *active.rbegin();
    if (!out.empty() && out.back().end == at && out.back().speedup == s) {
      out.back().end = kNever;  // goes on
      continue;
    }
    out.push_back({at, kNever, s});
  }
  return out;
}

TimeNs ScaledDuration(const std::vector<SpeedupPiece>& pieces, TimeNs start, TimeNs end, TimeNs* inside) {
  *inside = 0;
  if (end <= start || pieces.empty()) return std::max<TimeNs>(0, end - start);
  auto p = std::partition_point(pieces.begin(), pieces.end(), [&](const SpeedupPiece& x) { return x.end <= start; });
  double scaled = 0;
  for (; p != pieces.end() && p->start < end; ++p) {
    const TimeNs part = std::min(end, p->end) - std::max(start, p->start);
    *inside += part;
    if (std::isfinite(p->speedup)) scaled += static_cast<double>(part) / p->speedup;
  }
  return end - start - *inside + static_cast<TimeNs>(std::llround(scaled));
}

bool HasEventRecords(const Trace& t) {
  const SyncTable& y = t.syncs;
  for (size_t r = 0; r < y.size(); ++r)
    if (y.record_correlation[r] != kUnknownId && y.wait_stream[r] != kUnknownId) return true;
  return false;
}

std::pair<int64_t, int64_t> StreamOf(const Trace& t, const ReplayActivity& x) {
  switch (x.kind) {
    case 0: return {t.kernels.device[x.row], t.kernels.stream[x.row]};
    case 1: return {t.memcpys.device[x.row], t.memcpys.stream[x.row]};
    default: return {t.memsets.device[x.row], t.memsets.stream[x.row]};
  }
}

EventEdges FindEventEdges(const Trace& t, const ApiIndex& index, const std::vector<ReplayActivity>& acts) {
  EventEdges out;
  const ApiTable& a = t.api_calls;
  const SyncTable& y = t.syncs;
  // Per (device, stream): (launch call start, activity start, activity) of the launched activities, sorted.
  std::map<std::pair<int64_t, int64_t>, std::vector<std::tuple<TimeNs, TimeNs, uint32_t>>> launched;
  for (uint32_t i = 0; i < acts.size(); ++i)
    if (acts[i].call >= 0)
      launched[StreamOf(t, acts[i])].emplace_back(a.start[static_cast<size_t>(acts[i].call)], acts[i].start, i);
  for (auto& [key, v] : launched) std::sort(v.begin(), v.end());
  std::map<uint32_t, uint32_t> call_event;  // a blocking event sync: the event's activity
  for (size_t r = 0; r < y.size(); ++r) {
    if (y.record_correlation[r] == kUnknownId || y.wait_stream[r] == kUnknownId) continue;
    if (y.kind[r] != SyncKind::kStreamWaitEvent && y.kind[r] != SyncKind::kEventSync) continue;
    const int64_t call = index.Find(y.correlation[r], kUnknownId);
    if (call < 0) continue;
    const size_t c = static_cast<size_t>(call);
    const int64_t record_call = index.Find(y.record_correlation[r], a.pid[c]);
    if (record_call < 0 || a.pid[static_cast<size_t>(record_call)] != a.pid[c]) continue;
    auto on = launched.find({y.device[r], y.wait_stream[r]});
    if (on == launched.end()) continue;
    const TimeNs recorded_at = a.start[static_cast<size_t>(record_call)];
    auto last = std::lower_bound(on->second.begin(), on->second.end(),
                                 std::tuple<TimeNs, TimeNs, uint32_t>{recorded_at, kNever, 0});
    // The last launch before the record, of this process.
    int64_t src = -1;
    for (auto it = last; it != on->second.begin();) {
      --it;
      const size_t launch = static_cast<size_t>(acts[std::get<2>(*it)].call);
      if (a.pid[launch] == a.pid[c]) {
        src = std::get<2>(*it);
        break;
      }
    }
    if (src < 0) continue;
    const TimeNs src_end = acts[static_cast<size_t>(src)].end;
    if (y.kind[r] == SyncKind::kEventSync) {
      if (!IsSyncCall(t.Name(a.name[c])) || src_end > std::max(a.start[c], a.end[c])) continue;
      const auto [w, fresh] = call_event.try_emplace(static_cast<uint32_t>(c), static_cast<uint32_t>(src));
      if (!fresh && acts[w->second].end < src_end) w->second = static_cast<uint32_t>(src);
      continue;
    }
    auto waiting = launched.find({y.device[r], y.stream[r]});
    if (waiting == launched.end() || waiting == on) continue;
    auto next = std::upper_bound(waiting->second.begin(), waiting->second.end(),
                                 std::tuple<TimeNs, TimeNs, uint32_t>{a.start[c], std::numeric_limits<TimeNs>::max(),
                                                                      std::numeric_limits<uint32_t>::max()});
    for (; next != waiting->second.end(); ++next) {
      const size_t launch = static_cast<size_t>(acts[std::get<2>(*next)].call);
      if (a.pid[launch] == a.pid[c] && a.tid[launch] == a.tid[c]) break;
    }
    if (next == waiting->second.end() || acts[std::get<2>(*next)].start < src_end) continue;
    out.waits.emplace_back(std::get<2>(*next), static_cast<uint32_t>(src));
  }
  std::sort(out.waits.begin(), out.waits.end());
  out.waits.erase(std::unique(out.waits.begin(), out.waits.end()), out.waits.end());
  out.syncs.assign(call_event.begin(), call_event.end());
  return out;
}

Status BuildReplayPlan(const Trace& t, const ApiIndex& index, ReplayPlan* plan) {
  *plan = ReplayPlan{};
  const ApiTable& a = t.api_calls;
  using enum ReplayPlan::PointType;
  constexpr size_t kMaxRows = size_t{1} << 30;  // a point's id takes 30 bits
  if (a.size() >= kMaxRows || t.GpuEventCount() >= kMaxRows)
    return InvalidInput("the replay takes fewer than 2^30 API calls and GPU activities each");
  // The GPU activities, their launch calls, and each one's predecessor on its stream.
  std::vector<Activity>& acts = plan->acts;
  acts.reserve(t.GpuEventCount());
  auto collect = [&](const auto& table, uint8_t kind) {
    for (size_t i = 0; i < table.size(); ++i)
      acts.push_back({table.start[i], std::max(table.start[i], table.end[i]), table.pid[i],
                      index.Find(table.correlation[i], table.pid[i]), kind, static_cast<uint32_t>(i)});
  };
  collect(t.kernels, 0);
  collect(t.memcpys, 1);
  collect(t.memsets, 2);
  // Processes: of an activity's own pid (its launch delays), and of the pid it is logged under
  // when it ends (its launch call's, else its own; a GPU row's own pid may be the device's).
  DenseIds<int64_t>& procs = plan->procs;
  std::vector<uint32_t>& act_proc = plan->act_proc;
  std::vector<uint32_t>& act_log_proc = plan->act_log_proc;
  act_proc.resize(acts.size());
  act_log_proc.resize(acts.size());
  for (size_t i = 0; i < acts.size(); ++i) {
    act_proc[i] = procs.Of(acts[i].pid);
    act_log_proc[i] = acts[i].call >= 0 ? procs.Of(a.pid[static_cast<size_t>(acts[i].call)]) : act_proc[i];
  }
  // Host threads, and the process each call's syncs read.
  DenseIds<std::pair<int64_t, int64_t>>& threads = plan->threads;
  std::vector<uint32_t>& call_thread = plan->call_thread;
  std::vector<uint32_t>& call_proc = plan->call_proc;
  call_thread.resize(a.size());
  call_proc.resize(a.size());
  for (size_t c = 0; c < a.size(); ++c) {
    call_thread[c] = threads.Of({a.pid[c], a.tid[c]});
    call_proc[c] = procs.Of(a.pid[c]);
  }
  // The smallest launch delay per process (activities whose stream was idle at the launch).
  std::vector<TimeNs>& min_delay = plan->min_delay;
  min_delay.assign(procs.size(), 0);
  std::vector<uint8_t> has_delay(procs.size(), 0);
  for (size_t i = 0; i < acts.size(); ++i) {
    if (acts[i].call < 0) continue;
    const TimeNs d = acts[i].start - a.start[static_cast<size_t>(acts[i].call)];
    TimeNs& m = min_delay[act_proc[i]];
    m = has_delay[act_proc[i]] ? std::min(m, d) : d;
    has_delay[act_proc[i]] = 1;
  }

  // The points of the pass (ReplayPlan::points): written in (type, id) order, then sorted stably
  // by time (timestamps are never negative), then kept as (id << 2) | type.
  struct Point {
    uint64_t time;
    uint32_t id;
    uint8_t type;
  };
  std::vector<Point> points;
  points.reserve(2 * (a.size() + acts.size()));
  for (uint32_t i = 0; i < acts.size(); ++i) points.push_back({static_cast<uint64_t>(acts[i].end), i, kActEnd});
  for (uint32_t i = 0; i < a.size(); ++i)
    points.push_back({static_cast<uint64_t>(std::max(a.start[i], a.end[i])), i, kCallEnd});
  for (uint32_t i = 0; i < a.size(); ++i) points.push_back({static_cast<uint64_t>(a.start[i]), i, kCallStart});
  for (uint32_t i = 0; i < acts.size(); ++i) points.push_back({static_cast<uint64_t>(acts[i].start), i, kActStart});
  if (!points.empty()) {
    uint64_t lo = points.front().time;
    for (const Point& p : points) lo = std::min(lo, p.time);
    RadixSort(&points, [lo](const Point& p) { return p.time - lo; });
  }
  // Each activity's predecessor on its stream: the activity that started last before it, by
  // (start, index), the order of the activities' start points.
  std::vector<int32_t>& prev = plan->prev;
  prev.assign(acts.size(), -1);
  {
    DenseIds<std::pair<int64_t, int64_t>> streams;
    std::vector<int32_t> last;
    for (const Point& p : points) {
      if (p.type != kActStart) continue;
      const uint32_t st = streams.Of(StreamOf(t, acts[p.id]));
      if (st >= last.size()) last.resize(st + 1, -1);
      prev[p.id] = last[st];
      last[st] = static_cast<int32_t>(p.id);
    }
  }
  plan->points.resize(points.size());
  for (size_t i = 0; i < points.size(); ++i) plan->points[i] = (points[i].id << 2) | points[i].type;
  std::vector<Point>().swap(points);

  // Cross-stream event edges (replay_engine.h).
  plan->call_event.assign(a.size(), -1);
  if (internal::HasEventRecords(t)) {
    internal::EventEdges edges = internal::FindEventEdges(t, index, acts);
    plan->waits = std::move(edges.waits);
    for (const auto& [c, w] : edges.syncs) plan->call_event[c] = static_cast<int32_t>(w);
    plan->sync_edges = std::move(edges.syncs);
  }
  return Status::Ok();
}

Status ReplayEngine(const Trace& t, const IterationAnalysis& its, const ReplayChange& change, const ApiIndex* api_index,
                    ReplayResult* out, ReplayRecord* record, const ReplayPlan* plan, CollectiveCoupling* coupling) {
  *out = ReplayResult{};
  // A change that names nothing in the kept iterations (ReplayResult::names_nothing).
  auto names_nothing = [out](std::string message) {
    out->names_nothing = true;
    return InvalidInput(std::move(message));
  };
  ReplayRecord local;
  ReplayRecord& rec = record ? *record : local;
  rec = ReplayRecord{};
  if (!(change.kernel_speedup > 0) || !std::isfinite(change.kernel_speedup))
    return InvalidInput("--speedup must be a finite number above 0");
  for (const KernelSelection& k : change.more_kernels)
    if (!(k.speedup > 0) || !std::isfinite(k.speedup)) return InvalidInput("--speedup must be a finite number above 0");
  if (its.iterations.empty()) return InvalidInput("no kept iterations to replay");
  if (!(change.host_speedup > 0) || !std::isfinite(change.host_speedup))
    return InvalidInput("--speedup must be a finite number above 0");
  bool located_gpu = false, located_host = false;
  for (const LocatedSpeedup& l : change.located) {
    if (!(l.speedup > 0)) return InvalidInput("a located speedup must be above 0 (+infinity: the time disappears)");
    (l.host ? located_host : located_gpu) = true;
  }
  std::optional<std::regex> syncs_re, host_re;
  TG_RETURN_IF_ERROR(Compile(change.host_regex, "--host", &host_re));
  TG_RETURN_IF_ERROR(Compile(change.remove_syncs_regex, "--remove-syncs", &syncs_re));
  std::optional<std::regex> graph_re;
  TG_RETURN_IF_ERROR(Compile(change.graph ? change.graph_regex : std::string(), "--graph", &graph_re));
  // The kernel selections: the first (kernels_regex / kernel_class), then more_kernels.
  struct Selection {
    KernelSelection given;
    std::optional<std::regex> re;
    bool by_class = false;
    KernelClass cls = KernelClass::kOther;
    std::vector<int8_t> match;      // per name: -1 not yet searched
    std::vector<uint8_t> launched;  // --launched-in: per kernel row, 1 when launched inside a matching range
  };
  std::vector<Selection> selections;
  {
    std::vector<KernelSelection> given;
    if (!change.kernels_regex.empty() || !change.kernel_class.empty() || !change.kernels_launched_in.empty())
      given.push_back({change.kernels_regex, change.kernel_class, change.kernel_speedup, change.kernels_launched_in});
    given.insert(given.end(), change.more_kernels.begin(), change.more_kernels.end());
    for (const KernelSelection& g : given) {
      Selection& sel = selections.emplace_back();
      sel.given = g;
      TG_RETURN_IF_ERROR(Compile(g.regex, "--kernels", &sel.re));
      sel.by_class = !g.kernel_class.empty();
      if (sel.by_class && !ParseKernelClass(g.kernel_class, &sel.cls)) {
        std::string names;
        for (const char* n : kKernelClassNames) names += std::string(names.empty() ? "" : ", ") + n;
        return InvalidInput("--class '" + g.kernel_class + "': expected one of " + names);
      }
      if (!g.launched_in.empty()) {
        std::optional<std::regex> in_re;
        TG_RETURN_IF_ERROR(Compile(g.launched_in, "--launched-in", &in_re));
        std::vector<size_t> rows;
        for (size_t i = 0; i < t.ranges.size(); ++i) {
          if (t.ranges.on_gpu[i]) continue;
          const std::string_view n = t.Name(t.ranges.name[i]);
          if (std::regex_search(n.begin(), n.end(), *in_re)) rows.push_back(i);
        }
        if (rows.empty()) return names_nothing("--launched-in: no host range matches '" + g.launched_in + "'");
        sel.launched.assign(t.kernels.size(), 0);
        for (const auto& [range, row] : KernelsLaunchedIn(t, rows)) sel.launched[row] = 1;
      }
      if (!sel.re && !sel.by_class && sel.launched.empty())
        return InvalidInput("a kernel selection needs --kernels REGEX, --class CLASS or --launched-in REGEX");
      sel.match.assign(t.strings.size(), -1);
    }
  }
  if (located_gpu && !selections.empty())
    return InvalidInput(
        "a located GPU speedup cannot be combined with --kernels, --class or --launched-in (a kernel would have two "
        "speedups)");
  if (located_host && host_re) return InvalidInput("a located host speedup cannot be combined with --host");
  const std::vector<internal::SpeedupPiece> gpu_pieces = MaxSpeedupPieces(change.located, false);
  const std::vector<internal::SpeedupPiece> host_pieces = MaxSpeedupPieces(change.located, true);
  const ApiTable& a = t.api_calls;
  std::optional<ApiIndex> own_index;
  if (!api_index) own_index.emplace(a);
  const ApiIndex& index = api_index ? *api_index : *own_index;

  // Which names the change touches, once per name; --class: the class of every kernel row, by
  // its launching op, then by name (ClassifyKernels with the default patterns).
  std::vector<KernelClass> classes;
  if (std::any_of(selections.begin(), selections.end(), [](const Selection& x) { return x.by_class; })) {
    KernelClassifier classifier;
    TG_RETURN_IF_ERROR(KernelClassifier::Create({}, &classifier));
    const OpLinks ops = LinkOps(t, index);
    classes = ClassifyKernels(t, classifier, &ops.kernels, &ops.extra_names);
  }
  // The selections kernel row `row` is in: the first's index (-1 for none), and whether a second one
  // holds it too.
  auto selected = [&](size_t row, bool* twice = nullptr) -> int {
    int found = -1;
    for (size_t k = 0; k < selections.size(); ++k) {
      Selection& sel = selections[k];
      if (sel.by_class && classes[row] != sel.cls) continue;
      if (!sel.launched.empty() && !sel.launched[row]) continue;
      if (sel.re) {
        int8_t& m = sel.match[t.kernels.name[row]];
        if (m < 0) m = std::regex_search(Demangle(t.Name(t.kernels.name[row])), *sel.re) ? 1 : 0;
        if (m != 1) continue;
      }
      if (found >= 0) {
        if (twice) *twice = true;
        return found;
      }
      found = static_cast<int>(k);
      if (!twice) return found;
    }
    return found;
  };
  std::vector<int8_t> call_class(t.strings.size(), -1);  // bit 0 sync, bit 1 launch, bit 2 removed sync
  auto class_of = [&](size_t row) {
    int8_t& c = call_class[a.name[row]];
    if (c < 0) {
      const std::string_view n = t.Name(a.name[row]);
      c = static_cast<int8_t>((IsSyncCall(n) ? 1 : 0) | (IsLaunchCall(n) ? 2 : 0) |
                              (IsSyncCall(n) && syncs_re && std::regex_search(n.begin(), n.end(), *syncs_re) ? 4 : 0));
    }
    return c;
  };

  // What no change alters (replay_engine.h, ReplayPlan): built here unless given.
  std::optional<ReplayPlan> own_plan;
  if (!plan) {
    TG_RETURN_IF_ERROR(BuildReplayPlan(t, index, &own_plan.emplace()));
  }
  const ReplayPlan& fixed = plan ? *plan : *own_plan;
  using enum ReplayPlan::PointType;
  const std::vector<Activity>& acts = fixed.acts;
  const DenseIds<int64_t>& procs = fixed.procs;
  const std::vector<uint32_t>&act_proc = fixed.act_proc, &act_log_proc = fixed.act_log_proc;
  const DenseIds<std::pair<int64_t, int64_t>>& threads = fixed.threads;
  const std::vector<uint32_t>&call_thread = fixed.call_thread, &call_proc = fixed.call_proc;
  const std::vector<TimeNs>& min_delay = fixed.min_delay;
  const std::vector<uint32_t>& points = fixed.points;
  const std::vector<int32_t>& prev = fixed.prev;
  const std::vector<std::pair<uint32_t, uint32_t>>& waits = fixed.waits;  // by the waiting activity
  const std::vector<int32_t>& call_event = fixed.call_event;
  if (record) {
    rec.acts = acts;
    rec.act_prev = prev;
    rec.wait_edges = waits;
    rec.sync_edges = fixed.sync_edges;
  }

  // The host ranges the change speeds up: their union per thread, with running sums of its length.
  struct Union {
    std::vector<std::pair<TimeNs, TimeNs>> pieces;
    std::vector<TimeNs> before;    // before[i]: the length of pieces[0..i)
    // Located host speedups: per piece the share of its time saved (1 - 1/S), and saved[i], the
    // time pieces[0..i) save; empty for --host (one speedup).
    std::vector<double> factor, saved;
    // The last piece that starts at or before t (-1 for none), and its length before t.
    int64_t PieceBefore(TimeNs t, TimeNs* part) const {
      auto it = std::upper_bound(pieces.begin(), pieces.end(), t,
                                 [](TimeNs x, const std::pair<TimeNs, TimeNs>& p) { return x < p.first; });
      if (it == pieces.begin()) return -1;
      const size_t i = static_cast<size_t>(it - pieces.begin()) - 1;
      *part = std::min(t, pieces[i].second) - pieces[i].first;
      return static_cast<int64_t>(i);
    }
    double SavedUpto(TimeNs t) const {  // the time the pieces before t save
      TimeNs part = 0;
      const int64_t i = PieceBefore(t, &part);
      return i < 0 ? 0 : saved[static_cast<size_t>(i)] + static_cast<double>(part) * factor[static_cast<size_t>(i)];
    }
    TimeNs Upto(TimeNs t) const {  // the union's length before t
      TimeNs part = 0;
      const int64_t i = PieceBefore(t, &part);
      return i < 0 ? 0 : before[static_cast<size_t>(i)] + part;
    }
  };
  std::map<std::pair<int64_t, int64_t>, Union> host_union;
  if (host_re) {
    const RangeTable& r = t.ranges;
    std::vector<int8_t> match(t.strings.size(), -1);
    std::map<std::pair<int64_t, int64_t>, std::vector<std::pair<TimeNs, TimeNs>>> raw;
    for (size_t i = 0; i < r.size(); ++i) {
      if (r.on_gpu[i] || r.end[i] <= r.start[i]) continue;
      int8_t& m = match[r.name[i]];
      if (m < 0) {
        const std::string_view n = t.Name(r.name[i]);
        m = std::regex_search(n.begin(), n.end(), *host_re) ? 1 : 0;
      }
      if (m == 1) raw[{r.pid[i], r.tid[i]}].emplace_back(r.start[i], r.end[i]);
    }
    for (auto& [key, v] : raw) {
      std::sort(v.begin(), v.end());
      Union& u = host_union[key];
      for (const auto& [s, e] : v) {
        if (!u.pieces.empty() && s <= u.pieces.back().second)
          u.pieces.back().second = std::max(u.pieces.back().second, e);
        else u.pieces.emplace_back(s, e);
      }
      TimeNs sum = 0;
      for (const auto& [s, e] : u.pieces) {
        u.before.push_back(sum);
        sum += e - s;
      }
    }
  }
  // Located host speedups: one union on each kept iteration's marker thread.
  if (located_host) {
    Union u;
    double sum = 0;
    for (const internal::SpeedupPiece& p : host_pieces) {
      u.pieces.emplace_back(p.start, p.end);
      u.factor.push_back(std::isfinite(p.speedup) ? 1 - 1 / p.speedup : 1);
      u.saved.push_back(sum);
      sum += static_cast<double>(p.end - p.start) * u.factor.back();
    }
    for (const Iteration& it : its.iterations)
      if (it.tid != kUnknownId && !u.pieces.empty()) host_union.try_emplace({its.pid, it.tid}, u);
  }
  // The host time a thread saves in [x, y) (x may be kNever: from the beginning).
  std::vector<const Union*> thread_union(threads.size(), nullptr);
  for (const auto& [key, u] : host_union)
    if (const int64_t th = threads.Find(key); th >= 0) thread_union[static_cast<size_t>(th)] = &u;
  auto saving = [&](const Union* u, TimeNs x, TimeNs y) -> TimeNs {
    if (!u || y <= x) return 0;
    if (!u->factor.empty())
      return static_cast<TimeNs>(std::llround(u->SavedUpto(y) - (x == kNever ? 0 : u->SavedUpto(x))));
    const TimeNs inside = u->Upto(y) - (x == kNever ? 0 : u->Upto(x));
    return static_cast<TimeNs>(std::llround(static_cast<double>(inside) * (1 - 1 / change.host_speedup)));
  };
  // --graph: each launch call folded into a graph launch gets the graph's first launch call
  // (itself for the first); -1 for the others. A graph: the launch calls of one thread inside one
  // kept iteration (and one matching host range with a regex), in recorded order.
  std::vector<int32_t> graph_first(change.graph ? a.size() : 0, -1);
  auto iteration_at = [&](TimeNs at) -> int64_t {  // the kept iteration whose span holds `at`, or -1
    auto it = std::upper_bound(its.iterations.begin(), its.iterations.end(), at,
                               [](TimeNs x, const Iteration& i) { return x < i.start; });
    if (it == its.iterations.begin() || at >= std::prev(it)->end) return -1;
    return std::prev(it) - its.iterations.begin();
  };
  // Per process, the median gap between back-to-back activities: how a graph's kernels follow
  // each other on a stream.
  std::vector<TimeNs> graph_gap(procs.size(), 0);
  if (change.graph) {
    std::map<std::pair<int64_t, int64_t>, std::vector<std::pair<TimeNs, TimeNs>>> pieces;
    if (graph_re) pieces = MatchingHostPieces(t, *graph_re);
    std::vector<uint32_t> order;
    for (uint32_t c = 0; c < a.size(); ++c)
      if (class_of(c) & 2) order.push_back(c);
    std::stable_sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) { return a.start[x] < a.start[y]; });
    std::map<std::tuple<int64_t, uint32_t, int64_t>, int32_t> first;  // (iteration, thread, range piece)
    for (uint32_t c : order) {
      const int64_t k = iteration_at(a.start[c]);
      if (k < 0) continue;
      int64_t piece = -1;
      if (graph_re) {
        auto p = pieces.find({a.pid[c], a.tid[c]});
        if (p == pieces.end()) continue;
        const auto& v = p->second;
        auto at = std::upper_bound(v.begin(), v.end(), a.start[c],
                                   [](TimeNs x, const std::pair<TimeNs, TimeNs>& q) { return x < q.first; });
        if (at == v.begin() || a.start[c] >= std::prev(at)->second) continue;
        piece = std::prev(at) - v.begin();
      }
      const auto [it, fresh] = first.try_emplace({k, call_thread[c], piece}, static_cast<int32_t>(c));
      graph_first[c] = it->second;
      ++(fresh ? out->graph_launches : out->graph_folded);
    }
    std::vector<std::vector<TimeNs>> gaps(procs.size());
    for (size_t i = 0; i < acts.size(); ++i) {
      const int32_t p = prev[i];
      if (p < 0 || acts[i].call < 0) continue;
      const Activity& q = acts[static_cast<size_t>(p)];
      if (HeldBackToBack(a.start[static_cast<size_t>(acts[i].call)], min_delay[act_proc[i]], q.end))
        gaps[act_proc[i]].push_back(acts[i].start - q.end);
    }
    for (size_t p = 0; p < procs.size(); ++p) {
      if (gaps[p].empty()) continue;
      std::nth_element(gaps[p].begin(), gaps[p].begin() + static_cast<std::ptrdiff_t>(gaps[p].size() / 2),
                       gaps[p].end());
      graph_gap[p] = std::max<TimeNs>(0, gaps[p][gaps[p].size() / 2]);
    }
  }
  auto folded = [&](int64_t c) {  // a launch call folded into a graph launch made before it
    return c >= 0 && !graph_first.empty() && graph_first[static_cast<size_t>(c)] >= 0 &&
           graph_first[static_cast<size_t>(c)] != c;
  };
  // Host threads: the recorded end of the call that ended last on each.
  std::vector<TimeNs> thread_last_end(threads.size(), kNever);
  // Host threads: the shift (new - recorded) of the call that ended last on each.
  std::vector<TimeNs> thread_shift(threads.size(), 0);
  // Per thread, the call that ended last on each.
  std::vector<int32_t> thread_last_call(threads.size(), -1);
  // The instants the kept iterations' spans read their marker thread's shift at (their start and
  // their host end), answered during the pass: per thread, sorted by time; a query is answered
  // by the thread's last call whose recorded end is at or before its instant, just before the
  // first call that ends after it ends (calls end in recorded time order), else after the pass.
  struct ShiftQuery {
    TimeNs at;
    uint32_t slot;  // 2k: iteration k's start, 2k + 1: its host end
  };
  struct ShiftAnswer {
    TimeNs recorded = kNever, shift = 0;  // the call's recorded end and shift; kNever: no call yet
    int32_t call = -1;
  };
  std::vector<ShiftAnswer> shift_answers(2 * its.iterations.size());
  std::vector<std::vector<ShiftQuery>> thread_queries(threads.size());
  std::vector<size_t> thread_answered(threads.size(), 0);
  auto host_end_of = [&](const Iteration& it) { return its.from_markers ? it.marker_end : it.end; };
  for (size_t k = 0; k < its.iterations.size(); ++k) {
    const Iteration& it = its.iterations[k];
    if (it.tid == kUnknownId) continue;
    const int64_t th = threads.Find({its.pid, it.tid});
    if (th < 0) continue;  // no call on it: nothing shifts it
    auto& q = thread_queries[static_cast<size_t>(th)];
    q.push_back({it.start, static_cast<uint32_t>(2 * k)});
    q.push_back({host_end_of(it), static_cast<uint32_t>(2 * k + 1)});
  }
  for (auto& q : thread_queries)
    std::stable_sort(q.begin(), q.end(), [](const ShiftQuery& x, const ShiftQuery& y) { return x.at < y.at; });
  // Answers thread th's queries before `before` (all of them for kNever) with its current state.
  auto answer_before = [&](uint32_t th, TimeNs before) {
    const auto& q = thread_queries[th];
    size_t& next = thread_answered[th];
    for (; next < q.size() && (before == kNever || q[next].at < before); ++next)
      shift_answers[q[next].slot] = {thread_last_end[th], thread_shift[th], thread_last_call[th]};
  };
  // Per process, the activities in the order they ended: recorded end, new end, which.
  struct Ended {
    TimeNs recorded, now;
    uint32_t id;
  };
  std::vector<std::vector<Ended>> ended(procs.size());
  {
    std::vector<size_t> logged(procs.size(), 0);
    for (uint32_t p : act_log_proc) ++logged[p];
    for (size_t p = 0; p < procs.size(); ++p) ended[p].reserve(logged[p]);
  }
  std::vector<TimeNs>& call_start = rec.call_start;
  std::vector<TimeNs>& call_end = rec.call_end;
  call_start.assign(a.size(), kNever);
  call_end.assign(a.size(), kNever);
  // What bound each node: only for a record (ReplayRecord), so a plain replay does not hold it.
  if (record) {
    rec.call_prev.assign(a.size(), -1);
    rec.call_waited.assign(a.size(), -1);
    rec.call_sync.assign(a.size(), 0);
    rec.act_bound.assign(acts.size(), ActBound::kNone);
    rec.act_waited.assign(acts.size(), -1);
  }
  std::vector<uint32_t> call_log(a.size(), 0);
  std::vector<TimeNs>& act_start = rec.act_start;
  std::vector<TimeNs>& act_end = rec.act_end;
  act_start.assign(acts.size(), kNever);
  act_end.assign(acts.size(), kNever);

  // Per process, the activity logged so far that ends last under the change; per synchronising
  // call, that activity when the call started: the work done before it in the recording, which a
  // change can make end after the call starts (the host running ahead of the GPU), when the call
  // waits for it too.
  std::vector<std::pair<TimeNs, int32_t>> proc_last(procs.size(), {kNever, -1});
  std::map<uint32_t, std::pair<TimeNs, int32_t>> sync_before;
  auto start_call = [&](uint32_t c) {
    if (call_start[c] != kNever) return;
    const uint32_t th = call_thread[c];
    call_start[c] = a.start[c] + thread_shift[th] - saving(thread_union[th], thread_last_end[th], a.start[c]);
    if (record) rec.call_prev[c] = thread_last_call[th];
    call_log[c] = static_cast<uint32_t>(ended[call_proc[c]].size());
    if (class_of(c) & 1) sync_before[c] = proc_last[call_proc[c]];
  };
  auto end_call = [&](uint32_t c) {
    start_call(c);
    const TimeNs dur = std::max<TimeNs>(0, a.end[c] - a.start[c]);
    const int8_t cls = class_of(c);
    TimeNs e = call_start[c] + dur;
    if (record) rec.call_sync[c] = static_cast<uint8_t>(cls & 3);
    if (const int32_t w = call_event[c]; w >= 0) {
      // An event sync: it returns after the event's work, its wake-up delay after it when that
      // work ended while it waited, else at its own end at the earliest.
      const size_t q = static_cast<size_t>(w);
      const TimeNs work_end = act_end[q] != kNever ? act_end[q] : acts[q].end;
      const bool waited = acts[q].end > a.start[c];
      const TimeNs wake = waited ? std::max<TimeNs>(0, a.end[c] - acts[q].end) : 0;
      const TimeNs own = waited ? wake : dur;
      if (cls & 4) {
        e = call_start[c] + (waited ? std::min(dur, wake) : dur);
        if (waited) out->syncs_removed++;
      } else if (work_end + wake >= call_start[c] + own && (waited || work_end > call_start[c] + own)) {
        e = work_end + wake;
        if (record) rec.call_waited[c] = w;
      } else {
        e = call_start[c] + own;
      }
    } else if (cls & 1) {
      // The work that ended while the call waited: the call returns its wake-up delay after it.
      TimeNs last_recorded = kNever, last_new = kNever;
      int32_t waited = -1;
      const auto& log = ended[call_proc[c]];
      for (size_t k = call_log[c]; k < log.size(); ++k)
        if (log[k].recorded > a.start[c]) {
          last_recorded = std::max(last_recorded, log[k].recorded);
          if (log[k].now > last_new) {
            last_new = log[k].now;
            waited = static_cast<int32_t>(log[k].id);
          }
        }
      if (last_recorded != kNever) {
        const TimeNs wake = std::max<TimeNs>(0, a.end[c] - last_recorded);
        if (cls & 4) {
          e = call_start[c] + std::min(dur, wake);
          out->syncs_removed++;
        } else if (last_new + wake >= call_start[c] + wake) {
          e = last_new + wake;
          if (record) rec.call_waited[c] = waited;
        } else {
          e = call_start[c] + wake;
        }
      }
      // Work that had ended before it started, now ending later: waited for too.
      const auto before = sync_before.find(c);
      if (!(cls & 4) && before != sync_before.end() && before->second.second >= 0) {
        const TimeNs wake = last_recorded != kNever ? std::max<TimeNs>(0, a.end[c] - last_recorded) : dur;
        if (before->second.first + wake > e) {
          e = before->second.first + wake;
          if (record) rec.call_waited[c] = before->second.second;
        }
        sync_before.erase(before);
      }
    } else if ((cls & 2) && folded(c)) {
      e = call_start[c];  // folded into the graph launch made before it
      if (iteration_at(a.start[c]) >= 0) out->launch_part_ns += dur;
    } else if ((cls & 2) && change.launch_us >= 0) {
      e = call_start[c] + static_cast<TimeNs>(std::llround(change.launch_us * 1000));
      out->launches_changed++;
      if (iteration_at(a.start[c]) >= 0) out->launch_part_ns += dur;
    }
    call_end[c] = e;
    const uint32_t th = call_thread[c];
    answer_before(th, std::max(a.start[c], a.end[c]));  // the instants before this call's end
    thread_shift[th] = e - std::max(a.start[c], a.end[c]);
    thread_last_end[th] = std::max(a.start[c], a.end[c]);
    thread_last_call[th] = static_cast<int32_t>(c);
  };
  auto new_end = [&](size_t q) { return act_end[q] != kNever ? act_end[q] : acts[q].end; };
  auto start_act = [&](uint32_t i) {
    if (act_start[i] != kNever) return;
    const Activity& x = acts[i];
    TimeNs s = x.start;  // no launch call: it starts no earlier than recorded
    ActBound bound = ActBound::kNone;
    const int64_t p = prev[i];
    // The event work its stream waited for (stream wait events): the one that ended last as
    // recorded holds it back when it ended after its launch and after its stream's previous work.
    auto wait_begin = std::lower_bound(waits.begin(), waits.end(), std::pair<uint32_t, uint32_t>{i, 0});
    auto wait_end = wait_begin;
    int64_t held_by = -1;
    for (; wait_end != waits.end() && wait_end->first == i; ++wait_end)
      if (held_by < 0 || acts[wait_end->second].end > acts[static_cast<size_t>(held_by)].end)
        held_by = wait_end->second;
    if (held_by >= 0) {
      const TimeNs e = acts[static_cast<size_t>(held_by)].end;
      if ((x.call >= 0 && e <= a.start[static_cast<size_t>(x.call)]) ||
          (p >= 0 && e <= acts[static_cast<size_t>(p)].end))
        held_by = -1;
    }
    const bool held = held_by >= 0;
    if (x.call >= 0) {
      const size_t c = static_cast<size_t>(x.call);
      const bool busy = p >= 0 && acts[static_cast<size_t>(p)].end > a.start[c];  // its stream busy at the launch
      const TimeNs delay = busy || held ? min_delay[act_proc[i]] : x.start - a.start[c];
      s = (call_start[c] != kNever ? call_start[c] : a.start[c]) + delay;
      bound = ActBound::kLaunch;
    }
    // Folded into a graph launch: launched with the graph's first launch call.
    const bool in_graph = folded(x.call);
    if (in_graph)
      s = call_start[static_cast<size_t>(graph_first[static_cast<size_t>(x.call)])] + min_delay[act_proc[i]];
    if (p >= 0) {
      const size_t q = static_cast<size_t>(p);
      const bool busy = x.call >= 0 && acts[q].end > a.start[static_cast<size_t>(x.call)];
      // Back to back on a busy stream: the recorded gap after the previous one; else (or when an
      // event held it) only after it.
      TimeNs gap = (x.call < 0 || busy) && !held ? x.start - acts[q].end : 0;
      // In a graph: the recorded gap where the stream held it back to back, else the graph's gap.
      if (in_graph && !held &&
          !HeldBackToBack(a.start[static_cast<size_t>(x.call)], min_delay[act_proc[i]], acts[q].end))
        gap = graph_gap[act_proc[i]];
      const TimeNs after = new_end(q) + gap;
      // The stream holds it when it would start later, or as late on a busy stream.
      if (bound == ActBound::kNone || after > s || (after == s && (busy || x.call < 0 || in_graph) && !held)) {
        bound = ActBound::kStream;
        s = std::max(s, after);
      }
    }
    for (auto w = wait_begin; w != wait_end; ++w) {
      // After the event's work; the recorded gap after the one that held it.
      const size_t q = w->second;
      const TimeNs after = new_end(q) + (static_cast<int64_t>(q) == held_by ? x.start - acts[q].end : 0);
      if (after > s || (after == s && static_cast<int64_t>(q) == held_by)) {
        bound = ActBound::kEvent;
        if (record) rec.act_waited[i] = static_cast<int32_t>(q);
        s = after;
      }
    }
    if (record) {
      if (bound != ActBound::kEvent) rec.act_waited[i] = -1;
      rec.act_bound[i] = bound;
    }
    TimeNs dur = x.end - x.start;
    if (const int k = x.kind == 0 ? selected(x.row) : -1; k >= 0)
      dur = static_cast<TimeNs>(
          std::llround(static_cast<double>(dur) / selections[static_cast<size_t>(k)].given.speedup));
    else if (!gpu_pieces.empty()) {
      TimeNs inside = 0;
      dur = internal::ScaledDuration(gpu_pieces, x.start, x.end, &inside);
    }
    act_start[i] = s;
    act_end[i] = s + dur;
    if (coupling && coupling->Coupled(i)) coupling->Arrive(i, s);  // its end: at its end point
  };
  for (const uint32_t p : points) {
    const uint32_t id = ReplayPlan::IdOf(p);
    switch (ReplayPlan::TypeOf(p)) {
      case kCallStart: start_call(id); break;
      case kCallEnd: end_call(id); break;
      case kActStart: start_act(id); break;
      case kActEnd:
        start_act(id);
        if (coupling && coupling->Coupled(id)) {
          const TimeNs recorded = acts[id].end - acts[id].start;
          const double scale =
              recorded > 0 ? static_cast<double>(act_end[id] - act_start[id]) / static_cast<double>(recorded) : 1.0;
          act_end[id] = coupling->End(id, act_start[id], scale);
          if (act_end[id] == kNever) return Unsupported("the job's replay was given up");
        }
        // Logged under the process that launched it (a GPU row's own pid may be the device's).
        ended[act_log_proc[id]].push_back({acts[id].end, act_end[id], id});
        if (act_end[id] > proc_last[act_log_proc[id]].first)
          proc_last[act_log_proc[id]] = {act_end[id], static_cast<int32_t>(id)};
        break;
    }
  }

  for (uint32_t th = 0; th < threads.size(); ++th) answer_before(th, kNever);  // the instants after every call

  // Each kept iteration: its start moves with its thread, its end with the later of its thread
  // and its GPU work.
  // The thread's shift at iteration k's start (end = false) or host end: its last call that ended
  // by then (`call`, -1 for none) and the host time saved since.
  auto shift_at = [&](size_t k, bool end, TimeNs at, int32_t* call = nullptr) -> TimeNs {
    auto u = host_union.find({its.pid, its.iterations[k].tid});
    const Union* own = u == host_union.end() ? nullptr : &u->second;
    const ShiftAnswer& h = shift_answers[2 * k + (end ? 1 : 0)];
    if (call) *call = h.call;
    if (h.recorded == kNever) return -saving(own, kNever, at);
    return h.shift - saving(own, h.recorded, at);
  };
  std::vector<TimeNs> last_recorded(its.iterations.size(), kNever), last_new(its.iterations.size(), kNever);
  std::vector<int32_t> last_act(its.iterations.size(), -1);
  out->selections.assign(selections.size(), {});
  std::string overlap;  // a kernel two selections hold
  auto gpu_ends = [&](const std::vector<int32_t>& owner, size_t kind) {
    for (uint32_t i = 0; i < acts.size(); ++i) {
      if (acts[i].kind != kind || acts[i].row >= owner.size() || owner[acts[i].row] < 0) continue;
      const size_t k = static_cast<size_t>(owner[acts[i].row]);
      last_recorded[k] = std::max(last_recorded[k], acts[i].end);
      if (act_end[i] > last_new[k]) {
        last_new[k] = act_end[i];
        last_act[k] = static_cast<int32_t>(i);
      }
      if (!gpu_pieces.empty()) {
        TimeNs inside = 0;
        internal::ScaledDuration(gpu_pieces, acts[i].start, acts[i].end, &inside);
        out->located_gpu_ns += inside;
        if (inside > 0) out->located_gpu_activities++;
      }
      bool twice = false;
      if (const int sel = kind == 0 ? selected(acts[i].row, &twice) : -1; sel >= 0) {
        out->kernels_changed++;
        out->kernel_part_ns += acts[i].end - acts[i].start;
        out->selections[static_cast<size_t>(sel)].kernels++;
        out->selections[static_cast<size_t>(sel)].part_ns += acts[i].end - acts[i].start;
        if (twice && overlap.empty()) overlap = Demangle(t.Name(t.kernels.name[acts[i].row]));
      }
    }
  };
  gpu_ends(its.kernel_iteration, 0);
  gpu_ends(its.memcpy_iteration, 1);
  gpu_ends(its.memset_iteration, 2);
  for (size_t k = 0; k < its.iterations.size(); ++k) {
    const Iteration& it = its.iterations[k];
    const bool thread = it.tid != kUnknownId;
    const TimeNs s = it.start + (thread ? shift_at(k, false, it.start) : 0);
    // The span ends with the host's marker or with its GPU work, whichever came last: the host's
    // end moves with its thread, and the span cannot end before its GPU work does.
    const TimeNs host_end = thread ? host_end_of(it) : it.end;
    ReplayRecord::IterationEnd end_node;
    TimeNs e = it.end + (thread ? shift_at(k, true, host_end, &end_node.end_call) : 0);
    if (last_recorded[k] != kNever) {
      const bool gpu_last = !thread || last_recorded[k] >= host_end;
      const TimeNs tail = gpu_last ? it.end - last_recorded[k] : 0;
      // Its GPU work decides the end when it ends as late as the host.
      if (!thread || last_new[k] + tail >= e) {
        e = last_new[k] + tail;
        end_node.end_act = last_act[k];
        end_node.tail = tail;
      }
    }
    end_node.start = s;
    end_node.end = e;
    if (record) rec.iterations.push_back(end_node);
    IterationReplay r{it.index, it.latency_ns(), std::max<TimeNs>(0, e - s)};
    out->base_total_ns += r.base_ns;
    out->predicted_total_ns += r.predicted_ns;
    out->iterations.push_back(r);
  }
  if (host_re)
    for (const Iteration& it : its.iterations)
      for (const auto& [key, u] : host_union) out->host_part_ns += u.Upto(it.end) - u.Upto(it.start);
  // Located host: the marker thread's time between calls inside the pieces, within its kept
  // iterations.
  for (const auto& [key, u] : host_union) {
    if (!located_host) break;
    std::vector<Interval> spans, calls;
    for (const Iteration& it : its.iterations)
      if (it.tid == key.second) spans.emplace_back(it.start, it.end);
    for (size_t c = 0; c < a.size(); ++c)
      if (a.pid[c] == key.first && a.tid[c] == key.second)
        calls.emplace_back(a.start[c], std::max(a.start[c], a.end[c]));
    const std::vector<Interval> inside = internal::IntersectUnions(u.pieces, internal::UnionOf(spans));
    out->located_host_ns += internal::LengthOf(internal::SubtractUnions(inside, internal::UnionOf(calls)));
  }
  if (host_re && out->host_part_ns == 0)
    return names_nothing("--host '" + change.host_regex + "' matches no host range inside the kept iterations");
  for (size_t k = 0; k < selections.size(); ++k) {
    if (out->selections[k].kernels > 0) continue;
    const KernelSelection& g = selections[k].given;
    std::string what;
    if (!g.kernel_class.empty()) what = "--class " + g.kernel_class;
    if (!g.regex.empty()) what += (what.empty() ? "" : " with ") + std::string("--kernels '") + g.regex + "'";
    if (!g.launched_in.empty())
      what += (what.empty() ? "" : " with ") + std::string("--launched-in '") + g.launched_in + "'";
    return names_nothing(what + " matches no kernel of the kept iterations");
  }
  if (!overlap.empty())
    return InvalidInput("two kernel selections (--kernels / --class) both hold '" + overlap +
                        "': give disjoint ones, each with its own --speedup");
  if (change.graph && out->graph_folded == 0)
    return names_nothing(graph_re ? "--graph '" + change.graph_regex +
                                        "' matches no host range holding two launch calls inside the kept iterations"
                                  : "--graph: no kept iteration has two launch calls to make one graph launch of");
  if (syncs_re && out->syncs_removed == 0)
    return names_nothing("--remove-syncs '" + change.remove_syncs_regex +
                         "' matches no synchronising call that waited");
  out->assumptions = {
      host_re        ? "host time between calls as recorded outside the --host ranges"
      : located_host ? "host time between calls as recorded outside the located host instants"
                     : "host time between calls as recorded (Python, the framework, CPU work)",
      "each activity's launch delay as recorded, or the process's smallest when its stream was busy",
      "the gap between back-to-back activities of a stream as recorded",
      "durations of everything the change does not name as recorded",
      "streams wait for themselves, their launches and the cross-stream event waits the trace names "
      "(cudaStreamWaitEvent, cudaEventSynchronize with the event's record); other waits across streams not modelled",
  };
  if (located_gpu)
    out->assumptions.push_back(
        "located GPU speedup: the part of each GPU activity (kernel, copy, memset) inside the located instants runs S "
        "times faster, the largest S where several overlap; the rest of it, and its start's dependencies, as "
        "recorded");
  if (located_host)
    out->assumptions.push_back(
        "located host speedup: the host time between calls inside the located instants, on the kept iterations' "
        "marker thread only, runs S times faster (the largest S where several overlap); time inside calls and on "
        "other threads as recorded");
  if (change.graph) {
    out->assumptions.push_back(
        "--graph: each graph launch's kernels are launched at its first launch call, with the process's smallest "
        "launch delay; a kernel follows the previous one of its stream after the gap recorded when the stream held "
        "it back to back (launched at least that delay before the previous one ended), else after the process's "
        "median such gap (0 when there is none); the folded launch calls take no time; host time between calls, "
        "syncs and the kernels' durations stay as recorded");
  }
  return Status::Ok();
}

}  // namespace internal
}  // namespace tg
