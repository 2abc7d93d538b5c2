// The steps of the tracegate commands as library calls, shared by the CLI (cli/) and the Python
// module (python/): analyze options to an AnalysisConfig, predict, and the gate's verdict rules,
// outputs and history row. What the commands print stays with them; these only compute, check
// and write files, and their errors are the one-line messages the CLI prints.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tracegate/analyzer/amdahl.h"
#include "tracegate/analyzer/analysis.h"
#include "tracegate/analyzer/job_replay.h"
#include "tracegate/analyzer/model.h"
#include "tracegate/analyzer/predict.h"
#include "tracegate/analyzer/replay.h"
#include "tracegate/analyzer/status.h"
#include "tracegate/reports/analysis_report.h"
#include "tracegate/reports/analyze.h"
#include "tracegate/reports/compare.h"

namespace tg {

// How to find iterations, as --iteration, --skip, --phase and --batch give them.
struct IterationSettings {
  std::string iteration_regex;       // empty: the default
  std::string skip = "auto";         // "auto" (the warm-up rule) or a count
  std::vector<std::string> phases;   // "pre=REGEX", "infer=REGEX", "post=REGEX"
  int64_t batch = 1;
};

// The options of `tracegate analyze` that shape the analysis and its report.
struct AnalysisSettings {
  size_t top_k = 10;
  size_t largest_gaps = 10;
  int64_t small_copy_bytes = 64 * 1024;
  IterationSettings iterations;
  std::string model, precision;
  std::string commit;    // empty: the git HEAD of the current directory, if any
  std::string rules_path, costs_path, reference_path;
  double peak_gbs = 0, peak_tflops = 0;
  bool critical_path = false;    // --critical-path (AnalysisConfig::critical_path)
  bool replay_findings = false;  // --replay-findings (AnalysisConfig::replay_findings)
  // --capture: traces of CUDA / HIP graph captures, whose ops the replayed kernels take
  // (AnalysisConfig::captured_graphs, graph_capture.h).
  std::vector<std::string> captures;
};

// --skip: "auto" (unset) or a count of iterations; errors name the option.
Status ParseSkip(const std::string& text, std::optional<size_t>* skip);
Status ToIterationOptions(const IterationSettings& settings, IterationOptions* options);
// Reads --rules, --costs, --reference and --capture files; errors name the file or the option.
// An empty commit is git's HEAD of the current directory (a git process), unless
// `look_up_commit` is false: then commit and commit_reason stay empty, for AnalyzeFile to look it
// up on a second thread while it loads the trace (AnalyzeFileHooks::commit_aside).
Status ToAnalysisConfig(const AnalysisSettings& settings, AnalysisConfig* config, bool look_up_commit = true);

// An output path must not be the input: writing would destroy the trace being read.
Status CheckOutputPath(const std::string& in, const std::string& out);

// `tracegate predict`: the replay of a trace under a change (tracegate/analyzer/replay.h) with
// Amdahl's figure beside it, or Amdahl's law alone: P from --fraction, or measured on a trace
// (exactly one of kernels_regex, range_regex, launched_regex), and further parts "P:S".
struct PredictSettings {
  double fraction = -1;              // --fraction (with --speedup)
  double speedup = -1;               // --speedup
  std::vector<std::string> parts;    // --part P:S
  std::string trace;                 // measure P from this trace
  std::string kernels_regex, range_regex, launched_regex;
  IterationSettings iterations;
  // --method: "replay" (the trace re-timed under the change, Amdahl's figure beside it when it
  // can express the change), "amdahl" (the bound from P and S), or "" (the default): replay when
  // a trace is given and every change asked for can be replayed (not --range, --launched-in,
  // --fraction, --part), else amdahl.
  std::string method;
  std::string host_regex;          // --host (replay): host ranges whose time runs --speedup times faster
  double launch_us = -1;           // --launch-us (replay): every launch call takes this long
  std::string remove_syncs_regex;  // --remove-syncs (replay)
  std::string kernel_class;        // --class (replay): kernels of this class (with kernels_regex: both)
  bool graph = false;              // --graph (replay): each kept iteration's launches as one graph launch
  std::string graph_regex;         // --graph REGEX: only the launches inside matching host ranges
  std::string json_out;            // --json FILE: WritePredictionJson's file (the CLI writes it)
  double host_speedup = -1;        // the --host part's own --speedup (-1: speedup)
  // Further kernel selections with their own speedups (--kernels R --speedup S repeated).
  std::vector<KernelSelection> more_kernels;
  // --finding REF (repeatable; "all"): the trace analysed as `analyze` does (the iteration options
  // above, rules_path / costs_path as --rules / --costs), and the named findings' claims replayed
  // as located speedups (tracegate/analyzer/finding_replay.h); no other change with it.
  std::vector<std::string> findings;
  std::string rules_path, costs_path;
  // The traces of a job's ranks (files or directories of them, as analyze takes a job): replayed
  // together, coupled at their matched collectives (tracegate/analyzer/job_replay.h), instead of
  // `trace`. The replay's changes only; `ranks` (--rank) the ranks they are made on (empty: all).
  std::vector<std::string> job;
  std::vector<int64_t> ranks;
};
struct Prediction {
  std::string method;                // "replay" or "amdahl": what decided the prediction
  bool measured = false;             // P came from a trace
  bool by_ranges = false;            // measured with range_regex (matched counts ranges, else kernels)
  MeasuredShare share;
  size_t iterations = 0, found = 0, skipped = 0;  // the measured trace's kept, found and dropped iterations
  bool skip_auto = false;
  std::vector<AmdahlPart> parts;     // the measured or --fraction part first, then --part ones
  bool amdahl = false;               // Amdahl's law can express the change: overall and bound hold its figures
  double overall = 1, bound = 1;     // AmdahlSpeedup, AmdahlBound (+infinity when unbounded)
  bool replayed = false;             // method replay: `replay` holds the prediction
  ReplayResult replay;
  // --finding: the refs replayed, those left out with why, and per Amdahl part the finding it is
  // (the finding's own estimate for one, the combined estimate's parts for several).
  std::vector<std::string> findings_replayed;
  std::vector<std::pair<std::string, std::string>> findings_left_out;  // (ref, reason)
  std::vector<std::string> part_findings;
  // Replayed under a change that only removes time, with iterations that came out longer
  // (LongerIterationsCaution): the line saying the mean is not a prediction; "" otherwise.
  std::string caution;
  // A job (settings.job): its ranks' replays; `replay` is then the slowest recorded rank's replay
  // with the job, its counts of what the change covered summed over the ranks it was made on. No
  // Amdahl figure (amdahl false): one rank's P bounds neither the job nor that rank.
  bool job = false;
  JobReplayResult job_replay;
  std::vector<std::string> job_files;
  // The prediction: the replay's speedup when replayed, else Amdahl's.
  double speedup() const { return job ? job_replay.speedup() : replayed ? replay.speedup() : overall; }
};
// Checks the settings, then measures P where they ask for it: on `trace` when given, else on the
// file settings.trace, read with `load` (ImportTrace when empty). Errors are the CLI's lines.
using TraceLoader = std::function<Status(const std::string& path, Trace* trace)>;
Status Predict(const PredictSettings& settings, const Trace* trace, const TraceLoader& load, Prediction* out);
Status Predict(const PredictSettings& settings, const Trace* trace, Prediction* out);
// The prediction as `predict --json` writes it (schema: reports/schema/tracegate.prediction.v1.schema.json):
// method, base_latency_ms, predicted_latency_ms, overall_speedup, amdahl_speedup (null when
// Amdahl's law cannot express the change), amdahl_bound, assumptions, changes, iterations.
nlohmann::json PredictionJson(const PredictSettings& settings, const Prediction& prediction);
// Writes it atomically (a temp file, then a rename); errors name the file.
Status WritePredictionJson(const PredictSettings& settings, const Prediction& prediction, const std::string& path);

// The options that decide the gate's verdict (compare takes them too).
struct VerdictSettings {
  double threshold_pct = 5;
  bool require_significance = false;
  bool allow_device_mismatch = false;
  double max_malformed_pct = 1;
  double kernel_threshold_pct = -1;  // --kernel-threshold; < 0: off
};
CompareOptions ToCompareOptions(const VerdictSettings& settings);

// The gate's exit code for a verdict: 0 pass, 1 regression, 2 cannot judge.
inline constexpr int kGateExitPass = 0, kGateExitRegression = 1, kGateExitCannotJudge = 2;
int GateExitCode(Verdict verdict);

// The files a comparison may be written to (empty: not written).
struct ComparisonOutputs {
  std::string md, json, junit, html;
};
// No output may replace an input (a trace or report given).
Status CheckComparisonOutputs(const ComparisonOutputs& outputs, const std::vector<std::string>& inputs);
// Writes them, atomically; base / next are the reports compared (empty objects when an input
// could not be read). The first error wins.
Status WriteComparisonOutputs(const Comparison& c, const ComparisonOutputs& outputs, const nlohmann::json& base,
                              const nlohmann::json& next);

// The gate's "gated" row in <dir>/history.db, when the baseline was read from a file inside
// `dir` (given by NAME, or as a path into the directory); nothing otherwise. `next_label` is the
// new run as given. Not ok when the history could not be written (the gate goes on: a warning).
Status RecordGateInHistory(const std::string& dir, const std::string& baseline_path, const nlohmann::json& next,
                           const std::string& next_label, const Comparison& c);

}  // namespace tg
