// tracegate: argument parsing and dispatch. Every subcommand lives in commands.cpp.
#include <CLI/CLI.hpp>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string_view>

#include "commands.h"
#include "usage_errors.h"

namespace {

constexpr const char* kDescription =
    "tracegate: explain where GPU inference time goes, and stop regressions in CI.\n"
    "Reads PyTorch profiler (Kineto) JSON (.json/.json.gz), Nsight Systems SQLite exports and\n"
    "tracegate recordings; the format is detected from the content.";

void AddIterationOptions(CLI::App* cmd, tg::cli::IterationArgs& it) {
  cmd->add_option("--iteration", it.iteration_regex,
                  "Regex naming the iteration ranges (NVTX / user annotations; searched, case-insensitive). "
                  "Default matches ProfilerStep#N, iteration, iter N, step N");
  cmd->add_option("--skip", it.skip,
                  "Warm-up iterations to drop from the front: a count, or auto (the leading iterations that each "
                  "took more than 2x the median of the rest; at most half, at least 3 kept; --skip 0 keeps all)")
      ->capture_default_str();
  cmd->add_option("--phase", it.phases,
                  "Phase range regex, repeatable: pre=REGEX, infer=REGEX, post=REGEX "
                  "(defaults: pre|preprocess, infer|inference|forward, post|postprocess)");
  cmd->add_option("--batch", it.batch, "Items per iteration, for throughput")
      ->capture_default_str()->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
}

constexpr const char* kExitCodes =
    "Exit codes: 0 done; 1 a regression (gate); 2 bad input or a usage error: one line on stderr\n"
    "names the problem (run with no arguments, tracegate prints this help and exits 2); record exits\n"
    "with its command's code. 'tracegate COMMAND --help' describes a command.";

constexpr const char* kExportFooter =
    "The file opens in https://ui.perfetto.dev and chrome://tracing. Processes: 'tracegate findings'\n"
    "(a track per finding of the analysis: the intervals its claim locates, a mark with its summary),\n"
    "the host processes (a track per thread: API calls, CPU ops, NVTX ranges), one per GPU (a track\n"
    "per stream; the CUDA syncs, which time the host waiting, on 'stream N sync: host waits'; NVML\n"
    "telemetry as counters). Flows join each launch to its GPU work. Slices that overlap on a track\n"
    "go to an overflow track named '(overlapping N)'.\n"
    "Example:\n"
    "  tracegate export run.db --chrome run.trace.json";

constexpr const char* kPredictFooter =
    "With a trace, the replay is the default: the trace re-timed under the change (launches, stream order,\n"
    "syncs kept), Amdahl's bound printed beside it. The changes given together are replayed together in one\n"
    "pass; one --speedup applies to every part it speeds up (--kernels/--class and --host), several pair with\n"
    "the selections given before each (--class gemm --speedup 1.2 --kernels softmax --speedup 2). Amdahl's law alone\n"
    "(--method amdahl, or --fraction, --part, --range): overall = 1 / ((1 - sum P) + sum P/S);\n"
    "the bound as S -> infinity is 1 / (1 - sum P). docs/PREDICTION.md has the model.\n"
    "Examples:\n"
    "  tracegate predict --fraction 0.1 --speedup 1.146        # 1.013\n"
    "  tracegate predict --part 0.1:1.146 --part 0.05:2\n"
    "  tracegate predict run.db --kernels gemm --speedup 1.1   # replayed, Amdahl beside\n"
    "  tracegate predict run.db --class gemm --speedup 1.2 --launch-us 2 --graph --json prediction.json\n"
    "  tracegate predict run.db --launched-in '^res3 blocks$' --speedup 1.146   # a stage's kernels, replayed\n"
    "  tracegate predict run.db --finding memory_bound     # a finding's claim replayed, its Amdahl beside\n"
    "  tracegate predict run.db --finding all              # every replayable finding: the combined estimate replayed";

// The options that decide the verdict, shared by gate and compare.
void AddVerdictOptions(CLI::App* cmd, tg::cli::VerdictArgs& v) {
  cmd->add_option("--threshold", v.threshold_pct, "Allowed avg_latency_ms increase, percent")
      ->capture_default_str()->check(CLI::Range(0.0, 1000.0));
  cmd->add_flag("--require-significance", v.require_significance,
                "A regression also needs the latency samples to differ (Mann-Whitney p < 0.05)");
  cmd->add_flag("--allow-device-mismatch", v.allow_device_mismatch, "Compare runs from different GPUs anyway");
  cmd->add_option("--max-malformed-pct", v.max_malformed_pct,
                  "Cannot judge when malformed_event is over this percent of the rows read")
      ->capture_default_str()->check(CLI::Range(0.0, 100.0));
  cmd->add_option("--kernel-threshold", v.kernel_threshold_pct,
                  "Also a regression when a kernel family's GPU time per iteration grew by more than PCT percent")
      ->check(CLI::Range(0.0, 1000.0));
}

constexpr const char* kCompareFooter =
    "The verdict line comes first, decided by the gate's rules and options (see tracegate gate --help).\n"
    "Exit code: 0 when both runs were read and compared, whatever the verdict (compare decides\n"
    "nothing; use gate in CI); 2 when an input cannot be read, an output would overwrite an input,\n"
    "or an option is wrong.\n"
    "Examples:\n"
    "  tracegate compare base.json new.json --md compare.md --html compare.html\n"
    "  tracegate compare a100.json h100.json --allow-device-mismatch";

constexpr const char* kGateFooter =
    "Regression: avg_latency_ms > baseline x (1 + PCT/100), and with --require-significance also\n"
    "Mann-Whitney p < 0.05 on latency_samples_ms. Cannot judge (exit 2): unreadable input, another\n"
    "schema, no avg_latency_ms, different devices, an error-level data-quality counter, or lost data\n"
    "(malformed_event over --max-malformed-pct of the rows read; no kernels, memcpys or API calls\n"
    "where the other run has some). --kernel-threshold PCT also fails a kernel family whose GPU time\n"
    "per iteration grew by more than PCT, even when the latency did not move (off by default).\n"
    "The first line printed is the verdict. A baseline given by NAME, or a file inside --dir, gets a\n"
    "'gated' row in <dir>/history.db.\n"
    "Exit code: 0 pass, 1 regression, 2 cannot judge (also when an option is wrong or an output would\n"
    "overwrite the input).\n"
    "Example:\n"
    "  tracegate gate run.json --baseline resnet50_fp16 --junit gate.xml --md gate.md --html gate.html";

constexpr const char* kMergeFooter =
    "The reduce step of a job analysed past one machine (docs/SCALE.md): each rank's trace is analysed\n"
    "where it lies (tracegate analyze rank3.json -o rank3.report.json), and merge gives the job report\n"
    "that tracegate analyze DIR gives for the traces. The rank of a report: its ranks[0].rank, else its\n"
    "trace's file name (rank-3, rank3, rank_3, worker3), else the order of the reports.\n"
    "Example:\n"
    "  tracegate merge reports/*.report.json -o job.json --md job.md";

constexpr const char* kRecordFooter =
    "Output: -o OUT is replaced atomically (a complete file or the old one). Without -o the trace\n"
    "goes to tracegate1.db in the current directory, or the next free tracegate<N>.db: an existing\n"
    "file is never overwritten.\n"
    "Every CUDA process the command starts (fork/exec, multiprocessing, several GPUs) is recorded into\n"
    "the one trace. record waits for every process the command started, even after the command\n"
    "itself exits; SIGINT/SIGTERM sent to tracegate are forwarded to the command (a Ctrl-C in the\n"
    "terminal reaches it directly), and one arriving after the command exited stops the waiting.\n"
    "A process that is killed keeps its events up to its last flush (about one second) and the trace\n"
    "is marked incomplete (trace_incomplete, an error: the gate will not pass it).\n"
    "Exit code: the command's (128 + N when signal N killed it); 2 when tracegate cannot record;\n"
    "127 / 126 when the command cannot be found / executed.\n"
    "Environment: TRACEGATE_FLUSH_MS (1000), TRACEGATE_BUFFER_MB (8), TRACEGATE_BUFFER_CAP_MB (512),\n"
    "TRACEGATE_INJECT_LIB (the injection library; default: libtracegate_inject.so beside tracegate).\n"
    "What is recorded: --api default records the CUDA API calls the analysis reads, one function at a\n"
    "time (CUDA 12.5+; the trace's metadata cupti_api_recorded lists them); --api all every call.\n"
    "--capture-range nvtx:NAME [--iterations K:N] records only inside those NVTX ranges (after skipping\n"
    "K, N of them), so only that window pays for recording.\n"
    "Examples:\n"
    "  tracegate record -- python infer.py --batch 32\n"
    "  tracegate record --capture-range nvtx:step --iterations 20:10 -- python train.py\n"
    "  tracegate record -o run.db --analyze -- ./server --requests 1000";

}  // namespace

int main(int argc, char** argv) {
#if defined(__GLIBC__)
  // Trace tables and the analyses' buffers are large, short-lived vectors. glibc's default
  // threshold rises after the first large free, and from then on such blocks come from the heap
  // and stay resident after they are freed. A fixed threshold maps and unmaps each one: peak RSS
  // of a 10^6-event analyze drops by ~4 MiB (docs/PERFORMANCE.md), at no measurable time cost.
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  mallopt(M_TRIM_THRESHOLD, 128 * 1024);
#endif
  CLI::App app{kDescription, "tracegate"};
  app.set_version_flag("--version", std::string("tracegate ") + TRACEGATE_VERSION);
  app.require_subcommand(1);

  tg::cli::AnalyzeArgs analyze;
  auto* a = app.add_subcommand("analyze", "Explain a trace: iterations and phases, findings with Amdahl estimates, gaps, kernels, copies");
  a->add_option("trace", analyze.traces,
                 "Trace file (Kineto JSON[.gz], nsys .sqlite, tracegate .db); several files, or a directory of them, "
                 "are the ranks of one job")
      ->required();
  a->add_option("-j,--jobs", analyze.jobs, "Ranks of a job analysed at once (default: the hardware threads)")
      ->check(CLI::Range(1, 4096));
  a->add_option("-o,--output", analyze.json_out, "Write the JSON report here (atomically)");
  a->add_option("--md", analyze.md_out, "Write a Markdown summary here (pull-request comment, CI step summary)");
  a->add_option("--html", analyze.html_out, "Write a self-contained HTML report here (timeline, charts, findings)");
  a->add_option("--top", analyze.top_k, "Kernels in the top-K table")->capture_default_str()->check(CLI::Range(1, 100000));
  a->add_option("--gaps", analyze.largest_gaps, "Largest idle gaps listed per device")->capture_default_str()->check(CLI::Range(0, 100000));
  a->add_option("--small-copy-bytes", analyze.small_copy_bytes, "Copies under this size count as small")
      ->capture_default_str()->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  a->add_flag("-q,--quiet", analyze.quiet, "Do not print the summary (with -o)");
  a->add_flag("--timings", analyze.timings, "Print each step's wall time and the process's memory to stderr (load, analysis, reports)");
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
  a->add_flag("--critical-path", analyze.critical_path,
              "Add the critical path of each kept iteration: its time by kind (kernels by class, copies, launches, "
              "syncs, host frames), summing to the step (docs/PREDICTION.md)");
  a->add_flag("--replay-findings", analyze.replay_findings,
              "Give each finding's gain as the what-if replay predicts it (its claim re-timed over the trace's "
              "dependencies, as predict --finding), Amdahl's as its bound, and the findings' together; one replay "
              "pass per finding (docs/PREDICTION.md)");
  a->add_option("--capture", analyze.captures,
                "Trace of the CUDA/HIP graph capture whose replay TRACE holds (repeatable): each replayed kernel takes "
                "the op and Python frame that launched it at capture time (docs/SERVING.md)")
      ->expected(1)
      ->take_all();

  tg::cli::MergeArgs merge;
  auto* mg = app.add_subcommand("merge", "One job report from the ranks' reports (tracegate analyze RANK -o REPORT)");
  mg->footer(kMergeFooter);
  mg->add_option("reports", merge.reports, "Per-rank report JSON files")->required();
  mg->add_option("-o,--output", merge.json_out, "Write the job report here (atomically)");
  mg->add_option("--md", merge.md_out, "Write a Markdown summary here");
  mg->add_option("--html", merge.html_out, "Write a self-contained HTML report here (per-rank table, wait chart)");
  mg->add_option("-j,--jobs", merge.jobs, "Reports read at once (default: the hardware threads)")
      ->check(CLI::Range(1, 4096));
  mg->add_flag("-q,--quiet", merge.quiet, "Do not print the summary (with -o)");
  mg->add_option("--rules", merge.rules_path,
                 "rules.json overriding the thresholds of the rules across ranks (see docs/RULES.md)");

  tg::cli::PredictArgs predict;
  auto* p = app.add_subcommand(
      "predict", "What a change gains: the trace replayed under it, Amdahl's bound beside it (or Amdahl's law alone)");
  p->footer(kPredictFooter);
  std::vector<std::string> predict_traces;
  p->add_option("trace", predict_traces,
                "Trace to replay under the change, or to measure P from; or a job's ranks (a directory of their "
                "traces, or two or more files): replayed together, each collective waiting for its last rank");
  p->add_option("--rank", predict.ranks, "Job: make the change on this rank only (repeatable; default: every rank)")
      ->allow_extra_args(false)
      ->type_name("N");
  p->add_option("--fraction", predict.fraction, "P: share of the run that is sped up (0..1)")->check(CLI::Range(0.0, 1.0));
  // --kernels, --class, --host and --speedup may repeat: each --speedup speeds up the selections
  // given since the previous one (PairSpeedups below).
  std::vector<std::string> kernels_v, class_v, host_v;
  std::vector<double> speedup_v;
  auto* speedup_opt = p->add_option("--speedup", speedup_v,
                                    "S: speedup of that part (> 0); repeated, each speeds up the --kernels, --class "
                                    "and --host given since the previous one")
                          ->check(CLI::PositiveNumber)
                          ->allow_extra_args(false)
                          ->type_name("FLOAT");
  p->add_option("--part", predict.parts, "P:S for one of several parts (repeatable; S may be inf)");
  auto* kernels_opt = p->add_option("--kernels", kernels_v,
                                    "Regex of kernel names that run --speedup times faster (needs TRACE; with --class: "
                                    "both)")
                          ->allow_extra_args(false)
                          ->type_name("REGEX");
  auto* class_opt = p->add_option("--class", class_v,
                                  "Kernels of this class run --speedup times faster: communication, attention, conv, "
                                  "gemm, transform, normalization, activation, elementwise, reduction, other (by "
                                  "launching op, then name)")
                        ->allow_extra_args(false)
                        ->type_name("CLASS");
  p->add_option("--range", predict.range_regex, "Regex of range names whose time is P (needs TRACE)");
  p->add_option("--launched-in", predict.launched_regex,
                "Regex of host range names (NVTX, ops): the kernels launched inside them run --speedup times faster "
                "(replayed; with --kernels/--class, those that match all), or their GPU time is P (--method amdahl)");
  p->add_option("--method", predict.method,
                "replay (the default with a trace: re-time it under the change, keeping its launches, stream order "
                "and syncs; Amdahl printed beside it) or amdahl (the bound from P and S)");
  auto* host_opt =
      p->add_option("--host", host_v,
                    "Replay: host ranges (Python frames, ops, NVTX) whose name matches run --speedup times "
                    "faster")
          ->allow_extra_args(false)
          ->type_name("REGEX");
  p->add_option("--launch-us", predict.launch_us, "Replay: every launch call takes N us (the host's launch cost)")
      ->check(CLI::NonNegativeNumber);
  p->add_option("--remove-syncs", predict.remove_syncs_regex,
                "Replay: synchronising calls whose name matches this regex no longer wait");
  auto* graph_opt = p->add_option("--graph", predict.graph_regex,
                                  "Replay: each kept iteration's launches as one CUDA graph launch (the host no longer "
                                  "delays the GPU); with REGEX, only the launches inside matching host ranges")
                        ->expected(0, 1)
                        ->type_name("[REGEX]");
  p->add_option("--json", predict.json_out, "Write the prediction as JSON here (docs/PREDICTION.md)")
      ->type_name("FILE");
  p->add_option("--finding", predict.findings,
                "Replay: analyse TRACE as analyze does and replay this finding's claim (its located instants run its "
                "S times faster); REF as analyze names findings (memory_bound, fusion_candidate#2); repeatable; all: "
                "every replayable finding together (the combined estimate replayed). No other change with it")
      ->allow_extra_args(false)
      ->type_name("REF");
  p->add_option("--rules", predict.rules_path,
                "With --finding: rules.json overriding the rules' thresholds, as analyze")
      ->type_name("FILE");
  p->add_option("--costs", predict.costs_path, "With --finding: per-kernel FLOP/byte costs (roofline), as analyze")
      ->type_name("FILE");
  AddIterationOptions(p, predict.iterations);

  tg::cli::ExportArgs exp;
  auto* e = app.add_subcommand("export", "Write a trace for Perfetto UI / chrome://tracing");
  e->footer(kExportFooter);
  e->add_option("trace", exp.trace, "Trace file")->required();
  e->add_option("--chrome", exp.chrome_out, "Chrome trace-event JSON output")->required();
  e->add_flag("--no-findings", exp.no_findings, "Do not analyse the trace: no findings track");
  AddIterationOptions(e, exp.iterations);

  tg::cli::ConvertArgs conv;
  auto* c = app.add_subcommand("convert", "Convert any supported trace to a tracegate store (SQLite)");
  c->add_option("trace", conv.trace, "Trace file")->required();
  c->add_option("-o,--output", conv.out, "Output .db (nsys-compatible tables)")->required();

  std::string schema_out;
  auto* sc = app.add_subcommand("schema", "Print the JSON Schema of the reports analyze writes (tracegate.report/v1)");
  sc->add_option("-o,--output", schema_out, "Write it to this file instead");

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
  bhist->add_option("--html", baseline.html_out, "Also write the trend as a self-contained HTML page here");
  baseline_dir(bhist);

  tg::cli::CompareArgs cmp;
  auto* cm = app.add_subcommand("compare", "Compare two runs: metric deltas, kernel and phase diff, statistics");
  cm->footer(kCompareFooter);
  cm->add_option("base", cmp.base, "Base report JSON or trace")->required();
  cm->add_option("new", cmp.next, "New report JSON or trace")->required();
  AddVerdictOptions(cm, cmp.verdict);
  cm->add_option("--skip", cmp.skip, "For a trace given: warm-up iterations to drop, a count or auto (see analyze)")
      ->capture_default_str();
  cm->add_option("--md", cmp.md_out, "Write the Markdown summary here (pull-request comment, CI step summary)");
  cm->add_option("--json", cmp.json_out, "Write the comparison JSON here");
  cm->add_option("--html", cmp.html_out, "Write a self-contained HTML comparison page here");

  tg::cli::GateArgs gate;
  auto* g = app.add_subcommand("gate", "CI gate: exit 0 pass, 1 regression, 2 cannot judge");
  g->footer(kGateFooter);
  g->add_option("new", gate.next, "New report JSON or trace")->required();
  g->add_option("--baseline", gate.baseline, "Baseline NAME (in --dir) or a report file")->required();
  g->add_option("--dir", gate.dir, "Baseline directory (history.db records the gate)")->capture_default_str();
  AddVerdictOptions(g, gate.verdict);
  g->add_option("--skip", gate.skip, "For a trace given: warm-up iterations to drop, a count or auto (see analyze)")
      ->capture_default_str();
  g->add_option("--junit", gate.junit_out, "Write JUnit XML here");
  g->add_option("--md", gate.md_out, "Write the Markdown summary here (pull-request comment, CI step summary)");
  g->add_option("--html", gate.html_out, "Write a self-contained HTML comparison page here");

  tg::cli::RecordArgs record;
  auto* r = app.add_subcommand(
      "record", "Run a CUDA program under the collector and write a tracegate trace: record [OPTIONS] -- CMD ARGS...");
  r->footer(kRecordFooter);
  r->add_option("-o,--output", record.output, "Output trace (.db); default tracegate<N>.db, never overwritten");
  r->add_option("--sample-ms", record.sample_ms, "GPU telemetry (NVML) sampling period, ms")
      ->capture_default_str()->check(CLI::Range(int64_t{1}, int64_t{3600000}));
  r->add_option("--api", record.api,
                "CUDA API calls recorded: default (what the analysis reads: launches, copies, memsets, syncs, waits, "
                "events, allocations, module loads; runtime and driver) or all")
      ->capture_default_str()->check(CLI::IsMember({"default", "all"}));
  r->add_option("--cuda-graph-trace", record.cuda_graph_trace,
                "CUDA graph launches: node (every node's kernel, copy and memset) or graph (one record per launch)")
      ->capture_default_str()->check(CLI::IsMember({"node", "graph"}));
  r->add_option("--capture-range", record.capture_range,
                "Record only inside NVTX ranges of this name (nvtx:NAME); outside them nothing pays for recording");
  r->add_option("--iterations", record.iterations,
                "With --capture-range: skip K of its ranges, then record N (K:N)");
  r->add_flag("--no-driver-api", record.no_driver_api,
              "Leave CUDA driver API calls unrecorded. Not recommended: cuBLAS and Triton launch through the "
              "driver, and their kernels then have no launch to correlate with");
  r->add_flag("--analyze", record.analyze, "Print the analysis of the trace after recording");
  r->prefix_command();  // the first argument that is not an option starts the command
  // `record [OPTIONS] -- CMD ARGS...`: everything after the first "--" is the command, verbatim;
  // CLI11 is only shown what comes before it (it would reorder or reject the rest).
  std::vector<std::string> record_tail;
  bool record_dashes = false;
  int parse_argc = argc;
  if (argc > 1 && std::string_view(argv[1]) == "record")
    for (int i = 2; i < argc; ++i)
      if (std::string_view(argv[i]) == "--") {
        record_tail.assign(argv + i + 1, argv + argc);
        record_dashes = true;
        parse_argc = i;
        break;
      }

  // Usage errors: one line naming the problem (with "did you mean" for a mistyped command or
  // option), then the command's usage and where its help is (usage_errors.cpp); exit 2.
  app.footer(kExitCodes);  // after the subcommands: they would inherit it
  if (argc == 1) return tg::cli::NoArguments(app);
  if (int rc = tg::cli::CheckCommandWords(app, parse_argc, argv); rc >= 0) return rc;
  try {
    app.parse(parse_argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return tg::cli::ReportUsageError(app, e, parse_argc, argv);
  }

  if (a->parsed()) {
    // One file is a run; several, or a directory, are the ranks of a job.
    std::error_code ec;
    if (analyze.traces.size() > 1 || std::filesystem::is_directory(analyze.traces[0], ec))
      return tg::cli::RunAnalyzeJob(analyze);
    analyze.trace = analyze.traces[0];
    return tg::cli::RunAnalyze(analyze);
  }
  if (mg->parsed()) return tg::cli::RunMerge(merge);
  if (p->parsed()) {
    predict.graph = graph_opt->count() > 0;
    // One file is a run; several, or a directory, are the ranks of a job.
    std::error_code ec;
    if (predict_traces.size() == 1 && !std::filesystem::is_directory(predict_traces.front(), ec))
      predict.trace = predict_traces.front();
    else predict.job = predict_traces;
    // PairSpeedups: one --speedup speeds up every selection; several pair with the selections
    // given before each.
    struct Group {
      std::string kernels, cls, host;
      bool kernels_set = false, cls_set = false, host_set = false;
      double speedup = -1;
    };
    std::vector<Group> groups(1);
    auto speedup_text = [](double v) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%g", v);
      return std::string(buf);
    };
    size_t ik = 0, ic = 0, ih = 0, is = 0;
    const bool paired = speedup_v.size() > 1;
    for (CLI::Option* o : p->parse_order()) {
      Group& g = groups.back();
      bool twice = false;
      if (o == kernels_opt) {
        twice = g.kernels_set;
        g.kernels = kernels_v[ik++];
        g.kernels_set = true;
      } else if (o == class_opt) {
        twice = g.cls_set;
        g.cls = class_v[ic++];
        g.cls_set = true;
      } else if (o == host_opt) {
        twice = g.host_set;
        g.host = host_v[ih++];
        g.host_set = true;
      } else if (o == speedup_opt) {
        g.speedup = speedup_v[is++];
        if (paired && !g.kernels_set && !g.cls_set && !g.host_set)
          return tg::cli::Fail(tg::InvalidInput("--speedup " + speedup_text(g.speedup) +
                                                " follows no --kernels, --class or --host of its own"));
        if (paired) groups.emplace_back();
      }
      if (twice)
        return tg::cli::Fail(
            tg::InvalidInput(std::string(o == kernels_opt ? "--kernels"
                                         : o == class_opt ? "--class"
                                                          : "--host") +
                             " given twice before one --speedup: give each selection its own --speedup after it"));
    }
    if (paired && (groups.back().kernels_set || groups.back().cls_set || groups.back().host_set))
      return tg::cli::Fail(
          tg::InvalidInput("--kernels, --class or --host after the last --speedup: give it its own --speedup"));
    if (paired) groups.pop_back();
    if (!paired) groups.front().speedup = speedup_v.empty() ? -1 : speedup_v.front();
    predict.speedup = groups.front().speedup;
    bool first_kernels = true, host_seen = false;
    for (const Group& g : groups) {
      if (g.host_set) {
        if (host_seen) return tg::cli::Fail(tg::InvalidInput("--host given twice: one --host per prediction"));
        host_seen = true;
        predict.host_regex = g.host;
        predict.host_speedup = g.speedup;
      }
      if (!g.kernels_set && !g.cls_set) continue;
      if (first_kernels) {
        predict.kernels_regex = g.kernels;
        predict.kernel_class = g.cls;
        predict.speedup = g.speedup;
        first_kernels = false;
      } else {
        predict.more_kernels.push_back({g.kernels, g.cls, g.speedup, ""});
      }
    }
    return tg::cli::RunPredict(predict);
  }
  if (e->parsed()) return tg::cli::RunExport(exp);
  if (c->parsed()) return tg::cli::RunConvert(conv);
  if (sc->parsed()) return tg::cli::RunSchema(schema_out);
  if (bsave->parsed()) return tg::cli::RunBaselineSave(baseline);
  if (blist->parsed()) return tg::cli::RunBaselineList(baseline);
  if (bshow->parsed()) return tg::cli::RunBaselineShow(baseline);
  if (bhist->parsed()) return tg::cli::RunBaselineHistory(baseline);
  if (cm->parsed()) return tg::cli::RunCompare(cmp);
  if (g->parsed()) return tg::cli::RunGate(gate);
  if (r->parsed()) {
    // Without "--" the command is what CLI11 left; a "--" after the command's first word was
    // one of its arguments.
    record.command = r->remaining();
    if (record_dashes && !record.command.empty()) record.command.push_back("--");
    record.command.insert(record.command.end(), record_tail.begin(), record_tail.end());
    return tg::cli::RunRecord(record);
  }
  return tg::cli::kExitBadInput;
}
