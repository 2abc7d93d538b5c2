// Findings: the pattern matrix evaluated on one analysed trace. Each finding carries its evidence
// (metric, value, threshold), what is involved (kernels, copies, ranges, gaps), strategies and an
// Amdahl estimate, and the time its share claims. Findings are ordered by priority (derived from
// the predicted gain and the strength of the evidence), then by predicted whole-run speedup.
#pragma once

#include <array>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "tracegate/analyzer/communication.h"
#include "tracegate/analyzer/cross_rank.h"
#include "tracegate/analyzer/fusion.h"
#include "tracegate/analyzer/gpu_specs.h"
#include "tracegate/analyzer/iteration_idle.h"
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
  std::string kind;        // kernel, copy, range, gap, stream, sync, sample, iteration, chain; rank, collective (jobs)
  std::string name;
  uint64_t count = 0;
  TimeNs time_ns = 0;
  std::string detail;      // free text: bytes, direction, stream, ...
  // A gap's place, for a timeline to point at it: its start (trace clock) and idle device; -1
  // for every other kind.
  TimeNs start_ns = -1;
  int32_t device = -1;
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

// Where the time a finding's share P claims lies (docs/RULES.md, "Claims and the combined
// estimate"). The iterations' time is split into spaces: gpu (the h2d, infer and d2h phases: some
// GPU work runs), idle and post (those phases), and run (the run as a whole: latency variance or a
// comparison with another run, not a part of the time). A part is located when its intervals say
// which instants it claims; two located parts overlap where their intervals meet, two parts of one
// space of which one is not located are taken to overlap.
enum class ClaimSpace : uint8_t { kGpu, kIdle, kPost, kRun, kCount };
inline constexpr std::array<const char*, static_cast<size_t>(ClaimSpace::kCount)> kClaimSpaceNames{
    "gpu", "idle", "post", "run"};

struct ClaimPart {
  ClaimSpace space = ClaimSpace::kRun;
  double share = 0;  // of the iterations' total time; a finding's parts sum to its P
  // Located: sorted, disjoint, inside the iterations' spans, at least share x total long.
  // Empty: some `share` of the space's time, not located.
  std::vector<std::pair<TimeNs, TimeNs>> intervals;
};

// How a finding knows what it predicts: P and S measured in the trace, P measured with S assumed
// (the rules file's), or P resting on name-based kernel classes. Caps the priority.
enum class EvidenceStrength : uint8_t { kMeasured, kAssumed, kHeuristic };

// A gain as the what-if replay predicts it (issue 31; tracegate/analyzer/finding_replay.h): the
// claim as a located change, re-timed over the dependencies the trace shows. Amdahl's estimate
// stays its stated upper bound.
struct ReplayedGain {
  double overall = 1;   // base / predicted, over the kept iterations
  double gain_pct = 0;  // (overall - 1) * 100
  TimeNs base_total_ns = 0, predicted_total_ns = 0;
};
const char* EvidenceStrengthName(EvidenceStrength s);

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
  std::vector<ClaimPart> claim;        // empty: the run as a whole (kRun)
  // Refs (FindingRefs) of the findings whose claim overlaps this one's: their gains do not add.
  std::vector<std::string> overlaps;
  // The replay's estimate (analyze --replay-findings: ReplayFindingGains); without it, or with
  // replay_reason saying why: the finding is not a speedup of located work the replay can make,
  // or its replay gives no figure (it re-timed nothing: NothingCovered; iterations came out
  // longer than recorded: LongerIterationsCaution).
  std::optional<ReplayedGain> replay;
  std::string replay_reason;
};

EvidenceStrength EvidenceStrengthOf(const Finding& f);

// Findings' gains combined: each unit of claimed time goes to one finding (the one with the
// largest S among those claiming it), and multi-part Amdahl runs over those disjoint parts.
struct CombinedPart {
  std::string finding;  // its ref
  double share = 0;     // P_i: at most the finding's own P
  double speedup = 1;   // S_i: the finding's S
};
struct CombinedEstimate {
  std::vector<CombinedPart> parts;     // sum of shares <= 1
  std::vector<std::string> left_out;   // refs of findings claiming the run as a whole
  double overall = 1;                  // 1 / ((1 - sum P_i) + sum P_i / S_i)
  double gain_pct = 0;
  double upper_bound = 1;              // 1 / (1 - sum P_i)
  // The changes of every finding whose own replay gives a figure, replayed at once
  // (ReplayFindingGains); replay_reason when none gives one, or when that replay gives none.
  std::optional<ReplayedGain> replay;
  std::string replay_reason;
  std::vector<std::string> replayed;  // the refs of the findings it replayed, in list order
  // What that replay held fixed (ReplayResult::assumptions): every finding's replay holds the
  // same, less the located kinds (GPU, host) its own claim does not use.
  std::vector<std::string> replay_assumptions;
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
  const IterationIdle* idle = nullptr;  // the iterations' idle causes (may be null: not attributed)
  const std::vector<KernelClass>* kernel_classes = nullptr;
  const std::vector<RooflineItem>* roofline = nullptr;
  const PeakRates* peak = nullptr;
  const std::vector<FusionCandidate>* fusion = nullptr;
  int64_t small_copy_bytes = 64 * 1024;   // copies under this are small (AnalyzeOptions)
  std::string precision;                  // this run's tag ("" when not given)
  std::optional<ReferenceRun> reference;  // for int8_no_gain
};

// Which rules EvaluateRules runs (the enabled ones among them). RunAnalysis finds the fusion
// candidates on a second thread and runs fusion_candidate alone there, while the other rules run:
// kAllButFusion never reads FindingsInput::fusion, kFusionOnly never the roofline or the peak.
// kAllButFusion is kUpToRoofline then kAfterRoofline: the rules up to memory_bound (the one that
// reads the roofline and the peak rates), and those after it but fusion_candidate (which read
// neither, nor the fusion candidates), for two threads to share. Findings tie on priority and
// overall speedup in rule order (OrderFindings is stable), so OrderFindings over the parts' lists
// in this order (up to the roofline, after it, fusion) is the order EvaluateRules(kAll) gives.
enum class RuleSubset : uint8_t { kAll, kAllButFusion, kFusionOnly, kUpToRoofline, kAfterRoofline };
std::vector<Finding> EvaluateRules(const FindingsInput& in, const RulesConfig& rules,
                                   RuleSubset subset = RuleSubset::kAll);
// A job's ranks as the rules across ranks read them (docs/RULES.md, "Across ranks"): what the job
// reducer keeps of each rank, the cross-rank analysis of their collectives (AnalyzeCrossRank) and
// the job's per-collective table.
struct JobRank {
  int64_t rank = 0;
  double iterations = 1;  // the rank's kept iterations, at least 1: its figures are per iteration
  // Per kept iteration, summed over the rank's devices (RankCommunication); nullopt when its
  // report has none.
  std::optional<double> comm_ms, compute_ms, overlap_ratio;
  uint64_t collectives = 0;  // its collective calls
};
// A row of the job's per-collective table (job.collectives), by total time.
struct JobCollective {
  std::string collective;
  std::optional<int64_t> message_bytes;
  uint64_t count = 0;  // every rank's calls
  int64_t ranks = 0;   // the ranks that ran it
  double total_ms = 0, mean_ms = 0;
  std::optional<double> busbw_gbs;
  std::string busbw_reason;  // why busbw_gbs is unknown
};
struct JobRulesInput {
  std::vector<JobRank> ranks;        // by rank
  const CrossRank* cross = nullptr;  // its ranks in the order of `ranks`
  std::optional<double> latency_ms;  // the job's: the slowest rank's mean iteration latency
  std::optional<size_t> slowest;     // that rank's index in `ranks`
  size_t slowest_devices = 0;        // its devices with kernels: its figures sum over them
  std::vector<JobCollective> collectives;
};
// The enabled rules across ranks (straggler, compute_imbalance, comm_exposed), ordered as
// EvaluateRules orders its findings; none without a job latency (their P is a share of it).
std::vector<Finding> EvaluateJobRules(const JobRulesInput& in, const RulesConfig& rules);

// The order EvaluateRules returns: priority, then predicted overall speedup, else rule order
// (stable). Findings of kAllButFusion followed by those of kFusionOnly, ordered, are kAll's.
void OrderFindings(std::vector<Finding>& findings);

// A unique name per finding, in list order: the id, or "id#k" (k from 1) for an id that several
// findings share.
std::vector<std::string> FindingRefs(const std::vector<Finding>& findings);
// Fills every finding's `overlaps` (by ref) and returns the combined estimate. Call on the final,
// ordered list (RunAnalysis does).
CombinedEstimate RelateFindings(std::vector<Finding>& findings);

// The priority a finding's predicted gain and evidence support (docs/RULES.md, "Priority"):
// high from kHighGainPct, medium from kMediumGainPct, else low; heuristic evidence at most medium;
// `table` (the rule's default) where no estimate applies.
inline constexpr double kHighGainPct = 10.0, kMediumGainPct = 2.0;
Priority DerivePriority(Priority table, const Finding& f);

// Fills P/S/overall/gain/bound from share and speedup.
AmdahlEstimate MakeAmdahl(double share, double speedup, std::string basis, std::string assumption);

}  // namespace tg
