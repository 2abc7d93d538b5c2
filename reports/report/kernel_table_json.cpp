#include "reports/report/kernel_table_json.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "analyzer/util/demangle.h"

namespace tg {

namespace {

struct KernelTotals {
  uint64_t count = 0;
  TimeNs total_ns = 0;
};

struct Places {
  std::set<int64_t> devices, streams;
};

nlohmann::json Ids(const std::set<int64_t>& ids) {
  nlohmann::json arr = nlohmann::json::array();
  for (int64_t id : ids) arr.push_back(id == kUnknownId ? nlohmann::json(nullptr) : nlohmann::json(id));
  return arr;
}

}  // namespace

nlohmann::json KernelTableJson(const Trace& trace, const Analysis& analysis) {
  const IterationAnalysis& it = analysis.iterations;
  const KernelTable& k = trace.kernels;
  // Sum per name id first (one demangle per distinct id), then merge ids that demangle alike.
  std::vector<KernelTotals> by_id(trace.strings.size());  // an index per row, not a map lookup
  std::vector<uint32_t> last(trace.strings.size(), 0);     // the name's last row
  std::vector<std::tuple<StringId, int64_t, int64_t>> seen;  // (name, device, stream)
  for (size_t i = 0; i < k.size() && i < it.kernel_iteration.size(); ++i) {
    if (it.kernel_iteration[i] < 0) continue;
    KernelTotals& t = by_id[k.name[i]];
    if (t.count == 0 || k.device[i] != k.device[last[k.name[i]]] || k.stream[i] != k.stream[last[k.name[i]]])
      seen.emplace_back(k.name[i], k.device[i], k.stream[i]);  // most launches repeat the last place
    last[k.name[i]] = static_cast<uint32_t>(i);
    t.count++;
    t.total_ns += k.end[i] - k.start[i];
  }
  std::sort(seen.begin(), seen.end());
  seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
  std::map<std::string, KernelTotals> by_name;
  std::map<std::string, Places> places;
  size_t next_seen = 0;
  for (StringId id = 0; id < by_id.size(); ++id) {
    const KernelTotals& t = by_id[id];
    if (t.count == 0) continue;
    const std::string name = Demangle(trace.Name(id));
    KernelTotals& merged = by_name[name];
    merged.count += t.count;
    merged.total_ns += t.total_ns;
    Places& p = places[name];
    for (; next_seen < seen.size() && std::get<0>(seen[next_seen]) == id; ++next_seen) {
      p.devices.insert(std::get<1>(seen[next_seen]));
      p.streams.insert(std::get<2>(seen[next_seen]));
    }
  }
  std::vector<std::pair<std::string, KernelTotals>> rows(by_name.begin(), by_name.end());
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto& a, const auto& b) { return a.second.total_ns > b.second.total_ns; });
  const double iterations = static_cast<double>(it.iterations.size());
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& [name, t] : rows) {
    const double total_ms = static_cast<double>(t.total_ns) / 1e6;
    arr.push_back({{"name", name},
                   {"count", t.count},
                   {"total_ms", total_ms},
                   {"per_iteration_ms", total_ms / iterations},
                   {"mean_us", static_cast<double>(t.total_ns) / static_cast<double>(t.count) / 1e3},
                   {"devices", Ids(places[name].devices)},
                   {"streams", Ids(places[name].streams)}});
  }
  return arr;
}

}  // namespace tg
