// tracegate compare and tracegate gate: two runs side by side, and the CI verdict as an exit code.
#include <cstdio>
#include <iostream>

#include "commands.h"
#include "tracegate/reports/api.h"
#include "tracegate/reports/baseline.h"
#include "tracegate/reports/compare.h"

namespace tg::cli {

int RunCompare(const CompareArgs& args) {
  const ComparisonOutputs outputs{args.md_out, args.json_out, "", args.html_out};
  if (Status s = CheckComparisonOutputs(outputs, {args.base, args.next}); !s.ok()) return Fail(s);
  nlohmann::json base, next;
  std::optional<size_t> skip;
  if (Status s = ParseSkip(args.skip, &skip); !s.ok()) return Fail(s);
  if (Status s = ReadReportOrTrace(args.base, &base, skip); !s.ok()) return Fail(s);
  if (Status s = ReadReportOrTrace(args.next, &next, skip); !s.ok()) return Fail(s);
  const CompareOptions options = ToCompareOptions(args.verdict);
  Comparison c = CompareReports(base, next, options, args.base, args.next);
  // Serving reports without a step group on both sides: nothing to compare (docs/SERVING.md).
  if (!c.serving.no_match.empty()) return Fail(InvalidInput(c.serving.no_match));
  PrintComparison(std::cout, c);
  if (Status s = WriteComparisonOutputs(c, outputs, base, next); !s.ok()) return Fail(s);
  return kExitOk;  // compare decides nothing (CompareArgs); gate's exit code is the verdict
}

int RunGate(const GateArgs& args) {
  const ComparisonOutputs outputs{args.md_out, "", args.junit_out, args.html_out};
  if (Status s = CheckComparisonOutputs(outputs, {args.next, args.baseline}); !s.ok()) return Fail(s);
  const CompareOptions options = ToCompareOptions(args.verdict);
  nlohmann::json base, next;
  std::string resolved;
  std::optional<size_t> skip;
  if (Status s = ParseSkip(args.skip, &skip); !s.ok()) return Fail(s);
  Status read = LoadBaseline(args.dir, args.baseline, &base, &resolved);
  if (read.ok()) read = ReadReportOrTrace(args.next, &next, skip);
  Comparison c = read.ok() ? CompareReports(base, next, options, args.baseline, args.next)
                           : CannotReadInputs(read.message(), options, args.baseline, args.next);
  PrintComparison(std::cout, c);
  std::cout.flush();
  if (read.ok())
    if (Status s = RecordGateInHistory(args.dir, resolved, next, args.next, c); !s.ok())
      std::fprintf(stderr, "tracegate: warning: the gate was not recorded in the history: %s\n", s.message().c_str());
  if (!read.ok()) base = next = nlohmann::json::object();
  if (Status s = WriteComparisonOutputs(c, outputs, base, next); !s.ok()) return Fail(s);
  return GateExitCode(c.verdict);
}

}  // namespace tg::cli
