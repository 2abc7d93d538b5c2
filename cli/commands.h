// The tracegate subcommands. main.cpp parses arguments (CLI11) and calls these; each returns the
// process exit code: 0 success, 2 bad input or usage (one line on stderr naming the problem).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tg::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitBadInput = 2;

// Options shared by every command that finds iterations in a trace.
struct IterationArgs {
  std::string iteration_regex;       // empty: the default
  size_t skip = 0;
  std::vector<std::string> phases;   // "pre=REGEX", "infer=REGEX", "post=REGEX"
  int64_t batch = 1;
};

struct AnalyzeArgs {
  std::string trace;
  std::string json_out;  // -o; empty: no JSON file
  size_t top_k = 10;
  size_t largest_gaps = 10;
  int64_t small_copy_bytes = 64 * 1024;
  bool quiet = false;    // no human summary on stdout
  IterationArgs iterations;
  std::string model, precision;
  std::string rules_path, costs_path, reference_path;
  double peak_gbs = 0, peak_tflops = 0;
};
int RunAnalyze(const AnalyzeArgs& args);

struct PredictArgs {
  double fraction = -1;              // --fraction (with --speedup)
  double speedup = -1;               // --speedup
  std::vector<std::string> parts;    // --part P:S
  std::string trace;                 // measure P from a trace
  std::string kernels_regex, range_regex;
  IterationArgs iterations;
};
int RunPredict(const PredictArgs& args);

struct ExportArgs {
  std::string trace;
  std::string chrome_out;
};
int RunExport(const ExportArgs& args);

struct ConvertArgs {
  std::string trace;
  std::string out;
};
int RunConvert(const ConvertArgs& args);

}  // namespace tg::cli
