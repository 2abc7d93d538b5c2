// NVTX ranges for programs that want tracegate to know more than the timeline shows: a scoped
// range, optionally carrying the bytes and FLOPs of the kernels launched inside it as
// "bytes=N flops=N" tokens, which the analyzer's roofline reads (analyzer/include/tracegate/
// roofline.h). NVTX3 is header-only and costs nothing when no tool is attached.
//
//   {
//     tg::NvtxRange range(tg::CostAnnotation("add_relu_fused fp16", bytes, flops));
//     launch...;
//   }
#pragma once

#include <nvtx3/nvToolsExt.h>

#include <string>

#include "tracegate/collector/cost_annotation.h"

namespace tg {

// Push on construction, pop on destruction, on the calling thread.
class NvtxRange {
 public:
  explicit NvtxRange(const char* name) { nvtxRangePushA(name); }
  explicit NvtxRange(const std::string& name) { nvtxRangePushA(name.c_str()); }
  ~NvtxRange() { nvtxRangePop(); }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
};

}  // namespace tg
