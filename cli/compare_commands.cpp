// tracegate compare and tracegate gate: two runs side by side, and the CI verdict as an exit code.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "commands.h"
#include "tracegate/reports/baseline.h"
#include "tracegate/reports/compare.h"
#include "tracegate/reports/compare_html.h"
#include "analyzer/util/fileio.h"
#include "tracegate/reports/json_out.h"

namespace tg::cli {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The outputs asked for of a comparison; the first error wins.
struct Outputs {
  std::string md, json, junit, html;
};

// Writes them; base / next are the reports compared (empty when an input could not be read).
Status WriteOutputs(const Comparison& c, const Outputs& o, const json& base, const json& next) {
  if (!o.md.empty())
    TG_RETURN_IF_ERROR(WriteFileAtomic(o.md, ComparisonMarkdown(c)));
  if (!o.json.empty())
    TG_RETURN_IF_ERROR(WriteJsonFile(o.json, ComparisonToJson(c)));
  if (!o.junit.empty())
    TG_RETURN_IF_ERROR(WriteFileAtomic(o.junit, ComparisonJunit(c)));
  if (!o.html.empty())
    TG_RETURN_IF_ERROR(WriteFileAtomic(o.html, ComparisonHtml(c, base, next)));
  return Status::Ok();
}

// No output may replace an input (a trace or report given on the command line).
Status CheckOutputs(const Outputs& o, const std::vector<std::string>& inputs) {
  for (const std::string* out : {&o.md, &o.json, &o.junit, &o.html})
    for (const std::string& in : inputs)
      if (!out->empty()) TG_RETURN_IF_ERROR(CheckOutputPath(in, *out));
  return Status::Ok();
}

// The baseline's name in `dir` when the file it was read from lives there (given by NAME, or as
// a path into the directory); "" otherwise, and then the gate leaves the history alone.
std::string NameInDir(const std::string& dir, const std::string& resolved_path) {
  std::error_code ec;
  fs::path file(resolved_path);
  if (file.extension() != ".json" || !fs::is_directory(dir, ec)) return "";
  if (!fs::equivalent(file.parent_path().empty() ? fs::path(".") : file.parent_path(), dir, ec) || ec) return "";
  std::string name = file.stem().string();
  return ValidateBaselineName(name).ok() ? name : "";
}

void RecordGate(const GateArgs& args, const std::string& resolved_path, const json& next, const Comparison& c) {
  const std::string name = NameInDir(args.dir, resolved_path);
  if (name.empty()) return;
  HistoryRow row = HistoryRowFor(name, "gated", next, args.next);
  row.verdict = std::string(VerdictName(c.verdict));
  if (Status s = AppendHistory(args.dir, row); !s.ok())
    std::fprintf(stderr, "tracegate: warning: the gate was not recorded in the history: %s\n", s.message().c_str());
}

CompareOptions ToCompareOptions(const VerdictArgs& v) {
  CompareOptions options;
  options.threshold_pct = v.threshold_pct;
  options.require_significance = v.require_significance;
  options.allow_device_mismatch = v.allow_device_mismatch;
  options.max_malformed_pct = v.max_malformed_pct;
  options.has_kernel_threshold = v.kernel_threshold_pct >= 0;
  options.kernel_threshold_pct = std::max(v.kernel_threshold_pct, 0.0);
  return options;
}

int ExitCode(Verdict v) {
  switch (v) {
    case Verdict::kPass: return kExitOk;
    case Verdict::kRegression: return kExitRegression;
    case Verdict::kCannotJudge: return kExitBadInput;
  }
  return kExitBadInput;
}

}  // namespace

int RunCompare(const CompareArgs& args) {
  const Outputs outputs{args.md_out, args.json_out, "", args.html_out};
  if (Status s = CheckOutputs(outputs, {args.base, args.next}); !s.ok()) return Fail(s);
  json base, next;
  std::optional<size_t> skip;
  if (Status s = ParseSkip(args.skip, &skip); !s.ok()) return Fail(s);
  if (Status s = ReadReportOrTrace(args.base, &base, skip); !s.ok()) return Fail(s);
  if (Status s = ReadReportOrTrace(args.next, &next, skip); !s.ok()) return Fail(s);
  const CompareOptions options = ToCompareOptions(args.verdict);
  Comparison c = CompareReports(base, next, options, args.base, args.next);
  PrintComparison(std::cout, c);
  if (Status s = WriteOutputs(c, outputs, base, next); !s.ok()) return Fail(s);
  return kExitOk;  // compare decides nothing (CompareArgs); gate's exit code is the verdict
}

int RunGate(const GateArgs& args) {
  const Outputs outputs{args.md_out, "", args.junit_out, args.html_out};
  if (Status s = CheckOutputs(outputs, {args.next, args.baseline}); !s.ok()) return Fail(s);
  const CompareOptions options = ToCompareOptions(args.verdict);
  json base, next;
  std::string resolved;
  std::optional<size_t> skip;
  if (Status s = ParseSkip(args.skip, &skip); !s.ok()) return Fail(s);
  Status read = LoadBaseline(args.dir, args.baseline, &base, &resolved);
  if (read.ok()) read = ReadReportOrTrace(args.next, &next, skip);
  Comparison c = read.ok() ? CompareReports(base, next, options, args.baseline, args.next)
                           : CannotReadInputs(read.message(), options, args.baseline, args.next);
  PrintComparison(std::cout, c);
  std::cout.flush();
  if (read.ok()) RecordGate(args, resolved, next, c);
  if (!read.ok()) base = next = json::object();
  if (Status s = WriteOutputs(c, outputs, base, next); !s.ok()) return Fail(s);
  return ExitCode(c.verdict);
}

}  // namespace tg::cli
