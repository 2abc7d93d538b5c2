#include "commands.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>

#include "tracegate/analysis_report.h"
#include "tracegate/chrome_export.h"
#include "tracegate/import.h"
#include "tracegate/json_out.h"
#include "tracegate/store.h"
#include "tracegate/summary.h"

namespace tg::cli {

namespace {

int Fail(const Status& s) {
  std::fprintf(stderr, "tracegate: error: %s\n", s.message().c_str());
  return kExitBadInput;
}

// Long imports say what they are doing; short ones stay quiet. Only on a terminal.
void AnnounceImport(const std::string& path) {
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0 || !::isatty(STDERR_FILENO)) return;
  if (st.st_size >= 64LL << 20)
    std::fprintf(stderr, "tracegate: reading %s (%.0f MB)...\n", path.c_str(), st.st_size / 1e6);
}

Status Load(const std::string& path, Trace& trace) {
  AnnounceImport(path);
  return ImportTrace(path, trace);
}

// An output path must not be the input: writing would destroy the trace being read.
Status CheckOutputPath(const std::string& in, const std::string& out) {
  struct stat a{}, b{};
  if (::stat(in.c_str(), &a) == 0 && ::stat(out.c_str(), &b) == 0 && a.st_dev == b.st_dev &&
      a.st_ino == b.st_ino)
    return InvalidInput(out + ": output would overwrite the input trace; choose another path");
  return Status::Ok();
}

}  // namespace

int RunAnalyze(const AnalyzeArgs& args) {
  if (!args.json_out.empty())
    if (Status s = CheckOutputPath(args.trace, args.json_out); !s.ok()) return Fail(s);
  Trace trace;
  if (Status s = Load(args.trace, trace); !s.ok()) return Fail(s);
  AnalyzeOptions options;
  options.top_k = args.top_k;
  options.largest_gaps = args.largest_gaps;
  options.small_copy_bytes = args.small_copy_bytes;
  Summary summary = Summarize(trace, options);
  if (!args.json_out.empty()) {
    if (Status s = WriteJsonFile(args.json_out, AnalysisToJson(trace, summary, options)); !s.ok())
      return Fail(s);
  }
  if (!args.quiet) {
    PrintAnalysis(std::cout, trace, summary);
    if (!args.json_out.empty()) std::cout << "\nreport written to " << args.json_out << "\n";
  }
  return kExitOk;
}

int RunExport(const ExportArgs& args) {
  if (Status s = CheckOutputPath(args.trace, args.chrome_out); !s.ok()) return Fail(s);
  Trace trace;
  if (Status s = Load(args.trace, trace); !s.ok()) return Fail(s);
  if (Status s = WriteChromeTrace(trace, args.chrome_out); !s.ok()) return Fail(s);
  std::printf("wrote %s: %zu kernels, %zu copies, %zu memsets, %zu API calls, %zu ranges "
              "(open it in https://ui.perfetto.dev or chrome://tracing)\n",
              args.chrome_out.c_str(), trace.kernels.size(), trace.memcpys.size(), trace.memsets.size(),
              trace.api_calls.size(), trace.ranges.size());
  return kExitOk;
}

int RunConvert(const ConvertArgs& args) {
  if (Status s = CheckOutputPath(args.trace, args.out); !s.ok()) return Fail(s);
  Trace trace;
  if (Status s = Load(args.trace, trace); !s.ok()) return Fail(s);
  if (Status s = WriteStore(trace, args.out); !s.ok()) return Fail(s);
  std::printf("wrote %s: %zu kernels, %zu copies, %zu memsets, %zu syncs, %zu API calls, %zu ranges\n",
              args.out.c_str(), trace.kernels.size(), trace.memcpys.size(), trace.memsets.size(),
              trace.syncs.size(), trace.api_calls.size(), trace.ranges.size());
  return kExitOk;
}

}  // namespace tg::cli
