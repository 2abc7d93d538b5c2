// PrintAnalysis: the human summary of `tracegate analyze`. Tables are sized to fit ~100 columns
// and one screen: at most 3 gaps per device and 8 streams are listed (the JSON has them all).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "tracegate/reports/analysis_report.h"
#include "tracegate/analyzer/strings.h"

namespace tg {

namespace {

constexpr size_t kMaxNameChars = 60;
constexpr size_t kGapsShown = 3;
constexpr size_t kStreamsShown = 8;
constexpr size_t kInvolvedShown = 3;

std::string FormatMs(TimeNs ns) { return StrFormat("%.3f ms", NsToMs(ns)); }

// A duration in the unit that keeps it short: ns, us, ms or s.
std::string Span(TimeNs ns) {
  double v = static_cast<double>(ns);
  if (ns < 1'000) return StrFormat("%lld ns", static_cast<long long>(ns));
  if (ns < 1'000'000) return StrFormat("%.3f us", v / 1e3);
  if (ns < 1'000'000'000) return StrFormat("%.3f ms", v / 1e6);
  return StrFormat("%.3f s", v / 1e9);
}

std::string Pct(double ratio) { return StrFormat("%.1f%%", ratio * 100.0); }

// Cuts a long name to `max` characters with "..." (never inside a UTF-8 sequence).
std::string Truncate(const std::string& s, size_t max) {
  if (s.size() <= max) return s;
  size_t cut = max - 3;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return s.substr(0, cut) + "...";
}

std::string Bytes(int64_t b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(b);
  size_t u = 0;
  while (v >= 1024.0 && u + 1 < std::size(units)) {
    v /= 1024.0;
    ++u;
  }
  return u == 0 ? StrFormat("%lld B", static_cast<long long>(b)) : StrFormat("%.1f %s", v, units[u]);
}

std::string Meta(const Trace& t, std::string_view key) {
  auto it = t.metadata.find(key);
  return it == t.metadata.end() ? std::string() : it->second;
}

std::string DeviceLabel(int32_t device) {
  return device < 0 ? std::string("GPU ?") : StrFormat("GPU %d", device);
}

void PrintSource(std::ostream& out, const Trace& t, const Summary& s) {
  std::string path = Meta(t, meta::kSourcePath);
  std::string format = Meta(t, meta::kSourceFormat);
  std::string version = Meta(t, meta::kSourceVersion);
  std::string producer = Meta(t, meta::kProducer);
  out << "trace: " << (path.empty() ? "(in memory)" : path);
  if (!format.empty()) out << "  [" << format << (version.empty() ? "" : " " + version) << "]";
  if (!producer.empty()) out << "  producer: " << producer;
  out << "\n";
  const SummaryCounts& c = s.counts;
  out << "window: " << FormatMs(s.duration_ns) << " (" << s.start_ns << " .. " << s.end_ns << " ns)\n";
  out << StrFormat(
      "events: %llu kernels, %llu memcpys, %llu memsets, %llu syncs, %llu runtime + %llu "
      "driver calls, %llu ranges, %llu samples\n",
      static_cast<unsigned long long>(c.kernels), static_cast<unsigned long long>(c.memcpys),
      static_cast<unsigned long long>(c.memsets), static_cast<unsigned long long>(c.syncs),
      static_cast<unsigned long long>(c.runtime_calls), static_cast<unsigned long long>(c.driver_calls),
      static_cast<unsigned long long>(c.ranges), static_cast<unsigned long long>(c.samples));
}

// Set by `tracegate record` when the recording holds no GPU activity, with the reason
// (record_meta::kNoActivity in collector/include/tracegate/record.h; reports does not link the
// collector).
constexpr std::string_view kRecordNoActivityKey = "record.no_cuda_activity";

void PrintDevices(std::ostream& out, const Trace& t, const Summary& s) {
  if (s.devices.empty()) {
    if (std::string why = Meta(t, kRecordNoActivityKey); !why.empty())
      out << "\ndevices: no CUDA activity recorded: " << why << "\n";
    else
      out << "\ndevices: no GPU work in this trace\n";
    return;
  }
  out << "\ndevices:\n";
  for (const DeviceSummary& d : s.devices) {
    out << "  " << DeviceLabel(d.device) << (d.name.empty() ? "" : " " + d.name) << ": busy " << FormatMs(d.busy_ns)
        << " of " << FormatMs(d.active_ns) << " active, idle "
        << (d.has_idle_ratio ? Pct(d.idle_ratio) : std::string("n/a")) << "; " << d.gap_count << " gaps, "
        << FormatMs(d.gap_total_ns) << "\n";
    if (d.gap_count == 0) continue;
    out << "    gaps:";
    for (size_t b = 0; b < kGapBucketCount; ++b)
      out << (b ? " |" : "") << " " << kGapBucketLabels[b] << " " << d.gap_histogram[b];
    out << "\n";
    for (size_t i = 0; i < std::min(kGapsShown, d.largest_gaps.size()); ++i) {
      const IdleGap& g = d.largest_gaps[i];
      out << "    gap " << StrFormat("%12s", Span(g.duration_ns).c_str()) << " at +"
          << Span(g.start_ns - s.start_ns) << ": after " << Truncate(g.before, 36) << ", before "
          << Truncate(g.after, 36) << "\n";
    }
  }
}

void PrintKernels(std::ostream& out, const Summary& s) {
  if (s.counts.kernels == 0) return;
  out << "\ntop kernels (" << s.counts.kernels << " launches, " << s.distinct_kernels << " names, "
      << FormatMs(s.total_kernel_ns) << " total; p95 nearest-rank):\n";
  out << StrFormat("  %3s  %-60s %8s %10s %10s %10s %6s\n", "#", "name", "count", "total ms", "mean us",
                "p95 us", "share");
  size_t rank = 1;
  for (const KernelStat& k : s.top_kernels) {
    out << StrFormat("  %3zu  %-60s %8llu %10.3f %10.3f %10.3f %6.1f%%\n", rank++,
                  Truncate(k.display_name, kMaxNameChars).c_str(), static_cast<unsigned long long>(k.count),
                  static_cast<double>(k.total_ns) / 1e6, k.mean_ns / 1e3, static_cast<double>(k.p95_ns) / 1e3,
                  k.share * 100.0);
  }
}

void PrintCopies(std::ostream& out, const Summary& s) {
  if (s.counts.memcpys == 0 && s.memsets.count == 0) return;
  out << "\ncopies:\n";
  out << StrFormat("  %-6s %8s %12s %10s %9s %9s %7s\n", "dir", "count", "bytes", "time ms", "GB/s", "pageable",
                "small");
  for (const CopyStat& c : s.copies) {
    if (c.count == 0) continue;
    out << StrFormat("  %-6s %8llu %12s %10.3f %9s %9s %7llu\n",
                  kCopyDirectionNames[static_cast<size_t>(c.direction)],
                  static_cast<unsigned long long>(c.count), Bytes(c.bytes).c_str(),
                  static_cast<double>(c.time_ns) / 1e6, c.has_gbs ? StrFormat("%.2f", c.gbs).c_str() : "n/a",
                  Pct(c.pageable_share).c_str(), static_cast<unsigned long long>(c.small));
  }
  if (s.memsets.count > 0)
    out << StrFormat("  %-6s %8llu %12s %10.3f\n", "memset", static_cast<unsigned long long>(s.memsets.count),
                  Bytes(s.memsets.bytes).c_str(), static_cast<double>(s.memsets.time_ns) / 1e6);
}

void PrintStreams(std::ostream& out, const Summary& s) {
  if (s.streams.empty()) return;
  // The busiest first; the JSON keeps (device, stream) order.
  std::vector<const StreamSummary*> order;
  for (const StreamSummary& st : s.streams) order.push_back(&st);
  std::stable_sort(order.begin(), order.end(),
                   [](const StreamSummary* a, const StreamSummary* b) { return a->busy_ns > b->busy_ns; });
  out << "\nstreams (" << s.streams.size() << "):\n";
  for (size_t i = 0; i < std::min(kStreamsShown, order.size()); ++i) {
    const StreamSummary& st = *order[i];
    std::string stream = st.stream == kUnknownId ? std::string("?") : std::to_string(st.stream);
    out << StrFormat("  %-6s stream %-6s %8llu kernels %6llu copies %6llu memsets  busy %s (%s of device)\n",
                  DeviceLabel(st.device).c_str(), stream.c_str(), static_cast<unsigned long long>(st.kernels),
                  static_cast<unsigned long long>(st.memcpys), static_cast<unsigned long long>(st.memsets),
                  FormatMs(st.busy_ns).c_str(), Pct(st.device_busy_share).c_str());
  }
  if (order.size() > kStreamsShown) out << "  ... " << order.size() - kStreamsShown << " more\n";
}

void PrintQuality(std::ostream& out, const Summary& s) {
  bool any = false;
  for (const QualityEntry& q : s.quality) {
    if (q.count == 0) continue;
    if (!any) out << "\ndata quality:" << (s.has_errors ? " HAS ERRORS" : "") << "\n";
    any = true;
    out << "  " << SeverityName(q.severity) << " " << q.key << ": " << q.count << " (" << q.description
        << ")\n";
  }
  if (!any) out << "\ndata quality: clean\n";
}

void PrintIterations(std::ostream& out, const IterationAnalysis& it) {
  out << "\niterations: " << it.iterations.size();
  if (it.skipped) out << " (" << it.skipped << " warm-up skipped)";
  out << " - " << it.source << "\n";
  if (it.iterations.empty() || it.total_ns <= 0) return;
  const SampleStats& l = it.latency_ms;
  out << StrFormat("  latency ms: mean %.3f  p50 %.3f  p95 %.3f  p99 %.3f  std %.3f  CV %s", l.mean, l.p50, l.p95,
                l.p99, l.std, l.has_cv ? StrFormat("%.3f", l.cv).c_str() : "n/a");
  if (it.has_throughput) out << StrFormat("  throughput %.4g/s (batch %lld)", it.throughput_fps,
                                       static_cast<long long>(it.batch));
  out << "\n  phases (share of iteration time):";
  for (size_t p = 0; p < kPhaseCount; ++p)
    out << " " << kPhaseNames[p] << " " << Pct(it.phase_ratio[p]);
  out << "\n";
}

std::string Speedup(double v) { return std::isfinite(v) ? StrFormat("%.3fx", v) : std::string("unbounded"); }

void PrintFindings(std::ostream& out, const std::vector<Finding>& findings) {
  if (findings.empty()) {
    out << "\nfindings: none (no rule of the pattern matrix fired)\n";
    return;
  }
  out << "\nfindings (" << findings.size() << ", most important first):\n";
  size_t n = 1;
  for (const Finding& f : findings) {
    out << StrFormat("  %zu. [%s] %s (%s)%s\n", n++, PriorityName(f.priority), f.title.c_str(), f.id.c_str(),
                  f.heuristic ? " [heuristic]" : "");
    out << "     " << f.summary << "\n";
    for (const Evidence& e : f.evidence)
      out << StrFormat("     evidence: %s = %.4g (threshold %s %.4g)\n", e.metric.c_str(), e.value, e.comparison.c_str(),
                    e.threshold);
    for (size_t i = 0; i < std::min(kInvolvedShown, f.involved.size()); ++i) {
      const Involved& v = f.involved[i];
      out << "     " << v.kind << ": " << Truncate(v.name, kMaxNameChars);
      if (v.count > 1) out << " x" << v.count;
      if (v.time_ns > 0) out << ", " << Span(v.time_ns);
      if (!v.detail.empty()) out << " (" << Truncate(v.detail, kMaxNameChars) << ")";
      out << "\n";
    }
    const AmdahlEstimate& a = f.amdahl;
    out << StrFormat("     Amdahl: P = %.3f, S = %s (%s: %s) -> whole run %s (%+.1f%%), at most %s\n", a.share,
                  Speedup(a.speedup).c_str(), a.basis.c_str(), a.assumption.c_str(), Speedup(a.overall).c_str(),
                  a.gain_pct, Speedup(a.upper_bound).c_str());
    if (!f.strategies.empty()) out << "     try: " << f.strategies.front() << "\n";
  }
}

}  // namespace

void PrintAnalysis(std::ostream& out, const Trace& trace, const Analysis& analysis) {
  const Summary& summary = analysis.summary;
  PrintSource(out, trace, summary);
  PrintIterations(out, analysis.iterations);
  PrintFindings(out, analysis.findings);
  PrintDevices(out, trace, summary);
  PrintKernels(out, summary);
  PrintCopies(out, summary);
  PrintStreams(out, summary);
  PrintQuality(out, summary);
}

}  // namespace tg
