// Exact number handling for the Kineto importer: JSON number text -> int64 without going
// through a double (a microsecond timestamp like 1695835572943613.123 has 19 significant digits,
// more than a double holds), plus UTF-8 repair for names with invalid bytes.
#pragma once

#include <cstdint>
#include <climits>
#include <string>
#include <string_view>

namespace tg::internal {

// JSON's white space (RFC 8259): space, tab, line feed, carriage return.
inline bool IsJsonSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

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

// DecimalToInt64 with the shapes nearly every trace number has inlined: -?(0|[1-9][0-9]*)
// with an optional fraction of at most `scale` digits, 18 characters at most. Anything else, and
// any overflow, goes to DecimalToInt64, so the results are the same for every token.
inline NumberStatus NumberToInt64(std::string_view token, int scale, bool require_integral, int64_t& out) {
  const char* p = token.data();
  const char* e = p + token.size();
  const bool negative = p < e && *p == '-';
  p += negative;
  const bool shape = p < e && e - p <= 18 && scale >= 0 && scale <= 3 && *p >= '0' && *p <= '9' &&
                     (*p != '0' || p + 1 == e || p[1] == '.');
  if (shape) {
    uint64_t acc = 0;
    int frac = -1;  // fraction digits seen; -1 before the point
    for (; p < e; ++p) {
      const char c = *p;
      if (c >= '0' && c <= '9') {
        acc = acc * 10 + static_cast<uint64_t>(c - '0');  // at most 18 digits: no overflow
        frac += frac >= 0;
      } else if (c == '.' && frac < 0 && p + 1 < e) {
        frac = 0;
      } else {
        return DecimalToInt64(token, scale, require_integral, out);  // exponent, white space, ...
      }
    }
    bool ok = frac <= scale;
    for (int k = frac < 0 ? 0 : frac; ok && k < scale; ++k) ok = !__builtin_mul_overflow(acc, 10u, &acc);
    if (ok && acc <= static_cast<uint64_t>(INT64_MAX)) {
      out = negative ? -static_cast<int64_t>(acc) : static_cast<int64_t>(acc);
      return NumberStatus::kOk;
    }
  }
  return DecimalToInt64(token, scale, require_integral, out);
}

// NumberToInt64 of a number whose digits the reader already gathered: `negative`, `digits` (the
// integer of all its digits), `frac` (digits after the point, -1 without a point) of a token of
// at most 19 digits, without exponent. Gives exactly what NumberToInt64 gives for `token`, which
// it falls back to for everything but the common case.
inline NumberStatus GatheredToInt64(std::string_view token, bool negative, uint64_t digits, int frac, int scale,
                                    bool require_integral, int64_t& out) {
  if (scale >= 0 && scale <= 3 && frac <= scale) {
    uint64_t acc = digits;
    bool ok = true;
    for (int k = frac < 0 ? 0 : frac; ok && k < scale; ++k) ok = !__builtin_mul_overflow(acc, 10u, &acc);
    if (ok && acc <= static_cast<uint64_t>(INT64_MAX)) {
      out = negative ? -static_cast<int64_t>(acc) : static_cast<int64_t>(acc);
      return NumberStatus::kOk;
    }
  }
  return DecimalToInt64(token, scale, require_integral, out);
}

// True when `token` (trailing white space allowed) follows the JSON number grammar.
bool IsJsonNumber(std::string_view token);

}  // namespace tg::internal
