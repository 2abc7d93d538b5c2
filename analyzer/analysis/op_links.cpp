// The host op behind each GPU activity (tracegate/analyzer/op_links.h).
#include "tracegate/analyzer/op_links.h"

#include <algorithm>
#include <map>
#include <utility>

#include "analyzer/analysis/correlation.h"
#include "analyzer/util/huge_pages.h"
#include "analyzer/util/sort_runs.h"

namespace tg {

using internal::ApiIndex;

namespace {

constexpr uint32_t kNoThread = UINT32_MAX;

// Dense numbers for the (pid, tid) pairs of the API calls and the op ranges, and each table's
// rows grouped by thread (a counting sort: file order within a thread), then sorted by time
// within the thread (nearly sorted already, so mostly a linear pass).
class ThreadGroups {
 public:
  // Numbers the thread of `n` rows; `keep(i)` says whether row i takes part.
  template <typename Keep>
  std::vector<uint32_t> Number(const CodedColumn<int64_t>& pid, const CodedColumn<int64_t>& tid, Keep keep) {
    std::vector<uint32_t> thread = internal::WholeVector<uint32_t>(pid.size(), kNoThread);
    std::pair<int64_t, int64_t> last{0, 0};
    uint32_t last_id = kNoThread;
    for (size_t i = 0; i < pid.size(); ++i) {
      if (!keep(i)) continue;
      const std::pair<int64_t, int64_t> key{pid[i], tid[i]};
      if (last_id == kNoThread || key != last) {  // most rows repeat the previous row's thread
        auto [it, fresh] = ids_.try_emplace(key, static_cast<uint32_t>(ids_.size()));
        (void)fresh;
        last = key;
        last_id = it->second;
      }
      thread[i] = last_id;
    }
    return thread;
  }
  size_t count() const { return ids_.size(); }

 private:
  std::map<std::pair<int64_t, int64_t>, uint32_t> ids_;  // one entry per thread, not per event
};

// Rows grouped by thread number: rows[offset[t] .. offset[t + 1]) are thread t's, in file order.
struct Grouped {
  std::vector<uint32_t> rows;
  std::vector<size_t> offset;
};

Grouped GroupByThread(const std::vector<uint32_t>& thread, size_t threads) {
  Grouped g;
  g.offset.assign(threads + 1, 0);
  for (uint32_t t : thread)
    if (t != kNoThread) g.offset[t + 1]++;
  for (size_t t = 0; t < threads; ++t) g.offset[t + 1] += g.offset[t];
  g.rows = internal::WholeVector<uint32_t>(g.offset[threads]);
  std::vector<size_t> next(g.offset.begin(), g.offset.end() - 1);
  for (size_t i = 0; i < thread.size(); ++i)
    if (thread[i] != kNoThread) g.rows[next[thread[i]]++] = static_cast<uint32_t>(i);
  return g;
}

}  // namespace

std::string_view internal::OpBaseName(std::string_view op) {
  size_t cut = op.size();
  for (std::string_view suffix : {", seq = ", ", op_id = ", ", sizes = ", ", input_op_ids = "})
    cut = std::min(cut, op.find(suffix));
  return op.substr(0, cut);
}

OpLinks LinkOps(const Trace& trace) {
  ApiIndex index(trace.api_calls);
  return LinkOps(trace, index);
}

OpLinks LinkOps(const Trace& trace, const ApiIndex& index) {
  OpLinks out;
  const ApiTable& api = trace.api_calls;
  const RangeTable& r = trace.ranges;
  internal::AssignWhole(out.api, api.size(), StringTable::kEmpty);
  internal::AssignWhole(out.kernels, trace.kernels.size(), StringTable::kEmpty);
  internal::AssignWhole(out.memcpys, trace.memcpys.size(), StringTable::kEmpty);
  internal::AssignWhole(out.memsets, trace.memsets.size(), StringTable::kEmpty);
  internal::AssignWhole(out.kernel_launch_found, trace.kernels.size(), uint8_t{0});

  // Which ranges are ops: cpu_op ones when there are any, else the host's NVTX ranges.
  const StringId cpu_op = trace.strings.Find("cpu_op"), python = trace.strings.Find("python_function");
  bool any_cpu_op = false;
  if (cpu_op != StringTable::kNotFound)
    for (size_t i = 0; i < r.size() && !any_cpu_op; ++i) any_cpu_op = r.domain[i] == cpu_op;
  auto is_op = [&](size_t i) {
    if (any_cpu_op) return r.domain[i] == cpu_op;
    return !r.on_gpu[i] && (python == StringTable::kNotFound || r.domain[i] != python);
  };
  ThreadGroups threads;
  const std::vector<uint32_t> range_thread = threads.Number(r.pid, r.tid, is_op);
  const size_t op_threads = threads.count();
  if (op_threads > 0) out.source = any_cpu_op ? OpSource::kCpuOp : OpSource::kNvtx;
  // Calls on a thread without ops have none: they are not numbered (none are when no thread has
  // ops: the calls are grouped into no thread).
  std::vector<uint32_t> call_thread;
  if (op_threads > 0) call_thread = threads.Number(api.pid, api.tid, [](size_t) { return true; });
  for (uint32_t& t : call_thread)
    if (t >= op_threads) t = kNoThread;

  Grouped ranges = GroupByThread(range_thread, op_threads), calls = GroupByThread(call_thread, op_threads);
  std::vector<uint32_t> open;  // the ranges enclosing the sweep's instant, outermost first
  for (size_t t = 0; t < op_threads; ++t) {
    uint32_t* rb = ranges.rows.data() + ranges.offset[t];
    uint32_t* re = ranges.rows.data() + ranges.offset[t + 1];
    uint32_t* cb = calls.rows.data() + calls.offset[t];
    uint32_t* ce = calls.rows.data() + calls.offset[t + 1];
    // Ranges by start, the longer (outer) first when two start together; calls by start.
    internal::SortNearlySorted(rb, re, [&](uint32_t a, uint32_t b) {
      if (r.start[a] != r.start[b]) return r.start[a] < r.start[b];
      if (r.end[a] != r.end[b]) return r.end[a] > r.end[b];
      return a < b;
    });
    internal::SortNearlySorted(cb, ce, [&](uint32_t a, uint32_t b) {
      return api.start[a] != api.start[b] ? api.start[a] < api.start[b] : a < b;
    });
    open.clear();
    uint32_t* next = rb;
    for (uint32_t* c = cb; c != ce; ++c) {
      const TimeNs at = api.start[*c];
      for (; next != re && r.start[*next] <= at; ++next) {
        while (!open.empty() && r.end[open.back()] <= r.start[*next]) open.pop_back();
        open.push_back(*next);
      }
      // The top is the open range that started last: any range pushed after it has ended.
      while (!open.empty() && r.end[open.back()] <= at) open.pop_back();
      if (!open.empty()) out.api[*c] = r.name[open.back()];
    }
  }

  std::vector<int8_t> graph_launch;  // per call name: 1 a graph launch, 0 not, -1 not seen yet
  auto link = [&](const auto& table, std::vector<StringId>& ops, std::vector<uint8_t>* found) {
    for (size_t i = 0; i < table.size(); ++i) {
      const int64_t call = index.Find(table.correlation[i], table.pid[i]);
      if (call < 0) continue;
      if (found) {
        if (graph_launch.empty()) graph_launch.assign(trace.strings.size(), -1);
        int8_t& g = graph_launch[api.name[static_cast<size_t>(call)]];
        if (g < 0) g = ApiRoleOf(trace.Name(api.name[static_cast<size_t>(call)])) == ApiRole::kGraphLaunch ? 1 : 0;
        (*found)[i] = g == 1 ? OpLinks::kGraphLaunched : 1;
      }
      ops[i] = out.api[static_cast<size_t>(call)];
    }
  };
  link(trace.kernels, out.kernels, &out.kernel_launch_found);
  link(trace.memcpys, out.memcpys, nullptr);
  link(trace.memsets, out.memsets, nullptr);
  return out;
}

}  // namespace tg
