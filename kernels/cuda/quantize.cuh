// The device side of reference.h's int8 requantisation, shared by the int8 kernels: round to
// nearest even, saturate to [-128, 127], NaN -> 0, exactly as QuantizeInt8 on the host. One PTX
// conversion does all three (cvt.rni.sat.s8.f32: "NaN results are converted to 0"), where
// rintf + fmaxf + fminf + float->int + int->int8 cost four conversions and two min/max per element.
#pragma once

#include <cstdint>

namespace tg::kernels::cuda {

__device__ inline int8_t QuantizeInt8Device(float v) {
  int q;  // PTX lets cvt write a narrow type into a 32-bit register (sign-extended)
  asm("cvt.rni.sat.s8.f32 %0, %1;" : "=r"(q) : "f"(v));
  return static_cast<int8_t>(q);
}

}  // namespace tg::kernels::cuda
