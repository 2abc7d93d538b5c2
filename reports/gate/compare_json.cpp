// ComparisonToJson: the comparison document (schema tracegate.comparison/v1).
#include "reports/document/report_keys.h"
#include "reports/gate/compare_internal.h"
#include "tracegate/reports/compare.h"

namespace tg {

namespace keys = internal::keys;

using internal::FamilyJson;
using internal::RanksJson;

using nlohmann::json;

namespace {

json NumberOr(bool has, double v) { return has ? json(v) : json(nullptr); }

json SideJson(const SideInfo& s) {
  return {{"label", s.label},
          {"devices", s.devices},
          {"model", s.model.empty() ? json(nullptr) : json(s.model)},
          {"commit", s.commit.empty() ? json(nullptr) : json(s.commit)},
          {"samples", s.samples},
          {"iterations_found", s.found},
          {"warmup_skipped", s.skipped},
          {"warmup", s.warmup.empty() ? json(nullptr) : json(s.warmup)},
          {keys::kLatencyCv.name, NumberOr(s.has_cv, s.cv)},
          {"has_kernel_table", s.has_kernel_table},
          {"error_counters", s.error_counters}};
}

json MetricJson(const MetricDelta& m) {
  json j = {{"key", m.key},
            {"higher_is_worse", m.higher_is_worse},
            {"base", NumberOr(m.has_base, m.base)},
            {"new", NumberOr(m.has_new, m.next)},
            {"delta", NumberOr(m.has_base && m.has_new, m.delta)},
            {"delta_pct", NumberOr(m.has_pct, m.pct)}};
  if (!m.has_base) j["base_reason"] = m.base_reason;
  if (!m.has_new) j["new_reason"] = m.new_reason;
  return j;
}

// The per-iteration times of a kernel or a family (the document's objects sort their keys).
json PerIteration(double base_ms, double new_ms, double delta_ms, bool has_pct, double pct) {
  return {{"base_ms_per_iteration", base_ms},
          {"new_ms_per_iteration", new_ms},
          {"delta_ms_per_iteration", delta_ms},
          {"delta_pct_of_base", NumberOr(has_pct, pct)}};
}

json KernelJson(const KernelDelta& k) {
  json j = PerIteration(k.base_ms, k.new_ms, k.delta_ms, k.has_delta_pct, k.delta_pct);
  j.update({{"name", k.name},
            {"change", KernelChangeName(k.change)},
            {"base_count", k.base_count},
            {"new_count", k.new_count},
            {"base_mean_us", k.base_mean_us},
            {"new_mean_us", k.new_mean_us},
            {"share_of_change", NumberOr(k.has_share, k.share_of_change)}});
  return j;
}


json PhaseJson(const PhaseDelta& p) {
  return {{"phase", p.phase},
          {"base_ms", p.base_ms},
          {"new_ms", p.new_ms},
          {"delta_ms", p.delta_ms},
          {"share_of_change", NumberOr(p.has_share, p.share_of_change)}};
}

json StatisticsJson(const Comparison& c) {
  const MannWhitneyResult& mw = c.mann_whitney;
  const BootstrapResult& bs = c.bootstrap;
  json mann_whitney = {{"ok", mw.ok},
                       {"method", mw.ok ? json(mw.exact ? "exact" : "normal_approximation") : json(nullptr)},
                       {"u", NumberOr(mw.ok, mw.u)},
                       {"z", NumberOr(mw.ok, mw.z)},
                       {"p_two_sided", NumberOr(mw.ok, mw.p_two_sided)}};
  if (!mw.ok) mann_whitney["reason"] = mw.reason;
  json bootstrap = {{"ok", bs.ok},
                    {"statistic", "mean(new) / mean(base)"},
                    {"ratio", NumberOr(bs.ok, bs.ratio)},
                    {"lo", NumberOr(bs.ok, bs.lo)},
                    {"hi", NumberOr(bs.ok, bs.hi)},
                    {"confidence", bs.confidence},
                    {"resamples", bs.resamples}};
  if (!bs.ok) bootstrap["reason"] = bs.reason;
  return {{"mann_whitney", std::move(mann_whitney)},
          {"bootstrap", std::move(bootstrap)},
          {"significant", c.significant},
          {"alpha", c.options.alpha}};
}

}  // namespace

json internal::FamilyJson(const FamilyDelta& f) {
  json j = PerIteration(f.base_ms, f.new_ms, f.delta_ms, f.has_delta_pct, f.delta_pct);
  j.update({{"name", f.name},
            {"change", KernelChangeName(f.change)},
            {"variants", f.variants},
            {"base_launches_per_iteration", NumberOr(f.has_launches, f.base_launches)},
            {"new_launches_per_iteration", NumberOr(f.has_launches, f.new_launches)}});
  return j;
}

// ComparisonToJson less the serving member.
static json ComparisonJsonBody(const Comparison& c) {
  json problems = json::array();
  for (const CompareProblem& p : c.problems) problems.push_back({{"check", p.check}, {"message", p.message}});
  json metrics = json::array(), kernels = json::array(), phases = json::array();
  for (const MetricDelta& m : c.metrics) metrics.push_back(MetricJson(m));
  for (const KernelDelta& k : c.kernels) kernels.push_back(KernelJson(k));
  for (const PhaseDelta& p : c.phases) phases.push_back(PhaseJson(p));
  json families = json::array(), families_over = json::array();
  for (const FamilyDelta& f : c.families) families.push_back(FamilyJson(f));
  for (size_t i : c.families_over) families_over.push_back(c.families[i].name);
  json kernel_names = json::array(), phase_names = json::array();
  for (size_t i : c.kernel_contributors) kernel_names.push_back(c.kernels[i].name);
  for (size_t i : c.phase_contributors) phase_names.push_back(c.phases[i].phase);
  const CompareOptions& o = c.options;
  return {{"schema", kComparisonSchema},
          {"tool", {{"name", "tracegate"}, {"version", TRACEGATE_VERSION}}},
          {"verdict",
           {{"name", VerdictName(c.verdict)}, {"text", c.verdict_text}, {"problems", problems}, {"notes", c.notes}}},
          {"options",
           {{"threshold_pct", o.threshold_pct},
            {"require_significance", o.require_significance},
            {"allow_device_mismatch", o.allow_device_mismatch},
            {"alpha", o.alpha},
            {"kernel_change_pct", o.kernel_change_pct},
            {"kernel_change_min_ms", o.kernel_change_min_ms},
            {"max_malformed_pct", o.max_malformed_pct},
            {"kernel_threshold_pct", NumberOr(o.has_kernel_threshold, o.kernel_threshold_pct)}}},
          {"base", SideJson(c.base)},
          {"new", SideJson(c.next)},
          {"latency",
           {{"base_ms", NumberOr(c.has_latency, c.base_latency_ms)},
            {"new_ms", NumberOr(c.has_latency, c.new_latency_ms)},
            {"delta_ms", NumberOr(c.has_latency, c.latency_delta_ms)},
            {"delta_pct", NumberOr(c.has_latency, c.latency_delta_pct)},
            {"limit_ms", NumberOr(c.has_latency, c.limit_ms)},
            {"over_threshold", c.over_threshold}}},
          {"metrics", std::move(metrics)},
          {"phases", std::move(phases)},
          {"kernels", std::move(kernels)},
          {"kernel_families", std::move(families)},
          {"kernel_families_over_threshold", std::move(families_over)},
          {"ranks", RanksJson(c)},
          {"contributors", {{"kernels", std::move(kernel_names)}, {"phases", std::move(phase_names)}}},
          {"statistics", StatisticsJson(c)}};
}

json ComparisonToJson(const Comparison& c) {
  json doc = ComparisonJsonBody(c);
  if (c.serving.applies) doc["serving"] = internal::ServingComparisonJson(c);  // serving reports only
  return doc;
}

}  // namespace tg
