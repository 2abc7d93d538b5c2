// The device side of reference.h's int8 requantisation, shared by the int8 kernels: round to
// nearest even (rintf), saturate to [-128, 127], NaN -> 0, exactly as QuantizeInt8 on the host.
#pragma once

#include <cstdint>

namespace tg::kernels::cuda {

// NaN is tested first: fmaxf would turn it into -128.
__device__ inline int8_t QuantizeInt8Device(float v) {
  if (v != v) return 0;
  return static_cast<int8_t>(static_cast<int>(fminf(fmaxf(rintf(v), -128.f), 127.f)));
}

}  // namespace tg::kernels::cuda
