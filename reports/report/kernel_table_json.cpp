#include "reports/report/kernel_table_json.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "analyzer/util/demangle.h"

namespace tg {

namespace {

struct KernelTotals {
  uint64_t count = 0;
  TimeNs total_ns = 0;
};

}  // namespace

nlohmann::json KernelTableJson(const Trace& trace, const Analysis& analysis) {
  const IterationAnalysis& it = analysis.iterations;
  const KernelTable& k = trace.kernels;
  // Sum per name id first (one demangle per distinct id), then merge ids that demangle alike.
  std::vector<KernelTotals> by_id(trace.strings.size());  // an index per row, not a map lookup
  for (size_t i = 0; i < k.size() && i < it.kernel_iteration.size(); ++i) {
    if (it.kernel_iteration[i] < 0) continue;
    KernelTotals& t = by_id[k.name[i]];
    t.count++;
    t.total_ns += k.end[i] - k.start[i];
  }
  std::map<std::string, KernelTotals> by_name;
  for (StringId id = 0; id < by_id.size(); ++id) {
    const KernelTotals& t = by_id[id];
    if (t.count == 0) continue;
    KernelTotals& merged = by_name[Demangle(trace.Name(id))];
    merged.count += t.count;
    merged.total_ns += t.total_ns;
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
                   {"mean_us", static_cast<double>(t.total_ns) / static_cast<double>(t.count) / 1e3}});
  }
  return arr;
}

}  // namespace tg
