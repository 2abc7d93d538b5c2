// AnalysisToJson: the report document (schema "tracegate.report/v1"); the keys are described in
// tracegate/analysis_report.h.
#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <charconv>
#include <cmath>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/util/fileio.h"
#include "analyzer/util/side_task.h"
#include "reports/document/report_keys.h"
#include "reports/report/communication_json.h"
#include "reports/report/findings_json.h"
#include "reports/report/json_writer.h"
#include "reports/report/kernel_table_json.h"
#include "reports/report/timeline_json.h"
#include "tracegate/reports/analysis_report.h"
#include "tracegate/reports/json_out.h"
#include "tracegate/reports/report_provenance.h"

namespace tg {

using internal::AtomicFile;
using internal::CollectivesJson;
using internal::KernelOps;
using internal::KernelOpsByName;
using internal::KernelTableJson;
using internal::RanksJson;
using internal::SetKernelOp;
using internal::SetKernelOps;
using internal::SideTask;
using internal::TimelineJson;

namespace {

using internal::DoubleTexts;
using internal::JsonWriter;
using internal::SetOrNull;
using nlohmann::json;
namespace keys = internal::keys;  // reports/document/report_keys.h

json IdOrNull(int64_t id) { return id == kUnknownId ? json(nullptr) : json(id); }

json MetaOrNull(const Trace& t, std::string_view key) {
  auto it = t.metadata.find(key);
  return it == t.metadata.end() ? json(nullptr) : json(it->second);
}



json SourceJson(const Trace& t) {
  return {{"format", MetaOrNull(t, meta::kSourceFormat)},
          {"version", MetaOrNull(t, meta::kSourceVersion)},
          {"path", MetaOrNull(t, meta::kSourcePath)},
          {"producer", MetaOrNull(t, meta::kProducer)}};
}

json EnvironmentJson(const Trace& t) {
  return {{"host", MetaOrNull(t, meta::kHost)},
          {"cuda_version", MetaOrNull(t, meta::kCudaVersion)},
          {"driver_version", MetaOrNull(t, meta::kDriverVersion)},
          {"cupti_version", MetaOrNull(t, meta::kCuptiVersion)}};
}

json CountsJson(const SummaryCounts& c) {
  return {{"kernels", c.kernels},
          {"memcpys", c.memcpys},
          {"memsets", c.memsets},
          {"syncs", c.syncs},
          {"runtime_calls", c.runtime_calls},
          {"driver_calls", c.driver_calls},
          {"ranges", c.ranges},
          {"samples", c.samples}};
}

// A gap with both neighbours; with its cause (when attributed), the evidence that decided it, its
// time by cause and the host frames inside it.
json GapJson(const IdleGap& g, bool attributed) {
  json j = {{"start_ns", g.start_ns},
            {"duration_ns", g.duration_ns},
            {"previous", g.previous},
            {"next", g.next},
            {"next_stream", IdOrNull(g.next_stream)}};
  if (!attributed) return j;
  j["cause"] = kIdleCauseNames[static_cast<size_t>(g.cause)];
  json by_cause = json::object();
  for (size_t c = 0; c < kIdleCauseCount; ++c)
    if (g.cause_ns[c] > 0) by_cause[kIdleCauseNames[c]] = g.cause_ns[c];
  if (!by_cause.empty()) j["by_cause_ns"] = std::move(by_cause);
  json evidence = json::object();
  switch (g.cause) {
    case IdleCause::kHostStage:
      evidence["stage"] = g.stage;
      [[fallthrough]];
    case IdleCause::kHostLaunch:
    case IdleCause::kHostCompute:
    case IdleCause::kJitCompile:
    case IdleCause::kHostSync:
    case IdleCause::kHostIdle:
    case IdleCause::kGraphCapture:
      if (!g.call.empty()) {
        evidence["launch_call"] = g.call;
        evidence["launch_returned_after_gap_start_ns"] = g.call_returned_ns;
      }
      if (!g.frame.empty()) evidence["host_frame"] = g.frame;
      break;
    case IdleCause::kCommunication: evidence["collective"] = g.collective; break;
    case IdleCause::kDependencySync:
      if (!g.same_launch.empty()) evidence["same_launch_call"] = g.same_launch;
      else evidence["wait_call"] = g.call;
      break;
    case IdleCause::kDeviceBacklog:
      evidence["launch_call"] = g.call;
      evidence["lag_ns"] = g.lag_ns;
      break;
    default: break;
  }
  if (!evidence.empty()) j["evidence"] = std::move(evidence);  // unknown: nothing decided it
  if (g.host_tid != kUnknownId) j["host_tid"] = g.host_tid;
  if (!g.host_frames.empty()) {
    json frames = json::array();
    for (const GapFrame& f : g.host_frames) frames.push_back({{"path", f.path}, {"frame", f.name}, {"time_ns", f.ns}});
    j["host_frames"] = std::move(frames);
  }
  return j;
}

json CauseNs(const std::array<TimeNs, kIdleCauseCount>& ns) {
  json j = json::object();
  for (size_t c = 0; c < kIdleCauseCount; ++c) j[kIdleCauseNames[c]] = ns[c];
  return j;
}

// The iterations' GPU-idle time by cause (tracegate/analyzer/iteration_idle.h).
json GpuIdleJson(const IterationIdle& idle, const AnalyzeOptions& o) {
  if (!idle.attributed) return nullptr;
  json largest = json::array();
  for (const IdleInterval& iv : idle.largest) {
    json g = GapJson(iv.gap, true);
    g["iteration"] = iv.iteration;
    largest.push_back(std::move(g));
  }
  return {{"total_ns", idle.total_ns},
          {"by_cause_ns", CauseNs(idle.ns)},
          {"idle_phase_by_cause_ns", CauseNs(idle.idle_phase_ns)},
          {"pre_from_host_ns", idle.pre_from_host_ns},
          {"post_from_host_ns", idle.post_from_host_ns},
          {"largest", std::move(largest)},
          {"backlog", {{"items", idle.backlog_items}, {"max_lag_ns", idle.backlog_max_lag_ns}}},
          {"graph_capture",
           {{"regions", idle.capture_regions},
            {"captured_launches", idle.captured_launches},
            {"capture_trace", idle.capture_trace},
            {"note", idle.capture_note.empty() ? json(nullptr) : json(idle.capture_note)}}},
          {"thresholds",
           {{"compute_block_us", static_cast<double>(o.compute_block_ns) / 1e3},
            {"backlog_us", static_cast<double>(o.backlog_ns) / 1e3}}}};
}

json GapsJson(const DeviceSummary& d) {
  json hist = json::array();
  for (size_t b = 0; b < kGapBucketCount; ++b) {
    hist.push_back({{"bucket", kGapBucketKeys[b]},
                    {"label", kGapBucketLabels[b]},
                    {"min_ns", b == 0 ? 0 : kGapBucketUpperNs[b - 1]},
                    {"max_ns", b + 1 < kGapBucketCount ? json(kGapBucketUpperNs[b]) : json(nullptr)},
                    {"count", d.gap_histogram[b]},
                    {"total_ns", d.gap_histogram_ns[b]}});
  }
  json largest = json::array();
  for (const IdleGap& g : d.largest_gaps) largest.push_back(GapJson(g, d.idle_causes.attributed));
  json gaps = {{"count", d.gap_count},
               {"total_ns", d.gap_total_ns},
               {"histogram", std::move(hist)},
               {"largest", std::move(largest)}};
  if (!d.has_in_iterations) return gaps;
  // The part of the gaps inside the kept iterations, what the findings judge (summary.h).
  json by_cause = json::object(), inside = json::array();
  for (size_t c = 0; c < kIdleCauseCount; ++c) by_cause[kIdleCauseNames[c]] = d.in_iterations.ns[c];
  for (const IdleGap& g : d.in_iterations_largest) inside.push_back(GapJson(g, true));
  gaps["in_iterations"] = {{"total_ns", d.in_iterations_ns}, {"by_cause_ns", std::move(by_cause)}, {"largest", std::move(inside)}};
  return gaps;
}

json DeviceJson(const Trace& t, const DeviceSummary& d) {
  const Device* dev = t.FindDevice(d.device);
  json j = {{"device", IdOrNull(d.device)},
            {"name", d.known ? json(d.name) : json(nullptr)},
            {"sm_count", dev && dev->sm_count > 0 ? json(dev->sm_count) : json(nullptr)},
            {"memory_bytes", dev && dev->memory_bytes > 0 ? json(dev->memory_bytes) : json(nullptr)},
            {"peak_bandwidth_gbs",
             dev && dev->peak_bandwidth_gbs > 0 ? json(dev->peak_bandwidth_gbs) : json(nullptr)},
            {"kernels", d.kernels},
            {"memcpys", d.memcpys},
            {"memsets", d.memsets},
            {"first_start_ns", d.first_start_ns},
            {"last_end_ns", d.last_end_ns},
            {"active_ns", d.active_ns},
            {"busy_ns", d.busy_ns},
            {"busy_ms", NsToMs(d.busy_ns)},
            {"idle_ns", d.active_ns - d.busy_ns}};
  SetOrNull(j, keys::kIdleRatio.name, d.has_idle_ratio, d.idle_ratio, "empty active window");
  j["gaps"] = GapsJson(d);
  if (d.idle_causes.attributed) {
    json causes = json::object();
    for (size_t c = 0; c < kIdleCauseCount; ++c) {
      json largest = json::array();
      for (const IdleGap& g : d.idle_causes.largest[c]) largest.push_back(GapJson(g, true));
      json one = {{"gaps", d.idle_causes.gaps[c]}, {"time_ns", d.idle_causes.ns[c]}, {"largest", std::move(largest)}};
      SetOrNull(one, "ratio", d.gap_total_ns > 0,
                d.gap_total_ns > 0 ? static_cast<double>(d.idle_causes.ns[c]) / static_cast<double>(d.gap_total_ns) : 0,
                "no idle time between the device's work");
      causes[kIdleCauseNames[c]] = std::move(one);
    }
    j["idle_causes"] = std::move(causes);
  }
  return j;
}

json TopKernelsJson(const Summary& s, const KernelOps& ops) {
  json arr = json::array();
  size_t rank = 1;
  for (const KernelStat& k : s.top_kernels) {
    arr.push_back({{"rank", rank++},
                   {"name", k.display_name},
                   {"count", k.count},
                   {"total_ns", k.total_ns},
                   {"total_ms", NsToMs(k.total_ns)},
                   {"mean_ns", k.mean_ns},
                   {"min_ns", k.min_ns},
                   {"max_ns", k.max_ns},
                   {"p50_ns", k.p50_ns},
                   {"p95_ns", k.p95_ns},
                   {"share_ratio", k.share}});
    SetKernelOp(arr.back(), ops, k.display_name);
  }
  return arr;
}

json CopiesJson(const Summary& s) {
  json j = json::object();
  for (const CopyStat& c : s.copies) {
    json d = {{"count", c.count}, {"bytes", c.bytes}, {"time_ns", c.time_ns}, {"time_ms", NsToMs(c.time_ns)}};
    SetOrNull(d, "achieved_gbs", c.has_gbs, c.gbs, c.count == 0 ? "no copies" : "zero total copy time");
    d["pageable_count"] = c.pageable;
    SetOrNull(d, "pageable_ratio", c.count > 0, c.pageable_share, "no copies");
    d["small_count"] = c.small;
    std::string key = kCopyDirectionNames[static_cast<size_t>(c.direction)];
    for (char& ch : key) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    j[key] = std::move(d);
  }
  j["memset"] = {{"count", s.memsets.count},
                 {"bytes", s.memsets.bytes},
                 {"time_ns", s.memsets.time_ns},
                 {"time_ms", NsToMs(s.memsets.time_ns)}};
  return j;
}

json StreamsJson(const Summary& s) {
  json arr = json::array();
  for (const StreamSummary& st : s.streams) {
    arr.push_back({{"device", IdOrNull(st.device)},
                   {"stream", IdOrNull(st.stream)},
                   {"kernels", st.kernels},
                   {"memcpys", st.memcpys},
                   {"memsets", st.memsets},
                   {"first_start_ns", st.first_start_ns},
                   {"last_end_ns", st.last_end_ns},
                   {"busy_ns", st.busy_ns},
                   {"busy_ms", NsToMs(st.busy_ns)},
                   {"device_busy_ratio", st.device_busy_share}});
    if (!st.idle_attributed) continue;
    json before = json::object();
    for (size_t c = 0; c < kIdleCauseCount; ++c) before[kIdleCauseNames[c]] = st.idle_before_ns[c];
    arr.back()["idle_before_ns"] = std::move(before);
  }
  return arr;
}

json QualityJson(const Summary& s) {
  json counters = json::array();
  for (const QualityEntry& q : s.quality)
    counters.push_back({{"key", q.key},
                        {"severity", SeverityName(q.severity)},
                        {"count", q.count},
                        {"description", q.description}});
  return {{"has_errors", s.has_errors}, {"counters", std::move(counters)}};
}

json TagOrNull(const std::string& value) {
  return value.empty() ? json(nullptr) : json(value);
}

// The headline keys (flat, at the top of the document) from the kept iterations; docs/RULES.md
// ("Iterations and phases") defines them.
void HeadlineJson(json& doc, const IterationAnalysis& it, const Summary& summary) {
  const SampleStats& l = it.latency_ms;
  bool has = !it.iterations.empty() && it.total_ns > 0;
  const char* why = it.iterations.empty() ? "no iterations" : "the iterations have zero length (empty trace)";
  doc[std::string(keys::kIterations.name)] = it.iterations.size();
  SetOrNull(doc, keys::kAvgLatencyMs.name, has, l.mean, why);
  SetOrNull(doc, keys::kStdLatencyMs.name, has, l.std, why);
  SetOrNull(doc, keys::kP50LatencyMs.name, has, l.p50, why);
  SetOrNull(doc, keys::kP95LatencyMs.name, has, l.p95, why);
  SetOrNull(doc, keys::kP99LatencyMs.name, has, l.p99, why);
  SetOrNull(doc, keys::kLatencyCv.name, has && l.has_cv, l.cv, has ? "fewer than 2 iterations" : why);
  SetOrNull(doc, keys::kThroughputFps.name, has && it.has_throughput, it.throughput_fps, has ? "zero-length run" : why);
  for (size_t p = 0; p < kPhaseCount; ++p) SetOrNull(doc, keys::kPhaseRatioKeys[p]->name, has, it.phase_ratio[p], why);
  // Without device activity idle time is undefined, not 100%: a state of the recording.
  if (!summary.no_device_activity.empty()) {
    SetOrNull(doc, keys::kIdleRatio.name, false, 0, summary.no_device_activity);
    doc["no_device_activity"] = summary.no_device_activity;
  }
  json samples = json::array();
  for (const Iteration& i : it.iterations) samples.push_back(NsToMs(i.latency_ns()));
  doc[std::string(keys::kLatencySamplesMs.name)] = std::move(samples);
}

// What --skip dropped and why, as data and as the one line every renderer prints (docs/RULES.md,
// "Warm-up iterations").
json WarmupJson(const IterationAnalysis& it) {
  json dropped = json::array();
  std::string list;
  for (size_t i = 0; i < it.dropped.size(); ++i) {
    const Iteration& d = it.dropped[i];
    dropped.push_back({{"index", d.index}, {"name", d.name}, {"latency_ms", NsToMs(d.latency_ns())}});
    if (i < 5) list += StrFormat("%s%s %.3f ms", i ? ", " : "", d.name.c_str(), NsToMs(d.latency_ns()));
  }
  if (it.dropped.size() > 5) list += StrFormat(" and %zu more", it.dropped.size() - 5);
  const WarmupSplit& w = it.warmup;
  const size_t n = it.skipped;
  std::string text = "none dropped (--skip 0)";
  if (n > 0) {
    const std::string first = n == 1 ? std::string("the first") : "the first " + std::to_string(n);
    text = StrFormat("dropped %s of %zu iterations (--skip %s): %s", first.c_str(), it.found,
                     it.skip_auto ? "auto" : std::to_string(n).c_str(), list.c_str());
    if (it.skip_auto)
      text += StrFormat(", %smore than %gx the median %.3f ms of the rest", n == 1 ? "" : "each ", kWarmupFactor,
                        w.median / 1e6);
    text += n == 1 ? "; --skip 0 keeps it" : "; --skip 0 keeps them";
  } else if (it.skip_auto && !w.eligible) {
    text = StrFormat("none dropped (--skip auto): %zu %s, too few to tell warm-up from the steady state (%zu needed)",
                     it.found, it.found == 1 ? "iteration" : "iterations", kWarmupMinIterations);
  } else if (it.skip_auto) {
    text = StrFormat("none dropped (--skip auto): the first iteration took %.2fx the median %.3f ms of the rest "
                     "(warm-up: more than %gx)", w.first_ratio, w.median / 1e6, kWarmupFactor);
  }
  const bool measured = it.skip_auto && w.eligible;
  return {{"mode", it.skip_auto ? "auto" : "fixed"},
          {"dropped", std::move(dropped)},
          {"factor", it.skip_auto ? json(kWarmupFactor) : json(nullptr)},
          {"median_ms", measured ? json(w.median / 1e6) : json(nullptr)},
          {"first_ratio", measured && n == 0 ? json(w.first_ratio) : json(nullptr)},
          {"summary", std::move(text)}};
}

json IterationSourceJson(const IterationAnalysis& it, const IterationOptions& o) {
  return {{"from_markers", it.from_markers},
          {"description", it.source},
          {"regex", o.iteration_regex},
          {"pid", IdOrNull(it.pid)},
          {"found", it.found},
          {"skipped", it.skipped},
          {"step_form", it.step_form.empty() ? json(nullptr) : json(it.step_form)},
          {"warmup", WarmupJson(it)}};
}

json PhasesJson(const IterationAnalysis& it) {
  json j = json::object();
  for (size_t p = 0; p < kPhaseCount; ++p)
    j[kPhaseNames[p]] = {{"mean_ms", it.phase_mean_ms[p]}, {"ratio", it.phase_ratio[p]}};
  return j;
}

// The phases in key order (the order nlohmann writes phases_ms in).
const std::array<size_t, kPhaseCount>& PhasesByName() {
  static const std::array<size_t, kPhaseCount> order = [] {
    std::array<size_t, kPhaseCount> o{};
    for (size_t p = 0; p < kPhaseCount; ++p) o[p] = p;
    std::sort(o.begin(), o.end(),
              [](size_t a, size_t b) { return std::string_view(kPhaseNames[a]) < std::string_view(kPhaseNames[b]); });
    return o;
  }();
  return order;
}

// The idle causes in key order (the order nlohmann writes an object's members in).
const std::array<size_t, kIdleCauseCount>& CausesByName() {
  static const std::array<size_t, kIdleCauseCount> order = [] {
    std::array<size_t, kIdleCauseCount> o{};
    for (size_t c = 0; c < kIdleCauseCount; ++c) o[c] = c;
    std::sort(o.begin(), o.end(), [](size_t a, size_t b) {
      return std::string_view(kIdleCauseNames[a]) < std::string_view(kIdleCauseNames[b]);
    });
    return o;
  }();
  return order;
}

// One iteration row, its members in nlohmann's key order (sorted), so that the streamed file and
// the tree's dump agree. The one definition of a row: Out is RowDoubles (gathers its doubles and
// its shape, to format a run of rows' doubles at once), RowRecorder (lays a shape out once) or
// RowFast (writes it); writing the text directly is ~10x faster than building and dumping a
// tree, and IterationTableJson parses it when a tree is wanted.
// The serving step's counts (serving.h) where it is one: -1 (unknown) is null.
template <class Out>
void StepCount(Out& o, const Iteration& i, const char* key, int64_t v) {
  if (!i.serving.is_step()) return;
  if (v < 0) o.Null(key);
  else o.Int(key, v);
}

template <class Out>
void IterationRow(Out& o, const Iteration& i) {
  const ServingStep& s = i.serving;
  o.BeginObject();
  StepCount(o, i, keys::kRowDecodeContextTokens.name.data(), s.decode_context_tokens);
  StepCount(o, i, keys::kRowDecodeQueryTokens.name.data(), s.decode_query_tokens);
  StepCount(o, i, keys::kRowDecodeRequests.name.data(), s.decode_requests);
  o.Int(keys::kRowEndNs.name.data(), i.end);
  o.Double(keys::kRowGpuBusyMs.name.data(), NsToMs(i.gpu_busy_ns));
  o.Double(keys::kRowHostStepMs.name.data(), NsToMs(i.host_ns()));
  o.Object(keys::kRowIdleCausesNs.name.data());
  for (size_t c : CausesByName()) o.Int(kIdleCauseNames[c], static_cast<int64_t>(i.idle_cause_ns[c]));
  o.EndObject();
  o.Int(keys::kRowIndex.name.data(), i.index);
  o.Double(keys::kRowInferRangeMs.name.data(), NsToMs(i.infer_range_ns));
  o.Int(keys::kRowKernels.name.data(), i.kernels);
  o.Double(keys::kRowLatencyMs.name.data(), NsToMs(i.latency_ns()));
  o.Int(keys::kRowMemcpys.name.data(), i.memcpys);
  o.Int(keys::kRowMemsets.name.data(), i.memsets);
  o.String(keys::kRowName.name.data(), i.name);
  o.Object(keys::kRowPhasesMs.name.data());
  for (size_t p : PhasesByName()) o.Double(kPhaseNames[p], NsToMs(i.phase_ns[p]));
  o.EndObject();
  o.Double(keys::kRowPostRangeMs.name.data(), NsToMs(i.post_range_ns));
  o.Double(keys::kRowPreRangeMs.name.data(), NsToMs(i.pre_range_ns));
  StepCount(o, i, keys::kRowPrefillContextTokens.name.data(), s.prefill_context_tokens);
  StepCount(o, i, keys::kRowPrefillQueryTokens.name.data(), s.prefill_query_tokens);
  StepCount(o, i, keys::kRowPrefillRequests.name.data(), s.prefill_requests);
  o.Int(keys::kRowStartNs.name.data(), i.start);
  if (s.is_step()) {
    if (s.kind == StepKind::kUnknown) o.Null(keys::kRowStepKind.name.data());
    else o.String(keys::kRowStepKind.name.data(), kStepKindNames[static_cast<size_t>(s.kind)]);
  }
  o.Double(keys::kRowSyncMs.name.data(), NsToMs(i.sync_ns));
  o.Int(keys::kRowSyncs.name.data(), i.syncs);
  StepCount(o, i, keys::kRowTokens.name.data(), s.tokens);
  o.EndObject();
}

// A row's doubles, and its members' keys in order (an object's key, then nullptr where it
// closes): the row's shape, which says what text lies between its values.
struct RowDoubles {
  std::vector<double>& values;
  std::vector<const char*>& keys;
  void BeginObject() {}
  void Object(const char* key) { keys.push_back(key); }
  void EndObject() { keys.push_back(nullptr); }
  void Int(const char* key, uint64_t) { keys.push_back(key); }
  void Int(const char* key, int64_t) { keys.push_back(key); }
  void String(const char* key, const std::string&) { keys.push_back(key); }
  void Null(const char* key) { keys.push_back(key); }
  void Double(const char* key, double v) {
    keys.push_back(key);
    values.push_back(v);
  }
};

// The text of a row's shape around its values: seps[k] comes before value k (its key, and the
// brackets and keys of the objects opened and closed since the last value), `tail` after the last
// value (up to the row's own closing bracket). Recorded once per shape by writing a row of that
// shape with a writer at the rows' depth (a Fork of the table's writer), cut at each value.
struct RowShape {
  std::vector<const char*> keys;
  std::vector<std::string> seps;
  std::string tail;
};

struct RowRecorder {
  JsonWriter& w;
  RowShape& shape;
  int depth = 0;
  void BeginObject() {
    if (depth++ > 0) return;
    w.BeginObject();
    w.TakeText();  // the row's own opening: the real writer writes it
  }
  void Object(const char* key) {
    ++depth;
    w.Key(key);
    w.BeginObject();
  }
  void EndObject() {
    if (--depth > 0) {
      w.EndObject();
      return;
    }
    shape.tail = w.TakeText();
  }
  void Value(const char* key) {
    w.Key(key);
    shape.seps.push_back(w.TakeText());
    w.Null();  // any value: the layout after it is the same
    w.TakeText();
  }
  void Int(const char* key, uint64_t) { Value(key); }
  void Int(const char* key, int64_t) { Value(key); }
  void String(const char* key, const std::string&) { Value(key); }
  void Null(const char* key) { Value(key); }
  void Double(const char* key, double) { Value(key); }
};

// Writes a row of a recorded shape: each value after its separator, the members as one piece.
struct RowFast {
  JsonWriter& w;
  const DoubleTexts& doubles;
  size_t& next;  // the next of `doubles`
  const RowShape& shape;
  std::string& members;
  size_t k = 0;
  int depth = 0;
  void BeginObject() {
    if (depth++ > 0) return;
    w.BeginObject();
    members.clear();
  }
  void Object(const char*) { ++depth; }
  void EndObject() {
    if (--depth > 0) return;
    members += shape.tail;
    w.RawMembers(members);
    w.EndObject();
  }
  template <class T>
  void Digits(T v) {
    char buf[24];
    members.append(buf, static_cast<size_t>(std::to_chars(buf, buf + sizeof buf, v).ptr - buf));
  }
  void Int(const char*, uint64_t v) {
    members += shape.seps[k++];
    Digits(v);
  }
  void Int(const char*, int64_t v) {
    members += shape.seps[k++];
    Digits(v);
  }
  void String(const char*, const std::string& v) {
    members += shape.seps[k++];
    JsonWriter::AppendQuoted(members, v);
  }
  void Null(const char*) {
    members += shape.seps[k++];
    members += "null";
  }
  void Double(const char*, double) {
    members += shape.seps[k++];
    members += doubles[next++];
  }
};

// Rows [first, last) as elements of the array open in `w`, a chunk of rows at a time (their
// doubles formatted in one run, without holding the texts of every row's doubles at once). Each
// shape of row (its keys in order) is laid out once by the writer itself; the rows of that shape
// then take its text around their values (the same bytes the writer would write).
void WriteIterationRows(JsonWriter& w, const std::vector<Iteration>& rows, size_t first, size_t last) {
  constexpr size_t kChunk = 256;
  std::vector<double> values;
  std::vector<const char*> keys;
  std::vector<RowShape> shapes;
  std::vector<uint32_t> shape_of;
  std::string members;
  for (size_t begin = first; begin < last; begin += kChunk) {
    const size_t end = std::min(last, begin + kChunk);
    values.clear();
    shape_of.clear();
    for (size_t r = begin; r < end; ++r) {
      keys.clear();
      RowDoubles gather{values, keys};
      IterationRow(gather, rows[r]);
      size_t s = 0;
      while (s < shapes.size() && shapes[s].keys != keys) ++s;
      if (s == shapes.size()) {
        RowShape& shape = shapes.emplace_back();
        shape.keys = keys;
        JsonWriter at = w.Fork(0);
        RowRecorder record{at, shape};
        IterationRow(record, rows[r]);
      }
      shape_of.push_back(static_cast<uint32_t>(s));
    }
    const DoubleTexts doubles(values);
    size_t next = 0;
    for (size_t r = begin; r < end; ++r) {
      RowFast text{w, doubles, next, shapes[shape_of[r - begin]], members};
      IterationRow(text, rows[r]);
    }
  }
}

// The serving section (serving.h, docs/SERVING.md): null + serving_reason without serving steps
// or graph replays.
// The graph replays traced back to their ops (graph_capture.h): null with the reason when no
// capture trace was given; absent when the trace has no graph launch and none was.
constexpr size_t kCapturedOpsShown = 50;

void SetCaptureJson(json& graph, const ServingAnalysis& sv, const GraphCaptureMapping& m) {
  if (!m.asked) {
    if (sv.graph_launches == 0) return;
    graph["capture"] = nullptr;
    graph["capture_reason"] =
        "no capture trace given (tracegate analyze REPLAY --capture CAPTURE): a replay records no op, so its kernels "
        "are classed by their names";
    return;
  }
  json ops = json::array();
  for (size_t i = 0; i < m.ops.size() && i < kCapturedOpsShown; ++i) {
    const GraphOpShare& o = m.ops[i];
    json j = {{"op", o.op.empty() ? json(nullptr) : json(o.op)},
              {"frame", o.frame.empty() ? json(nullptr) : json(o.frame)},
              {"kernels", o.kernels},
              {"kernel_ns", o.kernel_ns}};
    SetOrNull(j, "kernel_time_ratio", m.kernel_ns > 0,
              m.kernel_ns > 0 ? static_cast<double>(o.kernel_ns) / static_cast<double>(m.kernel_ns) : 0,
              "the mapped kernels took no time");
    ops.push_back(std::move(j));
  }
  json traces = json::array();
  for (const std::string& t : m.sources) traces.push_back(t);
  graph["capture"] = {{"traces", std::move(traces)},
                      {"graphs", m.graphs},
                      {"launches", m.launches},
                      {"launches_mapped", m.launches_mapped},
                      {"kernels", m.kernels},
                      {"kernels_mapped", m.kernels_mapped},
                      {"kernel_ns", m.kernel_ns},
                      {"matched_by", {{"launch_count", m.by_count}, {"launch_count_and_capture_size", m.by_size}}},
                      {"unmatched", {{"no_graph_with_as_many_launches", m.no_match}, {"ambiguous", m.ambiguous}}},
                      {"ops", std::move(ops)},
                      {"ops_omitted", m.ops.size() > kCapturedOpsShown ? m.ops.size() - kCapturedOpsShown : 0}};
}

json ServingJson(const ServingAnalysis& sv, const GraphCaptureMapping& capture) {
  json groups = json::array();
  for (const ServingGroup& g : sv.groups) {
    json j = {{"kind", kStepKindNames[static_cast<size_t>(g.kind)]},
              {"token_bucket_min", g.bucket_min < 0 ? json(nullptr) : json(g.bucket_min)},
              {"token_bucket_max", g.bucket_min < 0 ? json(nullptr) : json(g.bucket_min == 0 ? 1 : 2 * g.bucket_min)},
              {"count", g.count},
              {"latency_total_ms", NsToMs(g.latency_ns)},
              {"mean_latency_ms", g.mean_ms},
              {keys::kP50LatencyMs.name, g.p50_ms},  // a group's percentiles carry the headline's names
              {keys::kP95LatencyMs.name, g.p95_ms},
              {keys::kP99LatencyMs.name, g.p99_ms},
              {"tokens", g.tokens < 0 ? json(nullptr) : json(g.tokens)}};
    const bool rates = g.tokens > 0 && g.latency_ns > 0;
    const char* why = g.tokens < 0    ? "the token count of a step is unknown"
                      : g.tokens == 0 ? "no tokens"
                                      : "zero latency";
    SetOrNull(j, "ms_per_token", rates, rates ? NsToMs(g.latency_ns) / static_cast<double>(g.tokens) : 0, why);
    SetOrNull(j, "tokens_per_s", rates,
              rates ? static_cast<double>(g.tokens) / (static_cast<double>(g.latency_ns) / 1e9) : 0, why);
    groups.push_back(std::move(j));
  }
  json graph = {{"launches", sv.graph_launches},
                {"kernels", sv.graph_kernels},
                {"kernel_ns", sv.graph_kernel_ns},
                {"total_kernel_ns", sv.kernel_ns}};
  SetOrNull(graph, "kernel_time_ratio", sv.has_graph_ratio, sv.graph_kernel_ratio, "no kernels");
  SetCaptureJson(graph, sv, capture);
  json capture_names = json::array();
  for (const std::string& n : sv.capture_names) capture_names.push_back(n);
  return {{"steps", sv.steps},
          {"step_form", sv.step_form.empty() ? json(nullptr) : json(sv.step_form)},
          {"groups", std::move(groups)},
          {"graph_replay", std::move(graph)},
          {"capture_steps", sv.capture_steps},
          {"capture_names", std::move(capture_names)}};
}

// The critical path (critical_path.h): the kept iterations' path time by kind (each kind's
// total, share of the summed step time and mean per iteration), host compute by frame, the
// longest segments with their events, and the edges and assumptions it held.
json CriticalPathJson(const CriticalPathResult& cp) {
  const bool shares = cp.step_total_ns > 0;
  const double n = static_cast<double>(cp.iterations);
  auto share = [&](TimeNs ns) { return shares ? static_cast<double>(ns) / static_cast<double>(cp.step_total_ns) : 0; };
  json kinds = json::object();
  for (size_t i = 0; i < kPathKindCount; ++i) {
    json k = {{"total_ns", cp.kind_ns[i]}, {"mean_ms", NsToMs(cp.kind_ns[i]) / n}};
    SetOrNull(k, "share", shares, share(cp.kind_ns[i]), "the steps took no time");
    kinds[kPathKindNames[i]] = std::move(k);
  }
  json frames = json::array();
  for (const PathFrame& f : cp.frames) {
    json j = {{"frame", f.name.empty() ? json(nullptr) : json(f.name)}, {"total_ns", f.ns}};
    SetOrNull(j, "share", shares, share(f.ns), "the steps took no time");
    frames.push_back(std::move(j));
  }
  json top = json::array();
  for (const PathTopSegment& s : cp.top) {
    auto id = [](int64_t v, bool set) { return set && v != kUnknownId ? json(v) : json(nullptr); };
    top.push_back({{"iteration", s.iteration},
                   {"kind", kPathKindNames[static_cast<size_t>(s.kind)]},
                   {"name", s.name.empty() ? json(nullptr) : json(s.name)},
                   {"start_ns", s.start},
                   {"duration_ns", s.duration},
                   {"device", id(s.device, s.gpu)},
                   {"stream", id(s.stream, s.gpu)},
                   {"pid", id(s.pid, !s.gpu)},
                   {"tid", id(s.tid, !s.gpu)}});
  }
  return {{"method", "replay dependency pass with no change, walked back from each kept iteration's end"},
          {keys::kIterations.name, cp.iterations},  // the kept iterations, the headline's
          {"step_total_ns", cp.step_total_ns},
          {"step_mean_ms", NsToMs(cp.step_total_ns) / n},
          {"kinds", std::move(kinds)},
          {"host_frames", std::move(frames)},
          {"host_frames_other_ns", cp.frames_other_ns},
          {"segments", cp.segments},
          {"top_segments", std::move(top)},
          {"edges", cp.edges},
          {"assumptions", cp.assumptions}};
}

json PeakJson(const PeakRates& p) {
  json j = {{"device_name", p.device_name.empty() ? json(nullptr) : json(p.device_name)}, {"source", p.source}};
  SetOrNull(j, "bandwidth_gbs", p.has_bandwidth, p.bandwidth_gbs, "unknown device; pass --peak-gbs");
  SetOrNull(j, "tflops", p.has_flops, p.tflops, "unknown device; pass --peak-tflops");
  return j;
}

json RooflineJson(const std::vector<RooflineItem>& items) {
  json arr = json::array();
  for (const RooflineItem& r : items) {
    json j = {{"label", r.label},
              {"source", r.source},
              {"launches", r.launches},
              {"time_ms", NsToMs(r.time_ns)},
              {"bytes", r.bytes},
              {"flops", r.flops},
              {"achieved_gbs", r.achieved_gbs},
              {"achieved_tflops", r.achieved_tflops},
              {"intensity_flop_per_byte", r.intensity}};
    SetOrNull(j, "bandwidth_ratio", r.has_peak, r.bandwidth_share, "peak rates unknown");
    SetOrNull(j, "flops_ratio", r.has_peak, r.flops_share, "peak rates unknown");
    j["memory_bound"] = r.has_peak ? json(r.memory_bound) : json(nullptr);
    arr.push_back(std::move(j));
  }
  return arr;
}

}  // namespace

namespace {

// The settings of the rules a trace's report evaluated: not those across ranks, which a job
// evaluates from its ranks' reports.
json RulesJson(const RulesConfig& rules) {
  json j = json::object();
  for (const auto& [id, params] : rules.values()) {
    if (const RuleDef* d = FindRule(id); d && d->across_ranks()) continue;
    json r = {{"enabled", rules.Enabled(id)}};
    for (const auto& [key, value] : params) r[key] = value;
    j[id] = std::move(r);
  }
  return j;
}

}  // namespace

json IterationTableJson(const IterationAnalysis& it) {
  JsonWriter w;
  w.BeginArray();
  WriteIterationRows(w, it.iterations, 0, it.iterations.size());
  w.EndArray();
  return json::parse(w.TakeText());
}

json AnalysisToJson(const Trace& trace, const Analysis& analysis, const AnalysisConfig& config, IterationRows rows) {
  const Summary& summary = analysis.summary;
  const AnalyzeOptions& options = config.summary;
  // What launched each kernel name (a pass over every kernel) on the second core while the rest
  // is built here, the timeline (its overview unions every GPU interval of the trace) and the
  // kernel table first; both threads only read the trace and the analysis.
  KernelOps kernel_ops;
  internal::SideTask ops_task([&] { kernel_ops = KernelOpsByName(trace, analysis); });
  json timeline = TimelineJson(trace, analysis);
  json kernel_table = KernelTableJson(trace, analysis);
  json doc = json::object();
  doc["schema"] = kReportSchema;
  doc["tool"] = {{"name", "tracegate"}, {"version", TRACEGATE_VERSION}};
  doc["model"] = TagOrNull(config.model);
  if (config.model.empty()) doc["model_reason"] = "not given (--model)";
  doc["precision"] = TagOrNull(config.precision);
  if (config.precision.empty()) doc["precision_reason"] = "not given (--precision)";
  doc["batch"] = config.iterations.batch;
  AddProvenanceJson(doc, trace, analysis, config);
  HeadlineJson(doc, analysis.iterations, summary);
  doc["iteration_source"] = IterationSourceJson(analysis.iterations, config.iterations);
  doc["phases"] = PhasesJson(analysis.iterations);
  doc["gpu_idle"] = GpuIdleJson(analysis.idle, options);
  doc["graph_capture"] = analysis.idle.capture_note.empty() ? json(nullptr) : json(analysis.idle.capture_note);
  doc["findings"] = internal::FindingsJson(analysis.findings);
  doc["combined_estimate"] = internal::CombinedJson(analysis.combined);
  doc["source"] = SourceJson(trace);
  doc["environment"] = EnvironmentJson(trace);
  doc["counts"] = CountsJson(summary.counts);
  doc["window"] = {{"start_ns", summary.start_ns},
                   {"end_ns", summary.end_ns},
                   {"duration_ns", summary.duration_ns},
                   {"duration_ms", NsToMs(summary.duration_ns)}};
  json devices = json::array();
  for (const DeviceSummary& d : summary.devices) devices.push_back(DeviceJson(trace, d));
  doc["devices"] = std::move(devices);
  doc["kernels"] = {{"count", summary.counts.kernels},
                    {"total_ns", summary.total_kernel_ns},
                    {"total_ms", NsToMs(summary.total_kernel_ns)},
                    {"distinct_names", summary.distinct_kernels},
                    {"percentile_method", "nearest_rank"}};
  doc["collectives"] = CollectivesJson(analysis.communication);
  doc["ranks"] = RanksJson(analysis);
  doc["copies"] = CopiesJson(summary);
  doc["streams"] = StreamsJson(summary);
  doc["data_quality"] = QualityJson(summary);
  doc["iteration_table"] = rows == IterationRows::kInTree ? IterationTableJson(analysis.iterations) : json::array();
  if (analysis.serving.steps > 0 || analysis.serving.graph_launches > 0 || analysis.serving.capture_steps > 0) {
    doc["serving"] = ServingJson(analysis.serving, analysis.graph_ops);
  } else {
    doc["serving"] = nullptr;
    doc["serving_reason"] = "no serving step annotations, graph launches or graph captures";
  }
  if (!config.critical_path) {
    // Not asked for (--critical-path): no section, as in reports written before it existed.
  } else if (analysis.critical_path.iterations > 0) {
    doc["critical_path"] = CriticalPathJson(analysis.critical_path);
  } else {
    doc["critical_path"] = nullptr;
    doc["critical_path_reason"] = "no kept iterations";
  }
  doc["timeline"] = std::move(timeline);
  doc["peak"] = PeakJson(analysis.peak);
  doc["roofline"] = RooflineJson(analysis.roofline);
  doc["rules"] = RulesJson(config.rules);
  doc["options"] = {{"top_k", options.top_k},
                    {"largest_gaps", options.largest_gaps},
                    {"small_copy_bytes", options.small_copy_bytes},
                    {"iteration_regex", config.iterations.iteration_regex},
                    {"skip", config.iterations.skip ? json(*config.iterations.skip) : json("auto")},
                    {"pre_regex", config.iterations.pre_regex},
                    {"infer_regex", config.iterations.infer_regex},
                    {"post_regex", config.iterations.post_regex}};
  ops_task.Wait();
  doc["top_kernels"] = TopKernelsJson(summary, kernel_ops);
  SetKernelOps(kernel_table, kernel_ops);
  doc["kernel_table"] = std::move(kernel_table);
  return doc;
}

Status WriteAnalysisJson(const json& doc, const IterationAnalysis& iterations, const std::string& path) {
  const auto table = doc.find("iteration_table");  // end() when doc is not an object
  if (table == doc.end() || !table->is_array() || !table->empty())
    return InvalidInput(path + ": the report has no empty \"iteration_table\" to fill");
  // The members before the table, the rows, then the rest: pieces of text, one after the other in
  // the file. The rows are written in parts by two threads, each taking the next part when it is
  // free; this one writes the rest of the text first (the members after the table: the timeline,
  // the kernel table, ...), so neither waits for the other whatever the share of each. A part goes
  // into the file as soon as every part before it is there (by whichever thread finished the
  // last of them), and its text's buffer is taken again by a later part: the file is written
  // while the rows are, not after them, and a few buffers' pages are faulted in, not the rows'.
  const std::vector<Iteration>& rows = iterations.iterations;
  AtomicFile file(path);
  TG_RETURN_IF_ERROR(file.Open());
  JsonWriter w;
  w.BeginObject();
  for (auto it = doc.begin(); it != table; ++it) {
    w.Key(it.key());
    w.Value(*it);
  }
  w.Key(table.key());
  w.BeginArray();
  const std::string head = w.TakeText();
  TG_RETURN_IF_ERROR(file.WriteAt(0, head));
  constexpr size_t kPartRows = 256;
  const size_t parts = (rows.size() + kPartRows - 1) / kPartRows;
  std::vector<JsonWriter> writers;  // each where its part begins
  writers.reserve(parts);
  for (size_t k = 0; k < parts; ++k) writers.push_back(w.Fork(std::min(kPartRows, rows.size() - k * kPartRows)));
  std::mutex mu;  // guards what follows, down to `writing`
  std::vector<std::string> texts(parts);
  std::vector<uint8_t> done(parts, 0);
  std::vector<std::string> spare;  // written texts, their buffers for later parts
  size_t written = 0;              // parts in the file
  uint64_t at = head.size();       // where the next part goes
  Status write_status;             // the first failed write
  bool writing = false;            // a thread is writing parts (outside the lock)
  const auto finish = [&](size_t k, std::string text) {
    std::unique_lock lock(mu);
    texts[k] = std::move(text);
    done[k] = 1;
    if (writing) return;  // that thread writes this part too once it reaches it
    writing = true;
    while (written < parts && done[written]) {
      const std::string& next = texts[written];
      const uint64_t offset = at;
      lock.unlock();
      Status s = write_status.ok() ? file.WriteAt(offset, next) : Status::Ok();
      lock.lock();
      if (!s.ok() && write_status.ok()) write_status = std::move(s);
      at += texts[written].size();
      spare.push_back(std::move(texts[written]));
      ++written;
    }
    writing = false;
  };
  std::atomic<size_t> next_part{0};
  const auto write_parts = [&] {
    for (size_t k; (k = next_part.fetch_add(1, std::memory_order_relaxed)) < parts;) {
      const size_t first = k * kPartRows, last = std::min(rows.size(), first + kPartRows);
      {
        std::lock_guard lock(mu);
        if (!spare.empty()) {
          writers[k].UseBuffer(std::move(spare.back()));
          spare.pop_back();
        }
      }
      // Rows take ~0.9-1.3 KB (a serving step's the most): room for 2 KB each, so that no part's
      // text is copied to a larger one as it grows; pages never written cost no memory.
      writers[k].Reserve((last - first) * 2048);
      WriteIterationRows(writers[k], rows, first, last);
      finish(k, writers[k].TakeText());
    }
  };
  std::string tail;
  {
    std::optional<SideTask> helper;
    if (parts >= 2) helper.emplace(write_parts);
    w.EndArray();
    for (auto it = std::next(table); it != doc.end(); ++it) {
      w.Key(it.key());
      w.Value(*it);
    }
    w.EndObject();
    tail = w.TakeText();
    tail.push_back('\n');  // as WriteJsonFile ends the file
    write_parts();
    if (helper) helper->Wait();
  }
  // Every part is written: the thread that finished the last one wrote up to it.
  TG_RETURN_IF_ERROR(write_status);
  TG_RETURN_IF_ERROR(file.WriteAt(at, tail));
  return file.Commit();
}

}  // namespace tg

namespace tg {

Report::Report(const Trace& trace, Analysis&& analysis, const AnalysisConfig& config)
    : doc_(AnalysisToJson(trace, analysis, config, IterationRows::kLeftOut)),
      rows_(std::make_shared<const IterationAnalysis>(std::move(analysis.iterations))),
      metadata_(trace.metadata) {}

Report::Report(nlohmann::json doc) : doc_(std::move(doc)) {}

const nlohmann::json& Report::Document() const {
  if (rows_) {
    doc_["iteration_table"] = IterationTableJson(*rows_);
    rows_.reset();
  }
  return doc_;
}

nlohmann::json Report::TakeDocument() && {
  Document();
  return std::move(doc_);
}

Status Report::WriteJson(const std::string& path) const {
  return rows_ ? WriteAnalysisJson(doc_, *rows_, path) : WriteJsonFile(doc_, path);
}

std::string_view Report::TraceMetadata(std::string_view key) const {
  const auto it = metadata_.find(key);
  return it == metadata_.end() ? std::string_view() : std::string_view(it->second);
}

}  // namespace tg
