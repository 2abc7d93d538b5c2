// tracegate-model: the mini inference model, the workload that proves tracegate end to end.
//   tracegate-model --batch 32 --precision fp16 --fuse res3 --iterations 20
//   tracegate record -o unfused.db -- tracegate-model
//   tracegate record -o fused.db -- tracegate-model --fuse res3
// Pattern knobs (each provokes one finding): --host-gap-us, --split-h2d, --pageable, --post-ms,
// --streams. --slow makes a stage's blocks do a known multiple of their work (predict's pairs). Exit 0 on success, 1 on
// a CUDA / cuDNN error, 2 on bad flags.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <numeric>
#include <string>

#include "cuda_check.h"
#include "model.h"
#include "tracegate/kernels/model_spec.h"

int main(int argc, char** argv) {
  using namespace tg::kernels;
  ModelOptions o;
  std::string precision = "fp16", fuse = "none";
  CLI::App app{"tracegate-model: pre -> h2d -> ResNet-like res2..res5 -> d2h -> post, with NVTX ranges per phase and stage"};
  app.add_option("--batch", o.batch, "images per iteration")->capture_default_str();
  app.add_option("--precision", precision, "fp32, fp16 or int8 (cuDNN INT8_CONFIG convolutions)")->capture_default_str();
  app.add_option("--fuse", fuse, "stages whose blocks run fused: res2,res3,res4,res5, all or none")->capture_default_str();
  app.add_option("--iterations", o.iterations, "measured iterations")->capture_default_str();
  app.add_option("--warmup", o.warmup, "warm-up iterations before them (NVTX range \"warmup\")")->capture_default_str();
  app.add_option("--image", o.image, "input height and width (a multiple of 32)")->capture_default_str();
  app.add_option("--host-gap-us", o.host_gap_us, "CPU busy time before every block launch (scheduling gaps)")->capture_default_str();
  app.add_option("--split-h2d", o.split_h2d, "send the input as N copies (many small copies)")->capture_default_str();
  app.add_flag("--pageable", o.pageable, "pageable host buffers instead of pinned");
  app.add_option("--post-ms", o.post_ms, "extra CPU time in post (post-processing bound)")->capture_default_str();
  app.add_option("--streams", o.streams, "split the batch over N streams (1: single-stream)")->capture_default_str();
  app.add_flag("--sync-stages", o.sync_stages, "wait for the GPU at the end of every stage range (predict --range)");
  std::string slow;
  app.add_option("--slow", slow,
                 "STAGE=F[,...]: the stage's blocks do F (1-8) times their work, each block run again "
                 "round(blocks x (F - 1)) times in all (a known change for tracegate predict)");
  app.add_option("--device", o.device, "CUDA device")->capture_default_str();
  app.add_option("--seed", o.seed, "seed of the random weights and images")->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  const auto p = ParsePrecision(precision);
  if (!p) {
    std::fprintf(stderr, "tracegate-model: --precision: unknown '%s' (fp32, fp16, int8)\n", precision.c_str());
    return 2;
  }
  o.precision = *p;
  o.fuse = SplitList(fuse);
  if (const std::string err = ParseSlow(slow, o); !err.empty()) {
    std::fprintf(stderr, "tracegate-model: %s\n", err.c_str());
    return 2;
  }
  if (const std::string err = ValidateModelOptions(o); !err.empty()) {
    std::fprintf(stderr, "tracegate-model: %s\n", err.c_str());
    return 2;
  }
  std::string fused;
  for (const std::string& s : o.fuse) fused += (fused.empty() ? "" : ",") + s;
  std::printf("tracegate-model: batch %zu %s, fused stages: %s, %d iterations (+%d warm-up), %d stream(s)\n", o.batch,
              std::string(PrecisionName(o.precision)).c_str(), fused.empty() ? "none" : fused.c_str(), o.iterations,
              o.warmup, o.streams);
  for (const auto& [stage, f] : o.slow)
    for (const StageSpec& st : ModelStages(o.image))
      if (st.name == stage) {
        size_t extra = 0;
        for (size_t b = 0; b < st.blocks; ++b) extra += SlowRepeats(f, st.blocks, b);
        std::printf("slow: %s's %zu blocks run %zu extra times per iteration (x%.4g of their work; asked x%.4g)\n",
                    stage.c_str(), st.blocks, extra, double(st.blocks + extra) / double(st.blocks), f);
      }
  if (o.host_gap_us > 0) {
    const size_t sites = HostGapSitesPerIteration(o);
    std::printf("host gap: %lld us before each of %zu launches per iteration (%.3f ms of host time per iteration)\n",
                static_cast<long long>(o.host_gap_us), sites, double(o.host_gap_us) * double(sites) / 1e3);
  }
  std::fflush(stdout);
  tg::kernels::cuda::ModelRun run;
  try {
    run = tg::kernels::cuda::RunModel(o);
  } catch (const tg::kernels::cuda::CudaError& e) {
    std::fprintf(stderr, "tracegate-model: %s\n", e.what());
    return 1;
  }
  for (const std::string& note : run.stage_notes) std::printf("  %s\n", note.c_str());
  std::vector<double> sorted = run.latency_ms;
  std::sort(sorted.begin(), sorted.end());
  const double mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / double(sorted.size());
  const double p95 = sorted[std::min(sorted.size() - 1, size_t(0.95 * double(sorted.size() - 1) + 0.5))];
  std::printf("latency: mean %.3f ms, p50 %.3f ms, p95 %.3f ms; throughput %.1f images/s\n", mean,
              sorted[sorted.size() / 2], p95, double(o.batch) / (mean / 1e3));
  if (!run.top_k.empty()) {
    std::printf("top-%zu of image 0:", o.top_k);
    for (int c : run.top_k.front()) std::printf(" %d", c);
    std::printf("\n");
  }
  return 0;
}
