// binary16 <-> binary32 by bit manipulation, bit-exact with CUDA's __float2half_rn and
// __half2float (the host path of cuda_fp16.hpp and the device's cvt.rn.f16.f32 agree).
#include "tracegate/kernels/half.h"

#include <bit>
#include <cmath>

namespace tg::kernels {
namespace {

// Rounds `value >> shift` to nearest, ties to even (shift in 1..31).
uint32_t ShiftRoundEven(uint32_t value, uint32_t shift) {
  uint32_t result = value >> shift;
  uint32_t rest = value & ((1u << shift) - 1u);
  uint32_t halfway = 1u << (shift - 1u);
  if (rest > halfway || (rest == halfway && (result & 1u) != 0)) ++result;
  return result;
}

}  // namespace

uint16_t FloatToHalfBits(float value) {
  const uint32_t x = std::bit_cast<uint32_t>(value);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t u = x & 0x7FFFFFFFu;
  if (u > 0x7F800000u) return 0x7FFFu;  // NaN: CUDA returns the canonical NaN, sign dropped
  // 65520 = 0x477FF000 lies halfway between 65504 (0x7BFF, odd mantissa) and 2^16: the tie goes
  // to the even neighbour, which is infinity; infinity itself lands here too.
  if (u >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);
  if (u >= 0x38800000u) {  // normal in binary16 (>= 2^-14): rebias the exponent by 127 - 15
    // A carry out of the mantissa correctly bumps the exponent; it cannot reach 0x7C00 here.
    return static_cast<uint16_t>(sign | ShiftRoundEven(u - 0x38000000u, 13));
  }
  const uint32_t exponent = u >> 23;
  // Below 2^-25 (exponent 102) everything rounds to zero; 2^-25 itself ties to the even 0.
  if (exponent < 102) return static_cast<uint16_t>(sign);
  // Subnormal: value = mantissa * 2^(exponent - 150); the unit of binary16 subnormals is 2^-24,
  // so the result is mantissa >> (126 - exponent), shift in 14..24. Rounding up to 0x400 gives
  // the smallest normal, which is the right encoding.
  const uint32_t mantissa = (u & 0x7FFFFFu) | 0x800000u;
  return static_cast<uint16_t>(sign | ShiftRoundEven(mantissa, 126u - exponent));
}

float HalfBitsToFloat(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1Fu;
  const uint32_t mantissa = bits & 0x3FFu;
  if (exponent == 0x1F) return std::bit_cast<float>(sign | 0x7F800000u | (mantissa << 13));  // inf, NaN payload kept
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24, exact in float
    float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign != 0 ? -magnitude : magnitude;
  }
  return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

}  // namespace tg::kernels
