// tracegate: argument parsing and dispatch. Every subcommand lives in commands.cpp.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>

#include "commands.h"

namespace {

constexpr const char* kDescription =
    "tracegate: explain where GPU inference time goes, and stop regressions in CI.\n"
    "Reads PyTorch profiler (Kineto) JSON (.json/.json.gz), Nsight Systems SQLite exports and\n"
    "tracegate recordings; the format is detected from the content.";

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{kDescription, "tracegate"};
  app.set_version_flag("--version", std::string("tracegate ") + TRACEGATE_VERSION);
  app.require_subcommand(1);

  tg::cli::AnalyzeArgs analyze;
  auto* a = app.add_subcommand("analyze", "Summarize a trace: idle gaps, top kernels, copies, streams");
  a->add_option("trace", analyze.trace, "Trace file (Kineto JSON[.gz], nsys .sqlite, tracegate .db)")->required();
  a->add_option("-o,--output", analyze.json_out, "Write the JSON report here (atomically)");
  a->add_option("--top", analyze.top_k, "Kernels in the top-K table")->capture_default_str()->check(CLI::Range(1, 100000));
  a->add_option("--gaps", analyze.largest_gaps, "Largest idle gaps listed per device")->capture_default_str()->check(CLI::Range(0, 100000));
  a->add_option("--small-copy-bytes", analyze.small_copy_bytes, "Copies under this size count as small")
      ->capture_default_str()->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  a->add_flag("-q,--quiet", analyze.quiet, "Do not print the summary (with -o)");

  tg::cli::ExportArgs exp;
  auto* e = app.add_subcommand("export", "Write a trace for Perfetto UI / chrome://tracing");
  e->add_option("trace", exp.trace, "Trace file")->required();
  e->add_option("--chrome", exp.chrome_out, "Chrome trace-event JSON output")->required();

  tg::cli::ConvertArgs conv;
  auto* c = app.add_subcommand("convert", "Convert any supported trace to a tracegate store (SQLite)");
  c->add_option("trace", conv.trace, "Trace file")->required();
  c->add_option("-o,--output", conv.out, "Output .db (nsys-compatible tables)")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line, then where to look; usage errors share the bad-input exit code.
    std::fprintf(stderr, "tracegate: error: %s\nRun 'tracegate --help' for usage.\n", e.what());
    return tg::cli::kExitBadInput;
  }

  if (a->parsed()) return tg::cli::RunAnalyze(analyze);
  if (e->parsed()) return tg::cli::RunExport(exp);
  if (c->parsed()) return tg::cli::RunConvert(conv);
  return tg::cli::kExitBadInput;
}
