// tracegate compare and tracegate gate: two runs side by side, and the CI verdict as an exit code.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "commands.h"
#include "tracegate/reports/baseline.h"
#include "tracegate/reports/compare.h"
#include "analyzer/util/fileio.h"
#include "tracegate/reports/json_out.h"

namespace tg::cli {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Writes the Markdown (and JSON / JUnit) outputs that were asked for; the first error wins.
Status WriteOutputs(const Comparison& c, const std::string& md, const std::string& json_out, const std::string& junit) {
  if (!md.empty())
    TG_RETURN_IF_ERROR(WriteFileAtomic(md, ComparisonMarkdown(c)));
  if (!json_out.empty())
    TG_RETURN_IF_ERROR(WriteJsonFile(json_out, ComparisonToJson(c)));
  if (!junit.empty())
    TG_RETURN_IF_ERROR(WriteFileAtomic(junit, ComparisonJunit(c)));
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
  json base, next;
  std::optional<size_t> skip;
  if (Status s = ParseSkip(args.skip, &skip); !s.ok()) return Fail(s);
  if (Status s = ReadReportOrTrace(args.base, &base, skip); !s.ok()) return Fail(s);
  if (Status s = ReadReportOrTrace(args.next, &next, skip); !s.ok()) return Fail(s);
  CompareOptions options;
  options.threshold_pct = args.threshold_pct;
  options.max_malformed_pct = args.max_malformed_pct;
  Comparison c = CompareReports(base, next, options, args.base, args.next);
  PrintComparison(std::cout, c);
  if (Status s = WriteOutputs(c, args.md_out, args.json_out, ""); !s.ok()) return Fail(s);
  return kExitOk;
}

int RunGate(const GateArgs& args) {
  CompareOptions options;
  options.threshold_pct = args.threshold_pct;
  options.require_significance = args.require_significance;
  options.allow_device_mismatch = args.allow_device_mismatch;
  options.max_malformed_pct = args.max_malformed_pct;
  options.has_kernel_threshold = args.kernel_threshold_pct >= 0;
  options.kernel_threshold_pct = std::max(args.kernel_threshold_pct, 0.0);
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
  if (Status s = WriteOutputs(c, args.md_out, "", args.junit_out); !s.ok()) return Fail(s);
  return ExitCode(c.verdict);
}

}  // namespace tg::cli
