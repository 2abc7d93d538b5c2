// IEEE 754 binary16 on the host, for the CPU references: the GPU stores fp16 tensors, so the
// references round their inputs, intermediates and outputs exactly as the device does (round to
// nearest, ties to even; overflow to infinity; subnormals kept; NaN stays NaN).
#pragma once

#include <cstdint>

namespace tg::kernels {

uint16_t FloatToHalfBits(float value);
float HalfBitsToFloat(uint16_t bits);
// The float nearest to `value` that binary16 can hold (FloatToHalfBits then HalfBitsToFloat).
inline float RoundToHalf(float value) { return HalfBitsToFloat(FloatToHalfBits(value)); }

}  // namespace tg::kernels
