// Device rules: the GPU and the precision it runs at. throttling (clocks fall as temperature
// rises) and int8_no_gain (an INT8 run no faster than its higher-precision reference).
#include <algorithm>
#include <cctype>

#include "analyzer/analysis/rules/rule_helpers.h"
#include "tracegate/analyzer/stats.h"
#include "tracegate/analyzer/strings.h"

namespace tg::internal {

void EvaluateThrottling(const RuleContext& c, const RuleDef& rule, std::vector<Finding>& out) {
  const SampleTable& s = c.trace().samples;
  std::map<int32_t, std::pair<std::vector<double>, std::vector<double>>> per_device;  // temp, clock
  for (size_t i = 0; i < s.size(); ++i) {
    if (s.temperature_c[i] < 0 || s.sm_clock_mhz[i] <= 0) continue;
    auto& [temp, clock] = per_device[s.device[i]];
    temp.push_back(s.temperature_c[i]);
    clock.push_back(s.sm_clock_mhz[i]);
  }
  for (const auto& [device, series] : per_device) {
    const auto& [temp, clock] = series;
    if (static_cast<double>(clock.size()) < c.P(rule, "min_samples")) continue;
    auto [lo, hi] = std::minmax_element(clock.begin(), clock.end());
    double drop = (*hi - *lo) / *hi, r = Pearson(temp, clock);
    if (!(drop >= c.P(rule, "clock_drop") && r <= -c.P(rule, "min_r"))) continue;
    double mean_clock = 0;
    for (double v : clock) mean_clock += v;
    mean_clock /= static_cast<double>(clock.size());
    auto [tlo, thi] = std::minmax_element(temp.begin(), temp.end());
    Finding f = StartFinding(rule);
    f.evidence.push_back(Ev("sm_clock_drop_ratio", drop, c.P(rule, "clock_drop"), ">="));
    f.evidence.push_back(Ev("temperature_clock_r", r, -c.P(rule, "min_r"), "<=", "pearson_r"));
    f.summary = StrFormat("On device %d the SM clock falls from %.0f to %.0f MHz (%.0f%%) as the temperature rises from "
                    "%.0f to %.0f C (r = %.2f).", device, *hi, *lo, drop * 100, *tlo, *thi, r);
    f.involved.push_back(Involved{"sample", StrFormat("device %d", device), clock.size(), 0,
                                  StrFormat("SM clock %.0f-%.0f MHz, %.0f-%.0f C", *lo, *hi, *tlo, *thi)});
    double gpu_share = c.PhaseRatio(Phase::kH2d) + c.PhaseRatio(Phase::kInfer) + c.PhaseRatio(Phase::kD2h);
    f.amdahl = MakeAmdahl(gpu_share, *hi / mean_clock, "measured",
                          "GPU work runs at the highest sampled clock instead of the mean");
    f.claim = LocatedClaim(c, c.GpuBusy(), f.amdahl.share, true);
    out.push_back(std::move(f));
  }
}

void EvaluateInt8NoGain(const RuleContext& c, const RuleDef& rule, std::vector<Finding>& out) {
  const auto& ref = c.in().reference;
  std::string precision = c.in().precision;
  for (char& ch : precision) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (precision != "int8" || !ref || ref->avg_latency_ms <= 0 || c.iters().latency_ms.mean <= 0) return;
  double measured = ref->avg_latency_ms / c.iters().latency_ms.mean;
  double gain = measured - 1, thr = c.P(rule, "threshold");
  if (!(gain < thr)) return;
  Finding f = StartFinding(rule);
  f.evidence.push_back(Ev("int8_gain_ratio", gain, thr, "<"));
  f.summary = StrFormat("This INT8 run averages %.3f ms against %.3f ms for the %s reference (%s): %.1f%% faster, where "
                  "INT8 usually gains 1.5-2.2x over FP32.",
                  c.iters().latency_ms.mean, ref->avg_latency_ms,
                  ref->precision.empty() ? "untagged" : ref->precision.c_str(), ref->path.c_str(), gain * 100);
  f.involved.push_back(Involved{"report", ref->path, 1, static_cast<TimeNs>(ref->avg_latency_ms * 1e6),
                                "reference precision " + ref->precision});
  double expected = c.P(rule, "expected_speedup");
  f.amdahl = MakeAmdahl(1.0, std::max(1.0, expected / measured), "assumed",
                        StrFormat("INT8 reaches %.2fx over the reference", expected));
  f.claim = SpaceClaim(ClaimSpace::kRun, f.amdahl.share);
  out.push_back(std::move(f));
}

}  // namespace tg::internal
