// Findings: the pattern matrix evaluated on one analysed trace. Each finding carries its evidence
// (metric, value, threshold), what is involved (kernels, copies, ranges, gaps), strategies and an
// Amdahl estimate. Findings are ordered by priority, then by predicted whole-run speedup.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tracegate/analyzer/fusion.h"
#include "tracegate/analyzer/gpu_specs.h"
#include "tracegate/analyzer/iterations.h"
#include "tracegate/analyzer/kernel_class.h"
#include "tracegate/analyzer/roofline.h"
#include "tracegate/analyzer/rules.h"
#include "tracegate/analyzer/summary.h"

namespace tg {

struct Evidence {
  std::string metric;      // e.g. "idle_ratio"
  double value = 0;
  double threshold = 0;
  std::string comparison;  // ">", ">=", "<", "<="
  std::string unit;        // "ratio", "count", "ms", ...
};

struct Involved {
  std::string kind;        // kernel, copy, range, gap, stream, sync, sample, iteration, chain
  std::string name;
  uint64_t count = 0;
  TimeNs time_ns = 0;
  std::string detail;      // free text: bytes, direction, stream, ...
};

struct AmdahlEstimate {
  bool applicable = true;
  std::string reason;          // when not applicable
  double share = 0;            // P
  double speedup = 1;          // S (may be +infinity: the part's time disappears)
  std::string basis;           // "assumed" or "measured"
  std::string assumption;      // what S stands for, one line
  double overall = 1;          // 1 / ((1 - P) + P / S)
  double gain_pct = 0;         // (overall - 1) * 100
  double upper_bound = 1;      // 1 / (1 - P)
};

struct Finding {
  std::string id;
  std::string title;
  Priority priority = Priority::kMedium;
  std::string summary;         // one or two sentences for humans
  bool heuristic = false;      // relies on name-based kernel classes
  std::vector<Evidence> evidence;
  std::vector<Involved> involved;
  std::vector<std::string> strategies;
  AmdahlEstimate amdahl;
};

// A higher-precision run to compare an INT8 run with (int8_no_gain).
struct ReferenceRun {
  std::string path;
  std::string precision;       // "fp32", "fp16", "bf16", ...
  double avg_latency_ms = 0;
};

struct FindingsInput {
  const Trace* trace = nullptr;
  const Summary* summary = nullptr;
  const IterationAnalysis* iterations = nullptr;
  const std::vector<KernelClass>* kernel_classes = nullptr;
  const std::vector<RooflineItem>* roofline = nullptr;
  const PeakRates* peak = nullptr;
  const std::vector<FusionCandidate>* fusion = nullptr;
  int64_t small_copy_bytes = 64 * 1024;   // copies under this are small (AnalyzeOptions)
  std::string precision;                  // this run's tag ("" when not given)
  std::optional<ReferenceRun> reference;  // for int8_no_gain
};

// Which rules EvaluateRules runs (the enabled ones among them). RunAnalysis finds the fusion
// candidates on a second thread while the other rules run, then runs fusion_candidate alone:
// kAllButFusion never reads FindingsInput::fusion.
enum class RuleSubset : uint8_t { kAll, kAllButFusion, kFusionOnly };
std::vector<Finding> EvaluateRules(const FindingsInput& in, const RulesConfig& rules,
                                   RuleSubset subset = RuleSubset::kAll);
// The order EvaluateRules returns: priority, then predicted overall speedup, else rule order
// (stable). Findings of kAllButFusion followed by those of kFusionOnly, ordered, are kAll's.
void OrderFindings(std::vector<Finding>& findings);

// Fills P/S/overall/gain/bound from share and speedup.
AmdahlEstimate MakeAmdahl(double share, double speedup, std::string basis, std::string assumption);

}  // namespace tg
