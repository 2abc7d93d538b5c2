// Timeline rules: the GPU waits for the host. idle_gaps (no work of the iteration on the device),
// launch_bound (kernels shorter than their launch), single_stream (copies that could overlap
// compute do not) and sync_in_loop (the host blocks on the device inside the loop).
#include <algorithm>
#include <string_view>

#include "analyzer/analysis/rules/rule_helpers.h"
#include "analyzer/util/intervals.h"
#include "tracegate/analyzer/amdahl.h"
#include "tracegate/analyzer/strings.h"

namespace tg::internal {

namespace {

// "host_launch 62% | dependency_sync 30% | ..." of the devices' gap time, and the strategy that
// fits the largest cause first (the table's strategies follow).
struct CauseView {
  std::string text;
  IdleCause top = IdleCause::kUnknown;
  bool known = false;
};

CauseView DescribeCauses(const RuleContext& c) {
  CauseView v;
  double best = -1;
  for (size_t i = 0; i < kIdleCauseCount; ++i) {
    const std::optional<double> share = c.IdleCauseShare(static_cast<IdleCause>(i));
    if (!share) return v;
    v.known = true;
    if (*share <= 0) continue;
    // A share that rounds to 0% is not nothing: "<1%".
    v.text += (v.text.empty() ? "" : ", ") + (*share < 0.005 ? std::string(kIdleCauseNames[i]) + " <1%"
                                                              : StrFormat("%s %.0f%%", kIdleCauseNames[i], *share * 100));
    if (*share > best && IsClaimableIdle(static_cast<IdleCause>(i))) best = *share, v.top = static_cast<IdleCause>(i);
  }
  return v;
}

const char* StrategyFor(IdleCause cause) {
  switch (cause) {
    case IdleCause::kHostStage:
      return "The GPU mostly waits while the host pre/post-processes: overlap that stage with GPU work (worker "
             "processes, prefetching the next batch) or move it to the device";
    case IdleCause::kHostLaunch: return "The GPU mostly waits for launches: capture the loop in a CUDA graph or fuse kernels";
    case IdleCause::kHostCompute:
      return "The GPU mostly waits for CPU work that launches nothing (host_bound names the frames): move it to the "
             "device or overlap it with GPU work (fewer launches would not help)";
    case IdleCause::kJitCompile:
      return "The GPU mostly waits for compilation: warm up before measuring and keep the compile caches";
    case IdleCause::kHostSync:
      return "The GPU mostly waits while the host blocks in a sync or a synchronous copy: make that call "
             "asynchronous (pinned memory, non_blocking=True) or move it out of the loop";
    case IdleCause::kHostIdle:
      return "The GPU mostly waits while the host does nothing (input or another process): schedule the next work "
             "before this one finishes";
    case IdleCause::kCommunication:
      return "The GPU mostly waits around collectives: overlap communication with compute (bucketed, asynchronous "
             "all-reduce) and look for a straggling rank";
    case IdleCause::kDependencySync:
      return "The GPU mostly waits on queued work held by a dependency: find the event, stream or sync it waits on "
             "and overlap or remove that dependency";
    default: return "The cause of most idle time is not in the trace: record CUDA API calls and syncs to attribute it";
  }
}

}  // namespace

void EvaluateIdleGaps(const RuleContext& c, const RuleDef& rule, std::vector<Finding>& out) {
  Finding f;
  if (c.NoDeviceActivity() || c.CaptureTrace()) return;
  if (!PhaseAbove(c, rule, Phase::kIdle, "idle_ratio", "idle time shrinks", &f)) return;
  const double idle = c.ClaimableIdleRatio();
  const double phase = c.PhaseRatio(Phase::kIdle);
  const double mean_ms = phase > 0 ? c.PhaseMeanMs(Phase::kIdle) * idle / phase : 0;
  f.summary = StrFormat(
      "The GPU has no work of the iteration for %.1f%% of it (%.3f ms of %.3f ms on average) "
      "while the host is in no pre/post stage.",
      idle * 100, mean_ms, c.iters().latency_ms.mean);
  if (idle < phase)
    f.summary += StrFormat(
        " Not counted: %.1f%% of the iteration the device was running work the trace does not hold "
        "(device_backlog) or a graph was being captured.",
        (phase - idle) * 100);
  if (const CauseView causes = DescribeCauses(c); causes.known && !causes.text.empty()) {
    f.summary += std::string(" Idle time by cause (") +
                 (c.in().idle && c.in().idle->attributed ? "of the iterations' idle phase"
                                                         : "of the devices' gaps inside the iterations") +
                 "): " + causes.text + ".";
    f.strategies.insert(f.strategies.begin(), StrategyFor(causes.top));
  }
  // Gaps next to a collective are the communication rule's, with advice that fits them (merging
  // kernels or a compiler does nothing for a collective).
  for (const DeviceSummary& d : c.in().summary->devices) {
    size_t named = 0;
    for (const IdleGap& gap : JudgedLargestGaps(d)) {
      if (named == kTopInvolved) break;
      if (JudgedCauses(d).attributed && (gap.cause == IdleCause::kCommunication || !IsClaimableIdle(gap.cause)))
        continue;
      f.involved.push_back(GapInvolved(c, d, gap));
      named++;
    }
  }
  out.push_back(std::move(f));
}

void EvaluateLaunchBound(const RuleContext& c, const RuleDef& rule, std::vector<Finding>& out) {
  const KernelTable& k = c.trace().kernels;
  if (c.NoDeviceActivity() || c.CaptureTrace()) return;
  const TimeNs short_ns = static_cast<TimeNs>(c.P(rule, "short_kernel_us") * 1000);
  uint64_t kept = 0, short_count = 0;
  IdTallies by_id(c.trace());
  // Collectives wait for peers, not for launches: neither counted nor named here (communication).
  const std::vector<KernelClass>& cls = *c.in().kernel_classes;
  for (size_t i = 0; i < k.size(); ++i) {
    if (!c.KernelKept(i) || cls[i] == KernelClass::kCommunication) continue;
    kept++;
    TimeNs d = k.end[i] - k.start[i];
    if (d < short_ns) {
      short_count++;
      by_id.Add(k.name[i], d);
    }
  }
  if (kept == 0) return;
  const std::map<std::string, Tally> groups = ByKernelName(c, by_id);
  double short_share = static_cast<double>(short_count) / static_cast<double>(kept);
  double per_iter = c.PerIteration(static_cast<double>(kept));
  double idle = c.PhaseRatio(Phase::kIdle);
  // Only the idle time spent waiting for a launch is the host's: the share of the gaps whose next
  // work's launch call had not returned when the gap began (all of it when causes are unknown).
  const std::optional<double> host_share = c.IdleCauseShare(IdleCause::kHostLaunch);
  const double launch_idle = host_share ? idle * *host_share : idle;
  double min_share = c.P(rule, "min_short_share"), min_k = c.P(rule, "min_kernels_per_iteration"),
         idle_thr = c.P(rule, "idle_threshold");
  if (!(short_share >= min_share && per_iter >= min_k && idle > idle_thr && launch_idle > idle_thr)) return;
  Finding f = StartFinding(rule);
  f.evidence.push_back(Ev("short_kernel_ratio", short_share, min_share, ">="));
  f.evidence.push_back(Ev("kernels_per_iteration", per_iter, min_k, ">=", "count"));
  f.evidence.push_back(Ev("idle_ratio", idle, idle_thr, ">"));
  if (host_share) f.evidence.push_back(Ev("host_launch_idle_ratio", launch_idle, idle_thr, ">"));
  f.summary = StrFormat("%.0f%% of the %.0f kernels per iteration run shorter than %.0f us, about the cost of a launch, "
                  "and the GPU waits %.1f%% of the iteration for work the host has not launched yet%s: the host "
                  "cannot launch fast enough.",
                  short_share * 100, per_iter, c.P(rule, "short_kernel_us"), launch_idle * 100,
                  host_share ? StrFormat(" (%.0f%% of its idle time)", *host_share * 100).c_str() : "");
  f.involved = TopInvolved(groups, "kernel", kTopInvolved);
  double s = c.P(rule, "assumed_speedup");
  f.amdahl = MakeAmdahl(launch_idle, s, "assumed", StrFormat("idle time waiting for launches shrinks %.2fx", s));
  out.push_back(std::move(f));
}

void EvaluateSingleStream(const RuleContext& c, const RuleDef& rule, std::vector<Finding>& out) {
  const Trace& t = c.trace();
  std::map<int32_t, std::vector<int64_t>> streams;  // device -> distinct streams of kept work
  // Rows come in runs on one stream: a row on the pair noted last needs no look-up.
  std::pair<int32_t, int64_t> last{0, 0};
  bool noted = false;
  auto note = [&](int32_t device, int64_t stream) {
    if (noted && last.first == device && last.second == stream) return;
    noted = true;
    last = {device, stream};
    auto& v = streams[device];
    if (std::find(v.begin(), v.end(), stream) == v.end()) v.push_back(stream);
  };
  for (size_t i = 0; i < t.kernels.size(); ++i)
    if (c.KernelKept(i)) note(t.kernels.device[i], t.kernels.stream[i]);
  for (size_t i = 0; i < t.memcpys.size(); ++i)
    if (c.CopyKept(i)) note(t.memcpys.device[i], t.memcpys.stream[i]);
  if (streams.empty()) return;
  for (const auto& [device, v] : streams)
    if (v.size() != 1) return;
  std::map<std::string, Tally> groups;
  const MemcpyTable& m = t.memcpys;
  auto host_device = [&](size_t i) { return m.kind[i] == CopyKind::kHtoD || m.kind[i] == CopyKind::kDtoH; };
  TimeNs copy_ns = CopyTimeWhere(c, host_device, &groups);
  double thr = c.P(rule, "threshold");
  if (!(c.Share(copy_ns) >= thr)) return;
  copy_ns = WallTimeWhere(m, [&](size_t i) { return c.CopyKept(i) && host_device(i); });
  double share = c.Share(copy_ns);
  if (!(share >= thr)) return;
  Finding f = StartFinding(rule);
  f.evidence.push_back(Ev("streams_per_device", 1, 1, "==", "count"));
  f.evidence.push_back(Ev("serial_copy_ratio", share, thr, ">="));
  f.summary = StrFormat("All GPU work runs on one stream per device, so the %.1f%% of the iteration spent in host<->device "
                  "copies never overlaps compute.", share * 100);
  f.involved = TopInvolved(groups, "copy", kTopInvolved);
  // Both wall times (with several devices, kernels of different devices overlap).
  const TimeNs kernel_ns = WallTimeWhere(t.kernels, [&](size_t i) { return c.KernelKept(i); });
  TimeNs hidden = std::min(copy_ns, kernel_ns);
  f.amdahl = MakeAmdahl(c.Share(hidden), kInfiniteSpeedup, "measured",
                        "copies overlap compute completely; at most min(copy, kernel) time is hidden");
  out.push_back(std::move(f));
}

namespace {

bool IsBlockingSync(SyncKind k) {
  return k == SyncKind::kStreamSync || k == SyncKind::kContextSync || k == SyncKind::kEventSync;
}

bool IsSyncApi(std::string_view name) {
  for (std::string_view s : {"cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize",
                             "cuCtxSynchronize", "cuStreamSynchronize", "cuEventSynchronize"})
    if (name.substr(0, s.size()) == s) return true;
  return false;
}

}  // namespace

void EvaluateSyncInLoop(const RuleContext& c, const RuleDef& rule, std::vector<Finding>& out) {
  // A host waiting on a device with no recorded work, or a capture: nothing to show.
  if (c.NoDeviceActivity() || c.CaptureTrace()) return;
  const Trace& t = c.trace();
  // The waits by group (sync kind, or API name), each kept as intervals: several threads may wait
  // at once, so a group's time, like the total, is the union of its waits (never above the window).
  struct Waits {
    uint64_t count = 0;
    std::vector<Interval> spans;
  };
  std::map<std::string, Waits> groups;
  uint64_t count = 0;
  std::vector<Interval> waits;
  bool from_records = false;
  for (size_t i = 0; i < t.syncs.size(); ++i)
    if (IsBlockingSync(t.syncs.kind[i])) from_records = true;
  if (from_records) {
    for (size_t i = 0; i < t.syncs.size(); ++i)
      if (c.iters().sync_iteration[i] >= 0 && IsBlockingSync(t.syncs.kind[i])) {
        Waits& g = groups[std::string(SyncKindName(t.syncs.kind[i]))];
        g.count++;
        g.spans.emplace_back(t.syncs.start[i], t.syncs.end[i]);
      }
  } else {
    // Decided once per distinct name; grouped by name id, then by name.
    std::vector<int8_t> is_sync(t.strings.size(), -1);
    std::map<StringId, Waits> by_id;
    for (size_t i = 0; i < t.api_calls.size(); ++i) {
      if (c.iters().api_iteration[i] < 0) continue;
      const StringId id = t.api_calls.name[i];
      if (is_sync[id] < 0) is_sync[id] = IsSyncApi(t.Name(id)) ? 1 : 0;
      if (!is_sync[id]) continue;
      Waits& g = by_id[id];
      g.count++;
      g.spans.emplace_back(t.api_calls.start[i], t.api_calls.end[i]);
    }
    for (auto& [id, w] : by_id) {
      Waits& g = groups[std::string(t.Name(id))];
      g.count += w.count;
      g.spans.insert(g.spans.end(), w.spans.begin(), w.spans.end());
    }
  }
  std::map<std::string, Tally> tallies;
  for (auto& [name, g] : groups) {
    count += g.count;
    waits.insert(waits.end(), g.spans.begin(), g.spans.end());
    tallies[name] = Tally{g.count, UnionLength(g.spans)};
  }
  double per_iter = c.PerIteration(static_cast<double>(count)), max = c.P(rule, "max_per_iteration");
  double wait = c.Share(UnionLength(waits)), min_wait = c.P(rule, "min_wait_share");
  if (!(per_iter > max && wait >= min_wait)) return;
  Finding f = StartFinding(rule);
  f.evidence.push_back(Ev("syncs_per_iteration", per_iter, max, ">", "count"));
  f.evidence.push_back(Ev("sync_wait_ratio", wait, min_wait, ">="));
  // Waiting costs time only while the GPU has nothing to do and then waits for the host to launch
  // again (after a sync the queue is empty): the host-launch part of the idle phase bounds P.
  const std::optional<double> host_share = c.IdleCauseShare(IdleCause::kHostLaunch);
  const double starved = c.PhaseRatio(Phase::kIdle) * host_share.value_or(1.0);
  double p = std::min(wait, starved), s = c.P(rule, "assumed_speedup");
  f.summary = StrFormat("The host blocks on the device %.1f times per iteration (%s) and waits in them %.1f%% of the "
                  "iteration (waits of several threads at once counted once). While the host waits, the GPU still "
                  "runs the work queued before the sync; it loses only the time it then sits idle waiting for the next "
                  "launch, %.1f%% of the iteration, and that bounds the gain.",
                  per_iter, from_records ? "sync records" : "synchronisation API calls", wait * 100, p * 100);
  f.involved = TopInvolved(tallies, "sync", kTopInvolved);
  f.amdahl = MakeAmdahl(p, s, "assumed",
                        StrFormat("the GPU's idle time waiting for launches around the waits (P = min(wait, idle x "
                                  "host-launch share)) shrinks %.2fx", s));
  f.claim = SpaceClaim(ClaimSpace::kIdle, p);
  out.push_back(std::move(f));
}

}  // namespace tg::internal
