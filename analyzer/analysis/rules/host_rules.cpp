// host_bound: the GPU waits while the launching thread does work of its own (computes, compiles,
// blocks, or does nothing), read from the iterations' idle causes (iteration_idle.h). The finding
// names the host frames of the largest such intervals and gives one strategy per cause present,
// largest first: a CUDA graph or a compiler does nothing for any of them.
#include <algorithm>
#include <array>
#include <string>

#include "analyzer/analysis/rules/rule_helpers.h"
#include "tracegate/analyzer/strings.h"

namespace tg::internal {

namespace {

const char* HostStrategy(IdleCause cause) {
  switch (cause) {
    case IdleCause::kHostCompute:
      return "Move the CPU work named below to the GPU (torchvision.transforms.v2 on CUDA tensors, NVIDIA DALI, "
             "GPU decoding) or overlap it with GPU work: DataLoader workers (num_workers > 0, pin_memory=True) "
             "preparing the next batch while this one runs";
    case IdleCause::kJitCompile:
      return "Compilation runs inside the measured steps: warm up before measuring, keep the compile caches "
             "(TORCHINDUCTOR_CACHE_DIR, the Triton cache) and avoid recompiles (dynamic=True, fixed shapes)";
    case IdleCause::kHostSync:
      return "The host blocks in the call named below while the GPU has no work: make it asynchronous (copies from "
             "pinned memory with non_blocking=True, no .item() / .cpu() / torch.cuda.synchronize() in the loop)";
    case IdleCause::kHostIdle:
      return "The launching thread does nothing while the GPU waits (input, a request queue, another process): "
             "schedule asynchronously, preparing the next batch or request while this one runs";
    default: return "";
  }
}

}  // namespace

void EvaluateHostBound(const RuleContext& c, const RuleDef& rule, std::vector<Finding>& out) {
  const IterationIdle* idle = c.in().idle;
  if (c.NoDeviceActivity() || c.CaptureTrace() || !idle || !idle->attributed || c.total_ns() <= 0) return;
  std::array<TimeNs, kIdleCauseCount> ns{};
  for (const Iteration& it : c.iters().iterations)
    for (size_t k = 0; k < kIdleCauseCount; ++k) ns[k] += it.idle_cause_ns[k];
  TimeNs host = 0;
  for (size_t k = 0; k < kIdleCauseCount; ++k)
    if (IsHostWorkCause(static_cast<IdleCause>(k))) host += ns[k];
  const double share = c.Share(host), thr = c.P(rule, "threshold");
  if (!(share > thr)) return;
  Finding f = StartFinding(rule);
  f.evidence.push_back(Ev("host_work_ratio", share, thr, ">"));
  // The causes, largest first.
  std::vector<size_t> order;
  for (size_t k = 0; k < kIdleCauseCount; ++k)
    if (IsHostWorkCause(static_cast<IdleCause>(k)) && ns[k] > 0) order.push_back(k);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return ns[a] != ns[b] ? ns[a] > ns[b] : a < b; });
  std::string causes;
  std::vector<std::string> strategies;
  for (size_t k : order) {
    const double part = c.Share(ns[k]) * 100;
    causes += (causes.empty() ? "" : ", ") + (part < 0.05 ? std::string(kIdleCauseNames[k]) + " <0.1%"
                                                          : StrFormat("%s %.1f%%", kIdleCauseNames[k], part));
    // A strategy for each cause that holds at least a tenth of the host work.
    if (ns[k] >= host / 10) strategies.emplace_back(HostStrategy(static_cast<IdleCause>(k)));
  }
  // The causes' strategies first, largest cause first; the table's general one after them.
  f.strategies.insert(f.strategies.begin(), strategies.begin(), strategies.end());
  const double mean_ms = static_cast<double>(host) / 1e6 / static_cast<double>(std::max<size_t>(c.n(), 1));
  f.summary = StrFormat(
      "The GPU has no work for %.1f%% of the iterations (%.3f ms of %.3f ms on average) while the "
      "launching thread works on something that launches nothing: %s.",
      share * 100, mean_ms, c.iters().latency_ms.mean, causes.c_str());
  if (idle->pre_from_host_ns + idle->post_from_host_ns > 0)
    f.summary += StrFormat(
        " Of it, %.3f ms before the first GPU work and %.3f ms after the last copy back count as the "
        "pre and post phases (no range names them).",
        static_cast<double>(idle->pre_from_host_ns) / 1e6 / static_cast<double>(std::max<size_t>(c.n(), 1)),
        static_cast<double>(idle->post_from_host_ns) / 1e6 / static_cast<double>(std::max<size_t>(c.n(), 1)));
  // The frames: the largest host-caused intervals' top frames, by time (each frame once).
  std::vector<std::pair<std::string, TimeNs>> frames;
  for (const IdleInterval& iv : idle->largest) {
    // The frames of the host's own work; a host_idle interval's are only those around the idle time.
    if (!IsHostWorkCause(iv.gap.cause) || iv.gap.cause == IdleCause::kHostIdle) continue;
    for (const GapFrame& fr : iv.gap.host_frames) {
      auto it = std::find_if(frames.begin(), frames.end(), [&](const auto& x) { return x.first == fr.path; });
      if (it == frames.end()) frames.emplace_back(fr.path, fr.ns);
      else it->second += fr.ns;
    }
  }
  std::stable_sort(frames.begin(), frames.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  for (size_t i = 0; i < frames.size() && i < kTopInvolved; ++i) {
    Involved inv;
    inv.kind = "host_frame";
    inv.name = frames[i].first;
    inv.time_ns = frames[i].second;
    f.involved.push_back(std::move(inv));
  }
  if (!frames.empty()) f.summary += " Largest: " + frames[0].first + ".";
  const double s = c.P(rule, "assumed_speedup");
  f.amdahl = MakeAmdahl(share, s, "assumed", StrFormat("the host work the GPU waits for shrinks %.2fx", s));
  f.claim = SpaceClaim(ClaimSpace::kIdle, share);
  out.push_back(std::move(f));
}

}  // namespace tg::internal
