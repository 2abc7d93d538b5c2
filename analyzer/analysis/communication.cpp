// The communication of one trace: the per-collective table and the rank's figures
// (communication.h). One pass over the kernels in start order; no sort when the summary's order
// is given.
#include "tracegate/analyzer/communication.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <limits>
#include <map>
#include <tuple>

#include "analyzer/util/demangle.h"
#include "analyzer/util/intervals.h"
#include "tracegate/analyzer/summary.h"

namespace tg {

using internal::Demangle;
using internal::IntersectUnions;
using internal::LengthOf;
using internal::UnionOf;

namespace {

// PyTorch's c10::ScalarType names (what record_param_comms writes as "dtype") and their sizes.
struct DtypeSize {
  std::string_view name;
  int64_t bytes;
};
constexpr DtypeSize kDtypes[] = {
    {"Byte", 1},         {"Char", 1},          {"Bool", 1},           {"Short", 2},
    {"Int", 4},          {"Long", 8},          {"Half", 2},           {"Float", 4},
    {"Double", 8},       {"BFloat16", 2},      {"ComplexHalf", 4},    {"ComplexFloat", 8},
    {"ComplexDouble", 16}, {"QInt8", 1},       {"QUInt8", 1},         {"QInt32", 4},
    {"Float8_e5m2", 1},  {"Float8_e4m3fn", 1}, {"Float8_e5m2fnuz", 1}, {"Float8_e4m3fnuz", 1},
    {"UInt16", 2},       {"UInt32", 4},        {"UInt64", 8},
};

// Letters only, lower case: "_reduce_scatter_base" -> "reducescatterbase".
std::string Letters(std::string_view s) {
  std::string out;
  for (char c : s)
    if (std::isalpha(static_cast<unsigned char>(c))) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The union of one kind of kernels on one device, fed in start order, clipped to the iteration
// spans (sorted, disjoint): its length, and its pieces when `keep`.
class ClippedUnion {
 public:
  ClippedUnion(const std::vector<Interval>& spans, bool keep) : spans_(&spans), keep_(keep) {}
  void Add(TimeNs s, TimeNs e) {
    if (e <= s) return;
    if (open_ && s <= cur_.second) {
      cur_.second = std::max(cur_.second, e);
      return;
    }
    Close();
    cur_ = {s, e};
    open_ = true;
  }
  void Close() {
    if (!open_) return;
    open_ = false;
    const std::vector<Interval>& spans = *spans_;
    while (next_ < spans.size() && spans[next_].second <= cur_.first) ++next_;  // starts only grow
    for (size_t j = next_; j < spans.size() && spans[j].first < cur_.second; ++j) {
      const TimeNs a = std::max(cur_.first, spans[j].first), b = std::min(cur_.second, spans[j].second);
      if (b <= a) continue;
      length_ += b - a;
      if (keep_) pieces_.emplace_back(a, b);
    }
  }
  TimeNs length() const { return length_; }
  const std::vector<Interval>& pieces() const { return pieces_; }

 private:
  const std::vector<Interval>* spans_;
  bool keep_;
  bool open_ = false;
  Interval cur_{0, 0};
  size_t next_ = 0;
  TimeNs length_ = 0;
  std::vector<Interval> pieces_;
};

struct DeviceUnions {
  int32_t device;
  ClippedUnion comm, compute;
};

// The message of collective kernel `i`: bytes, or why they are unknown.
std::optional<int64_t> MessageBytes(const Trace& t, size_t i, std::string* reason) {
  const KernelTable& k = t.kernels;
  if (!HasCollectiveMetadata(t, i)) {
    *reason = "no collective metadata (a collective by its kernel name): message size unknown";
    return std::nullopt;
  }
  const int64_t nelems = std::max(k.coll_in_nelems[i], k.coll_out_nelems[i]);
  const std::string_view dtype = t.Name(k.coll_dtype[i]);
  const int64_t size = DtypeBytes(dtype);
  if (nelems < 0) *reason = "no message element count (In/Out msg nelems) in the metadata";
  else if (dtype.empty()) *reason = "no dtype in the metadata";
  else if (size == 0) *reason = "unknown dtype '" + std::string(dtype) + "'";
  else if (nelems > std::numeric_limits<int64_t>::max() / size) *reason = "message size overflows 64 bits";
  else return nelems * size;
  return std::nullopt;
}

// The number an iteration marker's name ends with ("ProfilerStep#12", "step_3"), or -1.
int64_t StepOf(std::string_view name) {
  size_t d = name.size();
  while (d > 0 && std::isdigit(static_cast<unsigned char>(name[d - 1]))) --d;
  int64_t v = -1;
  if (d == name.size() || name.size() - d > 18) return -1;
  std::from_chars(name.data() + d, name.data() + name.size(), v);
  return v;
}

}  // namespace

int64_t DtypeBytes(std::string_view dtype) {
  for (const DtypeSize& d : kDtypes)
    if (d.name == dtype) return d.bytes;
  return 0;
}

void FillCollectiveBandwidths(CollectiveStat& s) {
  if (!s.bytes) {
    s.algbw_reason = s.busbw_reason = s.bytes_reason;
    return;
  }
  if (s.total_ns <= 0) {
    s.algbw_reason = s.busbw_reason = "zero total time";
    return;
  }
  s.algbw_gbs = static_cast<double>(*s.bytes) * static_cast<double>(s.count) / static_cast<double>(s.total_ns);
  if (s.group_size < 1) {
    s.busbw_reason = "group size unknown";
  } else if (std::optional<double> f = BusBandwidthFactor(s.collective, s.group_size)) {
    s.busbw_gbs = *s.algbw_gbs * *f;
  } else {
    s.busbw_reason = "no bus-bandwidth factor for collective '" + s.collective + "'";
  }
}

std::optional<double> BusBandwidthFactor(std::string_view collective, int64_t group_size) {
  if (group_size < 1) return std::nullopt;
  const std::string c = Letters(collective);
  const double n = static_cast<double>(group_size);
  if (c.find("allreduce") != std::string::npos) return 2.0 * (n - 1) / n;
  if (c.find("allgather") != std::string::npos || c.find("reducescatter") != std::string::npos ||
      c.find("alltoall") != std::string::npos)
    return (n - 1) / n;
  if (c.starts_with("broadcast") || c.starts_with("reduce") || c.starts_with("send") || c.starts_with("recv"))
    return 1.0;
  return std::nullopt;
}

CommunicationAnalysis AnalyzeCommunication(const Trace& trace, const IterationAnalysis& iterations,
                                           const std::vector<KernelClass>& kernel_classes,
                                           const std::vector<uint32_t>& kernels_by_start) {
  CommunicationAnalysis out;
  const KernelTable& k = trace.kernels;
  RankCommunication& r = out.rank;
  if (auto it = trace.metadata.find("rank"); it != trace.metadata.end()) {
    int64_t v = 0;
    const std::string& s = it->second;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc() && end == s.data() + s.size()) r.rank = v;
    else r.rank_reason = "distributedInfo.rank is not an integer ('" + s + "')";
  } else {
    r.rank_reason = "no distributedInfo.rank in the trace";
  }
  if (auto it = trace.metadata.find(meta::kSourcePath); it != trace.metadata.end()) r.file = it->second;
  if (kernel_classes.size() != k.size()) return out;

  const bool any_comm = std::find(kernel_classes.begin(), kernel_classes.end(), KernelClass::kCommunication) !=
                        kernel_classes.end();
  std::vector<Interval> spans;
  for (const Iteration& it : iterations.iterations) spans.emplace_back(it.start, it.end);
  spans = UnionOf(spans);
  std::vector<uint32_t> own_order;
  const std::vector<uint32_t>& order = kernels_by_start.size() == k.size() ? kernels_by_start : (own_order = KernelsByStart(k));

  // Each kept iteration's step, for the calls launched in it.
  std::vector<int64_t> steps;
  for (const Iteration& it : iterations.iterations) steps.push_back(StepOf(it.name));
  const bool assigned = iterations.kernel_iteration.size() == k.size();

  std::vector<DeviceUnions> devices;
  size_t last = 0;
  using Key = std::tuple<std::string, std::string, int64_t, int32_t>;
  std::map<Key, CollectiveStat> stats;
  std::map<StringId, std::string> short_names;
  for (uint32_t i : order) {
    if (last >= devices.size() || devices[last].device != k.device[i]) {
      last = 0;
      while (last < devices.size() && devices[last].device != k.device[i]) ++last;
      if (last == devices.size())
        devices.push_back({k.device[i], ClippedUnion(spans, any_comm), ClippedUnion(spans, any_comm)});
    }
    const bool comm = kernel_classes[i] == KernelClass::kCommunication;
    (comm ? devices[last].comm : devices[last].compute).Add(k.start[i], k.end[i]);
    if (!comm) continue;
    ++out.collective_kernels;
    CollectiveCall call;
    call.start_ns = k.start[i];
    call.end_ns = k.end[i];
    call.kernel = i;
    if (const int32_t it = assigned ? iterations.kernel_iteration[i] : -1; it >= 0 && static_cast<size_t>(it) < steps.size()) {
      call.iteration = it;
      call.step = steps[static_cast<size_t>(it)];
    }
    std::string reason;
    call.bytes = MessageBytes(trace, i, &reason);
    std::string dtype;
    int32_t group_size = 0;
    if (HasCollectiveMetadata(trace, i)) {
      ++out.with_metadata;
      call.name = trace.Name(k.collective[i]);
      call.group = trace.Name(k.coll_group[i]);
      call.seq = k.coll_seq[i];
      dtype = trace.Name(k.coll_dtype[i]);
      group_size = k.coll_group_size[i];
    } else {
      auto [it, inserted] = short_names.try_emplace(k.name[i]);
      if (inserted) it->second = ShortKernelName(Demangle(trace.Name(k.name[i])));
      call.name = it->second;
    }
    CollectiveStat& s = stats[Key{call.name, dtype, call.bytes.value_or(-1), group_size}];
    if (s.count == 0) {
      s.collective = call.name;
      s.dtype = dtype;
      s.bytes = call.bytes;
      s.bytes_reason = reason;
      s.group_size = group_size;
    }
    ++s.count;
    s.total_ns += std::max<TimeNs>(0, k.end[i] - k.start[i]);
    r.calls.push_back(std::move(call));
  }

  TimeNs comm_ns = 0, compute_ns = 0, overlap_ns = 0;
  for (DeviceUnions& d : devices) {
    d.comm.Close();
    d.compute.Close();
    comm_ns += d.comm.length();
    compute_ns += d.compute.length();
    if (any_comm) overlap_ns += LengthOf(IntersectUnions(d.comm.pieces(), d.compute.pieces()));
  }
  const size_t n = iterations.iterations.size();
  if (n == 0) {
    r.comm_reason = r.overlap_reason = "no iterations";
  } else {
    r.comm_ms = NsToMs(comm_ns) / static_cast<double>(n);
    r.compute_ms = NsToMs(compute_ns) / static_cast<double>(n);
    if (comm_ns > 0) r.overlap_ratio = static_cast<double>(overlap_ns) / static_cast<double>(comm_ns);
    else r.overlap_reason = "no communication kernels inside the iterations";
  }

  for (auto& [key, s] : stats) {
    FillCollectiveBandwidths(s);
    out.collectives.push_back(std::move(s));
  }
  std::stable_sort(out.collectives.begin(), out.collectives.end(), [](const CollectiveStat& a, const CollectiveStat& b) {
    return a.total_ns > b.total_ns;  // the map's key order breaks ties
  });
  return out;
}

}  // namespace tg
