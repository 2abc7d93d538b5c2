// Findings replayed: a finding's claim as a located change (tracegate/analyzer/finding_replay.h).
#include "tracegate/analyzer/finding_replay.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

#include "analyzer/analysis/correlation.h"
#include "analyzer/analysis/replay_engine.h"
#include "analyzer/util/side_task.h"

namespace tg {

std::string FindingNotReplayable(const Finding& f) {
  const AmdahlEstimate& a = f.amdahl;
  if (!a.applicable)
    return "its Amdahl estimate does not apply" + (a.reason.empty() ? std::string() : " (" + a.reason + ")");
  if (!(a.speedup > 1)) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "its S is %g: not a speedup", a.speedup);
    return buf;
  }
  if (f.claim.empty()) return "it claims the run as a whole, not located work";
  for (const ClaimPart& p : f.claim) {
    if (p.space == ClaimSpace::kRun) return "it claims the run as a whole, not located work";
    if (p.intervals.empty())
      return std::string("its ") + kClaimSpaceNames[static_cast<size_t>(p.space)] +
             " part is not located (no instants to replay)";
  }
  return "";
}

std::vector<std::pair<size_t, size_t>> LocateIdleClaims(const std::vector<IdlePiece>& pieces,
                                                        std::vector<Finding>* findings) {
  std::vector<std::pair<size_t, size_t>> located;
  // The instants each idle finding measures, as a union (adjacent pieces join; iterations that
  // overlap, serving steps, are merged).
  auto instants = [&](bool phase_part, auto&& keep) {
    std::vector<std::pair<TimeNs, TimeNs>> v;
    for (const IdlePiece& p : pieces) {
      if (!keep(p.cause)) continue;
      const TimeNs a = phase_part ? p.phase_start : p.start, b = phase_part ? p.phase_end : p.end;
      if (b > a) v.emplace_back(a, b);
    }
    if (!std::is_sorted(v.begin(), v.end())) std::sort(v.begin(), v.end());
    std::vector<std::pair<TimeNs, TimeNs>> out;
    for (const auto& [a, b] : v) {
      if (!out.empty() && a <= out.back().second) out.back().second = std::max(out.back().second, b);
      else out.emplace_back(a, b);
    }
    return out;
  };
  for (size_t i = 0; i < findings->size(); ++i) {
    Finding& f = (*findings)[i];
    std::vector<std::pair<TimeNs, TimeNs>> where;
    if (f.id == "idle_gaps") where = instants(true, [](IdleCause c) { return IsClaimableIdle(c); });
    else if (f.id == "launch_bound" || f.id == "sync_in_loop")
      where = instants(true, [](IdleCause c) { return c == IdleCause::kHostLaunch; });
    else if (f.id == "host_bound") where = instants(false, [](IdleCause c) { return IsHostWorkCause(c); });
    else continue;
    for (size_t k = 0; k < f.claim.size(); ++k) {
      ClaimPart& p = f.claim[k];
      if (p.space != ClaimSpace::kIdle || !p.intervals.empty() || where.empty()) continue;
      p.intervals = where;
      located.emplace_back(i, k);
    }
  }
  return located;
}

std::string NothingCovered(const ReplayResult& r) {
  if (r.located_gpu_ns > 0 || r.located_host_ns > 0) return "";
  return "the claimed instants hold no GPU work and no host time between calls on the marker thread inside the kept "
         "iterations (the time there is spent inside calls or on other threads), which is what the replay re-times";
}

Status AddFindingChange(const Finding& f, const std::string& ref, ReplayChange* change) {
  if (std::string why = FindingNotReplayable(f); !why.empty())
    return InvalidInput("finding " + ref + " is not a speedup of located work the replay can make: " + why);
  // GPU parts: the GPU work in their instants; idle and post parts: the host work in theirs.
  for (const ClaimPart& p : f.claim)
    change->located.push_back({p.space != ClaimSpace::kGpu, p.intervals, f.amdahl.speedup});
  return Status::Ok();
}

Status FindingsReplayChange(const std::vector<Finding>& findings, const std::vector<std::string>& refs,
                            FindingsChange* out) {
  *out = FindingsChange{};
  const std::vector<std::string> names = FindingRefs(findings);
  auto known = [&] {
    std::string list;
    for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
    return list.empty() ? std::string("the analysis found no findings") : "the findings are: " + list;
  };
  std::vector<size_t> asked;
  const bool all = refs.size() == 1 && refs.front() == "all";
  if (all) {
    for (size_t i = 0; i < findings.size(); ++i) asked.push_back(i);
  } else {
    for (const std::string& r : refs) {
      if (r == "all") return InvalidInput("--finding all replays every finding: give it alone");
      const auto at = std::find(names.begin(), names.end(), r);
      if (at == names.end()) return InvalidInput("--finding '" + r + "': no such finding; " + known());
      const size_t i = static_cast<size_t>(at - names.begin());
      if (std::find(asked.begin(), asked.end(), i) != asked.end())
        return InvalidInput("--finding '" + r + "' given twice");
      asked.push_back(i);
    }
    std::sort(asked.begin(), asked.end());
  }
  for (size_t i : asked) {
    if (std::string why = FindingNotReplayable(findings[i]); !why.empty()) {
      if (!all)
        return InvalidInput("finding " + names[i] + " is not a speedup of located work the replay can make: " + why);
      out->left_out.push_back({i, why});
      continue;
    }
    TG_RETURN_IF_ERROR(AddFindingChange(findings[i], names[i], &out->change));
    out->replayed.push_back(i);
  }
  if (out->replayed.empty()) {
    std::string why;
    for (const FindingsChange::LeftOut& l : out->left_out)
      why += (why.empty() ? " (" : "; ") + names[l.finding] + ": " + l.reason;
    return InvalidInput(findings.empty()
                            ? "--finding all: the analysis found no findings"
                            : "--finding all: no finding is a speedup of located work the replay can make" + why + ")");
  }
  return Status::Ok();
}

namespace {

ReplayedGain GainOf(const ReplayResult& r) {
  ReplayedGain g;
  g.base_total_ns = r.base_total_ns;
  g.predicted_total_ns = r.predicted_total_ns;
  g.overall = r.speedup();
  g.gain_pct = (g.overall - 1) * 100;
  return g;
}

}  // namespace

Status ReplayFindingGains(const Trace& trace, const IterationAnalysis& iterations, const internal::ApiIndex* index,
                          std::vector<Finding>* findings, CombinedEstimate* combined) {
  if (iterations.iterations.empty()) return InvalidInput("no kept iterations to replay the findings over");
  // The replayable findings, all together (FindingsReplayChange's "all": `predict --finding all`),
  // then each alone; the others keep why not.
  FindingsChange all;
  // It fails only when no finding is replayable, having listed every one in left_out with why.
  const bool any = FindingsReplayChange(*findings, {"all"}, &all).ok();
  for (Finding& f : *findings) {
    f.replay.reset();
    f.replay_reason.clear();
  }
  for (const FindingsChange::LeftOut& l : all.left_out) (*findings)[l.finding].replay_reason = l.reason;
  combined->replay.reset();
  combined->replay_reason.clear();
  combined->replay_assumptions.clear();
  combined->replayed.clear();
  if (!any) {
    combined->replay_reason = "no finding is a speedup of located work the replay can make";
    return Status::Ok();
  }
  const std::vector<std::string> refs = FindingRefs(*findings);
  const std::vector<size_t>& replayable = all.replayed;
  std::vector<ReplayChange> changes(replayable.size());
  for (size_t k = 0; k < replayable.size(); ++k)
    TG_RETURN_IF_ERROR(AddFindingChange((*findings)[replayable[k]], refs[replayable[k]], &changes[k]));
  // What no change alters is built once; the replays then run on two threads (each reads the
  // trace, the index and the plan, and writes only its own result).
  std::optional<internal::ApiIndex> own_index;
  if (!index) index = &own_index.emplace(trace.api_calls);
  internal::ReplayPlan plan;
  TG_RETURN_IF_ERROR(internal::BuildReplayPlan(trace, *index, &plan));
  std::vector<ReplayResult> results(changes.size());
  std::vector<Status> status(changes.size());
  auto run = [&](size_t first) {
    for (size_t k = first; k < changes.size(); k += 2)
      status[k] = internal::ReplayEngine(trace, iterations, changes[k], index, &results[k], nullptr, &plan);
  };
  {
    internal::SideTask odd([&] { run(1); });
    run(0);
    odd.Wait();
  }
  // Why a finding's own replay gives no figure, "" when it gives one.
  auto unpredicted = [&](size_t k) -> std::string {
    if (!status[k].ok()) return "the replay refused its change: " + status[k].message();
    if (const std::string none = NothingCovered(results[k]); !none.empty()) return none;
    if (const std::string why = LongerIterationsCaution(results[k]); !why.empty()) return why;
    return "";
  };
  std::vector<size_t> predicted;  // the findings with a figure: the combined estimate replays them
  for (size_t k = 0; k < replayable.size(); ++k) {
    Finding& f = (*findings)[replayable[k]];
    f.replay_reason = unpredicted(k);
    if (!f.replay_reason.empty()) continue;
    f.replay = GainOf(results[k]);
    predicted.push_back(k);
  }
  if (predicted.empty()) {
    combined->replay_reason = "no finding's replay gives a figure (each says why)";
    return Status::Ok();
  }
  for (size_t k : predicted) combined->replayed.push_back(refs[replayable[k]]);
  if (predicted.size() == 1) {  // its own replay
    combined->replay = GainOf(results[predicted.front()]);
    combined->replay_assumptions = results[predicted.front()].assumptions;
    return Status::Ok();
  }
  ReplayChange together;
  for (size_t k : predicted)
    TG_RETURN_IF_ERROR(AddFindingChange((*findings)[replayable[k]], refs[replayable[k]], &together));
  ReplayResult r;
  const Status st = internal::ReplayEngine(trace, iterations, together, index, &r, nullptr, &plan);
  if (!st.ok()) {
    combined->replay_reason = "the replay refused the findings' change: " + st.message();
  } else if (const std::string none = NothingCovered(r); !none.empty()) {
    combined->replay_reason = none;
  } else if (const std::string why = LongerIterationsCaution(r); !why.empty()) {
    combined->replay_reason = why;
  } else {
    combined->replay = GainOf(r);
    combined->replay_assumptions = r.assumptions;
  }
  return Status::Ok();
}

}  // namespace tg
