// `tracegate predict` without its printing: the settings checked, the method chosen (the replay
// by default with a trace and a change it can make), the trace replayed under the change with
// Amdahl's figure beside it, or P measured on a trace or taken from --fraction, the --part list
// parsed, and Amdahl's law applied; and the prediction as JSON (tracegate/reports/api.h).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>

#include "tracegate/analyzer/finding_replay.h"
#include "tracegate/analyzer/import.h"
#include "tracegate/reports/api.h"
#include "tracegate/reports/job.h"
#include "tracegate/reports/json_out.h"

namespace tg {

namespace {

Status ParsePart(const std::string& p, AmdahlPart* part) {
  size_t colon = p.find(':');
  char* end = nullptr;
  bool ok = colon != std::string::npos;
  if (ok) {
    std::string a = p.substr(0, colon), b = p.substr(colon + 1);
    part->fraction = std::strtod(a.c_str(), &end);
    ok = !a.empty() && *end == '\0';
    part->speedup = b == "inf" ? kInfiniteSpeedup : std::strtod(b.c_str(), &end);
    ok = ok && !b.empty() && (b == "inf" || *end == '\0');
  }
  if (!ok) return InvalidInput("--part '" + p + "': expected P:S, e.g. 0.1:1.146 (S may be inf)");
  return Status::Ok();
}

double HostSpeedup(const PredictSettings& s) { return s.host_speedup > 0 ? s.host_speedup : s.speedup; }

// The replay's first kernel selection: --kernels, --class and --launched-in together.
bool FirstKernels(const PredictSettings& s) {
  return !s.kernels_regex.empty() || !s.kernel_class.empty() || !s.launched_regex.empty();
}

// Amdahl's figure beside the replay, from the replay's own measures: the sped-up kernels' and
// host ranges' shares of the kept iterations. Not expressible (no figure) for launches, syncs
// and graphs, which are not a share of the step made faster.
void AmdahlBesideReplay(const PredictSettings& s, Prediction* out) {
  const ReplayResult& r = out->replay;
  if (s.launch_us >= 0 || !s.remove_syncs_regex.empty() || s.graph || r.base_total_ns <= 0) return;
  const double total = static_cast<double>(r.base_total_ns);
  if (FirstKernels(s)) {
    out->measured = true;
    out->share.part_ns = r.selections.front().part_ns;
    out->share.total_ns = r.base_total_ns;
    out->share.matched = r.selections.front().kernels;
    out->share.share = std::min(1.0, static_cast<double>(out->share.part_ns) / total);
    out->parts.push_back({out->share.share, s.speedup});
  }
  // The further selections' parts follow the first's.
  const size_t first = FirstKernels(s) ? 1 : 0;
  for (size_t k = 0; k < s.more_kernels.size() && first + k < r.selections.size(); ++k)
    out->parts.push_back(
        {std::min(1.0, static_cast<double>(r.selections[first + k].part_ns) / total), s.more_kernels[k].speedup});
  if (!s.host_regex.empty())
    out->parts.push_back({std::min(1.0, static_cast<double>(r.host_part_ns) / total), HostSpeedup(s)});
  if (out->parts.empty() || !ValidateAmdahl(out->parts).ok()) {
    out->parts.clear();
    return;
  }
  out->amdahl = true;
  out->overall = AmdahlSpeedup(out->parts);
  out->bound = AmdahlBound(out->parts);
}

// Whether the change can only remove time: every speedup at least 1, no --launch-us (which may
// lengthen the launches) and no --graph.
bool OnlyRemovesTime(const PredictSettings& s) {
  // --graph may lengthen a gap (a folded kernel waits the process's median back-to-back gap).
  if (s.launch_us >= 0 || s.graph) return false;
  if ((FirstKernels(s) || (!s.host_regex.empty() && s.host_speedup < 0)) && s.speedup < 1) return false;
  if (!s.host_regex.empty() && s.host_speedup >= 0 && s.host_speedup < 1) return false;
  for (const KernelSelection& k : s.more_kernels)
    if (k.speedup < 1) return false;
  return true;
}

// The replay's change the settings ask for.
ReplayChange ChangeOf(const PredictSettings& s) {
  ReplayChange change;
  change.kernels_regex = s.kernels_regex;
  change.kernel_class = s.kernel_class;
  change.kernels_launched_in = s.launched_regex;
  change.kernel_speedup = FirstKernels(s) ? s.speedup : 1;
  change.host_regex = s.host_regex;
  change.host_speedup = s.host_regex.empty() ? 1 : HostSpeedup(s);
  change.more_kernels = s.more_kernels;
  change.launch_us = s.launch_us;
  change.remove_syncs_regex = s.remove_syncs_regex;
  change.graph = s.graph;
  change.graph_regex = s.graph_regex;
  return change;
}

Status Measure(const PredictSettings& s, const IterationOptions& io, const Trace& trace, Prediction* out) {
  IterationAnalysis it;
  TG_RETURN_IF_ERROR(AnalyzeIterations(trace, io, &it));
  out->iterations = it.iterations.size();
  out->found = it.found;
  out->skipped = it.skipped;
  out->skip_auto = it.skip_auto;
  if (out->method == "replay") {
    if (Status st = Replay(trace, it, ChangeOf(s), &out->replay); !st.ok())
      return InvalidInput(s.trace + ": " + st.message());
    if (OnlyRemovesTime(s)) out->caution = LongerIterationsCaution(out->replay);
    out->replayed = true;
    AmdahlBesideReplay(s, out);
    return Status::Ok();
  }
  MeasuredShare m;
  Status st = !s.range_regex.empty()      ? MeasureRangeShare(trace, it, s.range_regex, &m)
              : !s.kernels_regex.empty() ? MeasureKernelShare(trace, it, s.kernels_regex, &m)
                                         : MeasureLaunchedShare(trace, it, s.launched_regex, &m);
  if (!st.ok()) return InvalidInput(s.trace + ": " + st.message());
  out->measured = true;
  out->by_ranges = !s.range_regex.empty();
  out->share = m;
  out->parts.push_back({m.share, s.speedup});
  return Status::Ok();
}

Status MeasureOn(const PredictSettings& s, const Trace* trace, const TraceLoader& load, Prediction* out) {
  IterationOptions io;
  TG_RETURN_IF_ERROR(ToIterationOptions(s.iterations, &io));
  if (trace) return Measure(s, io, *trace, out);
  Trace loaded;
  TG_RETURN_IF_ERROR(load ? load(s.trace, &loaded) : ImportTrace(s.trace, &loaded));
  return Measure(s, io, loaded, out);
}

// --finding: the trace analysed as `analyze` does it, the findings' claims replayed as located
// speedups, and Amdahl's figure beside it: the finding's own estimate, or for several the
// combined estimate of those replayed (RelateFindings over them: each instant to the largest S).
Status PredictFindings(const PredictSettings& s, const Trace* trace, const TraceLoader& load, Prediction* out) {
  if (s.trace.empty() && !trace)
    return InvalidInput("--finding replays findings of a trace: give the trace file first");
  if (s.method == "amdahl")
    return InvalidInput(
        "--finding replays the findings' claims: drop --method amdahl (each finding's Amdahl "
        "estimate is printed beside the replay)");
  std::string others;
  auto other = [&](bool given, const char* flag) {
    if (given) others += (others.empty() ? "" : ", ") + std::string(flag);
  };
  other(!s.kernels_regex.empty() || !s.more_kernels.empty(), "--kernels");
  other(!s.kernel_class.empty(), "--class");
  other(!s.launched_regex.empty(), "--launched-in");
  other(!s.host_regex.empty(), "--host");
  other(s.speedup >= 0 || s.host_speedup >= 0, "--speedup");
  other(s.launch_us >= 0, "--launch-us");
  other(!s.remove_syncs_regex.empty(), "--remove-syncs");
  other(s.graph, "--graph");
  other(!s.range_regex.empty(), "--range");
  other(s.fraction >= 0, "--fraction");
  other(!s.parts.empty(), "--part");
  if (!others.empty())
    return InvalidInput(
        "--finding replays the findings' own changes (their claimed instants, their S): give it "
        "without " +
        others);
  out->method = "replay";
  AnalysisSettings as;
  as.iterations = s.iterations;
  as.commit = "-";  // no report is written: the source revision is not looked up
  as.rules_path = s.rules_path;
  as.costs_path = s.costs_path;
  AnalysisConfig config;
  TG_RETURN_IF_ERROR(ToAnalysisConfig(as, &config));
  config.locate_idle_claims = true;  // the idle findings' instants, to replay them
  Trace loaded;
  if (!trace) {
    TG_RETURN_IF_ERROR(load ? load(s.trace, &loaded) : ImportTrace(s.trace, &loaded));
    trace = &loaded;
  }
  Analysis analysis;
  if (Status st = RunAnalysis(*trace, config, &analysis); !st.ok()) return InvalidInput(s.trace + ": " + st.message());
  const IterationAnalysis& it = analysis.iterations;
  out->iterations = it.iterations.size();
  out->found = it.found;
  out->skipped = it.skipped;
  out->skip_auto = it.skip_auto;
  FindingsChange fc;
  if (Status st = FindingsReplayChange(analysis.findings, s.findings, &fc); !st.ok())
    return InvalidInput(s.trace + ": " + st.message());
  if (Status st = Replay(*trace, it, fc.change, &out->replay); !st.ok())
    return InvalidInput(s.trace + ": " + st.message());
  if (const std::string none = NothingCovered(out->replay); !none.empty())
    return InvalidInput(s.trace + ": nothing to replay: " + none);
  out->replayed = true;
  out->caution = LongerIterationsCaution(out->replay);  // a finding's S is above 1
  const std::vector<Finding>& f = analysis.findings;
  const std::vector<std::string> refs = FindingRefs(f);
  for (size_t i : fc.replayed) out->findings_replayed.push_back(refs[i]);
  for (const FindingsChange::LeftOut& l : fc.left_out) out->findings_left_out.emplace_back(refs[l.finding], l.reason);
  out->replay.assumptions.push_back(
      "--finding: a finding's gpu parts are the GPU work in its claimed instants running its S times faster; its "
      "idle and post parts the host work on the marker thread in its claimed instants (what keeps the GPU idle "
      "there) running S times faster; where findings overlap, the largest S");
  out->amdahl = true;
  if (fc.replayed.size() == 1) {
    const AmdahlEstimate& a = f[fc.replayed.front()].amdahl;
    out->parts.push_back({a.share, a.speedup});
    out->part_findings.push_back(refs[fc.replayed.front()]);
    out->overall = a.overall;
    out->bound = a.upper_bound;
    return Status::Ok();
  }
  std::vector<Finding> chosen;
  for (size_t i : fc.replayed) chosen.push_back(f[i]);
  const std::vector<std::string> chosen_refs = FindingRefs(chosen);
  const CombinedEstimate c = RelateFindings(chosen);
  for (const CombinedPart& part : c.parts) {
    const size_t j =
        static_cast<size_t>(std::find(chosen_refs.begin(), chosen_refs.end(), part.finding) - chosen_refs.begin());
    out->parts.push_back({part.share, part.speedup});
    out->part_findings.push_back(j < fc.replayed.size() ? refs[fc.replayed[j]] : part.finding);
  }
  out->overall = c.overall;
  out->bound = c.upper_bound;
  return Status::Ok();
}

// The replay's changes, as --method replay takes them: one at least, and no Amdahl-only option.
Status CheckReplayChange(const PredictSettings& s) {
  const bool replay_only = !s.kernel_class.empty() || !s.host_regex.empty() || s.launch_us >= 0 ||
                           !s.remove_syncs_regex.empty() || s.graph || !s.more_kernels.empty();
  const bool selects = FirstKernels(s) || !s.host_regex.empty() || !s.more_kernels.empty();
  if (!s.range_regex.empty())
    return InvalidInput(
        "--method replay re-times kernels (--kernels, --class, --launched-in), host ranges (--host), launches "
        "(--launch-us, --graph) and syncs (--remove-syncs); --range is for --method amdahl");
  if (s.fraction >= 0 || !s.parts.empty()) return InvalidInput("--fraction and --part are for --method amdahl");
  if (!selects && !replay_only)
    return InvalidInput(
        "--method replay needs a change: --kernels REGEX, --class CLASS, --launched-in REGEX or --host REGEX with "
        "--speedup S, --launch-us N, --remove-syncs REGEX or --graph");
  if (selects && s.speedup < 0 && (FirstKernels(s) || s.host_speedup < 0))
    return InvalidInput("--speedup S is required with --kernels, --class, --launched-in or --host");
  if (!selects && s.speedup >= 0)
    return InvalidInput(
        "--speedup S needs a part to speed up: --kernels REGEX, --class CLASS, --launched-in REGEX or --host REGEX");
  return Status::Ok();
}

// A job (settings.job): every rank's trace loaded and its iterations found, then the ranks
// replayed together (ReplayJob). A rank is distributedInfo.rank, else the one its file name
// gives; when no file says one, the files' order.
Status PredictJob(const PredictSettings& s, const TraceLoader& load, Prediction* out) {
  if (s.method == "amdahl")
    return InvalidInput(
        "a job is predicted by replaying its ranks together: drop --method amdahl (or give one rank's trace)");
  if (!s.findings.empty())
    return InvalidInput("--finding replays one trace's findings: give one rank's trace (analyze DIR names the rank)");
  if (!s.trace.empty()) return InvalidInput("give either one trace or a job's traces, not both");
  TG_RETURN_IF_ERROR(CheckReplayChange(s));
  out->method = "replay";
  StatusOr<std::vector<std::string>> files = ListJobFiles(s.job);
  TG_RETURN_IF_ERROR(files.status());
  if (files->size() < 2)
    return InvalidInput(files->empty() ? std::string("no trace files given")
                                       : files->front() +
                                             ": a job needs the traces of two or more ranks (a directory of them, or "
                                             "the files); for one trace, give it alone");
  IterationOptions io;
  TG_RETURN_IF_ERROR(ToIterationOptions(s.iterations, &io));
  const size_t n = files->size();
  std::vector<Trace> traces(n);
  std::vector<IterationAnalysis> its(n);
  std::vector<JobRankInput> inputs(n);
  std::vector<std::optional<int64_t>> ranks(n);
  for (size_t k = 0; k < n; ++k) {
    const std::string& f = (*files)[k];
    TG_RETURN_IF_ERROR(load ? load(f, &traces[k]) : ImportTrace(f, &traces[k]));
    if (Status st = AnalyzeIterations(traces[k], io, &its[k]); !st.ok()) return InvalidInput(f + ": " + st.message());
    if (auto m = traces[k].metadata.find("rank"); m != traces[k].metadata.end()) {
      char* end = nullptr;
      const long long v = std::strtoll(m->second.c_str(), &end, 10);
      if (!m->second.empty() && *end == '\0' && v >= 0) ranks[k] = v;
    }
    if (!ranks[k]) ranks[k] = RankFromFileName(f);
  }
  const size_t known =
      static_cast<size_t>(std::count_if(ranks.begin(), ranks.end(), [](auto& r) { return r.has_value(); }));
  for (size_t k = 0; k < n; ++k) {
    if (!ranks[k] && known > 0)
      return InvalidInput((*files)[k] +
                          ": its rank is unknown (no distributedInfo.rank, no rank<N> in its name) while other files "
                          "name theirs: rename it rank<N>.json");
    inputs[k] = {&traces[k], &its[k], ranks[k].value_or(static_cast<int64_t>(k)), (*files)[k]};
  }
  JobReplayChange change;
  change.change = ChangeOf(s);
  change.ranks = s.ranks;
  TG_RETURN_IF_ERROR(ReplayJob(inputs, change, &out->job_replay));
  out->job = true;
  out->replayed = true;
  out->job_files = *files;
  const RankReplay& slowest = out->job_replay.ranks[out->job_replay.slowest_base];
  out->replay = slowest.job;
  out->iterations = slowest.job.iterations.size();
  const size_t at = static_cast<size_t>(
      std::find_if(inputs.begin(), inputs.end(), [&](const JobRankInput& in) { return in.rank == slowest.rank; }) -
      inputs.begin());
  out->found = its[at].found;
  out->skipped = its[at].skipped;
  out->skip_auto = its[at].skip_auto;
  // Iterations longer than recorded on a rank under a change that only removes time: say so.
  for (const RankReplay& r : out->job_replay.ranks) {
    const std::string why = OnlyRemovesTime(s) ? LongerIterationsCaution(r.job) : "";
    if (why.empty()) continue;
    out->caution = "rank " + std::to_string(r.rank) + ": " + why;
    break;
  }
  // No Amdahl figure: a rank's P bounds neither the job (a straggler's saving reaches every rank)
  // nor that rank (a rank that waits gains nothing from its own part).
  // What the change covered (the prediction's "changes"): summed over the ranks it was made on,
  // from their replays alone.
  ReplayResult& sum = out->replay;
  sum.selections.clear();
  sum.kernels_changed = sum.host_part_ns = sum.launch_part_ns = 0;
  sum.kernel_part_ns = 0;
  sum.launches_changed = sum.graph_launches = sum.graph_folded = sum.syncs_removed = 0;
  for (const RankReplay& r : out->job_replay.ranks) {
    if (!r.changed || !r.unmatched.empty()) continue;
    const ReplayResult& a = r.alone;
    sum.selections.resize(std::max(sum.selections.size(), a.selections.size()));
    for (size_t k = 0; k < a.selections.size(); ++k) {
      sum.selections[k].kernels += a.selections[k].kernels;
      sum.selections[k].part_ns += a.selections[k].part_ns;
    }
    sum.kernels_changed += a.kernels_changed;
    sum.kernel_part_ns += a.kernel_part_ns;
    sum.host_part_ns += a.host_part_ns;
    sum.launch_part_ns += a.launch_part_ns;
    sum.launches_changed += a.launches_changed;
    sum.graph_launches += a.graph_launches;
    sum.graph_folded += a.graph_folded;
    sum.syncs_removed += a.syncs_removed;
  }
  return Status::Ok();
}

}  // namespace

Status Predict(const PredictSettings& s, const Trace* trace, Prediction* out) { return Predict(s, trace, {}, out); }

Status Predict(const PredictSettings& s, const Trace* trace, const TraceLoader& load, Prediction* out) {
  *out = Prediction{};
  const bool measure = !s.trace.empty() || trace != nullptr;
  const int measures = !s.kernels_regex.empty() + !s.range_regex.empty() + !s.launched_regex.empty();
  if (!s.method.empty() && s.method != "amdahl" && s.method != "replay")
    return InvalidInput("--method '" + s.method + "': expected amdahl or replay");
  if (!s.job.empty()) return PredictJob(s, load, out);
  if (!s.ranks.empty())
    return InvalidInput("--rank chooses ranks of a job: give the job's traces (a directory, or two or more files)");
  if (!s.findings.empty()) return PredictFindings(s, trace, load, out);
  // The changes only the replay makes, and whether the request is one the replay can make.
  const bool replay_only = !s.kernel_class.empty() || !s.host_regex.empty() || s.launch_us >= 0 ||
                           !s.remove_syncs_regex.empty() || s.graph || !s.more_kernels.empty();
  const bool amdahl_only = !s.range_regex.empty() || s.fraction >= 0 || !s.parts.empty();
  out->method = !s.method.empty() ? s.method
                : measure && !amdahl_only && (replay_only || !s.kernels_regex.empty() || !s.launched_regex.empty())
                    ? "replay"
                    : "amdahl";
  if (out->method == "replay") {
    if (!measure) return InvalidInput("--method replay re-times a trace: give the trace file first");
    TG_RETURN_IF_ERROR(CheckReplayChange(s));
    return MeasureOn(s, trace, load, out);
  }
  if (replay_only && !measure)
    return InvalidInput(
        "--class, --host, --launch-us, --remove-syncs and --graph are changes the replay makes to a trace: give the "
        "trace file first (before --graph, whose optional REGEX would take it)");
  if (replay_only)
    return InvalidInput(!s.method.empty()
                            ? "--class, --host, --launch-us, --remove-syncs and --graph are changes the replay makes: "
                              "drop --method amdahl"
                            : "--class, --host, --launch-us, --remove-syncs and --graph are changes the replay makes; "
                              "it replays a trace and takes no --range, --launched-in, --fraction or --part");
  if (measure && measures == 0)
    return InvalidInput(
        "predict TRACE needs a change: --kernels REGEX, --class CLASS or --host REGEX with --speedup S, --launch-us "
        "N, --remove-syncs REGEX or --graph (replayed), or --range / --launched-in REGEX with --speedup S (Amdahl)");
  if (measure && measures != 1)
    return InvalidInput("predict TRACE needs exactly one of --kernels REGEX, --range REGEX or --launched-in REGEX");
  if (!measure && measures > 0)
    return InvalidInput("--kernels, --range and --launched-in measure P from a trace: give the trace file first");
  if (measure && s.fraction >= 0) return InvalidInput("--fraction and a trace both give P; use one");
  if ((s.fraction >= 0 || measure) && s.speedup < 0)
    return InvalidInput("--speedup S is required with --fraction or a trace");
  if (!measure && s.fraction < 0 && s.speedup >= 0)
    return InvalidInput("--speedup needs --fraction P (or a trace with --kernels/--range)");
  if (measure) {
    TG_RETURN_IF_ERROR(MeasureOn(s, trace, load, out));
  } else if (s.fraction >= 0) {
    out->parts.push_back({s.fraction, s.speedup});
  }
  for (const std::string& p : s.parts) {
    AmdahlPart part;
    TG_RETURN_IF_ERROR(ParsePart(p, &part));
    out->parts.push_back(part);
  }
  if (out->parts.empty())
    return InvalidInput("nothing to predict: give --fraction P --speedup S, --part P:S, or TRACE --kernels/--range/--launched-in");
  TG_RETURN_IF_ERROR(ValidateAmdahl(out->parts));
  out->amdahl = true;
  out->overall = AmdahlSpeedup(out->parts);
  out->bound = AmdahlBound(out->parts);
  return Status::Ok();
}

namespace {

nlohmann::json Finite(double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr); }
nlohmann::json OrNull(const std::string& s) { return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s); }
double Ms(TimeNs ns) { return static_cast<double>(ns) / 1e6; }

// The job's critical path as recorded (JobPathResult), per iteration.
nlohmann::json JobPathJson(const JobPathResult& path) {
  using nlohmann::json;
  const double n = static_cast<double>(std::max<size_t>(1, path.iterations));
  json kinds = json::object();
  for (size_t k = 0; k < kPathKindCount; ++k) kinds[kPathKindNames[k]] = Ms(path.kind_ns[k]) / n;
  json ranks = json::array();
  for (const auto& [rank, ns] : path.rank_ns) ranks.push_back({{"rank", rank}, {"ms", Ms(ns) / n}});
  return {{"rank", path.rank},
          {"iterations", path.iterations},
          {"step_ms", Ms(path.step_total_ns) / n},
          {"crossings", path.crossings},
          {"kind_ms", kinds},
          {"rank_ms", ranks}};
}

}  // namespace

nlohmann::json PredictionJson(const PredictSettings& s, const Prediction& p) {
  using nlohmann::json;
  json j = json::object();
  j["method"] = p.method;
  j["trace"] = OrNull(s.trace);
  const ReplayResult& r = p.replay;
  const double n = static_cast<double>(std::max<size_t>(1, p.iterations));
  json base = nullptr, predicted = nullptr;
  if (p.replayed) {
    base = Ms(r.base_total_ns) / n;
    predicted = Ms(r.predicted_total_ns) / n;
  } else if (p.measured && std::isfinite(p.overall) && p.overall > 0) {
    base = Ms(p.share.total_ns) / n;
    predicted = Ms(p.share.total_ns) / n / p.overall;
  }
  if (p.job) {
    base = p.job_replay.base_ms;
    predicted = p.job_replay.predicted_ms;
  }
  j["base_latency_ms"] = base;
  j["predicted_latency_ms"] = predicted;
  j["overall_speedup"] = Finite(p.speedup());
  j["amdahl_speedup"] = p.amdahl ? Finite(p.overall) : json(nullptr);
  j["amdahl_bound"] = p.amdahl ? Finite(p.bound) : json(nullptr);
  json assumptions = json::array();
  if (p.replayed)
    for (const std::string& a : p.job ? p.job_replay.assumptions : r.assumptions) assumptions.push_back(a);
  if (p.amdahl)
    assumptions.push_back(std::string(p.replayed ? "Amdahl's figure: " : "") +
                          "the sped-up part lies on the critical path and nothing else moves (an upper bound)");
  j["assumptions"] = assumptions;
  json changes = json::object();
  changes["speedup"] = s.speedup >= 0 ? json(s.speedup) : json(nullptr);
  const bool kernels = FirstKernels(s);
  changes["kernels"] =
      p.replayed && kernels && !r.selections.empty()
          ? json{{"regex", OrNull(s.kernels_regex)},        {"class", OrNull(s.kernel_class)},
                 {"launched_in", OrNull(s.launched_regex)}, {"speedup", s.speedup},
                 {"matched", r.selections.front().kernels}, {"recorded_ms", Ms(r.selections.front().part_ns)}}
          : json(nullptr);
  json more = json::array();
  for (size_t k = 0; p.replayed && k < s.more_kernels.size(); ++k) {
    const size_t at = k + (kernels ? 1 : 0);
    if (at >= r.selections.size()) break;
    more.push_back({{"regex", OrNull(s.more_kernels[k].regex)},
                    {"class", OrNull(s.more_kernels[k].kernel_class)},
                    {"speedup", s.more_kernels[k].speedup},
                    {"matched", r.selections[at].kernels},
                    {"recorded_ms", Ms(r.selections[at].part_ns)}});
  }
  changes["more_kernels"] = more;
  changes["host"] =
      p.replayed && !s.host_regex.empty()
          ? json{{"regex", s.host_regex}, {"speedup", HostSpeedup(s)}, {"recorded_ms", Ms(r.host_part_ns)}}
          : json(nullptr);
  changes["launch_us"] =
      p.replayed && s.launch_us >= 0 ? json{{"us", s.launch_us}, {"launches", r.launches_changed}} : json(nullptr);
  changes["graph"] = p.replayed && s.graph ? json{{"regex", OrNull(s.graph_regex)},
                                                  {"graph_launches", r.graph_launches},
                                                  {"launches_folded", r.graph_folded}}
                                           : json(nullptr);
  changes["launch_recorded_ms"] = p.replayed ? json(Ms(r.launch_part_ns)) : json(nullptr);
  changes["remove_syncs"] = p.replayed && !s.remove_syncs_regex.empty()
                                ? json{{"regex", s.remove_syncs_regex}, {"syncs", r.syncs_removed}}
                                : json(nullptr);
  json measured = nullptr;
  if (p.measured && !p.replayed) {
    const char* by = !s.range_regex.empty() ? "range" : !s.kernels_regex.empty() ? "kernels" : "launched_in";
    const std::string& re = !s.range_regex.empty()     ? s.range_regex
                            : !s.kernels_regex.empty() ? s.kernels_regex
                                                       : s.launched_regex;
    measured = {{"by", by},
                {"regex", re},
                {"matched", p.share.matched},
                {"part_ms", Ms(p.share.part_ns)},
                {"total_ms", Ms(p.share.total_ns)},
                {"share", p.share.share}};
  }
  changes["measured"] = measured;
  json parts = json::array();
  for (const AmdahlPart& part : p.parts)
    parts.push_back({{"fraction", part.fraction}, {"speedup", Finite(part.speedup)}});
  changes["parts"] = parts;
  json findings = nullptr;
  if (p.replayed && !p.findings_replayed.empty()) {
    json left = json::array();
    for (const auto& [ref, reason] : p.findings_left_out) left.push_back({{"finding", ref}, {"reason", reason}});
    findings = {{"replayed", p.findings_replayed},
                {"left_out", left},
                {"gpu_recorded_ms", Ms(r.located_gpu_ns)},
                {"gpu_activities", r.located_gpu_activities},
                {"host_recorded_ms", Ms(r.located_host_ns)}};
  }
  changes["findings"] = findings;
  j["changes"] = changes;
  j["iterations_found"] = p.found;
  j["iterations_skipped"] = p.skipped;
  json its = json::array();
  for (const IterationReplay& it : r.iterations)
    its.push_back({{"index", it.index}, {"base_ns", it.base_ns}, {"predicted_ns", it.predicted_ns}});
  j["iterations"] = its;
  j["caution"] = OrNull(p.caution);
  if (p.job) {
    const JobReplayResult& jr = p.job_replay;
    json ranks = json::array();
    for (const RankReplay& r : jr.ranks) {
      json rits = json::array();
      for (size_t k = 0; k < r.job.iterations.size(); ++k) {
        const IterationReplay& it = r.job.iterations[k];
        rits.push_back(
            {{"index", it.index},
             {"base_ns", it.base_ns},
             {"alone_ns", k < r.alone.iterations.size() ? json(r.alone.iterations[k].predicted_ns) : json(nullptr)},
             {"predicted_ns", it.predicted_ns}});
      }
      ranks.push_back({{"rank", r.rank},
                       {"file", r.file},
                       {"changed", r.changed},
                       {"unmatched", OrNull(r.unmatched)},
                       {"coupled_collectives", r.coupled},
                       {"base_latency_ms", r.base_ms()},
                       {"alone_latency_ms", r.alone_ms()},
                       {"predicted_latency_ms", r.job_ms()},
                       {"iterations", rits}});
    }
    j["job"] = {{"ranks", ranks},
                {"changed_ranks", s.ranks},
                {"collectives_coupled", jr.coupled},
                {"collectives_not_waiting", jr.not_waiting},
                {"collectives_doubtful", jr.doubtful},
                {"slowest_rank", jr.ranks[jr.slowest_base].rank},
                {"slowest_predicted_rank", jr.ranks[jr.slowest_predicted].rank},
                {"alone_latency_ms", jr.alone_ms},
                {"critical_path", JobPathJson(jr.path)},
                {"alone_speedup", jr.alone_ms > 0 ? json(jr.base_ms / jr.alone_ms) : json(nullptr)}};
  }
  return j;
}

Status WritePredictionJson(const PredictSettings& s, const Prediction& p, const std::string& path) {
  return WriteJsonFile(PredictionJson(s, p), path);
}

}  // namespace tg
