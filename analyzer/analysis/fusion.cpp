// Fusion candidates: greedy chains per stream, grouped by their sequence of kernel names, and the
// gain model of fusion.h. One sort of the kernels by (device, pid, stream, start), one walk.
#include "tracegate/analyzer/fusion.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <tuple>
#include <unordered_map>

#include "analyzer/util/huge_pages.h"
#include "analyzer/util/sort_runs.h"
#include "tracegate/analyzer/op_links.h"

namespace tg {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

TimeNs Duration(TimeNs start, TimeNs end) { return end > start ? end - start : 0; }

// The sort key of one kernel row, kept compact so the sort does not chase the columns.
// Kernel rows grouped by stream ((device, pid, stream) in that order), each group sorted by (start,
// row): rows[begin[g] .. begin[g + 1]). A counting sort groups the rows in trace order, which is
// usually time order already; each group is then sorted (merged) through the start column. 5
// bytes a kernel at the peak (its group's byte, then its place; 8 past 256 streams), not a copy
// of its columns.
struct StreamRows {
  std::vector<uint32_t> rows;
  std::vector<size_t> begin;
};

StreamRows SortedByStream(const KernelTable& k) {
  // One pass gives each row the number of its stream in the order streams are first met; the
  // streams are then ranked by key, and the rows placed by rank.
  struct StreamKey {
    int32_t device;
    int64_t pid, stream;
    bool operator==(const StreamKey& o) const { return device == o.device && pid == o.pid && stream == o.stream; }
    bool operator<(const StreamKey& o) const {
      return std::tie(device, pid, stream) < std::tie(o.device, o.pid, o.stream);
    }
  };
  std::vector<StreamKey> keys;  // by first meeting
  std::map<StreamKey, uint32_t> met;
  // Each row's stream, a byte each while there are at most 256 streams (nearly always), widened to
  // four bytes only past that: the candidates may be found while the summary is at its peak.
  std::vector<uint8_t> group8 = internal::WholeVector<uint8_t>(k.size());
  std::vector<uint32_t> group32;
  // The streams met last, most recent first: rows of a few streams interleave, so the key is
  // nearly always one of them and the map is not searched.
  std::array<std::pair<StreamKey, uint32_t>, 8> recent;
  size_t cached = 0;
  for (size_t i = 0; i < k.size(); ++i) {
    const StreamKey key{k.device[i], k.pid[i], k.stream[i]};
    size_t j = 0;
    while (j < cached && !(recent[j].first == key)) ++j;
    std::pair<StreamKey, uint32_t> found;
    if (j < cached) {
      found = recent[j];
    } else {
      const auto it = met.try_emplace(key, static_cast<uint32_t>(keys.size())).first;
      if (it->second == keys.size()) keys.push_back(key);
      found = {key, it->second};
      j = cached < recent.size() ? cached++ : recent.size() - 1;
    }
    for (; j > 0; --j) recent[j] = recent[j - 1];
    recent[0] = found;
    if (group32.empty() && found.second > UINT8_MAX) {
      group32.assign(group8.begin(), group8.begin() + static_cast<std::ptrdiff_t>(i));
      group32.resize(k.size());
      std::vector<uint8_t>().swap(group8);
    }
    if (group32.empty()) group8[i] = static_cast<uint8_t>(found.second);
    else group32[i] = found.second;
  }
  const auto group = [&](size_t i) -> uint32_t { return group32.empty() ? group8[i] : group32[i]; };
  std::vector<uint32_t> by_key(keys.size());
  for (uint32_t g = 0; g < by_key.size(); ++g) by_key[g] = g;
  std::sort(by_key.begin(), by_key.end(), [&](uint32_t a, uint32_t b) { return keys[a] < keys[b]; });
  std::vector<uint32_t> rank(keys.size());
  for (uint32_t r = 0; r < by_key.size(); ++r) rank[by_key[r]] = r;
  StreamRows out;
  out.begin.assign(keys.size() + 1, 0);
  for (size_t i = 0; i < k.size(); ++i) out.begin[rank[group(i)] + 1]++;
  for (size_t g = 0; g < keys.size(); ++g) out.begin[g + 1] += out.begin[g];
  out.rows = internal::WholeVector<uint32_t>(k.size());
  std::vector<size_t> next(out.begin.begin(), out.begin.end() - 1);
  for (size_t i = 0; i < k.size(); ++i) out.rows[next[rank[group(i)]]++] = static_cast<uint32_t>(i);
  std::vector<uint8_t>().swap(group8);
  std::vector<uint32_t>().swap(group32);
  for (size_t g = 0; g < keys.size(); ++g)
    internal::SortMostlySorted(
        out.rows.data() + out.begin[g], out.rows.data() + out.begin[g + 1],
        [&](uint32_t a, uint32_t b) { return k.start[a] != k.start[b] ? k.start[a] < k.start[b] : a < b; });
  return out;
}

class ChainCollector {
 public:
  ChainCollector(const Trace& trace, const std::vector<KernelClass>& classes, const std::vector<uint8_t>* launch_found)
      : trace_(trace), classes_(classes), launch_found_(launch_found) {}

  // Counts one chain (rows in start order, at least two) into its candidate.
  void Add(const std::vector<size_t>& rows) {
    const KernelTable& k = trace_.kernels;
    names_.clear();
    for (size_t r : rows) names_.push_back(k.name[r]);
    auto it = index_.find(names_);
    if (it == index_.end()) {
      FusionCandidate c;
      c.names = names_;
      for (size_t r : rows) c.classes.push_back(classes_[r]);
      c.first_start_ns = std::numeric_limits<TimeNs>::max();
      it = index_.emplace(names_, candidates_.size()).first;
      candidates_.push_back(std::move(c));
    }
    FusionCandidate& c = candidates_[it->second];
    c.occurrences++;
    const bool in_graph =
        launch_found_ && launch_found_->size() == k.size() &&
        std::all_of(rows.begin(), rows.end(), [&](size_t r) { return (*launch_found_)[r] == OpLinks::kGraphLaunched; });
    c.graph_occurrences += in_graph;
    c.head_ns += Duration(k.start[rows[0]], k.end[rows[0]]);
    for (size_t j = 1; j < rows.size(); ++j) {
      c.followers_ns += Duration(k.start[rows[j]], k.end[rows[j]]);
      if (!in_graph) c.gaps_ns += Duration(k.end[rows[j - 1]], k.start[rows[j]]);
    }
    c.chain_ns += Duration(k.start[rows[0]], k.end[rows.back()]);
    c.spans.emplace_back(k.start[rows[0]], std::max(k.start[rows[0]], k.end[rows.back()]));
    if (k.start[rows[0]] < c.first_start_ns) {
      c.first_start_ns = k.start[rows[0]];
      c.device = k.device[rows[0]];
      c.stream = k.stream[rows[0]];
      c.first_rows = rows;
    }
  }

  std::vector<FusionCandidate> Take() { return std::move(candidates_); }

 private:
  const Trace& trace_;
  const std::vector<KernelClass>& classes_;
  const std::vector<uint8_t>* launch_found_;
  std::vector<StringId> names_;  // scratch: the chain being looked up
  struct NamesHash {
    size_t operator()(const std::vector<StringId>& names) const {
      uint64_t h = 0x9e3779b97f4a7c15ull;
      for (StringId n : names) h = (h ^ n) * 0x100000001b3ull;
      return static_cast<size_t>(h ^ (h >> 29));
    }
  };
  std::unordered_map<std::vector<StringId>, size_t, NamesHash> index_;  // chain -> its candidate
  std::vector<FusionCandidate> candidates_;
};

void ApplyModel(const IterationAnalysis& iterations, double residual, FusionCandidate* c) {
  c->saving_ns = std::llround((1 - residual) * static_cast<double>(c->followers_ns)) + c->gaps_ns;
  double chain = static_cast<double>(c->chain_ns);
  double saving = static_cast<double>(c->saving_ns);
  double total = static_cast<double>(iterations.total_ns);
  c->local_speedup = chain > saving ? chain / (chain - saving) : kInfinity;
  c->share = total > 0 ? chain / total : 0;
  c->overall = total <= 0 ? 1 : total > saving ? total / (total - saving) : kInfinity;
  c->upper_bound = c->share < 1 ? 1 / (1 - c->share) : kInfinity;
  size_t kept = iterations.iterations.size();
  c->per_iteration = kept ? static_cast<double>(c->occurrences) / static_cast<double>(kept) : 0;
}

}  // namespace

std::vector<FusionCandidate> FindFusionCandidates(const Trace& trace, const IterationAnalysis& iterations,
                                                  const std::vector<KernelClass>& classes,
                                                  const FusionOptions& options) {
  const KernelTable& k = trace.kernels;
  if (classes.size() != k.size()) return {};  // not classified: nothing to say
  auto iteration_of = [&](size_t row) {
    return row < iterations.kernel_iteration.size() ? iterations.kernel_iteration[row] : -1;
  };
  const StreamRows streams = SortedByStream(k);

  ChainCollector collector(trace, classes, options.launch_found);
  std::vector<size_t> chain;  // rows of the chain being grown (one stream's)
  auto flush = [&] {
    if (chain.size() >= 2) collector.Add(chain);
    chain.clear();
  };
  for (size_t g = 0; g + 1 < streams.begin.size(); ++g) {
    for (size_t s = streams.begin[g]; s < streams.begin[g + 1]; ++s) {
      const size_t row = streams.rows[s];
      const int32_t iteration = iteration_of(row);
      if (!chain.empty()) {
        const size_t prev = chain.back();
        const bool joins = iteration == iteration_of(chain[0]) && IsFusableFollower(classes[row]) &&
                           k.start[row] - k.end[prev] <= options.max_gap_ns && chain.size() < options.max_chain;
        if (joins) {
          chain.push_back(row);
          continue;
        }
        flush();
      }
      if (iteration >= 0 && classes[row] != KernelClass::kCommunication)  // a collective is no fusion head
        chain.push_back(row);
    }
    flush();  // a chain stays on one stream
  }

  std::vector<FusionCandidate> out = collector.Take();
  double residual = std::clamp(options.follower_residual, 0.0, 1.0);
  for (FusionCandidate& c : out) ApplyModel(iterations, residual, &c);
  std::sort(out.begin(), out.end(), [](const FusionCandidate& a, const FusionCandidate& b) {
    return a.saving_ns != b.saving_ns ? a.saving_ns > b.saving_ns : a.first_start_ns < b.first_start_ns;
  });
  if (out.size() > options.top) out.resize(options.top);
  return out;
}

}  // namespace tg
