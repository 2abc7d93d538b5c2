// The analyze options as an AnalysisConfig: what `tracegate analyze` and the Python module's
// analyze() take (tracegate/reports/api.h).
#include <sys/stat.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "tracegate/analyzer/graph_capture.h"
#include "tracegate/analyzer/import.h"
#include "tracegate/analyzer/roofline.h"
#include "tracegate/analyzer/rules.h"
#include "tracegate/reports/api.h"
#include "tracegate/reports/report_provenance.h"
#include "tracegate/reports/report_read.h"

namespace tg {

Status CheckOutputPath(const std::string& in, const std::string& out) {
  struct stat a{}, b{};
  if (::stat(in.c_str(), &a) == 0 && ::stat(out.c_str(), &b) == 0 && a.st_dev == b.st_dev &&
      a.st_ino == b.st_ino)
    return InvalidInput(out + ": output would overwrite the input trace; choose another path");
  return Status::Ok();
}

Status ParseSkip(const std::string& v, std::optional<size_t>* skip) {
  if (v == "auto") {
    skip->reset();
    return Status::Ok();
  }
  if (v.empty() || v.size() > 9 || !std::all_of(v.begin(), v.end(), [](char ch) { return ch >= '0' && ch <= '9'; }))
    return InvalidInput("--skip '" + v + "': expected auto or a number of iterations");
  *skip = static_cast<size_t>(std::stoul(v));
  return Status::Ok();
}

Status ToIterationOptions(const IterationSettings& a, IterationOptions* o) {
  if (!a.iteration_regex.empty()) o->iteration_regex = a.iteration_regex;
  TG_RETURN_IF_ERROR(ParseSkip(a.skip, &o->skip));
  o->batch = a.batch;
  for (const std::string& p : a.phases) {
    size_t eq = p.find('=');
    std::string key = p.substr(0, eq == std::string::npos ? p.size() : eq);
    std::string* field = key == "pre" ? &o->pre_regex : key == "infer" ? &o->infer_regex : key == "post" ? &o->post_regex
                                                                                                       : nullptr;
    if (eq == std::string::npos || !field)
      return InvalidInput("--phase '" + p + "': expected pre=REGEX, infer=REGEX or post=REGEX");
    *field = p.substr(eq + 1);
  }
  return Status::Ok();
}

Status ToAnalysisConfig(const AnalysisSettings& a, AnalysisConfig* c, bool look_up_commit) {
  c->summary.top_k = a.top_k;
  c->summary.largest_gaps = a.largest_gaps;
  c->summary.small_copy_bytes = a.small_copy_bytes;
  TG_RETURN_IF_ERROR(ToIterationOptions(a.iterations, &c->iterations));
  c->model = a.model;
  c->precision = a.precision;
  c->commit = a.commit;
  if (c->commit.empty() && look_up_commit) GitHead(&c->commit, &c->commit_reason);
  c->peak = PeakOverride{a.peak_gbs, a.peak_tflops};
  c->critical_path = a.critical_path;
  c->replay_findings = a.replay_findings;
  if (!a.rules_path.empty())
    TG_RETURN_IF_ERROR(LoadRules(a.rules_path, &c->rules));
  if (!a.costs_path.empty())
    TG_RETURN_IF_ERROR(LoadKernelCosts(a.costs_path, &c->costs));
  if (!a.reference_path.empty()) {
    ReferenceRun ref;
    TG_RETURN_IF_ERROR(ReadReferenceRun(a.reference_path, &ref));
    c->reference = ref;
  }
  for (const std::string& path : a.captures) {
    Trace capture;
    TG_RETURN_IF_ERROR(ImportTrace(path, &capture));
    std::vector<CapturedGraph> graphs = ExtractCapturedGraphs(capture, path);
    if (graphs.empty())
      return InvalidInput(path +
                          ": --capture: no graph capture with kernel launches in it (no cudaStreamBeginCapture / "
                          "hipStreamBeginCapture ... EndCapture calls and no capture_<size>_<MODE> annotation around "
                          "launches); give the profiler trace of the engine's graph capture (docs/SERVING.md)");
    for (CapturedGraph& g : graphs) c->captured_graphs.push_back(std::move(g));
  }
  return Status::Ok();
}

}  // namespace tg
