// Findings replayed: a finding's claim as a located change (tracegate/analyzer/finding_replay.h).
#include "tracegate/analyzer/finding_replay.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

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

}  // namespace tg
