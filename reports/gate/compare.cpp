// CompareReports: headline deltas, the per-kernel and per-phase diff, the statistics on the
// latency samples, and the verdict. The rules are in tracegate/compare.h.
#include "tracegate/reports/compare.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "reports/document/report_document.h"
#include "reports/document/report_keys.h"
#include "reports/gate/compare_internal.h"
#include "tracegate/analyzer/kernel_class.h"
#include "tracegate/reports/analysis_report.h"

namespace tg {

namespace keys = internal::keys;

using internal::CheckLostData;
using internal::DiffKernelsAndPhases;
using internal::DiffRanks;
using internal::FormatNumber;
using internal::FormatP;
using internal::FormatSigned;
using internal::GroupFamilies;
using internal::KernelDeltaMs;
using internal::RanksOverText;
using internal::VerdictHeading;

using nlohmann::json;

std::string_view VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kPass: return "pass";
    case Verdict::kRegression: return "regression";
    case Verdict::kCannotJudge: return "cannot_judge";
  }
  return "cannot_judge";
}

std::string_view KernelChangeName(KernelChange c) {
  switch (c) {
    case KernelChange::kUnchanged: return "unchanged";
    case KernelChange::kChanged: return "changed";
    case KernelChange::kAdded: return "added";
    case KernelChange::kRemoved: return "removed";
  }
  return "unchanged";
}

namespace {

using internal::Array;
using internal::Find;
using internal::Number;
using internal::Object;
using internal::Text;

// A metric read from a report: a headline key, or `section`.`key` for nested ones.
struct MetricSpec {
  std::string_view name;     // as shown and keyed in the comparison
  std::string_view section;  // empty for headline keys
  std::string_view key;
  bool higher_is_worse;
};

constexpr MetricSpec Headline(const keys::Key& key, bool higher_is_worse) {
  return {key.name, {}, key.name, higher_is_worse};
}

constexpr MetricSpec kMetrics[] = {
    Headline(keys::kAvgLatencyMs, true),   Headline(keys::kP50LatencyMs, true),
    Headline(keys::kP95LatencyMs, true),   Headline(keys::kP99LatencyMs, true),
    Headline(keys::kStdLatencyMs, true),   Headline(keys::kLatencyCv, true),
    Headline(keys::kThroughputFps, false), Headline(keys::kPreRatio, true),
    Headline(keys::kH2dRatio, true),       Headline(keys::kInferRatio, true),
    Headline(keys::kD2hRatio, true),       Headline(keys::kPostRatio, true),
    Headline(keys::kIdleRatio, true),      {"kernels.total_ms", "kernels", "total_ms", true},
    Headline(keys::kMemoryPeakMb, true),
};

// "null (no iterations)", "missing" or "not a number": why a side has no value for `key`.
std::string MissingReason(const json& obj, std::string_view key) {
  const json* v = Find(obj, key);
  if (!v) return "missing";
  if (!v->is_null()) return "not a number";
  std::string why = Text(obj, keys::ReasonKey(key));
  return why.empty() ? "null" : "null (" + why + ")";
}

MetricDelta ReadMetric(const MetricSpec& spec, const json& base, const json& next) {
  const json& b = spec.section.empty() ? base : Object(base, spec.section);
  const json& n = spec.section.empty() ? next : Object(next, spec.section);
  const std::optional<double> bn = Number(b, spec.key), nn = Number(n, spec.key);
  const bool hb = bn.has_value(), hn = nn.has_value();
  const double bv = bn.value_or(0), nv = nn.value_or(0);
  MetricDelta m;
  m.key = spec.name;
  m.higher_is_worse = spec.higher_is_worse;
  m.has_base = hb;
  m.has_new = hn;
  m.base = bv;
  m.next = nv;
  if (hb && hn) {
    m.delta = nv - bv;
    m.has_pct = bv != 0;
    if (m.has_pct) m.pct = m.delta / std::abs(bv) * 100;
  }
  if (!hb) m.base_reason = MissingReason(b, spec.key);
  if (!hn) m.new_reason = MissingReason(n, spec.key);
  return m;
}

// Per kept iteration, from kernel_table (the kept iterations' kernels; kernels.total_ms is the
// whole trace's, warm-up and start-up included): the kernels' GPU time, or their launches.
std::optional<double> KernelTablePerIteration(const json& doc, bool launches) {
  const json* table = Find(doc, "kernel_table");
  const std::optional<double> iterations = Number(doc, keys::kIterations.name);
  if (!table || !table->is_array() || !iterations || *iterations <= 0) return std::nullopt;
  double sum = 0;
  for (const json& row : *table) sum += Number(row, launches ? "count" : "per_iteration_ms").value_or(0);
  return launches ? sum / *iterations : sum;
}

MetricDelta KernelTableMetric(const char* key, bool launches, const json& base, const json& next) {
  MetricDelta m;
  m.key = key;
  const std::optional<double> b = KernelTablePerIteration(base, launches), n = KernelTablePerIteration(next, launches);
  m.has_base = b.has_value();
  m.has_new = n.has_value();
  m.base = b.value_or(0);
  m.next = n.value_or(0);
  if (!b) m.base_reason = "no kernel_table";
  if (!n) m.new_reason = "no kernel_table";
  if (b && n) {
    m.delta = *n - *b;
    m.has_pct = *b != 0;
    if (m.has_pct) m.pct = m.delta / std::abs(*b) * 100;
  }
  return m;
}

std::vector<double> Samples(const json& doc) {
  std::vector<double> out;
  for (const json& v : Array(doc, keys::kLatencySamplesMs.name))
    if (v.is_number()) out.push_back(v.get<double>());
  return out;
}

SideInfo ReadSide(const json& doc, const std::string& label) {
  SideInfo side;
  side.label = label;
  std::set<std::string> devices;
  for (const json& dev : Array(doc, "devices"))
    if (std::string name = Text(dev, "name"); !name.empty()) devices.insert(name);
  side.devices.assign(devices.begin(), devices.end());
  side.model = Text(doc, "model");
  side.commit = Text(doc, "commit");
  side.samples = Samples(doc).size();
  const json& source = Object(doc, "iteration_source");
  side.found = static_cast<size_t>(std::max<int64_t>(internal::Int(source, "found"), 0));
  side.skipped = static_cast<size_t>(std::max<int64_t>(internal::Int(source, "skipped"), 0));
  side.warmup = Text(Object(source, "warmup"), "summary");
  if (side.warmup.empty() && side.skipped > 0)  // a report from before the warm-up line, with --skip N
    side.warmup = "dropped the first " + std::to_string(side.skipped) + " of " + std::to_string(side.found) +
                  " iterations (--skip " + std::to_string(side.skipped) + ")";
  const std::optional<double> cv = Number(doc, keys::kLatencyCv.name);
  side.has_cv = cv.has_value();
  side.cv = cv.value_or(0);
  const json* table = Find(doc, "kernel_table");
  side.has_kernel_table = table && table->is_array();
  const json& q = Object(doc, "data_quality");
  for (const json& c : Array(q, "counters")) {
    const double count = Number(c, "count").value_or(0);
    if (count <= 0) continue;
    if (Text(c, "severity") == "error") side.error_counters.push_back(Text(c, "key") + " = " + FormatNumber(count, 0));
    if (Text(c, "severity") == "warning") side.warning_counters.push_back(Text(c, "key") + " = " + FormatNumber(count, 0));
  }
  side.has_quality = Find(doc, "data_quality") != nullptr;
  if (internal::Flag(q, "has_errors") && side.error_counters.empty())
    side.error_counters.push_back("data_quality.has_errors = true");
  return side;
}

// The input checks of one side: schema, avg_latency_ms, data quality.
void CheckSide(const json& doc, const SideInfo& side, std::vector<CompareProblem>* problems) {
  const std::string& label = side.label;
  const internal::ReportCheck check = internal::CheckReportDocument(doc, {.positive_latency = true});
  if (check.fault == internal::ReportFault::kNotObject) {
    problems->push_back({"inputs", label + ": not a JSON object, so not a tracegate report"});
    return;
  }
  if (check.fault == internal::ReportFault::kNoSchema || check.fault == internal::ReportFault::kOtherSchema) {
    const std::string& schema = check.schema;
    problems->push_back({"inputs", label + ": schema is " + (schema.empty() ? "missing" : "'" + schema + "'") +
                                       ", expected " + kReportSchema});
    return;
  }
  if (check.fault == internal::ReportFault::kNoLatency) {
    const std::optional<double> avg = Number(doc, keys::kAvgLatencyMs.name);
    problems->push_back({"inputs", label + ": avg_latency_ms is " +
                                       (avg ? FormatNumber(*avg, 3) + ", not positive"
                                            : MissingReason(doc, keys::kAvgLatencyMs.name))});
  }
  if (!Find(doc, "data_quality"))
    problems->push_back({"data_quality", label + ": no data_quality section, so its data cannot be trusted"});
  for (const std::string& counter : side.error_counters)
    problems->push_back({"data_quality", label + ": error-level data-quality counter " + counter});
}

std::string Join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

void CheckDevices(Comparison& c) {
  const SideInfo &b = c.base, &n = c.next;
  if (b.devices.empty() || n.devices.empty()) {
    c.notes.push_back(std::string("device names unknown on ") +
                      (b.devices.empty() && n.devices.empty() ? "both sides" : b.devices.empty() ? b.label : n.label) +
                      "; devices not compared");
    return;
  }
  if (b.devices == n.devices) return;
  std::string what = "devices differ: " + b.label + " ran on " + Join(b.devices, ", ") + ", " + n.label + " on " +
                     Join(n.devices, ", ");
  if (c.options.allow_device_mismatch)
    c.notes.push_back(what + " (compared anyway: --allow-device-mismatch)");
  else
    c.problems.push_back({"devices", what + " (pass --allow-device-mismatch to compare anyway)"});
}

// The kernels named in the verdict line, by short name: template instantiations of one kernel
// (at::native::elementwise_kernel<...> for each functor) are one entry with their deltas summed,
// so the line names kernel families in the order of their contribution.
std::vector<std::string> ContributorNames(const Comparison& c) {
  std::vector<FamilyDelta> families = GroupFamilies(c, c.kernel_contributors);
  std::stable_sort(families.begin(), families.end(),
                   [](const FamilyDelta& x, const FamilyDelta& y) { return std::abs(x.delta_ms) > std::abs(y.delta_ms); });
  std::vector<std::string> names;
  for (size_t j = 0; j < families.size() && j < c.options.contributors; ++j) {
    const FamilyDelta& f = families[j];
    names.push_back(f.name + " " + FormatSigned(f.delta_ms, 3) + " ms/iter" +
                    (f.variants > 1 ? " (" + std::to_string(f.variants) + " variants)" : ""));
  }
  return names;
}

std::string LatencyText(const Comparison& c) {
  return "avg_latency_ms " + FormatNumber(c.base_latency_ms, 3) + " -> " + FormatNumber(c.new_latency_ms, 3) + " ms (" +
         FormatSigned(c.latency_delta_pct, 2) + "%, limit " + FormatSigned(c.options.threshold_pct, -1) + "%)";
}

// "name +7.00% (+0.123 ms/iter)" for the families over --kernel-threshold.
std::string FamiliesOverText(const Comparison& c) {
  std::vector<std::string> names;
  for (size_t i : c.families_over) {
    const FamilyDelta& f = c.families[i];
    names.push_back(f.name + " " + FormatSigned(f.delta_pct, 2) + "% (" + FormatSigned(f.delta_ms, 3) + " ms/iter)");
  }
  return "kernel GPU time per iteration over the " + FormatSigned(c.options.kernel_threshold_pct, -1) +
         "% limit: " + Join(names, ", ");
}

std::string VerdictText(const Comparison& c) {
  if (c.verdict == Verdict::kCannotJudge) {
    std::vector<std::string> why;
    for (const CompareProblem& p : c.problems) why.push_back(p.message);
    return VerdictHeading(c.verdict) + ": " + Join(why, "; ");
  }
  if (c.serving.applies)  // serving reports: the step groups' verdict (compare_serving.cpp)
    return internal::ServingVerdictText(c) + (c.families_over.empty() ? "" : "; " + FamiliesOverText(c));
  std::string p_text = c.mann_whitney.ok ? "Mann-Whitney p = " + FormatP(c.mann_whitney.p_two_sided) : "";
  const bool latency_regression = c.over_threshold && (!c.options.require_significance || c.significant);
  if (c.verdict == Verdict::kRegression && !latency_regression)
    return VerdictHeading(c.verdict) + ": " + FamiliesOverText(c) + "; " + LatencyText(c);
  if (c.verdict == Verdict::kPass) {
    if (c.over_threshold)
      return VerdictHeading(c.verdict) + ": " + LatencyText(c) + " is over the limit but not significant (" + p_text +
             " >= " + FormatNumber(c.options.alpha, -1) + ")";
    return VerdictHeading(c.verdict) + ": " + LatencyText(c);
  }
  std::string text = VerdictHeading(c.verdict) + ": " + LatencyText(c);
  if (c.options.require_significance) text += ", " + p_text;
  std::vector<std::string> kernels = ContributorNames(c);
  // Kernels that grew while the kernels' time as a whole fell did not make it slower: say so.
  const double kernel_delta = KernelDeltaMs(c);
  if (!c.kernels.empty() && kernel_delta < 0)
    text += "; kernel GPU time " + FormatSigned(kernel_delta, 3) + " ms/iter overall" +
            (kernels.empty() ? "" : " (grew: " + Join(kernels, ", ") + ")");
  else
    text += kernels.empty() ? "; no kernel got slower" : "; slower kernels: " + Join(kernels, ", ");
  std::vector<std::string> phases;
  for (size_t j = 0; j < c.phase_contributors.size() && j < 2; ++j) {
    const PhaseDelta& p = c.phases[c.phase_contributors[j]];
    phases.push_back(p.phase + " " + FormatSigned(p.delta_ms, 3) + " ms");
  }
  if (!phases.empty()) text += "; phases: " + Join(phases, ", ");
  if (!c.families_over.empty()) text += "; " + FamiliesOverText(c);
  // A job's latency is its slowest rank's: say which ranks got slower.
  if (const std::string ranks = RanksOverText(c); !ranks.empty()) text += "; " + ranks;
  return text;
}

}  // namespace

Comparison CannotReadInputs(const std::string& message, const CompareOptions& options, const std::string& base_label,
                            const std::string& new_label) {
  Comparison c;
  c.options = options;
  c.base.label = base_label;
  c.next.label = new_label;
  c.problems.push_back({"inputs", message});
  c.verdict_text = VerdictText(c);
  return c;
}

Comparison CompareReports(const json& base, const json& next, const CompareOptions& options,
                          const std::string& base_label, const std::string& new_label) {
  Comparison c;
  c.options = options;
  c.base = ReadSide(base, base_label);
  c.next = ReadSide(next, new_label);
  CheckSide(base, c.base, &c.problems);
  CheckSide(next, c.next, &c.problems);
  CheckDevices(c);
  // A side whose report predates warm-up detection may hold the warm-up the other side dropped.
  for (auto [side, other] : {std::pair{&c.base, &c.next}, std::pair{&c.next, &c.base}})
    if (side->warmup.empty() && side->skipped == 0 && other->skipped > 0 && side->found > 0)
      c.notes.push_back(side->label + " was analysed before warm-up detection and keeps all " +
                        std::to_string(side->found) + " iterations while " + other->label + " dropped " +
                        std::to_string(other->skipped) + " as warm-up: re-run tracegate analyze on its trace");
  for (const MetricSpec& spec : kMetrics) {
    c.metrics.push_back(ReadMetric(spec, base, next));
    if (c.metrics.back().key != "kernels.total_ms") continue;
    c.metrics.push_back(KernelTableMetric("kernel_ms_per_iter", false, base, next));
    c.metrics.push_back(KernelTableMetric("launches_per_iter", true, base, next));
  }
  const MetricDelta& avg = c.metrics.front();
  c.has_latency = avg.has_base && avg.has_new && avg.base > 0 && avg.next > 0;
  if (c.has_latency) {
    c.base_latency_ms = avg.base;
    c.new_latency_ms = avg.next;
    c.latency_delta_ms = avg.delta;
    c.latency_delta_pct = avg.pct;
    c.limit_ms = avg.base * (1 + options.threshold_pct / 100);
    c.over_threshold = avg.next > c.limit_ms;
  }
  CheckLostData(base, next, c);
  const std::vector<double> bs = Samples(base), ns = Samples(next);
  c.mann_whitney = MannWhitneyU(bs, ns);
  c.significant = c.mann_whitney.ok && c.mann_whitney.p_two_sided < options.alpha;
  DiffKernelsAndPhases(base, next, c);  // after the test: shares need to know it
  DiffRanks(base, next, c);
  c.bootstrap = BootstrapRatioOfMeans(bs, ns);
  if (!c.mann_whitney.ok) c.notes.push_back("Mann-Whitney U not computed: " + c.mann_whitney.reason);
  if (c.problems.empty() && c.over_threshold && options.require_significance && !c.mann_whitney.ok)
    c.problems.push_back({"latency", "over the limit, but --require-significance needs at least 2 latency samples "
                                     "per side for the Mann-Whitney test (" + c.base.label + " has " +
                                         std::to_string(bs.size()) + ", " + c.next.label + " has " +
                                         std::to_string(ns.size()) + ")"});
  internal::CompareServing(base, next, &c);
  const bool latency_fails = c.serving.applies ? c.serving.regressions > 0
                                               : c.over_threshold && (!options.require_significance || c.significant);
  if (!c.problems.empty())
    c.verdict = Verdict::kCannotJudge;
  else if (latency_fails || !c.families_over.empty()) c.verdict = Verdict::kRegression;
  else
    c.verdict = Verdict::kPass;
  c.verdict_text = VerdictText(c);
  return c;
}

}  // namespace tg
