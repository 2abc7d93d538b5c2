// The rule table and the rules file reader. docs/RULES.md restates every row; keep them in step.
#include "tracegate/analyzer/rules.h"

#include <cassert>
#include <cmath>
#include <nlohmann/json.hpp>

#include "analyzer/util/json_file.h"
#include "tracegate/analyzer/kernel_class.h"

namespace tg {

const char* PriorityName(Priority p) {
  switch (p) {
    case Priority::kHigh: return "high";
    case Priority::kMedium: return "medium";
    case Priority::kLow: return "low";
  }
  return "medium";
}

const std::vector<RuleDef>& RuleDefs() {
  static const std::vector<RuleDef> kDefs = {
      {"idle_gaps", "Device idle between GPU work", Priority::kHigh,
       "idle_ratio: share of the iteration in the idle phase (no GPU work of the iteration, no pre/post stage)",
       {{"threshold", 0.10, "fires when idle_ratio > threshold (ratio)"},
        {"assumed_speedup", 2.0, "S assumed for the idle time (CUDA graphs / prefetch remove about half)"}},
       {"Merge small kernels or let a compiler fuse them (torch.compile, TensorRT)",
        "Prefetch / preload the next batch so the GPU never waits for input",
        "Capture the iteration in a CUDA graph to remove per-launch host overhead"},
       "SPEC.md pattern matrix (seed 001 5.3): device idle > 10% of the window"},
      {"launch_bound", "Launch-bound: many short kernels with gaps between them", Priority::kHigh,
       "share of the iteration's kernels shorter than short_kernel_us, with idle_ratio above idle_threshold",
       {{"short_kernel_us", 10.0, "a kernel shorter than this is below typical launch overhead (us)"},
        {"min_short_share", 0.5, "fires when at least this share of kernels is short (ratio)"},
        {"min_kernels_per_iteration", 20.0, "and the iteration launches at least this many kernels"},
        {"idle_threshold", 0.10, "and idle_ratio exceeds this (ratio)"},
        {"assumed_speedup", 2.0, "S assumed for the idle time (CUDA graphs batch the launches)"}},
       {"Capture the loop in a CUDA graph (torch.cuda.graphs, torch.compile mode='reduce-overhead')",
        "Fuse the short kernels; raise the batch size so each kernel does more work",
        "Move launch work off the critical Python thread"},
       "seed 001 5.2 (many gaps) and 5.3 (merge small kernels, CUDA graphs)"},
      {"h2d_bound", "Host-to-device copies take a large share", Priority::kHigh,
       "h2d_ms_ratio: share of the iteration in the h2d phase",
       {{"threshold", 0.20, "fires when h2d_ms_ratio > threshold (ratio)"},
        {"assumed_speedup", 2.0, "S assumed for copy time (pinned memory and merged, async copies)"}},
       {"Merge small copies into one", "Use pinned (page-locked) host memory and cudaMemcpyAsync",
        "Overlap copies with compute on a second stream", "Move preprocessing to the device so less data crosses PCIe"},
       "SPEC.md pattern matrix (seed 001 5.3): H2D > 20%"},
      {"throttling", "Clocks fall as temperature rises", Priority::kHigh,
       "relative drop of the SM clock across samples and its correlation with temperature",
       {{"clock_drop", 0.10, "fires when (max - min) SM clock / max clock >= this (ratio)"},
        {"min_r", 0.5, "and Pearson r(temperature, SM clock) <= -min_r"},
        {"min_samples", 5.0, "samples of one device needed"}},
       {"Check cooling and airflow; watch nvidia-smi -q -d PERFORMANCE for thermal slowdown",
        "Lock application clocks for benchmarks (nvidia-smi -lgc) so runs compare",
        "Warm the GPU up before timing; shorten very long runs or add pauses"},
       "SPEC.md time decomposition (seed 001 5.1): long runs checked for thermal throttling"},
      {"memory_bound", "Memory-bound kernels", Priority::kMedium,
       "share of the iteration in kernels below the roofline ridge at high bandwidth (or, without costs, "
       "element-wise / normalisation / transform kernels by name)",
       {{"min_share", 0.05, "fires when those kernels take at least this share of the iteration (ratio)"},
        {"bandwidth_share", 0.5, "with costs: achieved bandwidth at least this share of peak (ratio)"},
        {"heuristic_min_share", 0.10, "without costs: likely-memory-bound kernels' share needed (ratio)"},
        {"assumed_speedup", 1.3, "S assumed for those kernels (less traffic by fusion or layout)"}},
       {"Fuse element-wise work into the producer's epilogue to remove intermediate reads and writes",
        "Change the layout (channels-last / NHWC) or tile so data is reused from cache",
        "Use lower precision (FP16/BF16) to halve the bytes moved"},
       "SPEC.md pattern matrix (seed 001 5.3) and roofline (seed 002)"},
      {"single_stream", "All GPU work on one stream while copies could overlap", Priority::kMedium,
       "share of the iteration in copies that overlap no kernel, when each device uses one stream",
       {{"threshold", 0.05, "fires when serial copies take at least this share of the iteration (ratio)"}},
       {"Issue copies on a second stream with pinned memory and overlap them with compute",
        "Pipeline: copy batch n+1 while batch n computes", "Run independent branches on separate streams"},
       "SPEC.md pattern matrix (seed 001 5.3): streams used = 1 while independent work exists"},
      {"pageable_copies", "Copies from pageable host memory", Priority::kMedium,
       "share of the iteration in copies whose host side is pageable",
       {{"threshold", 0.02, "fires when pageable copies take at least this share of the iteration (ratio)"},
        {"assumed_speedup", 2.0, "S assumed for those copies (pinned memory is about twice as fast and can be async)"}},
       {"Allocate host buffers pinned (cudaMallocHost, tensor.pin_memory(), DataLoader(pin_memory=True))",
        "Then copy asynchronously (non_blocking=True) so the copy can overlap compute"},
       "SPEC.md H2D bottleneck strategies (seed 001 5.3: pinned memory)"},
      {"small_copies", "Many small copies: merge candidates", Priority::kMedium,
       "small copies (under --small-copy-bytes) per iteration in one direction",
       {{"min_per_iteration", 3.0, "fires when a direction has at least this many small copies per iteration"},
        {"min_share", 0.005, "and they take at least this share of the iteration (ratio)"}},
       {"Pack the small tensors into one buffer and copy it once",
        "Keep constant inputs on the device instead of copying them every iteration"},
       "seed 001 5.2 (many small copies) and practice task 2 (merge three small H2D copies)"},
      {"sync_in_loop", "Synchronisation inside the loop", Priority::kMedium,
       "device or stream synchronisations per iteration",
       {{"max_per_iteration", 1.0, "fires when syncs per iteration exceed this"},
        {"min_wait_share", 0.01, "and the host waits in them at least this share of the iteration (ratio)"},
        {"assumed_speedup", 2.0, "S assumed for the time spent waiting in syncs"}},
       {"Remove cudaDeviceSynchronize / torch.cuda.synchronize / .item() / .cpu() from the loop body",
        "Synchronise once per iteration, on an event, only where the host needs the result"},
       "seed 001 5.2 (sync / wait track: high share of waiting)"},
      {"slow_post", "Slow post-processing", Priority::kMedium,
       "post_ms_ratio: share of the iteration in the post phase",
       {{"threshold", 0.25, "fires when post_ms_ratio > threshold (ratio)"},
        {"assumed_speedup", 2.0, "S assumed for post-processing (parallel or on the device)"}},
       {"Parallelise post-processing or overlap it with the next iteration",
        "Move it to the device (GPU NMS, top-k, decode)"},
       "SPEC.md pattern matrix (seed 001 5.3): post > 25%"},
      {"unstable", "Unstable latency", Priority::kMedium,
       "latency_cv = std / mean of iteration latency",
       {{"threshold", 0.15, "fires when latency_cv > threshold"},
        {"min_iterations", 3.0, "iterations needed"}},
       {"Fix seeds, inputs and clocks; close other GPU work; warm up (--skip the first iterations)",
        "Look at the slowest iterations' timelines: what runs there that does not run in the median one"},
       "SPEC.md time decomposition (seed 001 5.1): CV > 0.15 means unstable"},
      {"drift", "Latency drifts up across the run", Priority::kMedium,
       "rise of the least-squares latency trend over the run, relative to mean latency",
       {{"threshold", 0.05, "fires when slope x (n - 1) / mean > threshold (ratio)"},
        {"min_r", 0.5, "and the trend's Pearson r >= min_r"},
        {"min_iterations", 10.0, "iterations needed"}},
       {"Look for memory growth (allocator, caches, lists kept across iterations)",
        "Check clocks and temperature (throttling)"},
       "SPEC.md time decomposition (seed 001 5.1): drift over long runs"},
      {"transform_kernels", "Layout and copy kernels", Priority::kLow,
       "share of kernel time in transpose / permute / concat / split / layout-conversion / copy kernels",
       {{"threshold", 0.10, "fires when their share of kernel time >= threshold (ratio)"},
        {"assumed_speedup", 2.0, "S assumed for those kernels (half of them removed)"}},
       {"Keep one layout end to end (channels-last) so conversions disappear",
        "Fuse transposes into the consumer (transpose + matmul) and avoid concat by writing into one buffer",
        "Align channels to multiples of 16/32"},
       "SPEC.md layout hints (seed 001 5.4, seed 003)"},
      {"int8_no_gain", "INT8 without a gain", Priority::kLow,
       "latency gain of this INT8 run over a higher-precision reference report (--reference)",
       {{"threshold", 0.10, "fires when reference / this - 1 < threshold (ratio)"},
        {"expected_speedup", 1.5, "the speedup INT8 should reach (low end of the seed's 1.5-2.2x tier)"}},
       {"Recalibrate; check that the heavy layers really run in INT8 (look for dequantize/quantize kernels)",
        "Use mixed precision: INT8 where it pays, FP16 elsewhere"},
       "SPEC.md pattern matrix (seed 001 5.3): INT8 vs FP16/FP32 < 10%; tiers in 5.5"},
      {"fusion_candidate", "Fusion candidate", Priority::kLow,
       "chains of element-wise / normalisation / activation kernels following a kernel on one stream",
       {{"max_gap_us", 10.0, "a follower starts at most this long after its predecessor (us)"},
        {"follower_residual", 0.25, "share of the followers' time a fused kernel still spends (ratio)"},
        {"min_share", 0.01, "report a chain when it takes at least this share of the iteration (ratio)"},
        {"top", 5.0, "chains reported at most"}},
       {"Fuse the chain into the head kernel's epilogue (cuDNN fused conv-bias-add-relu, cuBLASLt epilogues)",
        "Let a compiler fuse it (torch.compile, TensorRT, XLA); fold batch-norm into the conv weights"},
       "SPEC.md operator fusion (seeds 000, 002, 003, 004) and Amdahl (seed 000)"},
  };
  return kDefs;
}

const RuleDef* FindRule(std::string_view id) {
  for (const RuleDef& d : RuleDefs())
    if (id == d.id) return &d;
  return nullptr;
}

RulesConfig::RulesConfig() {
  for (const RuleDef& d : RuleDefs()) {
    auto& params = values_[d.id];
    for (const RuleParam& p : d.params) params[p.key] = p.value;
    enabled_[d.id] = true;
  }
}

bool RulesConfig::Enabled(std::string_view id) const {
  auto it = enabled_.find(id);
  return it != enabled_.end() && it->second;
}

double RulesConfig::Get(std::string_view id, std::string_view key) const {
  auto r = values_.find(id);
  assert(r != values_.end());
  auto p = r->second.find(key);
  assert(p != r->second.end());
  return p->second;
}

Status RulesConfig::Set(std::string_view id, std::string_view key, double value) {
  auto r = values_.find(id);
  if (r == values_.end()) return InvalidInput("unknown rule '" + std::string(id) + "'");
  auto p = r->second.find(key);
  if (p == r->second.end()) {
    std::string known;
    for (const auto& [k, v] : r->second) known += (known.empty() ? "" : ", ") + k;
    return InvalidInput("rule '" + std::string(id) + "' has no parameter '" + std::string(key) +
                        "' (it has: " + known + ", enabled)");
  }
  if (!std::isfinite(value) || value < 0)
    return InvalidInput("rule '" + std::string(id) + "': '" + std::string(key) + "' must be a finite number >= 0");
  p->second = value;
  return Status::Ok();
}

Status RulesConfig::SetEnabled(std::string_view id, bool enabled) {
  auto it = enabled_.find(id);
  if (it == enabled_.end()) return InvalidInput("unknown rule '" + std::string(id) + "'");
  it->second = enabled;
  return Status::Ok();
}

namespace {

Status ReadRules(const nlohmann::json& rules, RulesConfig* config) {
  if (!rules.is_object()) return InvalidInput("'rules' must be an object of rule id -> settings");
  for (const auto& [id, settings] : rules.items()) {
    if (!FindRule(id)) {
      std::string known;
      for (const RuleDef& d : RuleDefs()) known += (known.empty() ? "" : ", ") + std::string(d.id);
      return InvalidInput("unknown rule '" + id + "' (rules: " + known + ")");
    }
    if (!settings.is_object()) return InvalidInput("rule '" + id + "' must be an object");
    for (const auto& [key, value] : settings.items()) {
      if (key == "enabled") {
        if (!value.is_boolean()) return InvalidInput("rule '" + id + "': 'enabled' must be true or false");
        TG_RETURN_IF_ERROR(config->SetEnabled(id, value.get<bool>()));
        continue;
      }
      if (!value.is_number()) return InvalidInput("rule '" + id + "': '" + key + "' must be a number");
      TG_RETURN_IF_ERROR(config->Set(id, key, value.get<double>()));
    }
  }
  return Status::Ok();
}

Status ReadKernelClasses(const nlohmann::json& classes, RulesConfig* config) {
  if (!classes.is_object()) return InvalidInput("'kernel_classes' must be an object of class -> regex");
  for (const auto& [name, pattern] : classes.items()) {
    KernelClass c;
    if (!ParseKernelClass(name, &c) || c == KernelClass::kOther)
      return InvalidInput("unknown kernel class '" + name + "'");
    if (!pattern.is_string()) return InvalidInput("kernel class '" + name + "' must be a regex string");
    config->kernel_class_patterns[name] = pattern.get<std::string>();
  }
  return Status::Ok();
}

Status ReadGpu(const nlohmann::json& gpu, RulesConfig* config) {
  if (!gpu.is_object()) return InvalidInput("'gpu' must be an object");
  for (const auto& [key, value] : gpu.items()) {
    double* field = key == "peak_bandwidth_gbs" ? &config->peak_bandwidth_gbs
                    : key == "peak_tflops"      ? &config->peak_tflops
                                                : nullptr;
    if (!field) return InvalidInput("'gpu' has no setting '" + key + "' (use peak_bandwidth_gbs, peak_tflops)");
    if (!value.is_number() || value.get<double>() <= 0 || !std::isfinite(value.get<double>()))
      return InvalidInput("'gpu." + key + "' must be a number > 0");
    *field = value.get<double>();
  }
  return Status::Ok();
}

}  // namespace

Status LoadRules(const std::string& path, RulesConfig* config) {
  nlohmann::json doc;
  TG_RETURN_IF_ERROR(ReadJsonFile(path, "rules file", &doc));
  if (!doc.is_object()) return InvalidInput(path + ": a rules file is a JSON object");
  for (const auto& [key, value] : doc.items()) {
    Status s = key == "rules"            ? ReadRules(value, config)
               : key == "kernel_classes" ? ReadKernelClasses(value, config)
               : key == "gpu"            ? ReadGpu(value, config)
               : key == "$schema" || key == "comment"
                   ? Status::Ok()
                   : InvalidInput("unknown key '" + key + "' (a rules file has rules, kernel_classes, gpu)");
    if (!s.ok()) return InvalidInput(path + ": " + s.message());
  }
  return Status::Ok();
}

}  // namespace tg
