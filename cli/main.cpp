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

void AddIterationOptions(CLI::App* cmd, tg::cli::IterationArgs& it) {
  cmd->add_option("--iteration", it.iteration_regex,
                  "Regex naming the iteration ranges (NVTX / user annotations; searched, case-insensitive). "
                  "Default matches ProfilerStep#N, iteration, iter N, step N");
  cmd->add_option("--skip", it.skip, "Warm-up iterations to drop from the front")->capture_default_str();
  cmd->add_option("--phase", it.phases,
                  "Phase range regex, repeatable: pre=REGEX, infer=REGEX, post=REGEX "
                  "(defaults: pre|preprocess, infer|inference|forward, post|postprocess)");
  cmd->add_option("--batch", it.batch, "Items per iteration, for throughput")
      ->capture_default_str()->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
}

constexpr const char* kPredictFooter =
    "Amdahl's law: overall = 1 / ((1 - sum P) + sum P/S); the bound as S -> infinity is 1 / (1 - sum P).\n"
    "Examples:\n"
    "  tracegate predict --fraction 0.1 --speedup 1.146        # 1.013\n"
    "  tracegate predict --part 0.1:1.146 --part 0.05:2\n"
    "  tracegate predict run.db --kernels 'conv|bn_fw' --speedup 1.146";

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{kDescription, "tracegate"};
  app.set_version_flag("--version", std::string("tracegate ") + TRACEGATE_VERSION);
  app.require_subcommand(1);

  tg::cli::AnalyzeArgs analyze;
  auto* a = app.add_subcommand("analyze", "Explain a trace: iterations and phases, findings with Amdahl estimates, gaps, kernels, copies");
  a->add_option("trace", analyze.trace, "Trace file (Kineto JSON[.gz], nsys .sqlite, tracegate .db)")->required();
  a->add_option("-o,--output", analyze.json_out, "Write the JSON report here (atomically)");
  a->add_option("--top", analyze.top_k, "Kernels in the top-K table")->capture_default_str()->check(CLI::Range(1, 100000));
  a->add_option("--gaps", analyze.largest_gaps, "Largest idle gaps listed per device")->capture_default_str()->check(CLI::Range(0, 100000));
  a->add_option("--small-copy-bytes", analyze.small_copy_bytes, "Copies under this size count as small")
      ->capture_default_str()->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  a->add_flag("-q,--quiet", analyze.quiet, "Do not print the summary (with -o)");
  AddIterationOptions(a, analyze.iterations);
  a->add_option("--model", analyze.model, "Model name recorded in the report");
  a->add_option("--precision", analyze.precision, "Precision tag recorded in the report (fp32, fp16, bf16, int8)");
  a->add_option("--rules", analyze.rules_path, "rules.json overriding rule thresholds (see docs/RULES.md)");
  a->add_option("--costs", analyze.costs_path, "costs.json: [{\"kernel\": REGEX, \"bytes\": N, \"flops\": N}] per launch");
  a->add_option("--peak-gbs", analyze.peak_gbs, "Peak memory bandwidth for the roofline, GB/s")->check(CLI::PositiveNumber);
  a->add_option("--peak-tflops", analyze.peak_tflops, "Peak TFLOP/s for the roofline")->check(CLI::PositiveNumber);
  a->add_option("--reference", analyze.reference_path,
                "Report of a higher-precision run, for the INT8 rule (with --precision int8)");

  tg::cli::PredictArgs predict;
  auto* p = app.add_subcommand("predict", "Amdahl's law: whole-run speedup from a part's share P and speedup S");
  p->footer(kPredictFooter);
  p->add_option("trace", predict.trace, "Trace to measure P from (with --kernels or --range)");
  p->add_option("--fraction", predict.fraction, "P: share of the run that is sped up (0..1)")->check(CLI::Range(0.0, 1.0));
  p->add_option("--speedup", predict.speedup, "S: speedup of that part (> 0)")->check(CLI::PositiveNumber);
  p->add_option("--part", predict.parts, "P:S for one of several parts (repeatable; S may be inf)");
  p->add_option("--kernels", predict.kernels_regex, "Regex of kernel names whose time is P (needs TRACE)");
  p->add_option("--range", predict.range_regex, "Regex of range names whose time is P (needs TRACE)");
  AddIterationOptions(p, predict.iterations);

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
  if (p->parsed()) return tg::cli::RunPredict(predict);
  if (e->parsed()) return tg::cli::RunExport(exp);
  if (c->parsed()) return tg::cli::RunConvert(conv);
  return tg::cli::kExitBadInput;
}
