// Exact number handling for the Kineto importer: JSON number text -> int64 without going
// through a double (a microsecond timestamp like 1695835572943613.123 has 19 significant digits,
// more than a double holds), plus UTF-8 repair for names with invalid bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tg::internal {

enum class NumberStatus : uint8_t {
  kOk,
  kInvalid,      // not a JSON number
  kNotIntegral,  // require_integral and the value has a fractional part
  kOverflow,     // does not fit int64
};

// `token` is a JSON number, optionally followed by white space. Computes value x 10^scale as an
// int64, rounding half away from zero (or failing with kNotIntegral when `require_integral`).
// Exponent forms are exact too. Example: ("1695835572943613.123", 3) -> 1695835572943613123.
NumberStatus DecimalToInt64(std::string_view token, int scale, bool require_integral, int64_t& out);

// True when `token` (trailing white space allowed) follows the JSON number grammar.
bool IsJsonNumber(std::string_view token);

// Copies `in` to `out`, replacing every byte that does not start a valid UTF-8 sequence (overlong
// forms, surrogates and code points above U+10FFFF included) with U+FFFD.
void RepairUtf8(std::string_view in, std::string& out);

}  // namespace tg::internal
