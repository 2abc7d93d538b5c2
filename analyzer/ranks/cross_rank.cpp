#include "tracegate/analyzer/communication.h"

#include <algorithm>
#include <map>
#include <utility>

namespace tg {

namespace {

// One collective as found on several ranks: (index into the input, index of the call).
using Instance = std::vector<std::pair<size_t, size_t>>;

// The key that names the same collective on every rank (see AnalyzeCrossRank). The separator
// cannot occur in a group or kernel name read from a trace's text.
std::map<std::string, Instance> MatchCollectives(const std::vector<RankCalls>& ranks) {
  std::map<std::string, Instance> instances;
  for (size_t r = 0; r < ranks.size(); ++r) {
    std::map<std::pair<std::string, std::string>, uint64_t> order;  // (group, name) -> calls so far
    for (size_t c = 0; c < ranks[r].calls.size(); ++c) {
      const CollectiveCall& call = ranks[r].calls[c];
      std::string key;
      if (call.seq >= 0 && !call.group.empty()) {
        key = "s\x1f" + call.group + "\x1f" + std::to_string(call.seq);
      } else {
        const uint64_t k = order[{call.group, call.name}]++;
        key = "o\x1f" + call.group + "\x1f" + call.name + "\x1f" + std::to_string(k);
      }
      Instance& inst = instances[key];
      // A sequence number repeated on one rank (a second process group of the same name): the
      // first call keeps it, as the other ranks' first call does.
      if (inst.empty() || inst.back().first != r) inst.emplace_back(r, c);
    }
  }
  std::erase_if(instances, [](const auto& kv) { return kv.second.size() < 2; });
  return instances;
}

TimeNs LowerMedian(std::vector<TimeNs>& v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>((v.size() - 1) / 2), v.end());
  return v[(v.size() - 1) / 2];
}

// Offsets along the ranks that share collectives, breadth first from the first rank of each
// connected set: a rank is aligned to the rank it was reached from, on their shared collectives.
std::vector<std::optional<TimeNs>> AlignClocks(const std::vector<RankCalls>& ranks,
                                               const std::map<std::string, Instance>& instances) {
  std::vector<std::vector<const Instance*>> of_rank(ranks.size());
  for (const auto& [key, inst] : instances)
    for (const auto& [r, c] : inst) of_rank[r].push_back(&inst);
  std::vector<std::optional<TimeNs>> offset(ranks.size());
  for (size_t root = 0; root < ranks.size(); ++root) {
    if (offset[root] || of_rank[root].empty()) continue;
    offset[root] = 0;
    std::vector<size_t> queue{root};
    for (size_t q = 0; q < queue.size(); ++q) {
      const size_t a = queue[q];
      std::map<size_t, std::vector<TimeNs>> diffs;  // unaligned rank -> end on a - end on it
      for (const Instance* inst : of_rank[a]) {
        TimeNs end_a = 0;
        for (const auto& [r, c] : *inst)
          if (r == a) end_a = ranks[r].calls[c].end_ns;
        for (const auto& [r, c] : *inst)
          if (!offset[r]) diffs[r].push_back(end_a - ranks[r].calls[c].end_ns);
      }
      for (auto& [b, d] : diffs) {
        offset[b] = *offset[a] + LowerMedian(d);
        queue.push_back(b);
      }
    }
  }
  return offset;
}

}  // namespace

CrossRank AnalyzeCrossRank(const std::vector<RankCalls>& ranks) {
  CrossRank out;
  out.ranks.resize(ranks.size());
  const std::map<std::string, Instance> instances = MatchCollectives(ranks);
  const std::vector<std::optional<TimeNs>> offset = AlignClocks(ranks, instances);
  bool by_seq = false, by_order = false;
  std::vector<TimeNs> arrival;
  for (const auto& [key, inst] : instances) {
    (key[0] == 's' ? by_seq : by_order) = true;
    ++out.shared_collectives;
    arrival.clear();
    for (const auto& [r, c] : inst) arrival.push_back(ranks[r].calls[c].start_ns + *offset[r]);
    const TimeNs latest = *std::max_element(arrival.begin(), arrival.end());
    size_t last = 0, at_latest = 0;
    TimeNs next_latest = INT64_MIN, waits = 0;
    for (size_t i = 0; i < inst.size(); ++i) {
      RankAlignment& a = out.ranks[inst[i].first];
      ++a.shared;
      a.wait_ns += latest - arrival[i];
      waits += latest - arrival[i];
      if (arrival[i] == latest) {
        last = i;
        ++at_latest;
      } else {
        next_latest = std::max(next_latest, arrival[i]);
      }
    }
    // Ranks arriving together at the end are none of them late.
    if (at_latest != 1) continue;
    RankAlignment& l = out.ranks[inst[last].first];
    ++l.last;
    l.lateness_ns += latest - next_latest;
    l.others_wait_ns += waits;
  }
  for (size_t r = 0; r < ranks.size(); ++r) {
    out.ranks[r].clock_offset_ns = offset[r];
    out.ranks[r].wait_ms = NsToMs(out.ranks[r].wait_ns) / std::max(1.0, ranks[r].iterations);
  }
  out.matched_by = by_seq && by_order ? "seq and order" : by_seq ? "seq" : by_order ? "order" : "";
  return out;
}

}  // namespace tg
