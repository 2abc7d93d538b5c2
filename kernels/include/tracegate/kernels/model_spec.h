// The mini inference model (`tracegate-model`): its architecture, options and per-stage costs,
// CUDA-free so that CI checks them without a GPU.
//
// One iteration: pre (CPU normalisation of 8-bit images) -> h2d -> infer (stem, res2..res5, head)
// -> d2h -> post (CPU top-k), each inside an NVTX range of that name, all inside `iteration`.
// The network is ResNet-like on 224x224 NHWC input:
//   stem  4x4 stride-4 convolution, 8 -> 64 channels (input padded from 3 to 8), BN, ReLU: 56x56
//   resN  a 1x1 stride-2 transition (not for res2), then `blocks` residual blocks
//         y = relu(bn(conv3x3(x)) + x), each fused (one cuDNN conv-bias-add-activation call) or
//         unfused (convolution, BN, add, ReLU) as --fuse chooses
//         res2 64ch 56x56 x3, res3 128ch 28x28 x4, res4 256ch 14x14 x6, res5 512ch 7x7 x3
//   head  global average pool, fully connected 512 -> 1000 (fp32 logits), logits to the host.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tracegate/kernels/reference.h"

namespace tg::kernels {

struct StageSpec {
  std::string name;     // "res2".."res5"
  size_t channels = 0;  // of the stage's blocks
  size_t size = 0;      // spatial height = width of the stage's blocks
  size_t blocks = 0;
  size_t in_channels = 0;  // of the transition (0 for res2: no transition)
};
// The four stages for an input of image x image pixels (image a multiple of 32).
std::vector<StageSpec> ModelStages(size_t image);
// The block convolution of a stage, for `batch` images.
ConvShape StageBlockShape(const StageSpec& stage, size_t batch);
// The stage's transition: a 1x1 stride-2 convolution from in_channels at twice the size (only
// when in_channels > 0).
ConvShape StageTransitionShape(const StageSpec& stage, size_t batch);

struct ModelOptions {
  size_t batch = 32;
  Precision precision = Precision::kFp16;
  size_t image = 224;
  size_t classes = 1000;
  size_t top_k = 5;
  int iterations = 20;
  int warmup = 3;              // iterations run before the measured ones (also recorded, inside
                               // NVTX range "warmup" instead of "iteration")
  std::vector<std::string> fuse;  // stages whose blocks are fused ("res2".."res5")
  // Pattern knobs: each provokes one finding of the pattern matrix.
  int64_t host_gap_us = 0;     // CPU busy-wait before every block launch (scheduling gaps)
  int split_h2d = 1;           // the input copy as N separate copies (many small copies)
  bool pageable = false;       // pageable host buffers instead of pinned (slow, synchronous copies)
  double post_ms = 0;          // extra CPU time in post (post-processing bound)
  int streams = 1;             // the batch split over N streams, pipelined (1: single-stream)
  int device = 0;
  uint64_t seed = 1;
  bool sync_stages = false;    // synchronize the stream at the end of every stage range, so that
                               // host ranges res2..res5 span their GPU work (predict --range)
  // --slow res4=1.5: the stage's blocks do F times their work: each block is run again (it is
  // idempotent: y from x) SlowRepeats times, round(blocks x (F - 1)) extra runs in all, spread
  // evenly. A before/after pair with a known change for `tracegate predict` (issue 31).
  std::vector<std::pair<std::string, double>> slow;
};

// Parses --slow "res4=1.5[,res3=2]" into o.slow; "" or one line naming the problem (an unknown
// stage, a stage twice, a factor not in [1, 8]).
std::string ParseSlow(const std::string& value, ModelOptions& o);
// The factor --slow gives `stage` (1 when it names none).
double SlowFactor(const ModelOptions& o, const std::string& stage);
// How many extra runs block `index` of a stage of `blocks` blocks gets under factor F:
// R((index + 1)(F - 1)) - R(index (F - 1)), R rounding half up, so the stage gets R(blocks (F - 1)).
size_t SlowRepeats(double factor, size_t blocks, size_t index);

// Validates `o` (and expands --fuse "all"/"none"); returns "" or one line naming the problem,
// e.g. "--fuse: unknown stage 'res7' (stages: res2, res3, res4, res5, all, none)".
std::string ValidateModelOptions(ModelOptions& o);
// Parses a comma-separated --fuse value into o.fuse (then ValidateModelOptions checks it).
std::vector<std::string> SplitList(const std::string& value);
bool StageFused(const ModelOptions& o, const std::string& stage);
// The launches --host-gap-us busy-waits before in one iteration: every transition and every block
// of every stage, once per stream (each stream enqueues its own micro-batch). The knob adds
// sites * host_gap_us of host time per iteration (reference_workloads.sh step 4 checks the GPU idle
// time it adds against this).
size_t HostGapSitesPerIteration(const ModelOptions& o);

// Costs of one stage for the whole batch: its transition (1x1 stride-2 convolution from
// in_channels at twice the size, BN and ReLU, always one fused cuDNN call; none for res2) plus
// its blocks, fused or not. The NVTX range of each stage carries them.
Costs StageCosts(const StageSpec& stage, size_t batch, Precision p, bool fused);

}  // namespace tg::kernels
