// The names of NVTX ranges that carry the bytes and FLOPs of the kernels launched inside them:
// "<label> bytes=<N> flops=<N>", the form the analyzer's roofline reads (roofline.h). CUDA-free,
// so the contract is tested on both sides without a GPU (tests/unit/kernels/kernels_annotation_test.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tg {

// "<label> bytes=<bytes> flops=<flops>" (flops omitted when 0).
inline std::string CostAnnotation(std::string_view label, uint64_t bytes, uint64_t flops) {
  std::string s(label);
  s += " bytes=" + std::to_string(bytes);
  if (flops > 0) s += " flops=" + std::to_string(flops);
  return s;
}

}  // namespace tg
