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

constexpr const char* kGateFooter =
    "Regression: avg_latency_ms > baseline x (1 + PCT/100), and with --require-significance also\n"
    "Mann-Whitney p < 0.05 on latency_samples_ms. Cannot judge (exit 2): unreadable input, another\n"
    "schema, no avg_latency_ms, different devices, or an error-level data-quality counter.\n"
    "The first line printed is the verdict. A baseline given by NAME, or a file inside --dir, gets a\n"
    "'gated' row in <dir>/history.db.\n"
    "Example:\n"
    "  tracegate gate run.json --baseline resnet50_fp16 --junit gate.xml --md gate.md";

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{kDescription, "tracegate"};
  app.set_version_flag("--version", std::string("tracegate ") + TRACEGATE_VERSION);
  app.require_subcommand(1);

  tg::cli::AnalyzeArgs analyze;
  auto* a = app.add_subcommand("analyze", "Explain a trace: iterations and phases, findings with Amdahl estimates, gaps, kernels, copies");
  a->add_option("trace", analyze.trace, "Trace file (Kineto JSON[.gz], nsys .sqlite, tracegate .db)")->required();
  a->add_option("-o,--output", analyze.json_out, "Write the JSON report here (atomically)");
  a->add_option("--md", analyze.md_out, "Write a Markdown summary here (pull-request comment, CI step summary)");
  a->add_option("--html", analyze.html_out, "Write a self-contained HTML report here (timeline, charts, findings)");
  a->add_option("--top", analyze.top_k, "Kernels in the top-K table")->capture_default_str()->check(CLI::Range(1, 100000));
  a->add_option("--gaps", analyze.largest_gaps, "Largest idle gaps listed per device")->capture_default_str()->check(CLI::Range(0, 100000));
  a->add_option("--small-copy-bytes", analyze.small_copy_bytes, "Copies under this size count as small")
      ->capture_default_str()->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  a->add_flag("-q,--quiet", analyze.quiet, "Do not print the summary (with -o)");
  AddIterationOptions(a, analyze.iterations);
  a->add_option("--model", analyze.model, "Model name recorded in the report");
  a->add_option("--precision", analyze.precision, "Precision tag recorded in the report (fp32, fp16, bf16, int8)");
  a->add_option("--commit", analyze.commit,
                "Source revision recorded in the report (default: git rev-parse HEAD of the current directory)");
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

  tg::cli::BaselineArgs baseline;
  auto* b = app.add_subcommand("baseline", "Stored reports to gate against (save, list, show, history)");
  b->require_subcommand(1);
  auto baseline_dir = [&](CLI::App* cmd) {
    cmd->add_option("--dir", baseline.dir, "Baseline directory")->capture_default_str();
  };
  auto* bsave = b->add_subcommand("save", "Save a report (or a trace, analyzed with defaults) as baseline NAME");
  bsave->add_option("report", baseline.input, "Report JSON (tracegate analyze -o) or a trace")->required();
  bsave->add_option("--name", baseline.name, "Baseline name: 1-100 of A-Z a-z 0-9 . _ -")->required();
  baseline_dir(bsave);
  auto* blist = b->add_subcommand("list", "List the baselines: name, model, precision, avg latency, commit, date");
  baseline_dir(blist);
  auto* bshow = b->add_subcommand("show", "Headline metrics and top findings of a baseline");
  bshow->add_option("name", baseline.name, "Baseline name (or a report file)")->required();
  baseline_dir(bshow);
  auto* bhist = b->add_subcommand("history", "Trend of a baseline's saves and gates (history.db)");
  bhist->add_option("name", baseline.name, "Baseline name")->required();
  baseline_dir(bhist);

  tg::cli::CompareArgs cmp;
  auto* cm = app.add_subcommand("compare", "Compare two runs: metric deltas, kernel and phase diff, statistics");
  cm->add_option("base", cmp.base, "Base report JSON or trace")->required();
  cm->add_option("new", cmp.next, "New report JSON or trace")->required();
  cm->add_option("--threshold", cmp.threshold_pct, "Allowed avg_latency_ms increase, percent")
      ->capture_default_str()->check(CLI::Range(0.0, 1000.0));
  cm->add_option("--md", cmp.md_out, "Write the Markdown summary here");
  cm->add_option("--json", cmp.json_out, "Write the comparison JSON here");

  tg::cli::GateArgs gate;
  auto* g = app.add_subcommand("gate", "CI gate: exit 0 pass, 1 regression, 2 cannot judge");
  g->footer(kGateFooter);
  g->add_option("new", gate.next, "New report JSON or trace")->required();
  g->add_option("--baseline", gate.baseline, "Baseline NAME (in --dir) or a report file")->required();
  g->add_option("--dir", gate.dir, "Baseline directory (history.db records the gate)")->capture_default_str();
  g->add_option("--threshold", gate.threshold_pct, "Allowed avg_latency_ms increase, percent")
      ->capture_default_str()->check(CLI::Range(0.0, 1000.0));
  g->add_flag("--require-significance", gate.require_significance,
              "Fail only when the latency samples also differ (Mann-Whitney p < 0.05)");
  g->add_flag("--allow-device-mismatch", gate.allow_device_mismatch, "Compare runs from different GPUs anyway");
  g->add_option("--junit", gate.junit_out, "Write JUnit XML here");
  g->add_option("--md", gate.md_out, "Write the Markdown summary here");

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
  if (bsave->parsed()) return tg::cli::RunBaselineSave(baseline);
  if (blist->parsed()) return tg::cli::RunBaselineList(baseline);
  if (bshow->parsed()) return tg::cli::RunBaselineShow(baseline);
  if (bhist->parsed()) return tg::cli::RunBaselineHistory(baseline);
  if (cm->parsed()) return tg::cli::RunCompare(cmp);
  if (g->parsed()) return tg::cli::RunGate(gate);
  return tg::cli::kExitBadInput;
}
