// The pattern matrix: one function per rule of rules.cpp's table. Each reads the analysed trace
// (iterations, phases, kernel classes, roofline, fusion chains), decides against its parameters
// and, when it fires, returns a Finding with evidence, what is involved and an Amdahl estimate.
#include "tracegate/analyzer/findings.h"
#include "tracegate/analyzer/strings.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>

#include "tracegate/analyzer/amdahl.h"
#include "analyzer/util/demangle.h"
#include "analyzer/util/intervals.h"

namespace tg {

AmdahlEstimate MakeAmdahl(double share, double speedup, std::string basis, std::string assumption) {
  AmdahlEstimate a;
  a.share = std::clamp(std::isfinite(share) ? share : 0.0, 0.0, 1.0);
  a.speedup = speedup > 0 && !std::isnan(speedup) ? speedup : 1.0;
  a.basis = std::move(basis);
  a.assumption = std::move(assumption);
  a.overall = AmdahlSpeedup(a.share, a.speedup);
  a.upper_bound = AmdahlBound(a.share);
  a.gain_pct = std::isfinite(a.overall) ? (a.overall - 1.0) * 100.0 : 0.0;
  return a;
}

namespace {


// Everything a rule needs, precomputed once.
class Context {
 public:
  Context(const FindingsInput& in, const RulesConfig& rules) : in_(in), rules_(rules) {
    const IterationAnalysis& it = *in.iterations;
    n_ = it.iterations.size();
    total_ns_ = it.total_ns;
  }
  const Trace& trace() const { return *in_.trace; }
  const IterationAnalysis& iters() const { return *in_.iterations; }
  const FindingsInput& in() const { return in_; }
  double P(std::string_view rule, std::string_view key) const { return rules_.Get(rule, key); }
  size_t n() const { return n_; }
  TimeNs total_ns() const { return total_ns_; }
  double Share(TimeNs ns) const { return total_ns_ > 0 ? static_cast<double>(ns) / static_cast<double>(total_ns_) : 0; }
  double PerIteration(double count) const { return n_ > 0 ? count / static_cast<double>(n_) : 0; }
  double PhaseRatio(tg::Phase p) const { return iters().phase_ratio[static_cast<size_t>(p)]; }
  double PhaseMeanMs(tg::Phase p) const { return iters().phase_mean_ms[static_cast<size_t>(p)]; }
  bool KernelKept(size_t i) const { return iters().kernel_iteration[i] >= 0; }
  bool CopyKept(size_t i) const { return iters().memcpy_iteration[i] >= 0; }
  // Short display name of a kernel row's name, computed once per distinct name.
  const std::string& KernelName(size_t row) const { return ShortName(trace().kernels.name[row]); }
  const std::string& ShortName(StringId id) const {
    if (short_names_.size() <= id) short_names_.resize(trace().strings.size());
    std::string& name = short_names_[id];
    if (name.empty()) name = ShortKernelName(Demangle(trace().Name(id)));
    return name;
  }

 private:
  const FindingsInput& in_;
  const RulesConfig& rules_;
  mutable std::vector<std::string> short_names_;
  size_t n_ = 0;
  TimeNs total_ns_ = 0;
};

Finding Start(const char* id) {
  const RuleDef* def = FindRule(id);
  Finding f;
  f.id = id;
  f.title = def->title;
  f.priority = def->priority;
  for (const char* s : def->strategies) f.strategies.emplace_back(s);
  return f;
}

Evidence Ev(std::string metric, double value, double threshold, std::string cmp, std::string unit = "ratio") {
  return Evidence{std::move(metric), value, threshold, std::move(cmp), std::move(unit)};
}

// Groups rows by a key and keeps the `top` largest by time: the "involved" list of a finding.
struct Tally {
  uint64_t count = 0;
  TimeNs time_ns = 0;
  void Add(TimeNs d) {
    count++;
    time_ns += d;
  }
  void Add(const Tally& t) {
    count += t.count;
    time_ns += t.time_ns;
  }
};
std::vector<Involved> TopInvolved(const std::map<std::string, Tally>& groups, const std::string& kind, size_t top,
                                  const std::map<std::string, std::string>& details = {}) {
  std::vector<Involved> out;
  for (const auto& [name, t] : groups) {
    auto d = details.find(name);
    out.push_back(Involved{kind, name, t.count, t.time_ns, d == details.end() ? "" : d->second});
  }
  std::sort(out.begin(), out.end(), [](const Involved& a, const Involved& b) {
    return std::tie(b.time_ns, a.name) < std::tie(a.time_ns, b.name);
  });
  if (out.size() > top) out.resize(top);
  return out;
}

constexpr size_t kTopInvolved = 5;

// Tallies by name id, folded into display-name groups once at the end: a row costs an index, not
// a string-keyed map lookup (distinct ids may share a display name).
class IdTallies {
 public:
  explicit IdTallies(const Trace& t) : by_id_(t.strings.size()) {}
  void Add(StringId id, TimeNs d) { by_id_[id].Add(d); }
  template <typename Name>
  std::map<std::string, Tally> ByName(Name name) const {
    std::map<std::string, Tally> out;
    for (StringId id = 0; id < by_id_.size(); ++id)
      if (by_id_[id].count > 0) out[std::string(name(id))].Add(by_id_[id]);
    return out;
  }

 private:
  std::vector<Tally> by_id_;
};

std::map<std::string, Tally> ByKernelName(const Context& c, const IdTallies& t) {
  return t.ByName([&](StringId id) -> const std::string& { return c.ShortName(id); });
}

// Kernel time of kept kernels whose class satisfies `pred`, grouped by display name.
template <typename Pred>
TimeNs KernelTimeWhere(const Context& c, Pred pred, std::map<std::string, Tally>* groups) {
  const KernelTable& k = c.trace().kernels;
  const std::vector<KernelClass>& cls = *c.in().kernel_classes;
  TimeNs total = 0;
  IdTallies by_id(c.trace());
  for (size_t i = 0; i < k.size(); ++i) {
    if (!c.KernelKept(i) || !pred(cls[i])) continue;
    TimeNs d = k.end[i] - k.start[i];
    total += d;
    if (groups) by_id.Add(k.name[i], d);
  }
  if (groups) *groups = ByKernelName(c, by_id);
  return total;
}

// The rules that fire when one phase's share exceeds `threshold`: starts the finding with its
// evidence and the Amdahl estimate for the assumed speedup, or returns false.
bool PhaseAbove(const Context& c, const char* id, Phase phase, const char* metric, const char* assumption,
                Finding* f) {
  double r = c.PhaseRatio(phase), thr = c.P(id, "threshold");
  if (!(r > thr)) return false;
  *f = Start(id);
  f->evidence.push_back(Ev(metric, r, thr, ">"));
  double s = c.P(id, "assumed_speedup");
  f->amdahl = MakeAmdahl(r, s, "assumed", StrFormat("%s %.2fx", assumption, s));
  return true;
}

void IdleGaps(const Context& c, std::vector<Finding>& out) {
  Finding f;
  if (!PhaseAbove(c, "idle_gaps", Phase::kIdle, "idle_ratio", "idle time shrinks", &f)) return;
  double idle = c.PhaseRatio(Phase::kIdle);
  f.summary = StrFormat("The GPU has no work of the iteration for %.1f%% of it (%.3f ms of %.3f ms on average) "
                  "while the host is in no pre/post stage: launch overhead, waits or host work between kernels.",
                  idle * 100, c.PhaseMeanMs(Phase::kIdle), c.iters().latency_ms.mean);
  for (const DeviceSummary& d : c.in().summary->devices)
    for (size_t g = 0; g < d.largest_gaps.size() && g < kTopInvolved; ++g) {
      const IdleGap& gap = d.largest_gaps[g];
      f.involved.push_back(Involved{"gap", ShortKernelName(gap.before) + " -> " + ShortKernelName(gap.after), 1,
                                    gap.duration_ns, StrFormat("device %d, %.3f ms into the trace", d.device,
                                                         NsToMs(gap.start_ns - c.in().summary->start_ns))});
    }
  out.push_back(std::move(f));
}

void LaunchBound(const Context& c, std::vector<Finding>& out) {
  const char* id = "launch_bound";
  const KernelTable& k = c.trace().kernels;
  const TimeNs short_ns = static_cast<TimeNs>(c.P(id, "short_kernel_us") * 1000);
  uint64_t kept = 0, short_count = 0;
  IdTallies by_id(c.trace());
  for (size_t i = 0; i < k.size(); ++i) {
    if (!c.KernelKept(i)) continue;
    kept++;
    TimeNs d = k.end[i] - k.start[i];
    if (d < short_ns) {
      short_count++;
      by_id.Add(k.name[i], d);
    }
  }
  if (kept == 0) return;
  const std::map<std::string, Tally> groups = ByKernelName(c, by_id);
  double short_share = static_cast<double>(short_count) / static_cast<double>(kept);
  double per_iter = c.PerIteration(static_cast<double>(kept));
  double idle = c.PhaseRatio(Phase::kIdle);
  double min_share = c.P(id, "min_short_share"), min_k = c.P(id, "min_kernels_per_iteration"),
         idle_thr = c.P(id, "idle_threshold");
  if (!(short_share >= min_share && per_iter >= min_k && idle > idle_thr)) return;
  Finding f = Start(id);
  f.evidence.push_back(Ev("short_kernel_ratio", short_share, min_share, ">="));
  f.evidence.push_back(Ev("kernels_per_iteration", per_iter, min_k, ">=", "count"));
  f.evidence.push_back(Ev("idle_ratio", idle, idle_thr, ">"));
  f.summary = StrFormat("%.0f%% of the %.0f kernels per iteration run shorter than %.0f us, about the cost of a launch, "
                  "and the GPU idles %.1f%% of the iteration between them: the host cannot launch fast enough.",
                  short_share * 100, per_iter, c.P(id, "short_kernel_us"), idle * 100);
  f.involved = TopInvolved(groups, "kernel", kTopInvolved);
  double s = c.P(id, "assumed_speedup");
  f.amdahl = MakeAmdahl(idle, s, "assumed", StrFormat("idle time between launches shrinks %.2fx", s));
  out.push_back(std::move(f));
}

// Wall time covered by the kept table rows that satisfy `pred(i)`: the union of their intervals,
// so work running at once on several streams or devices counts once. Shares of the iteration
// use this (a sum of durations would exceed the iteration when streams overlap); the summed
// time can only be larger, so rules test it first and skip the sort when it is under threshold.
template <typename Table, typename Pred>
TimeNs WallTimeWhere(const Table& t, Pred pred) {
  std::vector<Interval> v;
  for (size_t i = 0; i < t.size(); ++i)
    if (pred(i)) v.emplace_back(t.start[i], t.end[i]);
  return UnionLength(v);
}

// Copies of kept iterations matching `pred`, grouped "HtoD 4.0 MB pageable" style.
template <typename Pred>
TimeNs CopyTimeWhere(const Context& c, Pred pred, std::map<std::string, Tally>* groups, uint64_t* count = nullptr) {
  const MemcpyTable& m = c.trace().memcpys;
  TimeNs total = 0;
  // Keyed by the fields the name shows; the names are formatted once per group at the end.
  std::map<std::tuple<CopyKind, int64_t, bool>, Tally> by_key;
  for (size_t i = 0; i < m.size(); ++i) {
    if (!c.CopyKept(i) || !pred(i)) continue;
    TimeNs d = m.end[i] - m.start[i];
    total += d;
    if (count) (*count)++;
    if (groups) {
      bool pageable = m.src_kind[i] == MemKind::kPageable || m.dst_kind[i] == MemKind::kPageable;
      by_key[{m.kind[i], m.bytes[i], pageable}].Add(d);
    }
  }
  if (groups) {
    for (const auto& [key, t] : by_key) {
      const auto& [kind, bytes, pageable] = key;
      (*groups)[StrFormat("Memcpy %s %lld B%s", std::string(CopyKindName(kind)).c_str(),
                          static_cast<long long>(bytes), pageable ? " pageable" : "")]
          .Add(t);
    }
  }
  return total;
}

void H2dBound(const Context& c, std::vector<Finding>& out) {
  Finding f;
  if (!PhaseAbove(c, "h2d_bound", Phase::kH2d, "h2d_ms_ratio", "host-to-device copy time shrinks", &f)) return;
  double r = c.PhaseRatio(Phase::kH2d);
  f.summary = StrFormat("Host-to-device copies take %.1f%% of each iteration (%.3f ms on average).", r * 100,
                  c.PhaseMeanMs(Phase::kH2d));
  std::map<std::string, Tally> groups;
  const MemcpyTable& m = c.trace().memcpys;
  CopyTimeWhere(c, [&](size_t i) { return m.kind[i] == CopyKind::kHtoD; }, &groups);
  f.involved = TopInvolved(groups, "copy", kTopInvolved);
  out.push_back(std::move(f));
}

void SlowPost(const Context& c, std::vector<Finding>& out) {
  Finding f;
  if (!PhaseAbove(c, "slow_post", Phase::kPost, "post_ms_ratio", "post-processing runs faster by", &f)) return;
  double r = c.PhaseRatio(Phase::kPost);
  f.summary = StrFormat("Post-processing takes %.1f%% of each iteration (%.3f ms on average) while the GPU has no work "
                  "of the iteration.", r * 100, c.PhaseMeanMs(Phase::kPost));
  f.involved.push_back(Involved{"range", "post", c.n(), static_cast<TimeNs>(c.PhaseMeanMs(Phase::kPost) * 1e6 * c.n()),
                                "ranges matching the post phase"});
  out.push_back(std::move(f));
}

void Throttling(const Context& c, std::vector<Finding>& out) {
  const char* id = "throttling";
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
    if (static_cast<double>(clock.size()) < c.P(id, "min_samples")) continue;
    auto [lo, hi] = std::minmax_element(clock.begin(), clock.end());
    double drop = (*hi - *lo) / *hi, r = Pearson(temp, clock);
    if (!(drop >= c.P(id, "clock_drop") && r <= -c.P(id, "min_r"))) continue;
    double mean_clock = 0;
    for (double v : clock) mean_clock += v;
    mean_clock /= static_cast<double>(clock.size());
    auto [tlo, thi] = std::minmax_element(temp.begin(), temp.end());
    Finding f = Start(id);
    f.evidence.push_back(Ev("sm_clock_drop_ratio", drop, c.P(id, "clock_drop"), ">="));
    f.evidence.push_back(Ev("temperature_clock_r", r, -c.P(id, "min_r"), "<=", "pearson_r"));
    f.summary = StrFormat("On device %d the SM clock falls from %.0f to %.0f MHz (%.0f%%) as the temperature rises from "
                    "%.0f to %.0f C (r = %.2f).", device, *hi, *lo, drop * 100, *tlo, *thi, r);
    f.involved.push_back(Involved{"sample", StrFormat("device %d", device), clock.size(), 0,
                                  StrFormat("SM clock %.0f-%.0f MHz, %.0f-%.0f C", *lo, *hi, *tlo, *thi)});
    double gpu_share = c.PhaseRatio(Phase::kH2d) + c.PhaseRatio(Phase::kInfer) + c.PhaseRatio(Phase::kD2h);
    f.amdahl = MakeAmdahl(gpu_share, *hi / mean_clock, "measured",
                          "GPU work runs at the highest sampled clock instead of the mean");
    out.push_back(std::move(f));
  }
}

void MemoryBound(const Context& c, std::vector<Finding>& out) {
  const char* id = "memory_bound";
  const std::vector<RooflineItem>& roof = *c.in().roofline;
  bool use_roofline = !roof.empty() && c.in().peak->has_bandwidth && c.in().peak->has_flops;
  Finding f = Start(id);
  double share = 0, thr = 0;
  if (use_roofline) {
    double bw_thr = c.P(id, "bandwidth_share");
    TimeNs time = 0;
    std::vector<uint8_t> row_in(c.trace().kernels.size(), 0);  // kernels of qualifying items
    for (const RooflineItem& item : roof) {
      if (!item.memory_bound || item.bandwidth_share < bw_thr) continue;
      time += item.time_ns;
      for (size_t r : item.kernel_rows) row_in[r] = 1;
      f.involved.push_back(Involved{"kernel", item.label, item.launches, item.time_ns,
                                    StrFormat("%.0f GB/s (%.0f%% of peak), %.2f TFLOP/s (%.1f%% of peak), %.2f FLOP/B, %s",
                                        item.achieved_gbs, item.bandwidth_share * 100, item.achieved_tflops,
                                        item.flops_share * 100, item.intensity, item.source.c_str())});
    }
    thr = c.P(id, "min_share");
    if (!(c.Share(time) >= thr)) return;
    share = c.Share(WallTimeWhere(c.trace().kernels, [&](size_t i) { return row_in[i] != 0; }));
    if (!(share >= thr)) return;
    f.evidence.push_back(Ev("memory_bound_time_ratio", share, thr, ">="));
    f.summary = StrFormat("Kernels below the roofline ridge running at >= %.0f%% of peak bandwidth (%s) take %.1f%% of "
                    "the iteration: only moving fewer bytes makes them faster.",
                    bw_thr * 100, c.in().peak->source.c_str(), share * 100);
  } else {
    std::map<std::string, Tally> groups;
    TimeNs time = KernelTimeWhere(c, IsLikelyMemoryBound, &groups);
    thr = c.P(id, "heuristic_min_share");
    if (!(c.Share(time) >= thr)) return;
    const std::vector<KernelClass>& cls = *c.in().kernel_classes;
    share = c.Share(WallTimeWhere(c.trace().kernels, [&](size_t i) { return c.KernelKept(i) && IsLikelyMemoryBound(cls[i]); }));
    if (!(share >= thr)) return;
    f.heuristic = true;
    f.evidence.push_back(Ev("likely_memory_bound_time_ratio", share, thr, ">="));
    f.summary = StrFormat("Element-wise, normalisation, reduction and layout kernels take %.1f%% of the iteration. They "
                    "are classed as memory-bound by name (a heuristic: pass --costs or annotate ranges with "
                    "bytes=/flops= for a roofline%s).",
                    share * 100, roof.empty() ? "" : "; the GPU's peak rates are unknown, pass --peak-gbs/--peak-tflops");
    f.involved = TopInvolved(groups, "kernel", kTopInvolved);
  }
  double s = c.P(id, "assumed_speedup");
  f.amdahl = MakeAmdahl(share, s, "assumed", StrFormat("memory-bound kernels move fewer bytes and run %.2fx faster", s));
  out.push_back(std::move(f));
}

void SingleStream(const Context& c, std::vector<Finding>& out) {
  const char* id = "single_stream";
  const Trace& t = c.trace();
  std::map<int32_t, std::vector<int64_t>> streams;  // device -> distinct streams of kept work
  auto note = [&](int32_t device, int64_t stream) {
    auto& v = streams[device];
    if (std::find(v.begin(), v.end(), stream) == v.end()) v.push_back(stream);
  };
  for (size_t i = 0; i < t.kernels.size(); ++i)
    if (c.KernelKept(i)) note(t.kernels.device[i], t.kernels.stream[i]);
  for (size_t i = 0; i < t.memcpys.size(); ++i)
    if (c.CopyKept(i)) note(t.memcpys.device[i], t.memcpys.stream[i]);
  if (streams.empty()) return;
  for (const auto& [device, v] : streams)
    if (v.size() != 1) return;
  std::map<std::string, Tally> groups;
  const MemcpyTable& m = t.memcpys;
  auto host_device = [&](size_t i) { return m.kind[i] == CopyKind::kHtoD || m.kind[i] == CopyKind::kDtoH; };
  TimeNs copy_ns = CopyTimeWhere(c, host_device, &groups);
  double thr = c.P(id, "threshold");
  if (!(c.Share(copy_ns) >= thr)) return;
  copy_ns = WallTimeWhere(m, [&](size_t i) { return c.CopyKept(i) && host_device(i); });
  double share = c.Share(copy_ns);
  if (!(share >= thr)) return;
  Finding f = Start(id);
  f.evidence.push_back(Ev("streams_per_device", 1, 1, "==", "count"));
  f.evidence.push_back(Ev("serial_copy_ratio", share, thr, ">="));
  f.summary = StrFormat("All GPU work runs on one stream per device, so the %.1f%% of the iteration spent in host<->device "
                  "copies never overlaps compute.", share * 100);
  f.involved = TopInvolved(groups, "copy", kTopInvolved);
  // Both wall times (with several devices, kernels of different devices overlap).
  const TimeNs kernel_ns = WallTimeWhere(t.kernels, [&](size_t i) { return c.KernelKept(i); });
  TimeNs hidden = std::min(copy_ns, kernel_ns);
  f.amdahl = MakeAmdahl(c.Share(hidden), kInfiniteSpeedup, "measured",
                        "copies overlap compute completely; at most min(copy, kernel) time is hidden");
  out.push_back(std::move(f));
}

void PageableCopies(const Context& c, std::vector<Finding>& out) {
  const char* id = "pageable_copies";
  const MemcpyTable& m = c.trace().memcpys;
  std::map<std::string, Tally> groups;
  uint64_t count = 0;
  auto pageable = [&](size_t i) { return m.src_kind[i] == MemKind::kPageable || m.dst_kind[i] == MemKind::kPageable; };
  TimeNs time = CopyTimeWhere(c, pageable, &groups, &count);
  double thr = c.P(id, "threshold");
  if (count == 0 || !(c.Share(time) >= thr)) return;
  double share = c.Share(WallTimeWhere(m, [&](size_t i) { return c.CopyKept(i) && pageable(i); }));
  if (!(share >= thr)) return;
  Finding f = Start(id);
  f.evidence.push_back(Ev("pageable_copy_ratio", share, thr, ">="));
  f.summary = StrFormat("%llu copies from or to pageable host memory take %.1f%% of the iteration; pageable copies are "
                  "staged through a driver buffer and cannot overlap compute.",
                  static_cast<unsigned long long>(count), share * 100);
  f.involved = TopInvolved(groups, "copy", kTopInvolved);
  double s = c.P(id, "assumed_speedup");
  f.amdahl = MakeAmdahl(share, s, "assumed", StrFormat("pinned copies run %.2fx faster", s));
  out.push_back(std::move(f));
}

void SmallCopies(const Context& c, std::vector<Finding>& out) {
  const char* id = "small_copies";
  const MemcpyTable& m = c.trace().memcpys;
  const int64_t limit = c.in().small_copy_bytes;
  Finding f = Start(id);
  TimeNs time = 0;
  uint64_t merged_count = 0, groups_count = 0;
  std::vector<CopyKind> dirs;  // the directions with enough small copies
  for (CopyKind dir : {CopyKind::kHtoD, CopyKind::kDtoH}) {
    std::map<std::string, Tally> groups;
    uint64_t count = 0;
    TimeNs t = CopyTimeWhere(c, [&](size_t i) { return m.kind[i] == dir && m.bytes[i] < limit; }, &groups, &count);
    double per_iter = c.PerIteration(static_cast<double>(count));
    double min_per = c.P(id, "min_per_iteration");
    if (!(per_iter >= min_per)) continue;
    std::string name(CopyKindName(dir));
    f.evidence.push_back(Ev("small_" + name + "_copies_per_iteration", per_iter, min_per, ">=", "count"));
    for (Involved& inv : TopInvolved(groups, "copy", kTopInvolved)) f.involved.push_back(std::move(inv));
    time += t;
    merged_count += count;
    groups_count += c.n();
    dirs.push_back(dir);
  }
  double thr = c.P(id, "min_share");
  if (f.evidence.empty() || !(c.Share(time) >= thr)) return;
  double share = c.Share(WallTimeWhere(m, [&](size_t i) {
    return c.CopyKept(i) && m.bytes[i] < limit && std::find(dirs.begin(), dirs.end(), m.kind[i]) != dirs.end();
  }));
  if (!(share >= thr)) return;
  f.evidence.push_back(Ev("small_copy_ratio", share, thr, ">="));
  double per_group = static_cast<double>(merged_count) / static_cast<double>(groups_count);
  f.summary = StrFormat("%.1f copies under %lld bytes per iteration and direction take %.1f%% of the iteration; each pays "
                  "the fixed cost of a copy, so one merged copy would cost about as much as one of them.",
                  per_group, static_cast<long long>(limit), share * 100);
  f.amdahl = MakeAmdahl(share, per_group, "assumed",
                        StrFormat("%.1f latency-bound copies merged into one cost as much as one", per_group));
  out.push_back(std::move(f));
}

bool IsBlockingSync(SyncKind k) {
  return k == SyncKind::kStreamSync || k == SyncKind::kContextSync || k == SyncKind::kEventSync;
}
bool IsSyncApi(std::string_view name) {
  for (std::string_view s : {"cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize",
                             "cuCtxSynchronize", "cuStreamSynchronize", "cuEventSynchronize"})
    if (name.substr(0, s.size()) == s) return true;
  return false;
}

void SyncInLoop(const Context& c, std::vector<Finding>& out) {
  const char* id = "sync_in_loop";
  const Trace& t = c.trace();
  std::map<std::string, Tally> groups;
  uint64_t count = 0;
  std::vector<Interval> waits;  // several threads may wait at once: the union is the waiting time
  auto add = [&](std::string name, TimeNs s, TimeNs e) {
    groups[std::move(name)].Add(e - s);
    count++;
    waits.emplace_back(s, e);
  };
  bool from_records = false;
  for (size_t i = 0; i < t.syncs.size(); ++i)
    if (IsBlockingSync(t.syncs.kind[i])) from_records = true;
  if (from_records) {
    for (size_t i = 0; i < t.syncs.size(); ++i)
      if (c.iters().sync_iteration[i] >= 0 && IsBlockingSync(t.syncs.kind[i]))
        add(std::string(SyncKindName(t.syncs.kind[i])), t.syncs.start[i], t.syncs.end[i]);
  } else {
    // Decided once per distinct name; grouped by name id, then by name.
    std::vector<int8_t> is_sync(t.strings.size(), -1);
    IdTallies by_id(t);
    for (size_t i = 0; i < t.api_calls.size(); ++i) {
      if (c.iters().api_iteration[i] < 0) continue;
      const StringId id = t.api_calls.name[i];
      if (is_sync[id] < 0) is_sync[id] = IsSyncApi(t.Name(id)) ? 1 : 0;
      if (!is_sync[id]) continue;
      by_id.Add(id, t.api_calls.end[i] - t.api_calls.start[i]);
      count++;
      waits.emplace_back(t.api_calls.start[i], t.api_calls.end[i]);
    }
    groups = by_id.ByName([&](StringId id) { return t.Name(id); });
  }
  double per_iter = c.PerIteration(static_cast<double>(count)), max = c.P(id, "max_per_iteration");
  double wait = c.Share(UnionLength(waits)), min_wait = c.P(id, "min_wait_share");
  if (!(per_iter > max && wait >= min_wait)) return;
  Finding f = Start(id);
  f.evidence.push_back(Ev("syncs_per_iteration", per_iter, max, ">", "count"));
  f.evidence.push_back(Ev("sync_wait_ratio", wait, min_wait, ">="));
  f.summary = StrFormat("The host blocks on the device %.1f times per iteration (%s), waiting %.1f%% of the iteration; "
                  "after each wait the GPU starves until the host launches again.",
                  per_iter, from_records ? "sync records" : "synchronisation API calls", wait * 100);
  f.involved = TopInvolved(groups, "sync", kTopInvolved);
  // Waiting costs time only while the GPU has nothing to do: the idle phase bounds P.
  double p = std::min(wait, c.PhaseRatio(Phase::kIdle)), s = c.P(id, "assumed_speedup");
  f.amdahl = MakeAmdahl(p, s, "assumed",
                        StrFormat("the GPU's idle time around the waits (P = min(wait, idle)) shrinks %.2fx", s));
  out.push_back(std::move(f));
}

std::vector<double> LatenciesMs(const IterationAnalysis& it) {
  std::vector<double> v;
  v.reserve(it.iterations.size());
  for (const Iteration& i : it.iterations) v.push_back(NsToMs(i.latency_ns()));
  return v;
}

void SlowestIterations(const Context& c, Finding& f) {
  std::vector<const Iteration*> v;
  for (const Iteration& i : c.iters().iterations) v.push_back(&i);
  std::sort(v.begin(), v.end(), [](const Iteration* a, const Iteration* b) {
    if (a->latency_ns() != b->latency_ns()) return a->latency_ns() > b->latency_ns();
    return a->index < b->index;
  });
  for (size_t k = 0; k < v.size() && k < 3; ++k)
    f.involved.push_back(Involved{"iteration", v[k]->name.empty() ? StrFormat("#%zu", v[k]->index) : v[k]->name, 1,
                                  v[k]->latency_ns(), StrFormat("iteration index %zu", v[k]->index)});
}

void Unstable(const Context& c, std::vector<Finding>& out) {
  const char* id = "unstable";
  const SampleStats& s = c.iters().latency_ms;
  double thr = c.P(id, "threshold");
  if (static_cast<double>(s.n) < c.P(id, "min_iterations") || !s.has_cv || !(s.cv > thr)) return;
  Finding f = Start(id);
  f.evidence.push_back(Ev("latency_cv", s.cv, thr, ">", "cv"));
  f.summary = StrFormat("Iteration latency varies too much to compare runs: CV %.2f (mean %.3f ms, p50 %.3f ms, p95 %.3f ms, "
                  "max %.3f ms).", s.cv, s.mean, s.p50, s.p95, s.max);
  SlowestIterations(c, f);
  double excess = 0;
  for (double v : LatenciesMs(c.iters())) excess += std::max(0.0, v - s.p50);
  f.amdahl = MakeAmdahl(excess / (s.mean * static_cast<double>(s.n)), kInfiniteSpeedup, "measured",
                        "every iteration runs as fast as the median one");
  out.push_back(std::move(f));
}

void Drift(const Context& c, std::vector<Finding>& out) {
  const char* id = "drift";
  std::vector<double> lat = LatenciesMs(c.iters());
  if (static_cast<double>(lat.size()) < c.P(id, "min_iterations")) return;
  LinearFit fit = FitLine(lat);
  double mean = c.iters().latency_ms.mean;
  if (!fit.ok || mean <= 0) return;
  double rise = fit.slope * static_cast<double>(lat.size() - 1) / mean, thr = c.P(id, "threshold");
  if (!(rise > thr && fit.r >= c.P(id, "min_r"))) return;
  Finding f = Start(id);
  f.evidence.push_back(Ev("latency_trend_rise_ratio", rise, thr, ">"));
  f.evidence.push_back(Ev("latency_trend_r", fit.r, c.P(id, "min_r"), ">=", "pearson_r"));
  f.summary = StrFormat("Latency rises %.1f%% across the run (trend from %.3f ms to %.3f ms over %zu iterations, r = %.2f).",
                  rise * 100, fit.intercept, fit.intercept + fit.slope * static_cast<double>(lat.size() - 1),
                  lat.size(), fit.r);
  SlowestIterations(c, f);
  double excess = 0;
  for (double v : lat) excess += std::max(0.0, v - fit.intercept);
  f.amdahl = MakeAmdahl(excess / (mean * static_cast<double>(lat.size())), kInfiniteSpeedup, "measured",
                        "every iteration runs as fast as the trend's start");
  out.push_back(std::move(f));
}

void TransformKernels(const Context& c, std::vector<Finding>& out) {
  const char* id = "transform_kernels";
  std::map<std::string, Tally> groups;
  TimeNs transform = KernelTimeWhere(c, [](KernelClass k) { return k == KernelClass::kTransform; }, &groups);
  TimeNs all = KernelTimeWhere(c, [](KernelClass) { return true; }, nullptr);
  if (all <= 0) return;
  double share = static_cast<double>(transform) / static_cast<double>(all), thr = c.P(id, "threshold");
  if (!(share >= thr)) return;
  Finding f = Start(id);
  f.heuristic = true;
  f.evidence.push_back(Ev("transform_kernel_time_ratio", share, thr, ">="));
  f.summary = StrFormat("Transpose, concat, layout-conversion and copy kernels take %.1f%% of kernel time: they move data "
                  "without computing (classed by name).", share * 100);
  f.involved = TopInvolved(groups, "kernel", kTopInvolved);
  double s = c.P(id, "assumed_speedup");
  const std::vector<KernelClass>& cls = *c.in().kernel_classes;
  const TimeNs transform_wall = WallTimeWhere(
      c.trace().kernels, [&](size_t i) { return c.KernelKept(i) && cls[i] == KernelClass::kTransform; });
  f.amdahl = MakeAmdahl(c.Share(transform_wall), s, "assumed", StrFormat("half the layout work disappears (%.2fx)", s));
  out.push_back(std::move(f));
}

void Int8NoGain(const Context& c, std::vector<Finding>& out) {
  const char* id = "int8_no_gain";
  const auto& ref = c.in().reference;
  std::string precision = c.in().precision;
  for (char& ch : precision) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (precision != "int8" || !ref || ref->avg_latency_ms <= 0 || c.iters().latency_ms.mean <= 0) return;
  double measured = ref->avg_latency_ms / c.iters().latency_ms.mean;
  double gain = measured - 1, thr = c.P(id, "threshold");
  if (!(gain < thr)) return;
  Finding f = Start(id);
  f.evidence.push_back(Ev("int8_gain_ratio", gain, thr, "<"));
  f.summary = StrFormat("This INT8 run averages %.3f ms against %.3f ms for the %s reference (%s): %.1f%% faster, where "
                  "INT8 usually gains 1.5-2.2x over FP32.",
                  c.iters().latency_ms.mean, ref->avg_latency_ms,
                  ref->precision.empty() ? "untagged" : ref->precision.c_str(), ref->path.c_str(), gain * 100);
  f.involved.push_back(Involved{"report", ref->path, 1, static_cast<TimeNs>(ref->avg_latency_ms * 1e6),
                                "reference precision " + ref->precision});
  double expected = c.P(id, "expected_speedup");
  f.amdahl = MakeAmdahl(1.0, std::max(1.0, expected / measured), "assumed",
                        StrFormat("INT8 reaches %.2fx over the reference", expected));
  out.push_back(std::move(f));
}

void Fusion(const Context& c, std::vector<Finding>& out) {
  const char* id = "fusion_candidate";
  double min_share = c.P(id, "min_share");
  for (const FusionCandidate& cand : *c.in().fusion) {
    if (!(cand.share >= min_share)) continue;
    Finding f = Start(id);
    f.heuristic = true;
    std::string chain, classes;
    for (size_t k = 0; k < cand.names.size(); ++k) {
      chain += (k ? " -> " : "") + ShortKernelName(Demangle(c.trace().Name(cand.names[k])));
      classes += (k ? " -> " : "") + std::string(kKernelClassNames[static_cast<size_t>(cand.classes[k])]);
    }
    f.title = "Fusion candidate: " + classes;
    f.evidence.push_back(Ev("chain_time_ratio", cand.share, min_share, ">="));
    f.evidence.push_back(Ev("occurrences_per_iteration", cand.per_iteration, 0, ">", "count"));
    f.summary = StrFormat("The chain %s runs %llu times (%.1f per iteration) and takes %.1f%% of the iteration. Fused, each "
                    "occurrence would save about %.1f us (local speedup %.3fx); over every occurrence the run gains "
                    "%.2f%%.",
                    chain.c_str(), static_cast<unsigned long long>(cand.occurrences), cand.per_iteration,
                    cand.share * 100,
                    cand.occurrences ? NsToMs(cand.saving_ns) * 1000 / static_cast<double>(cand.occurrences) : 0.0,
                    cand.local_speedup, (cand.overall - 1) * 100);
    for (size_t k = 0; k < cand.names.size(); ++k) {
      size_t row = k < cand.first_rows.size() ? cand.first_rows[k] : 0;
      TimeNs d = k < cand.first_rows.size() ? c.trace().kernels.end[row] - c.trace().kernels.start[row] : 0;
      f.involved.push_back(Involved{"kernel", ShortKernelName(Demangle(c.trace().Name(cand.names[k]))),
                                    cand.occurrences, d,
                                    std::string(kKernelClassNames[static_cast<size_t>(cand.classes[k])]) +
                                        (k == 0 ? ", head" : ", follower") + "; time is the first occurrence's"});
    }
    f.amdahl = MakeAmdahl(cand.share, cand.local_speedup, "assumed",
                          StrFormat("the fused kernel costs the head plus %.0f%% of the followers; launch gaps vanish",
                              c.P(id, "follower_residual") * 100));
    out.push_back(std::move(f));
  }
}

}  // namespace

void OrderFindings(std::vector<Finding>& findings) {
  std::stable_sort(findings.begin(), findings.end(), [](const Finding& a, const Finding& b) {
    if (a.priority != b.priority) return a.priority < b.priority;
    return a.amdahl.overall > b.amdahl.overall;
  });
}

std::vector<Finding> EvaluateRules(const FindingsInput& in, const RulesConfig& rules, RuleSubset subset) {
  std::vector<Finding> out;
  if (!in.trace || !in.iterations || in.iterations->iterations.empty()) return out;
  Context c(in, rules);
  using RuleFn = void (*)(const Context&, std::vector<Finding>&);
  static constexpr std::pair<const char*, RuleFn> kRules[] = {
      {"idle_gaps", IdleGaps},         {"launch_bound", LaunchBound},
      {"h2d_bound", H2dBound},         {"throttling", Throttling},
      {"memory_bound", MemoryBound},   {"single_stream", SingleStream},
      {"pageable_copies", PageableCopies}, {"small_copies", SmallCopies},
      {"sync_in_loop", SyncInLoop},    {"slow_post", SlowPost},
      {"unstable", Unstable},          {"drift", Drift},
      {"transform_kernels", TransformKernels}, {"int8_no_gain", Int8NoGain},
      {"fusion_candidate", Fusion},  // last: see RuleSubset
  };
  for (const auto& [id, fn] : kRules) {
    const bool fusion = fn == Fusion;
    if ((subset == RuleSubset::kAllButFusion && fusion) || (subset == RuleSubset::kFusionOnly && !fusion)) continue;
    if (rules.Enabled(id)) fn(c, out);
  }
  OrderFindings(out);
  return out;
}

}  // namespace tg
