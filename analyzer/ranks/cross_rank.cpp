#include <algorithm>
#include <cctype>
#include <map>
#include <tuple>
#include <utility>

#include "tracegate/analyzer/cross_rank.h"

namespace tg {

namespace {

// One collective as found on several ranks: (index into the input, index of the call).
using Instance = std::vector<std::pair<size_t, size_t>>;

// The key that names the same collective on every rank (see AnalyzeCrossRank): how it was
// matched, then (group, seq) or (group, name, step, k-th).
enum Method : uint8_t { kSeq, kStep, kOrder };
using Key = std::tuple<Method, uint32_t, uint32_t, int64_t, uint64_t>;

// Steps order the calls without sequence numbers only when every rank that has such calls has a
// step on some of them: a rank whose report has none (written before steps, or no numbered
// iteration markers) would otherwise match nothing.
bool UseSteps(const std::vector<RankCalls>& ranks) {
  bool any = false;
  for (const RankCalls& r : ranks) {
    bool unsequenced = false, stepped = false;
    for (const RankCall& c : r.calls) {
      if (c.seq >= 0 && c.group != 0) continue;
      unsequenced = true;
      if (c.step >= 0) {
        stepped = true;
        break;
      }
    }
    if (unsequenced && !stepped) return false;
    any = any || unsequenced;
  }
  return any;
}

// `uneven`: the runs of calls matched by order, (group, name[, step]), whose number of calls
// differs between the ranks that have them.
std::map<Key, Instance> MatchCollectives(const std::vector<RankCalls>& ranks, uint64_t* uneven) {
  const bool steps = UseSteps(ranks);
  std::map<Key, Instance> instances;
  using Run = std::tuple<uint32_t, uint32_t, int64_t>;  // (group, name, step)
  std::map<Run, uint64_t> order;                        // this rank's calls so far
  std::map<Run, std::pair<uint64_t, uint64_t>> counts;  // fewest and most calls on a rank
  for (size_t r = 0; r < ranks.size(); ++r) {
    for (const auto& [run, n] : order) {
      auto [it, fresh] = counts.try_emplace(run, n, n);
      it->second = {std::min(it->second.first, n), std::max(it->second.second, n)};
    }
    order.clear();
    for (size_t c = 0; c < ranks[r].calls.size(); ++c) {
      const RankCall& call = ranks[r].calls[c];
      Key key;
      if (call.seq >= 0 && call.group != 0) {
        key = {kSeq, call.group, 0, call.seq, 0};
      } else {
        const int64_t step = steps ? std::max<int64_t>(call.step, -1) : -1;
        const uint64_t k = order[{call.group, call.name, step}]++;
        key = {steps && step >= 0 ? kStep : kOrder, call.group, call.name, step, k};
      }
      Instance& inst = instances[key];
      // A sequence number repeated on one rank (a second process group of the same name): the
      // first call keeps it, as the other ranks' first call does.
      if (inst.empty() || inst.back().first != r) inst.emplace_back(r, c);
    }
  }
  for (const auto& [run, n] : order) {
    auto [it, fresh] = counts.try_emplace(run, n, n);
    it->second = {std::min(it->second.first, n), std::max(it->second.second, n)};
  }
  *uneven = static_cast<uint64_t>(
      std::count_if(counts.begin(), counts.end(), [](const auto& kv) { return kv.second.first != kv.second.second; }));
  std::erase_if(instances, [](const auto& kv) { return kv.second.size() < 2; });
  return instances;
}

TimeNs LowerMedian(std::vector<TimeNs>& v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>((v.size() - 1) / 2), v.end());
  return v[(v.size() - 1) / 2];
}

// Offsets along the ranks that share collectives, breadth first from the first rank of each
// connected set: a rank is aligned to the rank it was reached from, on their shared collectives.
// `reference`: the first rank of each rank's set.
std::vector<std::optional<TimeNs>> AlignClocks(const std::vector<RankCalls>& ranks,
                                               const std::map<Key, Instance>& instances,
                                               std::vector<size_t>& reference) {
  std::vector<std::vector<const Instance*>> of_rank(ranks.size());
  for (const auto& [key, inst] : instances)
    for (const auto& [r, c] : inst) of_rank[r].push_back(&inst);
  std::vector<std::optional<TimeNs>> offset(ranks.size());
  reference.assign(ranks.size(), SIZE_MAX);
  for (size_t root = 0; root < ranks.size(); ++root) {
    if (offset[root] || of_rank[root].empty()) continue;
    offset[root] = 0;
    reference[root] = root;
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
        reference[b] = root;
        queue.push_back(b);
      }
    }
  }
  return offset;
}

// Collectives no rank leaves before every rank has arrived (NCCL's rings and trees pass every
// rank's data through every other): all-reduce, all-gather, reduce-scatter, all-to-all. A
// broadcast's or reduce's root, a send, may finish before the others arrive.
bool EveryRankWaitsForAll(const std::string& name) {
  std::string c;
  for (char ch : name)
    if (std::isalpha(static_cast<unsigned char>(ch))) c += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  for (const char* kind : {"allreduce", "allgather", "reducescatter", "alltoall"})
    if (c.find(kind) != std::string::npos) return true;
  return false;
}

}  // namespace

CrossRankMatch MatchAcrossRanks(const std::vector<std::string>& names, const std::vector<RankCalls>& ranks) {
  CrossRankMatch out;
  uint64_t uneven = 0;
  const std::map<Key, Instance> instances = MatchCollectives(ranks, &uneven);
  std::vector<size_t> reference;
  out.offsets = AlignClocks(ranks, instances, reference);
  std::vector<int8_t> symmetric(names.size(), -1);  // by name id: EveryRankWaitsForAll, once
  out.collectives.reserve(instances.size());
  for (const auto& [key, inst] : instances) {
    MatchedCollective m;
    m.calls = inst;
    const RankCall& head = ranks[inst[0].first].calls[inst[0].second];
    if (head.name < names.size()) {
      if (symmetric[head.name] < 0) symmetric[head.name] = EveryRankWaitsForAll(names[head.name]) ? 1 : 0;
      m.every_rank_waits = symmetric[head.name] == 1;
    }
    TimeNs latest = INT64_MIN, first_end = INT64_MAX;
    for (const auto& [r, c] : inst) {
      latest = std::max(latest, ranks[r].calls[c].start_ns + *out.offsets[r]);
      first_end = std::min(first_end, ranks[r].calls[c].end_ns + *out.offsets[r]);
    }
    m.doubtful = m.every_rank_waits && latest > first_end;
    out.collectives.push_back(std::move(m));
  }
  return out;
}

CrossRank AnalyzeCrossRank(const std::vector<std::string>& names, const std::vector<RankCalls>& ranks) {
  CrossRank out;
  out.ranks.resize(ranks.size());
  const std::map<Key, Instance> instances = MatchCollectives(ranks, &out.uneven);
  std::vector<size_t> reference;
  const std::vector<std::optional<TimeNs>> offset = AlignClocks(ranks, instances, reference);
  std::vector<int8_t> symmetric(names.size(), -1);  // by name id: EveryRankWaitsForAll, once
  bool used[3] = {false, false, false};
  std::vector<TimeNs> arrival;
  for (const auto& [key, inst] : instances) {
    used[std::get<0>(key)] = true;
    ++out.shared_collectives;
    arrival.clear();
    TimeNs first_end = INT64_MAX;
    for (const auto& [r, c] : inst) {
      arrival.push_back(ranks[r].calls[c].start_ns + *offset[r]);
      first_end = std::min(first_end, ranks[r].calls[c].end_ns + *offset[r]);
    }
    const TimeNs latest = *std::max_element(arrival.begin(), arrival.end());
    const RankCall& head = ranks[inst[0].first].calls[inst[0].second];
    if (head.name < names.size() && latest > first_end) {
      if (symmetric[head.name] < 0) symmetric[head.name] = EveryRankWaitsForAll(names[head.name]) ? 1 : 0;
      if (symmetric[head.name] == 1) {
        ++out.doubtful;
        for (const auto& [r, c] : inst) ++out.ranks[r].shared;
        continue;
      }
    }
    size_t last = 0, at_latest = 0;
    TimeNs next_latest = INT64_MIN, waits = 0;
    for (size_t i = 0; i < inst.size(); ++i) {
      const auto [r, c] = inst[i];
      RankAlignment& a = out.ranks[r];
      ++a.shared;
      waits += latest - arrival[i];
      if (ranks[r].calls[c].counted) a.wait_ns += latest - arrival[i];
      if (arrival[i] == latest) {
        last = i;
        ++at_latest;
      } else {
        next_latest = std::max(next_latest, arrival[i]);
      }
    }
    // Ranks arriving together at the end are none of them late.
    if (at_latest != 1) continue;
    const auto [lr, lc] = inst[last];
    if (!ranks[lr].calls[lc].counted) continue;
    RankAlignment& l = out.ranks[lr];
    ++l.last;
    l.lateness_ns += latest - next_latest;
    l.others_wait_ns += waits;
  }
  for (size_t r = 0; r < ranks.size(); ++r) {
    out.ranks[r].clock_offset_ns = offset[r];
    out.ranks[r].clock_reference = reference[r];
    out.ranks[r].wait_ms = NsToMs(out.ranks[r].wait_ns) / std::max(1.0, ranks[r].iterations);
  }
  static constexpr const char* kMethods[] = {"seq", "step", "order"};
  for (int m = 0; m < 3; ++m)
    if (used[m]) out.matched_by += (out.matched_by.empty() ? "" : " and ") + std::string(kMethods[m]);
  return out;
}

}  // namespace tg
