// tracegate record: runs a command under the collector (collector/include/tracegate/record.h),
// prints the summary on stderr (the command's own stdout stays clean) and, with --analyze, the
// analysis on stdout. The exit code is the command's.
#include <iostream>

#include "commands.h"
#include "tracegate/collector/record.h"

namespace tg::cli {

namespace {

// As a shell reports a command it cannot run: 127 not found, 126 found but not executable.
constexpr int kExitNotFound = 127;
constexpr int kExitCannotExecute = 126;

}  // namespace

int RunRecord(const RecordArgs& args) {
  RecordOptions options;
  options.command = args.command;
  options.output = args.output;
  options.sample_ms = args.sample_ms;
  options.driver_api = !args.no_driver_api;
  options.api = args.api == "all" ? ApiRecording::kAll : ApiRecording::kAnalysis;
  options.graph_trace = args.cuda_graph_trace == "graph" ? GraphTrace::kGraph : GraphTrace::kNode;
  options.capture_range = args.capture_range;
  options.iterations = args.iterations;
  if (options.command.empty()) {
    std::cerr << "tracegate record: error: no command given; usage: tracegate record [OPTIONS] -- CMD ARGS...\n";
    return kExitBadInput;
  }
  if (Status s = CheckWindow(options); !s.ok()) {
    std::cerr << "tracegate record: error: " << s.message() << "\n";
    return kExitBadInput;
  }
  if (Status s = FindInjectLibrary(&options.inject_lib); !s.ok()) {
    std::cerr << "tracegate record: error: " << s.message() << "\n";
    return kExitBadInput;
  }
  RecordResult result;
  if (Status s = Record(options, &result); !s.ok()) {
    std::cerr << "tracegate record: error: " << s.message() << "\n";
    if (s.message().rfind("cannot run", 0) == 0)
      return s.code() == StatusCode::kNotFound ? kExitNotFound : kExitCannotExecute;
    return kExitBadInput;
  }
  PrintRecordSummary(std::cerr, result);
  if (args.analyze) {
    AnalyzeArgs analyze;
    analyze.trace = result.output;
    std::cout << "\n";
    std::cout.flush();
    if (int rc = RunAnalyze(analyze); rc != kExitOk)
      std::cerr << "tracegate record: the analysis of " << result.output << " failed (exit " << rc << ")\n";
  }
  return result.exit_code;
}

}  // namespace tg::cli
