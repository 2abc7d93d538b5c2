#include "analyzer/analysis/host_stages.h"

#include <algorithm>
#include <tuple>

namespace tg::internal {

HostStages::HostStages(const Trace& t, const IterationOptions& options) : trace_(t) {
  compiled_ = internal::CompileNameMatcher(t, options.pre_regex, "--phase pre=", &pre_).ok() &&
              internal::CompileNameMatcher(t, options.post_regex, "--phase post=", &post_).ok();
}

void HostStages::Collect() {
  if (!compiled_) return;
  const RangeTable& r = trace_.ranges;
  std::vector<Stage> all;
  for (size_t i = 0; i < r.size(); ++i)
    if ((pre_(r.name[i]) || post_(r.name[i])) && r.on_gpu[i] == 0 && r.end[i] > r.start[i])  // cached verdicts first
      all.push_back({r.pid[i], r.start[i], r.end[i], r.name[i]});
  std::sort(all.begin(), all.end(),
            [](const Stage& a, const Stage& b) { return std::tie(a.pid, a.start, a.end) < std::tie(b.pid, b.start, b.end); });
  for (const Stage& s : all) {
    if (!stages_.empty() && stages_.back().pid == s.pid && s.start <= stages_.back().end)
      stages_.back().end = std::max(stages_.back().end, s.end);
    else
      stages_.push_back(s);
  }
}

std::optional<StringId> HostStages::During(int64_t pid, TimeNs s, TimeNs e) const {
  // The first piece of `pid` that ends after s; it overlaps [s, e) when it starts before e.
  auto it = std::partition_point(stages_.begin(), stages_.end(), [&](const Stage& x) {
    return x.pid < pid || (x.pid == pid && x.end <= s);
  });
  if (it == stages_.end() || it->pid != pid || it->start >= e) return std::nullopt;
  return it->name;
}

}  // namespace tg::internal
