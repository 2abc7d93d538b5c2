// The tracegate subcommands. main.cpp parses arguments (CLI11) and calls these; each returns the
// process exit code: 0 success, 2 bad input or usage (one line on stderr naming the problem).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace tg::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitBadInput = 2;

struct AnalyzeArgs {
  std::string trace;
  std::string json_out;  // -o; empty: no JSON file
  size_t top_k = 10;
  size_t largest_gaps = 10;
  int64_t small_copy_bytes = 64 * 1024;
  bool quiet = false;    // no human summary on stdout
};
int RunAnalyze(const AnalyzeArgs& args);

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
