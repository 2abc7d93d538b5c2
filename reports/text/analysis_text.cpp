// PrintAnalysis: the human summary of `tracegate analyze`, rendered from the report document
// like the Markdown and HTML reports (and read with the same accessors), so every renderer shows
// the same input. Tables are sized to fit ~100 columns and one screen: at most 3 gaps per device
// and 8 streams are listed (the JSON has them all).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>

#include "reports/document/report_document.h"
#include "reports/view/report_view.h"  // Cut, shared with the Markdown and HTML reports
#include "tracegate/analyzer/iterations.h"
#include "tracegate/analyzer/strings.h"
#include "tracegate/analyzer/summary.h"
#include "tracegate/reports/analysis_report.h"

namespace tg {

namespace {

using internal::Array;
using internal::CollectiveCells;
using internal::CollectiveTable;
using internal::CriticalPathKinds;
using internal::Cut;
using internal::Flag;
using internal::Int;
using internal::Number;
using internal::Object;
using internal::RankCommunicationText;
using internal::Text;
using internal::WholeTraceNote;
using nlohmann::json;
// The headline keys and their rows (reports/document/report_keys.h, report_view.h).
namespace keys = internal::keys;
using internal::Headline;
using internal::HeadlineRow;

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

unsigned long long Count(const json& obj, std::string_view key) {
  return static_cast<unsigned long long>(Int(obj, key));
}

// The report's ids are null when unknown.
std::string DeviceLabel(const json& obj) {
  const int64_t device = Int(obj, "device", kUnknownId);
  return device < 0 ? std::string("GPU ?") : StrFormat("GPU %lld", static_cast<long long>(device));
}

void PrintSource(std::ostream& out, const json& r) {
  const json& source = Object(r, "source");
  std::string path = Text(source, "path");
  std::string format = Text(source, "format");
  std::string version = Text(source, "version");
  std::string producer = Text(source, "producer");
  out << "trace: " << (path.empty() ? "(in memory)" : path);
  if (!format.empty()) out << "  [" << format << (version.empty() ? "" : " " + version) << "]";
  if (!producer.empty()) out << "  producer: " << producer;
  out << "\n";
  const json& w = Object(r, "window");
  out << "window: " << FormatMs(Int(w, "duration_ns")) << " (" << Int(w, "start_ns") << " .. " << Int(w, "end_ns")
      << " ns)\n";
  const json& c = Object(r, "counts");
  out << StrFormat(
      "events: %llu kernels, %llu memcpys, %llu memsets, %llu syncs, %llu runtime + %llu "
      "driver calls, %llu ranges, %llu samples\n",
      Count(c, "kernels"), Count(c, "memcpys"), Count(c, "memsets"), Count(c, "syncs"), Count(c, "runtime_calls"),
      Count(c, "driver_calls"), Count(c, "ranges"), Count(c, "samples"));
}

// "between gemm and relu (stream 7), host_launch: cudaLaunchKernel returned 12.000 us after the gap
// began": a gap's neighbours, and its cause with the evidence when the report has them (a
// communication gap's collective is one of the neighbours already named).
std::string GapWhy(const json& g) {
  const int64_t stream = Int(g, "next_stream", kUnknownId);
  std::string s = "between " + Cut(internal::GapPrevious(g), 36) + " and " + Cut(internal::GapNext(g), 36) +
                  (stream == kUnknownId ? "" : " (stream " + std::to_string(stream) + ")");
  const std::string cause = Text(g, "cause");
  if (cause.empty()) return s;
  s += ", " + cause;
  const json& e = Object(g, "evidence");
  if (const std::string call = Text(e, "launch_call");
      !call.empty() && internal::Find(e, "launch_returned_after_gap_start_ns"))
    s += ": " + Cut(call, 28) + " returned " + Span(Int(e, "launch_returned_after_gap_start_ns")) +
         " after the gap began";
  else if (!call.empty()) s += ": " + Cut(call, 28);
  if (const std::string stage = Text(e, "stage"); !stage.empty()) s += ", host in " + Cut(stage, 24);
  if (const std::string wait = Text(e, "wait_call"); !wait.empty()) s += ": " + Cut(wait, 36) + " in progress";
  if (const std::string launch = Text(e, "same_launch_call"); !launch.empty())
    s += ": both sides from one " + Cut(launch, 36) + " (a dependency inside it)";
  if (const auto lag = Number(e, "lag_ns"); lag)
    s += ": started " + Span(static_cast<TimeNs>(*lag)) + " after its launch returned";
  if (const json& frames = Array(g, "host_frames"); !frames.empty())
    s += "; frames: " + Cut(Text(frames[0], "path"), 60);
  return s;
}

void PrintDevices(std::ostream& out, const json& r, std::string_view no_activity_reason) {
  const json& devices = Array(r, "devices");
  if (devices.empty()) {
    // The recorder knows why it recorded nothing; otherwise the report says what the trace holds.
    if (!no_activity_reason.empty()) out << "\ndevices: no CUDA activity recorded: " << no_activity_reason << "\n";
    else if (std::string none = Text(r, "no_device_activity"); !none.empty()) out << "\ndevices: " << none << "\n";
    else out << "\ndevices: no GPU work in this trace\n";
    return;
  }
  const TimeNs window_start = Int(Object(r, "window"), "start_ns");
  const std::string note = WholeTraceNote(r);
  out << "\ndevices" << (note.empty() ? "" : " (" + note + ")") << ":\n";
  for (const json& d : devices) {
    const std::string name = Text(d, "name");
    const std::optional<double> idle = Number(d, keys::kIdleRatio.name);
    const json& gaps = Object(d, "gaps");
    const int64_t gap_count = Int(gaps, "count");
    out << "  " << DeviceLabel(d) << (name.empty() ? "" : " " + name) << ": busy " << FormatMs(Int(d, "busy_ns"))
        << " of " << FormatMs(Int(d, "active_ns")) << " active, idle " << (idle ? Pct(*idle) : std::string("n/a"))
        << "; " << gap_count << " gaps, " << FormatMs(Int(gaps, "total_ns")) << "\n";
    if (gap_count == 0) continue;
    if (const json* causes = internal::Find(d, "idle_causes"); causes && causes->is_object()) {
      out << "    idle causes:\n";
      for (const char* cause : kIdleCauseNames) {
        const json* c = internal::Find(*causes, cause);  // host_stage is absent from older reports
        if (!c || Count(*c, "gaps") == 0) continue;
        out << StrFormat("      %-15s %6s %7llu gaps %12s", cause, Pct(Number(*c, "ratio").value_or(0)).c_str(),
                         Count(*c, "gaps"), Span(Int(*c, "time_ns")).c_str());
        if (const json& largest = Array(*c, "largest"); !largest.empty())
          out << "; largest " << Span(Int(largest[0], "duration_ns")) << " " << GapWhy(largest[0]);
        out << "\n";
      }
    }
    out << "    gaps:";
    bool first = true;
    for (const json& bucket : Array(gaps, "histogram")) {
      out << (first ? "" : " |") << " " << Text(bucket, "label") << " " << Int(bucket, "count");
      first = false;
    }
    out << "\n";
    const json& largest = Array(gaps, "largest");
    for (size_t i = 0; i < std::min(kGapsShown, largest.size()); ++i) {
      const json& g = largest[i];
      out << "    gap " << StrFormat("%12s", Span(Int(g, "duration_ns")).c_str()) << " at +"
          << Span(Int(g, "start_ns") - window_start) << ": " << GapWhy(g) << "\n";
    }
  }
}

void PrintKernels(std::ostream& out, const json& r) {
  const uint64_t launches = Count(Object(r, "counts"), "kernels");
  if (launches == 0) return;
  const json& kernels = Object(r, "kernels");
  const std::string note = WholeTraceNote(r);
  out << "\ntop kernels (" << (note.empty() ? "" : note + ": ") << launches << " launches, "
      << Int(kernels, "distinct_names") << " names, " << FormatMs(Int(kernels, "total_ns"))
      << " total; p95 nearest-rank):\n";
  out << StrFormat("  %3s  %-60s %8s %10s %10s %10s %6s\n", "#", "name", "count", "total ms", "mean us", "p95 us",
                   "share");
  size_t rank = 1;
  // The kernels' labels, as the Markdown and the pages name them (short name and a hint that
  // tells apart kernels sharing it); padded by characters, not bytes (the hint's brackets are
  // 3 bytes each).
  const std::map<std::string, KernelLabel> labels = internal::ReportKernelLabels(r);
  for (const json& k : Array(r, "top_kernels")) {
    const std::string name = internal::KernelLabelFit(labels, Text(k, "name"), kMaxNameChars);
    const size_t chars = internal::Utf8Chars(name);
    out << StrFormat("  %3zu  %s%s %8llu %10.3f %10.3f %10.3f %6.1f%%\n", rank++, name.c_str(),
                     std::string(kMaxNameChars - std::min(chars, kMaxNameChars), ' ').c_str(), Count(k, "count"),
                     static_cast<double>(Int(k, "total_ns")) / 1e6, Number(k, "mean_ns").value_or(0) / 1e3,
                     static_cast<double>(Int(k, "p95_ns")) / 1e3, Number(k, "share_ratio").value_or(0) * 100.0);
  }
}

// Only for traces with collectives: the others' summaries read as before.
void PrintCollectives(std::ostream& out, const json& r) {
  const std::vector<CollectiveCells> rows = CollectiveTable(r);
  if (rows.empty()) return;
  out << "\ncollectives (" << RankCommunicationText(r) << "):\n";
  out << StrFormat("  %-24s %-8s %14s %5s %6s %12s %12s %14s %14s\n", "collective", "dtype", "message", "group",
                   "calls", "total", "mean", "alg bw", "bus bw");
  for (const CollectiveCells& c : rows)
    out << StrFormat("  %-24s %-8s %14s %5s %6s %12s %12s %14s %14s\n", Cut(c.collective, 24).c_str(), c.dtype.c_str(),
                     c.message.c_str(), c.group.c_str(), c.calls.c_str(), c.total.c_str(), c.mean.c_str(),
                     c.algbw.c_str(), c.busbw.c_str());
}

void PrintCopies(std::ostream& out, const json& r) {
  const json& copies = Object(r, "copies");
  const json& memset = Object(copies, "memset");
  if (Count(Object(r, "counts"), "memcpys") == 0 && Count(memset, "count") == 0) return;
  const std::string note = WholeTraceNote(r);
  out << "\ncopies" << (note.empty() ? "" : " (" + note + ")") << ":\n";
  out << StrFormat("  %-6s %8s %12s %10s %9s %9s %7s\n", "dir", "count", "bytes", "time ms", "GB/s", "pageable",
                   "small");
  for (const char* direction : kCopyDirectionNames) {
    std::string key = direction;  // the report keys the directions in lower case
    for (char& ch : key) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    const json& c = Object(copies, key);
    if (Count(c, "count") == 0) continue;
    const std::optional<double> gbs = Number(c, "achieved_gbs");
    out << StrFormat("  %-6s %8llu %12s %10.3f %9s %9s %7llu\n", direction, Count(c, "count"),
                     Bytes(Int(c, "bytes")).c_str(), static_cast<double>(Int(c, "time_ns")) / 1e6,
                     gbs ? StrFormat("%.2f", *gbs).c_str() : "n/a",
                     Pct(Number(c, "pageable_ratio").value_or(0)).c_str(), Count(c, "small_count"));
  }
  if (Count(memset, "count") > 0)
    out << StrFormat("  %-6s %8llu %12s %10.3f\n", "memset", Count(memset, "count"),
                     Bytes(Int(memset, "bytes")).c_str(), static_cast<double>(Int(memset, "time_ns")) / 1e6);
}

void PrintStreams(std::ostream& out, const json& r) {
  const json& streams = Array(r, "streams");
  if (streams.empty()) return;
  // The busiest first; the JSON keeps (device, stream) order.
  std::vector<const json*> order;
  for (const json& st : streams) order.push_back(&st);
  std::stable_sort(order.begin(), order.end(),
                   [](const json* a, const json* b) { return Int(*a, "busy_ns") > Int(*b, "busy_ns"); });
  const std::string note = WholeTraceNote(r);
  out << "\nstreams (" << streams.size() << (note.empty() ? "" : "; " + note) << "):\n";
  for (size_t i = 0; i < std::min(kStreamsShown, order.size()); ++i) {
    const json& st = *order[i];
    const int64_t id = Int(st, "stream", kUnknownId);
    std::string stream = id == kUnknownId ? std::string("?") : std::to_string(id);
    out << StrFormat("  %-6s stream %-6s %8llu kernels %6llu copies %6llu memsets  busy %s (%s of device)\n",
                     DeviceLabel(st).c_str(), stream.c_str(), Count(st, "kernels"), Count(st, "memcpys"),
                     Count(st, "memsets"), FormatMs(Int(st, "busy_ns")).c_str(),
                     Pct(Number(st, "device_busy_ratio").value_or(0)).c_str());
    std::string idle;
    for (const char* cause : kIdleCauseNames)
      if (const int64_t ns = Int(Object(st, "idle_before_ns"), cause); ns > 0)
        idle += (idle.empty() ? "" : " | ") + std::string(cause) + " " + Span(ns);
    if (!idle.empty()) out << "         idle before its work: " << idle << "\n";
  }
  if (order.size() > kStreamsShown) out << "  ... " << order.size() - kStreamsShown << " more\n";
}

void PrintQuality(std::ostream& out, const json& r) {
  const json& quality = Object(r, "data_quality");
  bool any = false;
  for (const json& q : Array(quality, "counters")) {
    if (Int(q, "count") == 0) continue;
    if (!any) out << "\ndata quality:" << (Flag(quality, "has_errors") ? " HAS ERRORS" : "") << "\n";
    any = true;
    out << "  " << Text(q, "severity") << " " << Text(q, "key") << ": " << Count(q, "count") << " ("
        << Text(q, "description") << ")\n";
  }
  if (!any) out << "\ndata quality: clean\n";
}

// The replayed kernels traced back to their capture (analyze --capture): how many were matched,
// and the ops with the most kernel time. One line saying how to get them when no capture was given.
void PrintCapturedOps(std::ostream& out, const json& graph) {
  const auto found = graph.find("capture");
  if (found == graph.end()) return;
  if (found->is_null()) {
    if (Int(graph, "launches") > 0)
      out << "    ops of the replayed kernels: unknown (a replay records none; analyze --capture CAPTURE_TRACE maps "
             "them)\n";
    return;
  }
  const json& c = *found;
  out << "    captured ops: " << Int(c, "kernels_mapped") << " of " << Int(c, "kernels") << " replayed kernels from "
      << Int(c, "launches_mapped") << " of " << Int(c, "launches") << " launches mapped";
  const json& by = Object(c, "matched_by");
  if (Int(by, "launch_count_and_capture_size") > 0)
    out << " (" << Int(by, "launch_count_and_capture_size") << " by capture size)";
  const json& unmatched = Object(c, "unmatched");
  if (const int64_t none = Int(unmatched, "no_graph_with_as_many_launches"); none > 0)
    out << "; " << none << " with no captured graph of as many launches";
  if (const int64_t amb = Int(unmatched, "ambiguous"); amb > 0) out << "; " << amb << " ambiguous";
  const json& ops = Array(c, "ops");
  constexpr size_t kShown = 4;
  for (size_t i = 0; i < ops.size() && i < kShown; ++i) {
    const std::string op = Text(ops[i], "op");
    out << (i ? ", " : ": ") << (op.empty() ? "(no op)" : op);
    if (const auto r = Number(ops[i], "kernel_time_ratio")) out << " " << Pct(*r);
  }
  out << "\n";
}

// The serving section in three lines at most (docs/SERVING.md): the steps by kind and token bucket,
// the graph replays' share of kernel time and their captured ops. Nothing when the report has no serving section.
void PrintServing(std::ostream& out, const json& r) {
  const json& sv = Object(r, "serving");
  if (!sv.is_object()) return;
  const int64_t steps = Int(sv, "steps");
  if (steps > 0) {
    out << "  serving: " << steps << " " << Text(sv, "step_form") << (steps == 1 ? " step" : " steps");
    const json& groups = Array(sv, "groups");
    constexpr size_t kShown = 6;
    for (size_t i = 0; i < groups.size() && i < kShown; ++i) {
      const json& g = groups[i];
      const auto lo = Number(g, "token_bucket_min"), hi = Number(g, "token_bucket_max");
      out << (i ? "; " : ": ") << Text(g, "kind") << " "
          << (lo && hi ? StrFormat("%.0f-%.0f tokens", *lo, *hi - 1) : std::string("tokens unknown"))
          << StrFormat(" x%lld p50 %.3f ms", static_cast<long long>(Int(g, "count")),
                       Number(g, keys::kP50LatencyMs.name).value_or(0));
      if (const auto mpt = Number(g, "ms_per_token"), tps = Number(g, "tokens_per_s"); mpt && tps)
        out << StrFormat(" (%.4f ms/token, %.0f tokens/s)", *mpt, *tps);
    }
    if (groups.size() > kShown) out << "; " << groups.size() - kShown << " more groups";
    out << "\n";
  }
  if (const int64_t captures = Int(sv, "capture_steps"); captures > 0) {
    const json& names = Array(sv, "capture_names");
    out << "  graph captures: " << captures << " capture annotation" << (captures == 1 ? "" : "s")
        << (names.empty() || !names[0].is_string()
                ? std::string()
                : " (" + names[0].get<std::string>() + (names.size() > 1 ? ", ...)" : ")"))
        << ", not serving steps (docs/SERVING.md)\n";
  }
  const json& graph = Object(sv, "graph_replay");
  if (const auto ratio = Number(graph, "kernel_time_ratio"); ratio && Int(graph, "launches") > 0)
    out << "  graph replays: " << Pct(*ratio) << " of kernel time (" << Int(graph, "kernels") << " kernels from "
        << Int(graph, "launches") << (Int(graph, "launches") == 1 ? " graph launch)\n" : " graph launches)\n");
  PrintCapturedOps(out, graph);
}

void PrintIterations(std::ostream& out, const json& r) {
  const json& source = Object(r, "iteration_source");
  const int64_t skipped = Int(source, "skipped");
  out << "\niterations: " << Int(r, keys::kIterations.name);
  if (skipped) out << " (" << skipped << " warm-up skipped)";
  out << " - " << Text(source, "description") << "\n";
  // The warm-up line when something was dropped or the rule could judge (reports before it: none).
  const json& warmup = Object(source, "warmup");
  if (skipped || Number(warmup, "median_ms")) out << "  warm-up: " << Text(warmup, "summary") << "\n";
  // The headline is null without iterations or when they have no length.
  const std::optional<double> mean = Number(r, keys::kAvgLatencyMs.name);
  if (!mean) return;
  const std::optional<double> cv = Number(r, keys::kLatencyCv.name), fps = Number(r, keys::kThroughputFps.name);
  out << StrFormat("  latency ms: mean %.3f  p50 %.3f  p95 %.3f  p99 %.3f  std %.3f  CV %s", *mean,
                   Number(r, keys::kP50LatencyMs.name).value_or(0), Number(r, keys::kP95LatencyMs.name).value_or(0),
                   Number(r, keys::kP99LatencyMs.name).value_or(0), Number(r, keys::kStdLatencyMs.name).value_or(0),
                   cv ? StrFormat("%.3f", *cv).c_str() : "n/a");
  if (fps) out << StrFormat("  throughput %.4g/s (batch %lld)", *fps, static_cast<long long>(Int(r, "batch")));
  // Headline figures without a line of their own here (report_keys.h, keys::kTextLine).
  std::string also;
  for (const HeadlineRow& h : Headline(r))
    if ((h.key->shown & keys::kTextLine) && h.value.present)
      also += (also.empty() ? "" : ", ") + h.label + " " + h.value.text;
  if (!also.empty()) out << "\n  also: " << also;
  out << "\n  phases (share of iteration time):";
  const json& phases = Object(r, "phases");
  const std::string none = Text(r, "no_device_activity");
  for (const char* phase : kPhaseNames)
    out << " " << phase << " "
        << (none.empty() || std::string_view(phase) != "idle" ? Pct(Number(Object(phases, phase), "ratio").value_or(0))
                                                              : std::string("n/a"));
  out << "\n";
  if (!none.empty()) out << "  " << none << "\n";
  if (const std::string capture = Text(r, "graph_capture"); !capture.empty()) out << "  " << capture << "\n";
  PrintServing(out, r);
  // What the GPU-idle time of the iterations was spent on, largest causes first.
  const json& idle = Object(r, "gpu_idle");
  const TimeNs total = Int(idle, "total_ns");
  if (total > 0) {
    std::vector<std::pair<TimeNs, std::string>> causes;
    for (const auto& [name, ns] : Object(idle, "by_cause_ns").items())
      if (ns.is_number_integer() && ns.get<TimeNs>() > 0) causes.emplace_back(ns.get<TimeNs>(), name);
    std::sort(causes.begin(), causes.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    out << "  GPU idle by cause (pre + post + idle phases):";
    for (const auto& [ns, name] : causes)
      out << " " << name << " " << Pct(static_cast<double>(ns) / static_cast<double>(total));
    out << "\n";
    const json& largest = Array(idle, "largest");
    if (!largest.empty() && !Array(largest[0], "host_frames").empty()) {
      const json& f = Array(largest[0], "host_frames")[0];
      out << "  largest idle interval " << Span(Int(largest[0], "duration_ns")) << " (" << Text(largest[0], "cause")
          << "): " << Cut(Text(f, "path"), 100) << " " << Span(Int(f, "time_ns")) << "\n";
    }
  }
}

// A speedup; null in the report means unbounded.
std::string Speedup(const json& amdahl, std::string_view key) {
  const std::optional<double> v = Number(amdahl, key);
  return v ? StrFormat("%.3fx", *v) : std::string("unbounded");
}

// The critical path's kinds, the largest first (those with time on the path), its top host frames
// and longest segments; nothing when the report has no critical_path section.
void PrintCriticalPath(std::ostream& out, const json& r) {
  const json* found = internal::Find(r, "critical_path");
  if (!found || !found->is_object()) return;
  const json& cp = *found;
  const int64_t n = Int(cp, keys::kIterations.name);
  out << "\ncritical path (" << n << (n == 1 ? " iteration" : " iterations") << ", mean step "
      << StrFormat("%.3f ms", Number(cp, "step_mean_ms").value_or(0)) << "; the replay's dependencies):\n";
  for (const std::string& name : CriticalPathKinds(cp)) {
    const json& k = Object(Object(cp, "kinds"), name);
    out << StrFormat("  %-22s %6s %10.3f ms/iteration\n", name.c_str(), Pct(Number(k, "share").value_or(0)).c_str(),
                     Number(k, "mean_ms").value_or(0));
  }
  const json& frames = Array(cp, "host_frames");
  if (!frames.empty()) {
    out << "  host compute by frame:";
    size_t shown = 0;
    for (const json& f : frames) {
      if (shown++ == kInvolvedShown) break;
      const std::string name = Text(f, "frame");
      out << (shown > 1 ? ";" : "") << " " << internal::CutMiddle(name.empty() ? "(no frame)" : name, 40) << " "
          << Pct(Number(f, "share").value_or(0));
    }
    out << "\n";
  }
  const json& top = Array(cp, "top_segments");
  if (!top.empty()) out << "  longest segments:\n";
  size_t shown = 0;
  for (const json& s : top) {
    if (shown++ == 5) break;
    const std::string name = Text(s, "name");
    const std::string where = Object(s, "stream").is_number()
                                  ? StrFormat("stream %lld", static_cast<long long>(Int(s, "stream")))
                                  : StrFormat("thread %lld", static_cast<long long>(Int(s, "tid")));
    out << StrFormat("    %12s  %-18s %s (iteration %lld, %s)\n", Span(Int(s, "duration_ns")).c_str(),
                     Text(s, "kind").c_str(), internal::CutMiddle(name.empty() ? "-" : name, kMaxNameChars).c_str(),
                     static_cast<long long>(Int(s, "iteration")), where.c_str());
  }
}

void PrintFinding(std::ostream& out, size_t n, const json& f) {
  out << StrFormat("  %zu. [%s] %s (%s)%s\n", n, Text(f, "priority").c_str(), Text(f, "title").c_str(),
                   Text(f, "id").c_str(), Flag(f, "heuristic") ? " [heuristic]" : "");
  out << "     " << Text(f, "summary") << "\n";
  for (const json& e : Array(f, "evidence"))
    out << StrFormat("     evidence: %s = %.4g (threshold %s %.4g)\n", Text(e, "metric").c_str(),
                     Number(e, "value").value_or(NAN), Text(e, "comparison").c_str(),
                     Number(e, "threshold").value_or(NAN));
  const json& involved = Array(f, "involved");
  for (size_t i = 0; i < std::min(kInvolvedShown, involved.size()); ++i) {
    const json& v = involved[i];
    // The report has the time in ms; the nanoseconds it came from are recovered exactly.
    const TimeNs time_ns = std::llround(Number(v, "time_ms").value_or(0) * 1e6);
    out << "     " << Text(v, "kind") << ": " << Cut(Text(v, "name"), kMaxNameChars);
    if (Int(v, "count") > 1) out << " x" << Int(v, "count");
    if (time_ns > 0) out << ", " << Span(time_ns);
    if (std::string detail = Text(v, "detail"); !detail.empty()) out << " (" << Cut(detail, kMaxNameChars) << ")";
    out << "\n";
  }
  const json& a = Object(f, "amdahl");
  out << StrFormat("     Amdahl: P = %.3f, S = %s (%s: %s) -> whole run %s (%+.1f%%), at most %s\n",
                   Number(a, "share").value_or(0), Speedup(a, "speedup").c_str(), Text(a, "basis").c_str(),
                   Text(a, "assumption").c_str(), Speedup(a, "overall_speedup").c_str(),
                   Number(a, "gain_pct").value_or(0), Speedup(a, "upper_bound").c_str());
  if (std::string replay = internal::ReplayText(f); !replay.empty()) out << "     replay: " << replay << "\n";
  if (std::string overlap = internal::OverlapText(f); !overlap.empty()) out << "     " << overlap << "\n";
  const json& strategies = Array(f, "strategies");
  if (!strategies.empty() && strategies[0].is_string()) out << "     try: " << strategies[0].get<std::string>() << "\n";
}

void PrintFindings(std::ostream& out, const json& r) {
  const json& findings = Array(r, "findings");
  if (findings.empty()) {
    out << "\nfindings: none (no rule of the pattern matrix fired)\n";
    return;
  }
  out << "\nfindings (" << findings.size() << ", most important first):\n";
  size_t n = 1;
  for (const json& f : findings) PrintFinding(out, n++, f);
  if (std::string combined = internal::CombinedText(r); !combined.empty()) out << "  combined: " << combined << "\n";
  // What the findings' replays held fixed (--replay-findings), once.
  for (const json& a : Array(Object(Object(r, "combined_estimate"), "replay"), "assumptions"))
    if (a.is_string()) out << "  replay held fixed: " << a.get<std::string>() << "\n";
}

}  // namespace

void PrintAnalysis(std::ostream& out, const json& report, std::string_view no_activity_reason) {
  PrintSource(out, report);
  PrintIterations(out, report);
  PrintFindings(out, report);
  PrintCriticalPath(out, report);
  PrintDevices(out, report, no_activity_reason);
  PrintKernels(out, report);
  PrintCollectives(out, report);
  PrintCopies(out, report);
  PrintStreams(out, report);
  PrintQuality(out, report);
}

}  // namespace tg
