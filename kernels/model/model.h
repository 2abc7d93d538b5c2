// The mini inference model's run (see tracegate/kernels/model_spec.h for the architecture).
#pragma once

#include <cstdio>
#include <vector>

#include "tracegate/kernels/model_spec.h"

namespace tg::kernels::cuda {

struct ModelRun {
  std::vector<double> latency_ms;          // per measured iteration, host clock, pre to post
  std::vector<std::vector<int>> top_k;     // the last iteration's classes, per image
  std::vector<std::string> stage_notes;    // per stage: "res3 fused: <algorithms>"
};

// Builds the network (random weights from o.seed), runs o.warmup + o.iterations iterations and
// returns their latencies. `o` must have passed ValidateModelOptions. Throws CudaError.
ModelRun RunModel(const ModelOptions& o);

}  // namespace tg::kernels::cuda
