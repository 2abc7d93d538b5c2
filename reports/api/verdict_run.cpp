// The gate's verdict rules from its options, its exit code, the comparison's output files and
// the gate's history row: what `tracegate compare` / `gate` and the Python module's compare() /
// gate() share (tracegate/reports/api.h).
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "analyzer/util/fileio.h"
#include "tracegate/reports/api.h"
#include "tracegate/reports/baseline.h"
#include "tracegate/reports/compare_html.h"
#include "tracegate/reports/json_out.h"

namespace tg {

using internal::WriteFileAtomic;

namespace fs = std::filesystem;
using nlohmann::json;

CompareOptions ToCompareOptions(const VerdictSettings& v) {
  CompareOptions options;
  options.threshold_pct = v.threshold_pct;
  options.require_significance = v.require_significance;
  options.allow_device_mismatch = v.allow_device_mismatch;
  options.max_malformed_pct = v.max_malformed_pct;
  options.has_kernel_threshold = v.kernel_threshold_pct >= 0;
  options.kernel_threshold_pct = std::max(v.kernel_threshold_pct, 0.0);
  return options;
}

int GateExitCode(Verdict v) {
  switch (v) {
    case Verdict::kPass: return kGateExitPass;
    case Verdict::kRegression: return kGateExitRegression;
    case Verdict::kCannotJudge: return kGateExitCannotJudge;
  }
  return kGateExitCannotJudge;
}

Status CheckComparisonOutputs(const ComparisonOutputs& o, const std::vector<std::string>& inputs) {
  for (const std::string* out : {&o.md, &o.json, &o.junit, &o.html})
    for (const std::string& in : inputs)
      if (!out->empty()) TG_RETURN_IF_ERROR(CheckOutputPath(in, *out));
  return Status::Ok();
}

Status WriteComparisonOutputs(const Comparison& c, const ComparisonOutputs& o, const json& base, const json& next) {
  if (!o.md.empty())
    TG_RETURN_IF_ERROR(WriteFileAtomic(o.md, ComparisonMarkdown(c)));
  if (!o.json.empty()) TG_RETURN_IF_ERROR(WriteJsonFile(ComparisonToJson(c), o.json));
  if (!o.junit.empty())
    TG_RETURN_IF_ERROR(WriteFileAtomic(o.junit, ComparisonJunit(c)));
  if (!o.html.empty())
    TG_RETURN_IF_ERROR(WriteFileAtomic(o.html, ComparisonHtml(c, base, next)));
  return Status::Ok();
}

namespace {

// The baseline's name in `dir` when the file it was read from lives there; "" otherwise.
std::string NameInDir(const std::string& dir, const std::string& resolved_path) {
  std::error_code ec;
  fs::path file(resolved_path);
  if (file.extension() != ".json" || !fs::is_directory(dir, ec)) return "";
  if (!fs::equivalent(file.parent_path().empty() ? fs::path(".") : file.parent_path(), dir, ec) || ec) return "";
  std::string name = file.stem().string();
  return ValidateBaselineName(name).ok() ? name : "";
}

}  // namespace

Status RecordGateInHistory(const std::string& dir, const std::string& baseline_path, const json& next,
                           const std::string& next_label, const Comparison& c) {
  const std::string name = NameInDir(dir, baseline_path);
  if (name.empty()) return Status::Ok();
  HistoryRow row = HistoryRowFor(name, "gated", next, next_label);
  row.verdict = std::string(VerdictName(c.verdict));
  return AppendHistory(dir, row);
}

}  // namespace tg
