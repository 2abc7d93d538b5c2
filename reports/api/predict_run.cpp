// `tracegate predict` without its printing: the settings checked, P measured on a trace or taken
// from --fraction, the --part list parsed, and Amdahl's law applied (tracegate/reports/api.h).
#include <cstdlib>
#include <string>

#include "tracegate/analyzer/import.h"
#include "tracegate/reports/api.h"

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

Status Measure(const PredictSettings& s, const IterationOptions& io, const Trace& trace, Prediction* out) {
  IterationAnalysis it;
  TG_RETURN_IF_ERROR(AnalyzeIterations(trace, io, &it));
  out->iterations = it.iterations.size();
  out->found = it.found;
  out->skipped = it.skipped;
  out->skip_auto = it.skip_auto;
  if (s.method == "replay") {
    ReplayChange change;
    change.kernels_regex = s.kernels_regex;
    change.kernel_speedup = s.kernels_regex.empty() ? 1 : s.speedup;
    change.host_regex = s.host_regex;
    change.host_speedup = s.host_regex.empty() ? 1 : s.speedup;
    change.launch_us = s.launch_us;
    change.remove_syncs_regex = s.remove_syncs_regex;
    if (Status st = Replay(trace, it, change, &out->replay); !st.ok())
      return InvalidInput(s.trace + ": " + st.message());
    out->replayed = true;
    if (s.kernels_regex.empty()) return Status::Ok();
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

}  // namespace

Status Predict(const PredictSettings& s, const Trace* trace, Prediction* out) { return Predict(s, trace, {}, out); }

Status Predict(const PredictSettings& s, const Trace* trace, const TraceLoader& load, Prediction* out) {
  *out = Prediction{};
  const bool measure = !s.trace.empty() || trace != nullptr;
  const int measures = !s.kernels_regex.empty() + !s.range_regex.empty() + !s.launched_regex.empty();
  if (s.method != "amdahl" && s.method != "replay")
    return InvalidInput("--method '" + s.method + "': expected amdahl or replay");
  const bool replay_only = s.method == "replay" && s.kernels_regex.empty();
  if (s.method == "replay") {
    if (!measure) return InvalidInput("--method replay re-times a trace: give the trace file first");
    if (!s.range_regex.empty() || !s.launched_regex.empty())
      return InvalidInput(
          "--method replay re-times kernels (--kernels), launches (--launch-us) and syncs "
          "(--remove-syncs); --range and --launched-in are for --method amdahl");
    if (replay_only && s.launch_us < 0 && s.remove_syncs_regex.empty() && s.host_regex.empty())
      return InvalidInput(
          "--method replay needs a change: --kernels REGEX or --host REGEX with --speedup S, --launch-us N, or "
          "--remove-syncs REGEX");
    if ((!s.kernels_regex.empty() || !s.host_regex.empty()) && s.speedup < 0)
      return InvalidInput("--speedup S is required with --kernels or --host");
  } else if (s.launch_us >= 0 || !s.remove_syncs_regex.empty() || !s.host_regex.empty()) {
    return InvalidInput("--host, --launch-us and --remove-syncs are changes the replay makes: add --method replay");
  }
  if (replay_only) {
    if (s.fraction >= 0 || !s.parts.empty()) return InvalidInput("--fraction and --part are for --method amdahl");
    IterationOptions io;
    TG_RETURN_IF_ERROR(ToIterationOptions(s.iterations, &io));
    if (trace) return Measure(s, io, *trace, out);
    Trace loaded;
    TG_RETURN_IF_ERROR(load ? load(s.trace, &loaded) : ImportTrace(s.trace, &loaded));
    return Measure(s, io, loaded, out);
  }
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
    IterationOptions io;
    TG_RETURN_IF_ERROR(ToIterationOptions(s.iterations, &io));
    if (trace) {
      TG_RETURN_IF_ERROR(Measure(s, io, *trace, out));
    } else {
      Trace loaded;
      TG_RETURN_IF_ERROR(load ? load(s.trace, &loaded) : ImportTrace(s.trace, &loaded));
      TG_RETURN_IF_ERROR(Measure(s, io, loaded, out));
    }
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
  out->overall = AmdahlSpeedup(out->parts);
  out->bound = AmdahlBound(out->parts);
  return Status::Ok();
}

}  // namespace tg
