// The tracegate subcommands. main.cpp parses arguments (CLI11) and calls these; each returns the
// process exit code: 0 success, 2 bad input or usage (one line on stderr naming the problem).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tracegate/reports/api.h"

namespace tg::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitBadInput = 2;

// Prints "tracegate: error: <message>" on stderr; returns kExitBadInput.
int Fail(const Status& s);

// Options shared by every command that finds iterations in a trace.
using IterationArgs = IterationSettings;

// What shapes the analysis is the library's (AnalysisSettings: --top, --gaps, --small-copy-bytes,
// the iteration options, --model, --precision, --commit, --rules, --costs, --reference, --peak-*).
struct AnalyzeArgs : AnalysisSettings {
  std::string trace;
  std::vector<std::string> traces;  // as given: several files or a directory make a job
  size_t jobs = 0;                  // --jobs: ranks analysed at once; 0: the hardware threads
  std::string json_out;  // -o; empty: no JSON file
  std::string md_out, html_out;  // --md, --html: human reports from the report JSON; empty: none
  bool quiet = false;    // no human summary on stdout
  bool timings = false;  // --timings: wall time and memory per step on stderr
};
int RunAnalyze(const AnalyzeArgs& args);
// The ranks of one job (job_commands.cpp): `analyze DIR | FILE FILE...` and `merge REPORT...`.
int RunAnalyzeJob(const AnalyzeArgs& args);
struct MergeArgs {
  std::vector<std::string> reports;
  std::string json_out, md_out, html_out;  // -o, --md, --html
  std::string rules_path;                  // --rules: the rules across ranks
  size_t jobs = 0;
  bool quiet = false;
};
int RunMerge(const MergeArgs& args);

// CheckOutputPath and ToAnalysisConfig, shared by the analyze commands, are the library's (api.h).

using PredictArgs = PredictSettings;
int RunPredict(const PredictArgs& args);

struct ExportArgs {
  std::string trace;
  std::string chrome_out;
  IterationArgs iterations;  // the analysis whose findings annotate the timeline
  bool no_findings = false;  // --no-findings: export the trace only, no analysis
};
int RunExport(const ExportArgs& args);

struct ConvertArgs {
  std::string trace;
  std::string out;
};
int RunConvert(const ConvertArgs& args);

// tracegate schema: the report's JSON Schema, to stdout or -o FILE.
int RunSchema(const std::string& out);

// tracegate baseline save|list|show|history (baseline_commands.cpp).
struct BaselineArgs {
  std::string input;             // save: a report or a trace
  std::string name;              // save: --name; show, history: NAME (show also takes a file)
  std::string dir = "baselines";
  std::string html_out;          // history: --html
};
int RunBaselineSave(const BaselineArgs& args);
int RunBaselineList(const BaselineArgs& args);
int RunBaselineShow(const BaselineArgs& args);
int RunBaselineHistory(const BaselineArgs& args);

// tracegate compare and gate (compare_commands.cpp). The gate's exit code is its verdict
// (GateExitCode): 0 pass, kExitRegression, kExitBadInput when it cannot judge (unreadable input
// included).
inline constexpr int kExitRegression = kGateExitRegression;
static_assert(kExitBadInput == kGateExitCannotJudge && kExitOk == kGateExitPass);

// The gate's overrides of the verdict's rules (CompareOptions); compare takes them too, so its
// verdict line and outputs are the gate's for the same options.
using VerdictArgs = VerdictSettings;

// compare exits 0 whatever the verdict once both inputs were read (it decides nothing: gate
// does), kExitBadInput when an input cannot be read or an option is wrong.
struct CompareArgs {
  std::string base, next;        // reports or traces (a trace is analyzed with default options)
  std::string skip = "auto";     // --skip for a trace
  VerdictArgs verdict;
  std::string md_out, json_out, html_out;  // --md, --json, --html; empty: none
};
int RunCompare(const CompareArgs& args);

struct GateArgs {
  std::string next;              // the new run: a report or a trace
  std::string baseline;          // --baseline NAME (in dir) or a report file
  std::string skip = "auto";     // --skip for a trace
  std::string dir = "baselines";
  VerdictArgs verdict;
  std::string junit_out, md_out, html_out;  // --junit, --md, --html; empty: none
};
int RunGate(const GateArgs& args);

// tracegate record (record_command.cpp). The exit code is the command's (128 + signal when a
// signal killed it); 2 when tracegate cannot record (no injection library, unwritable output);
// 127 / 126 when the command cannot be found / executed.
struct RecordArgs {
  std::vector<std::string> command;  // CMD ARGS...
  std::string output;                // -o; empty: tracegate<N>.db in the current directory
  int64_t sample_ms = 100;
  bool no_driver_api = false;
  std::string api = "default";           // --api default|all
  std::string cuda_graph_trace = "node";  // --cuda-graph-trace node|graph
  std::string capture_range;              // --capture-range nvtx:NAME
  std::string iterations;                 // --iterations K:N
  bool analyze = false;
};
int RunRecord(const RecordArgs& args);

}  // namespace tg::cli
