#include "tracegate/analyzer/model.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <iterator>
#include <map>
#include <tuple>
#include <vector>

#include "analyzer/util/side_task.h"
#include "analyzer/util/sort_runs.h"

namespace tg {

std::string_view CopyKindName(CopyKind k) {
  switch (k) {
    case CopyKind::kHtoD: return "HtoD";
    case CopyKind::kDtoH: return "DtoH";
    case CopyKind::kHtoA: return "HtoA";
    case CopyKind::kAtoH: return "AtoH";
    case CopyKind::kAtoA: return "AtoA";
    case CopyKind::kAtoD: return "AtoD";
    case CopyKind::kDtoA: return "DtoA";
    case CopyKind::kDtoD: return "DtoD";
    case CopyKind::kHtoH: return "HtoH";
    case CopyKind::kPtoP: return "PtoP";
    case CopyKind::kUnknown: break;
  }
  return "unknown";
}

std::string_view MemKindName(MemKind k) {
  switch (k) {
    case MemKind::kPageable: return "pageable";
    case MemKind::kPinned: return "pinned";
    case MemKind::kDevice: return "device";
    case MemKind::kArray: return "array";
    case MemKind::kManaged: return "managed";
    case MemKind::kDeviceStatic: return "device_static";
    case MemKind::kManagedStatic: return "managed_static";
    case MemKind::kUnknown: break;
  }
  return "unknown";
}

std::string_view SyncKindName(SyncKind k) {
  switch (k) {
    case SyncKind::kEventSync: return "event_sync";
    case SyncKind::kStreamWaitEvent: return "stream_wait_event";
    case SyncKind::kStreamSync: return "stream_sync";
    case SyncKind::kContextSync: return "context_sync";
    case SyncKind::kUnknown: break;
  }
  return "unknown";
}

// Add / Row / Reserve of every table, from its column list (model.h).
// Add is every importer's per-row call: its columns' push_backs are inlined into it (flatten),
// where GCC otherwise called each one out of line (26 calls a kernel row: 10.8% of the nsys
// export's instructions under callgrind went away, 4.4% of the stacks shape's). The columns' rare
// paths (a dictionary's new value, a sparse column turning dense, a narrow one widening) stay calls.
#define TG_PUSH_COLUMN(T, n, def, S) n.push_back(r.n);
#define TG_ROW_VALUE(T, n, def, S) static_cast<T>(n[i]),
#define TG_RESERVE_COLUMN(T, n, def, S) n.reserve(count);
// (clang-format reads the attribute in a macro as a statement and runs the lines together.)
// clang-format off
#define TG_DEFINE_TABLE(Table, R, COLUMNS)                                   \
  [[gnu::flatten]] void Table::Add(const R& r) { COLUMNS(TG_PUSH_COLUMN) }   \
  R Table::Row(size_t i) const { return R{COLUMNS(TG_ROW_VALUE)}; }          \
  void Table::Reserve(size_t count) { COLUMNS(TG_RESERVE_COLUMN) }
// clang-format on

TG_DEFINE_TABLE(KernelTable, Kernel, TG_KERNEL_COLUMNS)
TG_DEFINE_TABLE(MemcpyTable, Memcpy, TG_MEMCPY_COLUMNS)
TG_DEFINE_TABLE(MemsetTable, Memset, TG_MEMSET_COLUMNS)
TG_DEFINE_TABLE(SyncTable, Sync, TG_SYNC_COLUMNS)
TG_DEFINE_TABLE(ApiTable, ApiCall, TG_API_COLUMNS)
TG_DEFINE_TABLE(RangeTable, Range, TG_RANGE_COLUMNS)
TG_DEFINE_TABLE(SampleTable, Sample, TG_SAMPLE_COLUMNS)

namespace {
void Extend(std::pair<TimeNs, TimeNs>& w, bool& any, const std::vector<TimeNs>& s,
            const std::vector<TimeNs>& e) {
  if (s.empty()) return;
  TimeNs lo = *std::min_element(s.begin(), s.end());
  TimeNs hi = *std::max_element(e.begin(), e.end());
  if (!any) { w = {lo, hi}; any = true; return; }
  w.first = std::min(w.first, lo);
  w.second = std::max(w.second, hi);
}
}  // namespace

std::pair<TimeNs, TimeNs> Trace::Window() const {
  std::pair<TimeNs, TimeNs> w{0, 0};
  bool any = false;
  Extend(w, any, kernels.start, kernels.end);
  Extend(w, any, memcpys.start, memcpys.end);
  Extend(w, any, memsets.start, memsets.end);
  Extend(w, any, syncs.start, syncs.end);
  Extend(w, any, api_calls.start, api_calls.end);
  Extend(w, any, ranges.start, ranges.end);
  return w;
}

const Device* Trace::FindDevice(int32_t id) const {
  for (const auto& d : devices)
    if (d.id == id) return &d;
  return nullptr;
}

namespace {
// Depth of each range among ranges on the same (pid, tid), from interval containment.
// Sets each range's nesting depth on its thread; returns how many ranges overlap an enclosing
// one without nesting in it. `order` gets the rows in the order they were nested in
// (Trace::range_order).
uint64_t ComputeRangeDepth(RangeTable& r, std::vector<uint32_t>& order) {
  // uint32 rows halve the order's memory; 2^32 ranges would need well over 100 GB of columns.
  const size_t n = std::min<size_t>(r.size(), UINT32_MAX);
  order.resize(n);
  {  // its pages taken (page faults, most of the cost) by two cores when there are many
    const size_t half = n >= (size_t{1} << 18) ? n / 2 : n;
    const auto number = [&](size_t from, size_t to) {
      for (size_t i = from; i < to; ++i) order[i] = static_cast<uint32_t>(i);
    };
    if (half == n) {
      number(0, n);
    } else {
      internal::SideTask later([&] { number(half, n); });
      number(0, half);
      later.Wait();
    }
  }
  // Rows are mostly in order already; a profiler writes an enclosing range after what it encloses.
  // Sorted by lane (pid, tid, on_gpu), then time, then nested with a stack per lane.
  const auto nest = [&](auto lane_of) {
    const auto by_lane_and_time = [&](uint32_t a, uint32_t b) {
      if (lane_of(a) != lane_of(b)) return lane_of(a) < lane_of(b);
      if (r.start[a] != r.start[b]) return r.start[a] < r.start[b];
      if (r.end[a] != r.end[b]) return r.end[a] > r.end[b];  // outer range first when both start together
      return a < b;                                          // identical ranges: the earlier row is the outer one
    };
    // A profiler writes one category after another (a thread's ops with each step's range after
    // them, then its Python frames), each nearly in time order: sorted a block at a time and then
    // merged, where sorting all at once would set a whole category aside and sort it (95 ms for
    // 10^6 frames). The order is total, so every way of sorting gives the same rows.
    internal::SortByBlocksOnTwo(order.data(), order.data() + order.size(), by_lane_and_time);
    // The enclosing ranges' ends, innermost last (a range's depth is how many enclose it).
    std::vector<TimeNs> open;
    const TimeNs* const start = r.start.data();
    const TimeNs* const end = r.end.data();
    int32_t* const depth = r.depth.data();
    uint64_t overlapping = 0;
    for (size_t k = 0; k < order.size(); ++k) {
      const uint32_t i = order[k];
      if (k > 0 && lane_of(order[k - 1]) != lane_of(i)) open.clear();
      while (!open.empty() && open.back() <= start[i]) open.pop_back();
      // Partially overlapping (not nested) ranges are placed one deeper than what they overlap.
      if (!open.empty() && end[i] > open.back()) ++overlapping;
      depth[i] = static_cast<int32_t>(open.size());
      open.push_back(end[i]);
    }
    return overlapping;
  };
  // Every range on one thread and none on a GPU (a coded column of one value holds it in every
  // row): one lane, and no lane to number or read.
  if (r.pid.stored() <= 1 && r.tid.stored() <= 1 &&
      std::all_of(r.on_gpu.begin(), r.on_gpu.end(), [](uint8_t g) { return g == 0; }))
    return nest([](size_t) { return uint32_t{0}; });
  // Each row's (pid, tid, on_gpu) as its rank among the distinct ones (few: one per thread), so
  // that the sort compares one integer where it would read three columns: each half of the rows
  // numbers the keys it meets on its own core, then the numbers become the keys' ranks among all.
  using Lane = std::tuple<int64_t, int64_t, uint8_t>;
  std::vector<uint32_t> lane(n);
  const size_t mid = n >= (size_t{1} << 18) ? n / 2 : n;
  std::array<std::map<Lane, uint32_t>, 2> met;  // per half: key -> its number there
  std::array<std::vector<uint32_t>, 2> rank;    // per half: number -> rank
  auto in_halves = [&](auto f) {
    if (mid == n) return f(0, size_t{0}, n);
    internal::SideTask second([&] { f(1, mid, n); });
    f(0, size_t{0}, mid);
    second.Wait();
  };
  in_halves([&](size_t h, size_t from, size_t to) {
    auto last = met[h].end();
    for (size_t i = from; i < to; ++i) {
      const Lane key{r.pid[i], r.tid[i], r.on_gpu[i]};
      if (last == met[h].end() || last->first != key)
        last = met[h].try_emplace(key, static_cast<uint32_t>(met[h].size())).first;
      lane[i] = last->second;
    }
  });
  {
    std::map<Lane, uint32_t> all;
    for (const auto& m : met)
      for (const auto& entry : m) all.emplace(entry.first, 0);
    uint32_t next = 0;
    for (auto& entry : all) entry.second = next++;
    for (size_t h = 0; h < 2; ++h) {
      rank[h].resize(met[h].size());
      for (const auto& [key, number] : met[h]) rank[h][number] = all.at(key);
    }
  }
  in_halves([&](size_t h, size_t from, size_t to) {
    for (size_t i = from; i < to; ++i) lane[i] = rank[h][lane[i]];
  });
  return nest([&](size_t i) { return lane[i]; });
}
}  // namespace

namespace {
// The correlation ids of the API calls, for membership tests. CUPTI numbers correlations
// consecutively, so the ids usually fill a narrow range: then a bitmap over [min, max] (one bit
// per id, a test is one load); otherwise a sorted vector and binary search.
class CorrelationSet {
 public:
  // The known ids of every column (NarrowColumns), without a copy of them.
  template <class... Ids>
  explicit CorrelationSet(const Ids&... ids) {
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    size_t known = 0;
    auto range = [&](const auto& column) {
      for (int64_t c : column) {
        if (c == kUnknownId) continue;
        lo = std::min(lo, c);
        hi = std::max(hi, c);
        ++known;
      }
    };
    (range(ids), ...);
    if (known == 0) return;
    max_ = hi;
    const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);  // no overflow
    if (span / 64 <= known) {
      lo_ = lo;
      span_ = span;
      bits_.assign(span / 64 + 1, 0);
      auto set = [&](const auto& column) {
        for (int64_t c : column)
          if (c != kUnknownId) Set(static_cast<uint64_t>(c) - static_cast<uint64_t>(lo));
      };
      (set(ids), ...);
    } else {
      sorted_.reserve(known);
      auto add = [&](const auto& column) {
        for (int64_t c : column)
          if (c != kUnknownId) sorted_.push_back(c);
      };
      (add(ids), ...);
      std::sort(sorted_.begin(), sorted_.end());
    }
  }
  bool empty() const { return bits_.empty() && sorted_.empty(); }
  int64_t max() const { return max_; }  // the largest id (INT64_MIN when empty)
  bool Contains(int64_t c) const {
    if (!bits_.empty()) {
      const uint64_t off = static_cast<uint64_t>(c) - static_cast<uint64_t>(lo_);
      return c >= lo_ && off <= span_ && (bits_[off / 64] >> (off % 64) & 1u);
    }
    return std::binary_search(sorted_.begin(), sorted_.end(), c);
  }

 private:
  void Set(uint64_t off) { bits_[off / 64] |= uint64_t{1} << (off % 64); }
  int64_t lo_ = 0, max_ = INT64_MIN;
  uint64_t span_ = 0;
  std::vector<uint64_t> bits_;
  std::vector<int64_t> sorted_;
};

// Drops the rows whose time column holds a negative value; returns how many.
template <class T>
uint64_t DropNegative(T& table, const std::vector<TimeNs>& time) {
  size_t negative = 0;
  for (TimeNs t : time) negative += t < 0;
  if (negative == 0) return 0;
  T kept;
  for (size_t i = 0; i < table.size(); ++i)
    if (time[i] >= 0) kept.Add(table.Row(i));
  table = std::move(kept);
  return negative;
}
}  // namespace

namespace {
enum class CallRole : int8_t { kUnknown = -1, kOther, kLaunch, kDeviceSync, kCaptureBegin, kCaptureEnd };

// Launches are the API calls that start GPU work which always leaves a GPU record (kernel, memcpy
// or memset activity carrying the call's correlation id): kernel launches of the runtime, driver
// and HIP APIs and graph launches (cudaLaunchHostFunc runs on the CPU and is not one). Device syncs
// return only when all GPU work launched before them has finished. A stream capture's begin and end
// calls bound the launches that are captured into a graph instead of run. nsys adds a version suffix
// ("cudaLaunchKernel_v7000"); per-thread-stream variants end in _ptsz / _ptds / _spt.
CallRole RoleOf(std::string_view name) {
  for (size_t us; (us = name.rfind('_')) != std::string_view::npos;) {
    const std::string_view tail = name.substr(us + 1);
    const bool version = tail.size() > 1 && tail[0] == 'v' &&
                         std::all_of(tail.begin() + 1, tail.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!version && tail != "ptsz" && tail != "ptds" && tail != "spt") break;
    name = name.substr(0, us);
  }
  static constexpr std::string_view kLaunches[] = {
      "cudaLaunchKernel", "cudaLaunchKernelExC", "cudaLaunchCooperativeKernel",
      "cudaLaunchCooperativeKernelMultiDevice", "cudaGraphLaunch", "cuLaunchKernel", "cuLaunchKernelEx",
      "cuLaunchCooperativeKernel", "cuLaunchCooperativeKernelMultiDevice", "cuLaunchGrid", "cuLaunchGridAsync",
      "cuGraphLaunch", "hipLaunchKernel", "hipExtLaunchKernel", "hipModuleLaunchKernel", "hipExtModuleLaunchKernel",
      "hipHccModuleLaunchKernel", "hipLaunchCooperativeKernel", "hipGraphLaunch"};
  static constexpr std::string_view kDeviceSyncs[] = {"cudaDeviceSynchronize", "cuCtxSynchronize",
                                                      "hipDeviceSynchronize"};
  static constexpr std::string_view kCaptureBegins[] = {"cudaStreamBeginCapture", "cudaStreamBeginCaptureToGraph",
                                                        "cuStreamBeginCapture", "cuStreamBeginCaptureToGraph",
                                                        "hipStreamBeginCapture", "hipStreamBeginCaptureToGraph"};
  static constexpr std::string_view kCaptureEnds[] = {"cudaStreamEndCapture", "cuStreamEndCapture",
                                                      "hipStreamEndCapture"};
  auto in = [name](const auto& list) { return std::find(std::begin(list), std::end(list), name) != std::end(list); };
  if (in(kLaunches)) return CallRole::kLaunch;
  if (in(kDeviceSyncs)) return CallRole::kDeviceSync;
  if (in(kCaptureBegins)) return CallRole::kCaptureBegin;
  return in(kCaptureEnds) ? CallRole::kCaptureEnd : CallRole::kOther;
}

}  // namespace

ApiRole ApiRoleOf(std::string_view name) {
  switch (RoleOf(name)) {
    case CallRole::kLaunch: {
      const bool graph = name.find("GraphLaunch") != std::string_view::npos;
      return graph ? ApiRole::kGraphLaunch : ApiRole::kKernelLaunch;
    }
    case CallRole::kDeviceSync: return ApiRole::kDeviceSync;
    case CallRole::kCaptureBegin: return ApiRole::kCaptureBegin;
    case CallRole::kCaptureEnd: return ApiRole::kCaptureEnd;
    default: return ApiRole::kOther;
  }
}

namespace {

// The calls made while their thread was capturing a stream into a graph: after a begin-capture
// call and up to the next end-capture call of the same thread (pid, tid). A launch then enqueues
// nothing (cudaStreamBeginCapture): its work runs when the graph is launched, under the graph
// launch's correlation id. Launches another thread makes into the capturing stream (relaxed
// capture mode) cannot be told apart without the stream and still count. Empty when no thread
// captured.
template <typename Role>
std::vector<bool> DuringCapture(const ApiTable& api, const Role& role) {
  std::vector<uint32_t> calls;  // begin, end and launch calls
  bool any = false;
  for (size_t i = 0; i < api.size(); ++i) {
    const CallRole r = role(i);
    any = any || r == CallRole::kCaptureBegin;
    if (r == CallRole::kCaptureBegin || r == CallRole::kCaptureEnd || r == CallRole::kLaunch)
      calls.push_back(static_cast<uint32_t>(i));
  }
  if (!any) return {};
  std::sort(calls.begin(), calls.end(), [&](uint32_t a, uint32_t b) {
    return std::tuple(api.pid[a], api.tid[a], api.start[a], a) < std::tuple(api.pid[b], api.tid[b], api.start[b], b);
  });
  std::vector<bool> captured(api.size(), false);
  int depth = 0;
  for (size_t k = 0; k < calls.size(); ++k) {
    const uint32_t i = calls[k];
    if (k > 0 && (api.pid[i] != api.pid[calls[k - 1]] || api.tid[i] != api.tid[calls[k - 1]])) depth = 0;
    const CallRole r = role(i);
    if (r == CallRole::kCaptureBegin) ++depth;
    else if (r == CallRole::kCaptureEnd) depth = std::max(0, depth - 1);
    else captured[i] = depth > 0;
  }
  return captured;
}

// Whether every row with a known pid names the same process (GPU records without a pid, as Kineto
// writes them, belong to any): then correlation ids alone match records to calls.
bool OneProcess(const Trace& trace) {
  int64_t only_pid = kUnknownId;
  for (const CodedColumn<int64_t>* pids :
       {&trace.kernels.pid, &trace.memcpys.pid, &trace.memsets.pid, &trace.api_calls.pid})
    for (int64_t pid : *pids) {
      if (pid == kUnknownId || pid == only_pid) continue;
      if (only_pid != kUnknownId) return false;
      only_pid = pid;
    }
  return true;
}

// GPU records whose correlation id no API call of their process carries (ids are numbered per
// process: a kernel of process A must not match a call of process B that happens to share its
// id). Records or calls without a pid match any process.
uint64_t CountUnmatchedCorrelation(const Trace& trace) {
  const ApiTable& api = trace.api_calls;
  const std::vector<const CodedColumn<int64_t>*> pids{&trace.kernels.pid, &trace.memcpys.pid, &trace.memsets.pid};
  const std::vector<const NarrowColumn*> corrs{&trace.kernels.correlation, &trace.memcpys.correlation,
                                               &trace.memsets.correlation};
  uint64_t unmatched = 0;
  if (OneProcess(trace)) {
    const CorrelationSet launched(api.correlation);
    for (const auto* corr : corrs)
      for (int64_t c : *corr)
        if (c != kUnknownId && !launched.Contains(c)) ++unmatched;
    return unmatched;
  }
  std::vector<std::pair<int64_t, int64_t>> calls;  // (pid, correlation), sorted
  std::vector<int64_t> any_pid;                     // every call's correlation, for records without a pid
  for (size_t i = 0; i < api.size(); ++i) {
    if (api.correlation[i] == kUnknownId) continue;
    calls.emplace_back(api.pid[i], api.correlation[i]);
    any_pid.push_back(api.correlation[i]);
  }
  std::sort(calls.begin(), calls.end());
  std::sort(any_pid.begin(), any_pid.end());
  for (size_t t = 0; t < corrs.size(); ++t)
    for (size_t i = 0; i < corrs[t]->size(); ++i) {
      const int64_t c = (*corrs[t])[i], pid = (*pids[t])[i];
      if (c == kUnknownId) continue;
      const bool found = pid == kUnknownId ? std::binary_search(any_pid.begin(), any_pid.end(), c)
                                           : std::binary_search(calls.begin(), calls.end(), std::pair{pid, c}) ||
                                                 std::binary_search(calls.begin(), calls.end(), std::pair{kUnknownId, c});
      if (!found) ++unmatched;
    }
  return unmatched;
}

// Successful launch calls whose correlation id no GPU record of their process carries. Correlation
// ids are numbered per process in call order, so records match by (pid, id); records without a pid
// (Kineto's GPU events) match any process. A launch after the last GPU work its process recorded
// may not have run before the capture stopped (the capture's tail): it counts only when its
// process recorded GPU work with a later correlation id, or returned from a later device sync
// (which waits for the launch's work), or when the trace holds no GPU record at all (lost tables).
// A launch captured into a graph (DuringCapture) runs nothing and is not one.
uint64_t CountUnmatchedLaunches(const Trace& trace) {
  const ApiTable& api = trace.api_calls;
  std::vector<CallRole> roles(trace.strings.size(), CallRole::kUnknown);  // per name id
  auto named = [&](size_t i) {
    CallRole& r = roles[api.name[i]];
    if (r == CallRole::kUnknown) r = RoleOf(trace.strings.View(api.name[i]));
    return r;
  };
  // One pass over the calls: the successful launches with a correlation id, the device syncs
  // with one (pid, correlation), and whether any call begins a stream capture.
  std::vector<uint32_t> launch_rows;
  launch_rows.reserve(api.size());  // room taken once: pages never written cost no memory
  std::vector<std::pair<int64_t, int64_t>> device_syncs;
  bool capture = false;
  for (size_t i = 0; i < api.size(); ++i) {
    const CallRole r = named(i);
    if (r == CallRole::kOther) continue;
    capture = capture || r == CallRole::kCaptureBegin;
    if (api.correlation[i] == kUnknownId) continue;
    if (r == CallRole::kLaunch && api.return_value[i] == 0) launch_rows.push_back(static_cast<uint32_t>(i));
    else if (r == CallRole::kDeviceSync) device_syncs.emplace_back(api.pid[i], api.correlation[i]);
  }
  if (capture) {
    const std::vector<bool> captured = DuringCapture(api, named);
    std::erase_if(launch_rows, [&](uint32_t i) { return captured[i]; });
  }
  if (launch_rows.empty()) return 0;
  // One process: correlation ids alone decide, through a bitmap. Several processes need (pid, id)
  // pairs, sorted, below: ids are per process.
  if (OneProcess(trace)) {
    const CorrelationSet recorded(trace.kernels.correlation, trace.memcpys.correlation, trace.memsets.correlation);
    int64_t last = recorded.max();  // the largest correlation id of a GPU record or device sync
    for (const auto& sync : device_syncs) last = std::max(last, sync.second);
    const bool none = recorded.empty();
    uint64_t lost = 0;
    for (uint32_t i : launch_rows) {
      const int64_t c = api.correlation[i];
      if (!recorded.Contains(c) && (none || last > c)) ++lost;
    }
    return lost;
  }
  std::vector<std::pair<int64_t, int64_t>> records;  // (pid, correlation), sorted
  std::map<int64_t, int64_t> last;  // pid -> largest correlation id of a GPU record or device sync
  auto later = [&](int64_t pid, int64_t corr) {
    auto [it, inserted] = last.try_emplace(pid, corr);
    if (!inserted) it->second = std::max(it->second, corr);
  };
  auto add = [&](const CodedColumn<int64_t>& pid, const NarrowColumn& corr) {
    for (size_t i = 0; i < corr.size(); ++i) {
      if (corr[i] == kUnknownId) continue;
      records.emplace_back(pid[i], corr[i]);
      later(pid[i], corr[i]);
    }
  };
  add(trace.kernels.pid, trace.kernels.correlation);
  add(trace.memcpys.pid, trace.memcpys.correlation);
  add(trace.memsets.pid, trace.memsets.correlation);
  const bool no_records = records.empty();
  for (const auto& [pid, corr] : device_syncs) later(pid, corr);
  std::sort(records.begin(), records.end());
  std::vector<int64_t> any_pid;  // for launches without a pid
  for (const auto& r : records) any_pid.push_back(r.second);
  std::sort(any_pid.begin(), any_pid.end());
  int64_t last_any = INT64_MIN;
  for (const auto& [pid, corr] : last) last_any = std::max(last_any, corr);
  auto last_of = [&](int64_t pid) {
    auto it = last.find(pid);
    return it == last.end() ? INT64_MIN : it->second;
  };
  uint64_t unmatched = 0;
  for (uint32_t i : launch_rows) {
    const int64_t pid = api.pid[i], c = api.correlation[i];
    bool found;
    int64_t after;  // the largest correlation id of its process's GPU records and device syncs
    if (pid == kUnknownId) {
      found = std::binary_search(any_pid.begin(), any_pid.end(), c);
      after = last_any;
    } else {
      found = std::binary_search(records.begin(), records.end(), std::pair{pid, c}) ||
              std::binary_search(records.begin(), records.end(), std::pair{kUnknownId, c});
      after = std::max(last_of(pid), last_of(kUnknownId));
    }
    if (!found && (no_records || after > c)) ++unmatched;
  }
  return unmatched;
}
}  // namespace

void FinalizeTrace(Trace& trace) {
  // Every kept timestamp is in [0, INT64_MAX], so end - start of any two never overflows.
  uint64_t negative = DropNegative(trace.kernels, trace.kernels.start) +
                      DropNegative(trace.memcpys, trace.memcpys.start) +
                      DropNegative(trace.memsets, trace.memsets.start) +
                      DropNegative(trace.syncs, trace.syncs.start) +
                      DropNegative(trace.api_calls, trace.api_calls.start) +
                      DropNegative(trace.ranges, trace.ranges.start) +
                      DropNegative(trace.samples, trace.samples.time);
  trace.quality.Add(Quality::kNegativeTimestamp, negative);
  // The launches are counted on the second core (they read the calls, the GPU records and the
  // names) while this one counts the records' correlations and nests the ranges.
  uint64_t unmatched_launches = 0;
  {
    internal::SideTask launches([&] { unmatched_launches = CountUnmatchedLaunches(trace); });
    if (trace.api_calls.size() > 0) trace.quality.Set(Quality::kUnmatchedCorrelation, CountUnmatchedCorrelation(trace));
    trace.quality.Add(Quality::kOverlappingRanges, ComputeRangeDepth(trace.ranges, trace.range_order));
    launches.Wait();
  }
  trace.quality.Set(Quality::kUnmatchedLaunch, unmatched_launches);
  uint64_t invalid_utf8 = 0;
  for (StringId id = 0; id < trace.strings.size(); ++id) {
    std::string_view text = trace.strings.View(id);
    if (IsValidUtf8(text)) continue;
    ++invalid_utf8;
    trace.strings.Replace(id, RepairUtf8(text));
  }
  trace.quality.Add(Quality::kInvalidUtf8, invalid_utf8);
}

}  // namespace tg
