#include "analyzer/analysis/correlation.h"

#include <algorithm>
#include <tuple>

namespace tg::internal {

namespace {

struct Launch {
  int64_t pid, tid;
  TimeNs t;  // start of the launching API call
  size_t row;
};

}  // namespace

std::vector<std::pair<size_t, size_t>> KernelsLaunchedIn(const Trace& trace, const std::vector<size_t>& range_rows) {
  const ApiTable& api = trace.api_calls;
  ApiIndex index(api);
  std::vector<Launch> launches;
  for (size_t i = 0; i < trace.kernels.size(); ++i) {
    int64_t call = index.Find(trace.kernels.correlation[i], trace.kernels.pid[i]);
    if (call < 0) continue;
    size_t a = static_cast<size_t>(call);
    launches.push_back({api.pid[a], api.tid[a], api.start[a], i});
  }
  auto launch_key = [](const Launch& l) { return std::tie(l.pid, l.tid, l.t, l.row); };
  std::sort(launches.begin(), launches.end(),
            [&](const Launch& a, const Launch& b) { return launch_key(a) < launch_key(b); });
  // Positions into range_rows, by thread and start.
  const RangeTable& r = trace.ranges;
  std::vector<size_t> order(range_rows.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  auto range_key = [&](size_t k) {
    const size_t row = range_rows[k];
    return std::make_tuple(r.pid[row], r.tid[row], r.start[row], row);
  };
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return range_key(a) < range_key(b); });

  std::vector<std::pair<size_t, size_t>> pairs;
  std::vector<size_t> open;  // positions whose range starts at or before the launch, same thread
  size_t next = 0;
  auto thread_of = [&](size_t k) { return std::make_pair(r.pid[range_rows[k]], r.tid[range_rows[k]]); };
  for (size_t l = 0; l < launches.size(); ++l) {
    const Launch& x = launches[l];
    if (l == 0 || x.pid != launches[l - 1].pid || x.tid != launches[l - 1].tid) open.clear();
    while (next < order.size() && thread_of(order[next]) < std::make_pair(x.pid, x.tid)) ++next;
    while (next < order.size() && thread_of(order[next]) == std::make_pair(x.pid, x.tid) &&
           r.start[range_rows[order[next]]] <= x.t)
      open.push_back(order[next++]);
    std::erase_if(open, [&](size_t k) { return r.end[range_rows[k]] <= x.t; });
    for (size_t k : open) pairs.emplace_back(k, x.row);
  }
  return pairs;
}

}  // namespace tg::internal
