// Summarize(): one pass to build a compact sort buffer of GPU work, sorts, and linear sweeps.
// O(n log n) time; memory beyond the trace is the sort buffers (8 bytes per GPU activity, 12 per
// kernel for the duration statistics), independent of how many distinct names or streams exist.
#include "tracegate/analyzer/summary.h"

#include <algorithm>
#include <numeric>
#include <unordered_map>

#include "analyzer/analysis/summary_internal.h"
#include "analyzer/util/demangle.h"
#include "analyzer/util/huge_pages.h"
#include "tracegate/analyzer/stats.h"

namespace tg {

using internal::ApiIndex;
using internal::Demangle;
using internal::HostStages;

size_t GapBucketOf(TimeNs gap_ns) {
  size_t b = 0;
  while (b < kGapBucketUpperNs.size() && gap_ns >= kGapBucketUpperNs[b]) ++b;
  return b;
}

CopyDirection DirectionOf(CopyKind kind) {
  switch (kind) {
    case CopyKind::kHtoD: return CopyDirection::kHtoD;
    case CopyKind::kDtoH: return CopyDirection::kDtoH;
    case CopyKind::kDtoD: return CopyDirection::kDtoD;
    case CopyKind::kPtoP: return CopyDirection::kPtoP;
    default: return CopyDirection::kOther;
  }
}

namespace {

TimeNs Duration(TimeNs start, TimeNs end) { return end > start ? end - start : 0; }

SummaryCounts CountEvents(const Trace& t) {
  SummaryCounts c;
  c.kernels = t.kernels.size();
  c.memcpys = t.memcpys.size();
  c.memsets = t.memsets.size();
  c.syncs = t.syncs.size();
  for (ApiKind k : t.api_calls.kind) (k == ApiKind::kDriver ? c.driver_calls : c.runtime_calls)++;
  c.ranges = t.ranges.size();
  c.samples = t.samples.size();
  return c;
}

// Kernel statistics grouped by demangled name. Each distinct StringId is demangled once.
void SummarizeKernels(const Trace& t, const AnalyzeOptions& options, Summary& s) {
  const KernelTable& k = t.kernels;
  std::vector<uint32_t> group_of_name(t.strings.size(), UINT32_MAX);
  std::unordered_map<std::string, uint32_t> group_of_display;
  std::vector<KernelStat> groups;
  std::vector<uint32_t> group = internal::WholeVector<uint32_t>(k.size());
  for (size_t i = 0; i < k.size(); ++i) {
    uint32_t& g = group_of_name[k.name[i]];
    if (g == UINT32_MAX) {
      std::string display = Demangle(t.Name(k.name[i]));
      auto [it, inserted] = group_of_display.emplace(display, static_cast<uint32_t>(groups.size()));
      if (inserted) {
        KernelStat st;
        st.name = k.name[i];
        st.display_name = std::move(display);
        groups.push_back(std::move(st));
      }
      g = it->second;
    }
    group[i] = g;
    groups[g].count++;
  }
  // Counting sort of durations by group, then the percentiles inside each group.
  std::vector<size_t> offset(groups.size() + 1, 0);
  for (size_t g = 0; g < groups.size(); ++g) offset[g + 1] = offset[g] + groups[g].count;
  std::vector<TimeNs> durations = internal::WholeVector<TimeNs>(k.size());
  {
    std::vector<size_t> fill(offset.begin(), offset.end() - 1);
    for (size_t i = 0; i < k.size(); ++i) durations[fill[group[i]]++] = Duration(k.start[i], k.end[i]);
  }
  s.total_kernel_ns = 0;
  for (size_t g = 0; g < groups.size(); ++g) {
    auto first = durations.begin() + static_cast<ptrdiff_t>(offset[g]);
    auto last = durations.begin() + static_cast<ptrdiff_t>(offset[g + 1]);
    KernelStat& st = groups[g];
    for (auto it = first; it != last; ++it) st.total_ns += *it;
    st.mean_ns = static_cast<double>(st.total_ns) / static_cast<double>(st.count);
    auto [lo, hi] = std::minmax_element(first, last);
    st.min_ns = *lo;
    st.max_ns = *hi;
    // The two order statistics without a full sort (p95's rank is not below p50's).
    auto p50 = first + static_cast<ptrdiff_t>(NearestRankIndex(st.count, 50));
    auto p95 = first + static_cast<ptrdiff_t>(NearestRankIndex(st.count, 95));
    std::nth_element(first, p50, last);
    st.p50_ns = *p50;
    std::nth_element(p50, p95, last);
    st.p95_ns = *p95;
    s.total_kernel_ns += st.total_ns;
  }
  for (KernelStat& st : groups)
    st.share = s.total_kernel_ns > 0
                   ? static_cast<double>(st.total_ns) / static_cast<double>(s.total_kernel_ns)
                   : 0.0;
  s.distinct_kernels = groups.size();
  size_t keep = std::min(options.top_k, groups.size());
  auto by_total = [](const KernelStat& a, const KernelStat& b) {
    if (a.total_ns != b.total_ns) return a.total_ns > b.total_ns;
    return a.display_name < b.display_name;
  };
  std::partial_sort(groups.begin(), groups.begin() + static_cast<ptrdiff_t>(keep), groups.end(), by_total);
  groups.resize(keep);
  s.top_kernels = std::move(groups);
}

void SummarizeCopies(const Trace& t, const AnalyzeOptions& options, Summary& s) {
  for (size_t d = 0; d < s.copies.size(); ++d) s.copies[d].direction = static_cast<CopyDirection>(d);
  const MemcpyTable& m = t.memcpys;
  for (size_t i = 0; i < m.size(); ++i) {
    CopyStat& c = s.copies[static_cast<size_t>(DirectionOf(m.kind[i]))];
    c.count++;
    c.bytes += m.bytes[i];
    c.time_ns += Duration(m.start[i], m.end[i]);
    // The host side is whichever end lives in host memory; device-to-device copies have none.
    if (m.src_kind[i] == MemKind::kPageable || m.dst_kind[i] == MemKind::kPageable) c.pageable++;
    if (m.bytes[i] < options.small_copy_bytes) c.small++;
  }
  for (CopyStat& c : s.copies) {
    c.has_gbs = c.time_ns > 0;
    c.gbs = c.has_gbs ? static_cast<double>(c.bytes) / static_cast<double>(c.time_ns) : 0.0;
    c.pageable_share = c.count > 0 ? static_cast<double>(c.pageable) / static_cast<double>(c.count) : 0.0;
  }
  const MemsetTable& ms = t.memsets;
  s.memsets.count = ms.size();
  for (size_t i = 0; i < ms.size(); ++i) {
    s.memsets.bytes += ms.bytes[i];
    s.memsets.time_ns += Duration(ms.start[i], ms.end[i]);
  }
}

void SummarizeQuality(const Trace& t, Summary& s) {
  s.has_errors = t.quality.HasErrors();
  s.quality.reserve(kQualityInfo.size());
  for (const QualityInfo& info : kQualityInfo)
    s.quality.push_back(QualityEntry{info.id, info.key.data(), info.severity, info.description.data(),
                                     t.quality.Get(info.id)});
}

// What a trace without device activity holds, in one line: the host calls (the launches among
// them), the ranges, and the events of categories the importer skipped (an accelerator whose
// activity is recorded under categories tracegate does not model looks exactly like this).
std::string DescribeNoDeviceActivity(const Trace& t, const Summary& s) {
  std::vector<int8_t> is_launch(t.strings.size(), -1);
  uint64_t launches = 0;
  for (StringId id : t.api_calls.name) {
    if (is_launch[id] < 0) is_launch[id] = t.Name(id).find("Launch") != std::string_view::npos ? 1 : 0;
    launches += static_cast<uint64_t>(is_launch[id]);
  }
  const SummaryCounts& c = s.counts;
  std::string line = "no device activity: the trace holds no kernel, copy or memset records";
  if (c.runtime_calls + c.driver_calls == 0 && c.syncs == 0) {
    line += " and no CUDA API calls (a CPU-only process or rank)";
  } else {
    line += "; it holds " + std::to_string(c.runtime_calls + c.driver_calls) + " CUDA API calls (" +
            std::to_string(launches) + " kernel launches)";
    if (launches > 0) line += ": the launched work was not recorded (device activity tracing off or lost)";
  }
  line += ", " + std::to_string(c.ranges) + " ranges";
  const uint64_t skipped = t.quality.Get(Quality::kUnknownCategorySkipped);
  if (skipped > 0) {
    line += ", and " + std::to_string(skipped) + " events of categories tracegate does not model (unknown_category_skipped";
    if (auto it = t.metadata.find("unmodelled_categories"); it != t.metadata.end()) line += ": " + it->second;
    line += "), which may be an accelerator's activity";
  }
  return line;
}

}  // namespace

std::vector<uint32_t> KernelsByStart(const KernelTable& k) {
  std::vector<uint32_t> order(k.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(),
            [&](uint32_t a, uint32_t b) { return k.start[a] != k.start[b] ? k.start[a] < k.start[b] : a < b; });
  return order;
}

void SummarizeInto(const Trace& trace, const AnalyzeOptions& options, const ApiIndex* api_index,
                   const HostStages* stages, const std::vector<KernelClass>* kernel_classes,
                   const SpanSource* iteration_spans, const HostSource* host, const std::function<void()>* busy_known,
                   Summary* out, internal::HelpBoard* help) {
  Summary& s = *out;
  s = Summary{};
  s.counts = CountEvents(trace);
  std::tie(s.start_ns, s.end_ns) = trace.Window();
  s.duration_ns = s.end_ns - s.start_ns;
  SummarizeKernels(trace, options, s);
  SummarizeCopies(trace, options, s);
  internal::SummarizeTimelines(trace, options, api_index, stages, kernel_classes, iteration_spans, host, busy_known, s,
                               help);
  SummarizeQuality(trace, s);
  if (s.devices.empty()) s.no_device_activity = DescribeNoDeviceActivity(trace, s);
}

BusyOverview BinBusy(const Summary& s, const std::vector<std::pair<TimeNs, TimeNs>>& spans, size_t bins) {
  BusyOverview o;
  TimeNs from = 0, to = 0;
  bool any = false;
  auto extend = [&](TimeNs a, TimeNs b) {
    if (!any) from = a, to = b, any = true;
    from = std::min(from, a);
    to = std::max(to, std::max(a, b));
  };
  // A device's first start and last end are over all its rows, those of zero length included.
  for (const DeviceSummary& d : s.devices) extend(d.first_start_ns, d.last_end_ns);
  for (const auto& [a, b] : spans) extend(a, b);
  auto offset = [&](TimeNs x) { return static_cast<uint64_t>(x) - static_cast<uint64_t>(from); };
  const uint64_t span = any ? offset(to) : 0;
  const uint64_t nbins = std::max<uint64_t>(1, bins);
  o.start_ns = from;
  o.duration_ns = span;
  o.bin_ns = std::max<uint64_t>(1, span / nbins + (span % nbins != 0));
  const size_t n = any ? static_cast<size_t>(span / o.bin_ns + (span % o.bin_ns != 0)) : 0;
  for (const DeviceSummary& d : s.devices) {
    if (d.busy.empty()) continue;  // only work of zero length: nothing to draw
    std::vector<uint64_t> per_bin(n, 0);
    // The pieces are sorted and disjoint, so the bin of each one's start only moves forward: it
    // is stepped to (min(n - 1, a / bin_ns), without a division per piece).
    size_t b = 0;
    for (const auto& [first, second] : d.busy) {
      uint64_t a = offset(first);
      const uint64_t e = offset(second);
      while (a < e) {
        while (b + 1 < n && a >= (static_cast<uint64_t>(b) + 1) * o.bin_ns) ++b;
        const uint64_t stop = b + 1 == n ? e : std::min<uint64_t>(e, (static_cast<uint64_t>(b) + 1) * o.bin_ns);
        per_bin[b] += stop - a;
        a = stop;
      }
    }
    o.devices.emplace_back(d.device, std::move(per_bin));
  }
  return o;
}

Summary Summarize(const Trace& trace, const AnalyzeOptions& options, const ApiIndex* api_index,
                  const HostStages* stages, const std::vector<KernelClass>* kernel_classes,
                  const SpanSource* iteration_spans, const HostSource* host) {
  Summary s;
  SummarizeInto(trace, options, api_index, stages, kernel_classes, iteration_spans, host, nullptr, &s);
  return s;
}

}  // namespace tg
