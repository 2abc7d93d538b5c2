// findings[] and combined_estimate of the report (tracegate.report/v1).
#include "reports/report/findings_json.h"

#include <cmath>
#include <optional>
#include <string>

namespace tg::internal {

namespace {

using nlohmann::json;

json AmdahlJson(const AmdahlEstimate& a) {
  json j = {{"share", a.share}};
  SetOrNull(j, "speedup", std::isfinite(a.speedup), a.speedup, "unbounded: the part's time disappears");
  j["basis"] = a.basis;
  j["assumption"] = a.assumption;
  SetOrNull(j, "overall_speedup", std::isfinite(a.overall), a.overall, "the whole run disappears");
  j["gain_pct"] = a.gain_pct;
  SetOrNull(j, "upper_bound", std::isfinite(a.upper_bound), a.upper_bound, "the part is the whole run");
  return j;
}

// What a finding's P claims, by space (located: the claim names its instants).
json ClaimJson(const std::vector<ClaimPart>& parts) {
  json arr = json::array();
  for (const ClaimPart& p : parts)
    arr.push_back({{"space", kClaimSpaceNames[static_cast<size_t>(p.space)]},
                   {"share", p.share},
                   {"located", !p.intervals.empty()}});
  return arr;
}

// The replay's estimate (analyze --replay-findings): absent without it, null with the reason where
// the replay could not make the change.
void SetReplay(json& j, const std::optional<ReplayedGain>& replay, const std::string& reason) {
  if (replay) {
    j["replay"] = {{"overall_speedup", replay->overall},
                   {"gain_pct", replay->gain_pct},
                   {"base_total_ns", replay->base_total_ns},
                   {"predicted_total_ns", replay->predicted_total_ns}};
  } else if (!reason.empty()) {
    j["replay"] = nullptr;
    j["replay_reason"] = reason;
  }
}

}  // namespace

json CombinedJson(const CombinedEstimate& c) {
  json parts = json::array();
  for (const CombinedPart& p : c.parts) {
    json j = {{"finding", p.finding}, {"share", p.share}};
    SetOrNull(j, "speedup", std::isfinite(p.speedup), p.speedup, "unbounded: the part's time disappears");
    parts.push_back(std::move(j));
  }
  json j = {{"parts", std::move(parts)}, {"left_out", c.left_out}};
  SetOrNull(j, "overall_speedup", std::isfinite(c.overall), c.overall, "the parts cover the whole run");
  j["gain_pct"] = c.gain_pct;
  SetOrNull(j, "upper_bound", std::isfinite(c.upper_bound), c.upper_bound, "the parts cover the whole run");
  SetReplay(j, c.replay, c.replay_reason);
  if (c.replay) {
    j["replay"]["findings"] = c.replayed;
    j["replay"]["assumptions"] = c.replay_assumptions;
  }
  return j;
}

json FindingsJson(const std::vector<Finding>& findings) {
  json arr = json::array();
  for (const Finding& f : findings) {
    json evidence = json::array();
    for (const Evidence& e : f.evidence)
      evidence.push_back({{"metric", e.metric},
                          {"value", e.value},
                          {"threshold", e.threshold},
                          {"comparison", e.comparison},
                          {"unit", e.unit}});
    json involved = json::array();
    for (const Involved& v : f.involved) {
      json j = {{"kind", v.kind}, {"name", v.name}, {"count", v.count}, {"time_ms", NsToMs(v.time_ns)}, {"detail", v.detail}};
      if (v.start_ns >= 0) {  // a gap: where the timeline draws it
        j["start_ns"] = v.start_ns;
        j["device"] = v.device >= 0 ? json(v.device) : json(nullptr);
      }
      involved.push_back(std::move(j));
    }
    json j = {{"id", f.id},
              {"title", f.title},
              {"priority", PriorityName(f.priority)},
              {"summary", f.summary},
              {"heuristic", f.heuristic},
              {"evidence_strength", EvidenceStrengthName(EvidenceStrengthOf(f))},
              {"evidence", std::move(evidence)},
              {"involved", std::move(involved)},
              {"strategies", f.strategies},
              {"amdahl", AmdahlJson(f.amdahl)},
              {"claim", ClaimJson(f.claim)},
              {"overlaps", f.overlaps}};
    SetReplay(j, f.replay, f.replay_reason);
    arr.push_back(std::move(j));
  }
  return arr;
}

}  // namespace tg::internal
