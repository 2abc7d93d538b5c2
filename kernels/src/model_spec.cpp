// The mini model's architecture, option checks and per-stage costs (definitions: model_spec.h).
#include "tracegate/kernels/model_spec.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace tg::kernels {
namespace {

constexpr const char* kStageNames[] = {"res2", "res3", "res4", "res5"};
constexpr int kMaxStreams = 16;
constexpr int kMaxSplitH2d = 4096;  // 224x224 RGB at batch 32 in 4096 pieces: 1.2 KB each
constexpr int64_t kMaxHostGapUs = 1000000;  // 1 s before each of the 16 block launches is plenty
constexpr double kMaxPostMs = 10000;

bool KnownStage(const std::string& name) {
  return std::find(std::begin(kStageNames), std::end(kStageNames), name) != std::end(kStageNames);
}

// "all" -> every stage, "none" -> no stage, duplicates dropped; the result in stage order.
std::string ExpandFuse(std::vector<std::string>& fuse) {
  bool all = false, none = false;
  std::vector<std::string> named;
  for (const std::string& item : fuse) {
    if (item == "all") {
      all = true;
    } else if (item == "none") {
      none = true;
    } else if (KnownStage(item)) {
      named.push_back(item);
    } else {
      return "--fuse: unknown stage '" + item + "' (stages: res2, res3, res4, res5, all, none)";
    }
  }
  if (none && (all || !named.empty())) return "--fuse: 'none' cannot be combined with other stages";
  fuse.clear();
  for (const char* stage : kStageNames) {
    if (all || std::find(named.begin(), named.end(), stage) != named.end()) fuse.emplace_back(stage);
  }
  return "";
}

}  // namespace

std::vector<StageSpec> ModelStages(size_t image) {
  // The stem's stride 4 gives image / 4 (56 for 224); each later stage's transition halves it.
  return {
      {"res2", 64, image / 4, 3, 0},
      {"res3", 128, image / 8, 4, 64},
      {"res4", 256, image / 16, 6, 128},
      {"res5", 512, image / 32, 3, 256},
  };
}

ConvShape StageBlockShape(const StageSpec& stage, size_t batch) {
  ConvShape s;  // 3x3, stride 1, pad 1: the output keeps the input's size
  s.n = batch;
  s.h = s.w = stage.size;
  s.c = s.k = stage.channels;
  return s;
}

std::string ValidateModelOptions(ModelOptions& o) {
  if (o.batch < 1) return "--batch must be at least 1";
  if (o.image < 32 || o.image % 32 != 0) return "--image must be a positive multiple of 32 (e.g. 224)";
  if (o.classes < 1) return "--classes must be at least 1";
  if (o.top_k < 1 || o.top_k > o.classes) return "--top-k must be between 1 and --classes";
  if (o.iterations < 1) return "--iterations must be at least 1";
  if (o.warmup < 0) return "--warmup must be at least 0";
  if (o.host_gap_us < 0 || o.host_gap_us > kMaxHostGapUs) return "--host-gap-us must be between 0 and 1000000";
  if (o.split_h2d < 1 || o.split_h2d > kMaxSplitH2d) return "--split-h2d must be between 1 and 4096";
  if (!std::isfinite(o.post_ms) || o.post_ms < 0 || o.post_ms > kMaxPostMs) {
    return "--post-ms must be between 0 and 10000";
  }
  if (o.streams < 1 || o.streams > kMaxStreams || o.batch % static_cast<size_t>(o.streams) != 0) {
    return "--streams must be between 1 and 16 and divide --batch";
  }
  if (o.device < 0) return "--device must be at least 0";
  return ExpandFuse(o.fuse);
}

std::vector<std::string> SplitList(const std::string& value) {
  std::vector<std::string> items;
  size_t begin = 0;
  while (begin <= value.size()) {
    size_t end = std::min(value.find(',', begin), value.size());
    std::string item = value.substr(begin, end - begin);
    const size_t first = item.find_first_not_of(" \t");
    if (first != std::string::npos) items.push_back(item.substr(first, item.find_last_not_of(" \t") - first + 1));
    begin = end + 1;
  }
  return items;
}

std::string ParseSlow(const std::string& value, ModelOptions& o) {
  o.slow.clear();
  for (const std::string& item : SplitList(value)) {
    const size_t eq = item.find('=');
    const std::string stage = item.substr(0, eq);
    if (eq == std::string::npos || !KnownStage(stage))
      return "--slow: '" + item + "' is not STAGE=FACTOR with a stage res2, res3, res4 or res5 (e.g. res4=1.5)";
    char* end = nullptr;
    const std::string text = item.substr(eq + 1);
    const double f = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(f) || f < 1 || f > 8)
      return "--slow: the factor of " + stage + " must be a number between 1 and 8, not '" + text + "'";
    for (const auto& [seen, unused] : o.slow)
      if (seen == stage) return "--slow: " + stage + " is given twice";
    o.slow.emplace_back(stage, f);
  }
  return "";
}

double SlowFactor(const ModelOptions& o, const std::string& stage) {
  for (const auto& [name, f] : o.slow)
    if (name == stage) return f;
  return 1;
}

size_t SlowRepeats(double factor, size_t blocks, size_t index) {
  if (index >= blocks || !(factor > 1)) return 0;
  auto rounded = [&](size_t i) { return static_cast<size_t>(std::floor(static_cast<double>(i) * (factor - 1) + 0.5)); };
  return rounded(index + 1) - rounded(index);
}

size_t HostGapSitesPerIteration(const ModelOptions& o) {
  size_t sites = 0;
  for (const StageSpec& st : ModelStages(o.image)) sites += st.blocks + (st.in_channels > 0 ? 1 : 0);
  return sites * size_t(o.streams > 0 ? o.streams : 1);
}

bool StageFused(const ModelOptions& o, const std::string& stage) {
  return std::find(o.fuse.begin(), o.fuse.end(), stage) != o.fuse.end();
}

ConvShape StageTransitionShape(const StageSpec& stage, size_t batch) {
  ConvShape t;
  t.n = batch;
  t.h = t.w = 2 * stage.size;
  t.c = stage.in_channels;
  t.k = stage.channels;
  t.r = t.s = 1;
  t.stride = 2;
  t.pad = 0;
  return t;
}

// The transition is a 1x1 stride-2 convolution with BN folded and ReLU in one cuDNN call, i.e. the
// fused ConvBnAddReluCosts without the residual: minus reading z (Y elements) and minus the add
// (Y FLOPs): bytes (X + W + K + Y) * e, FLOPs ConvOps + 3Y, one kernel. Each block costs
// ConvBnAddReluCosts of StageBlockShape, fused or not.
Costs StageCosts(const StageSpec& stage, size_t batch, Precision p, bool fused) {
  Costs total;
  const Costs block = ConvBnAddReluCosts(StageBlockShape(stage, batch), p, fused);
  total.bytes = block.bytes * stage.blocks;
  total.flops = block.flops * stage.blocks;
  total.kernels = block.kernels * static_cast<int>(stage.blocks);
  if (stage.in_channels > 0) {
    const ConvShape t = StageTransitionShape(stage, batch);
    const Costs transition = ConvBnAddReluCosts(t, p, true);
    const uint64_t y = t.y_elements();
    total.bytes += transition.bytes - y * ElementBytes(p);
    total.flops += transition.flops - y;
    total.kernels += transition.kernels;
  }
  return total;
}

}  // namespace tg::kernels
