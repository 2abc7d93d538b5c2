#include "analyzer/import/kineto/kineto_numbers.h"

namespace tg::internal {

namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// The pieces of a JSON number: -? int ( . frac )? ( [eE] [+-]? exp )?
struct NumberParts {
  bool negative = false;
  std::string_view int_digits, frac_digits;
  int64_t exponent = 0;  // clamped to +-1e9, far beyond anything that fits int64
};

bool Split(std::string_view t, NumberParts& p) {
  while (!t.empty() && IsJsonSpace(t.back())) {
    t.remove_suffix(1);
  }
  size_t i = 0, n = t.size();
  if (i < n && t[i] == '-') {
    p.negative = true;
    ++i;
  }
  size_t b = i;
  if (i < n && t[i] == '0') {
    ++i;
  } else {
    while (i < n && IsDigit(t[i])) ++i;
  }
  if (i == b) return false;
  p.int_digits = t.substr(b, i - b);
  if (i < n && t[i] == '.') {
    b = ++i;
    while (i < n && IsDigit(t[i])) ++i;
    if (i == b) return false;
    p.frac_digits = t.substr(b, i - b);
  }
  if (i < n && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    bool neg = false;
    if (i < n && (t[i] == '+' || t[i] == '-')) neg = t[i++] == '-';
    b = i;
    int64_t e = 0;
    while (i < n && IsDigit(t[i])) {
      if (e < 1000000000) e = e * 10 + (t[i] - '0');
      ++i;
    }
    if (i == b) return false;
    p.exponent = neg ? -e : e;
  }
  return i == n;
}

}  // namespace

bool IsJsonNumber(std::string_view token) {
  NumberParts p;
  return Split(token, p);
}

namespace {

constexpr int64_t kPow10[19] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000,
                                10000000000, 100000000000, 1000000000000, 10000000000000, 100000000000000,
                                1000000000000000, 10000000000000000, 100000000000000000, 1000000000000000000};

// The common shapes, -?digits(.digits)? with at most 18 digits, in one pass; false hands the
// token to the general path (exponents, long or invalid numbers, overflow).
bool FastDecimal(std::string_view t, int scale, bool require_integral, int64_t& out, NumberStatus& status) {
  const char* p = t.data();
  const char* e = p + t.size();
  bool negative = p < e && *p == '-';
  p += negative;
  const char* digits = p;
  uint64_t acc = 0;
  while (p < e && IsDigit(*p)) acc = acc * 10 + static_cast<uint64_t>(*p++ - '0');
  int64_t n_int = p - digits;
  if (n_int == 0 || (n_int > 1 && *digits == '0')) return false;
  int64_t n_frac = 0;
  if (p < e && *p == '.') {
    const char* frac = ++p;
    while (p < e && IsDigit(*p)) acc = acc * 10 + static_cast<uint64_t>(*p++ - '0');
    n_frac = p - frac;
    if (n_frac == 0) return false;
  }
  if (p != e || n_int + n_frac > 18) return false;
  int64_t v = static_cast<int64_t>(acc);
  const int64_t shift = scale - n_frac;
  if (shift >= 0) {
    if (shift > 18 || __builtin_mul_overflow(v, kPow10[shift], &v)) return false;
  } else {
    if (-shift > 18) return false;
    const int64_t div = kPow10[-shift];
    const int64_t rem = v % div;
    if (require_integral && rem != 0) {
      status = NumberStatus::kNotIntegral;
      return true;
    }
    v = v / div + (rem * 2 >= div ? 1 : 0);  // half away from zero (on the magnitude)
  }
  out = negative ? -v : v;
  status = NumberStatus::kOk;
  return true;
}

}  // namespace

NumberStatus DecimalToInt64(std::string_view token, int scale, bool require_integral, int64_t& out) {
  while (!token.empty() && IsJsonSpace(token.back())) {
    token.remove_suffix(1);
  }
  NumberStatus fast = NumberStatus::kInvalid;
  if (FastDecimal(token, scale, require_integral, out, fast)) return fast;
  NumberParts p;
  if (!Split(token, p)) return NumberStatus::kInvalid;
  // The digits int_digits+frac_digits with the decimal point moved right by exponent + scale:
  // the first `keep` digits form the integer result, the next one rounds it.
  const int64_t n_int = static_cast<int64_t>(p.int_digits.size());
  const int64_t total = n_int + static_cast<int64_t>(p.frac_digits.size());
  const int64_t keep = n_int + p.exponent + scale;
  const uint64_t limit = p.negative ? (uint64_t{1} << 63) : (uint64_t{1} << 63) - 1;
  uint64_t acc = 0;
  bool round_up = false, dropped_nonzero = false;
  for (int64_t k = 0; k < total; ++k) {
    int d = (k < n_int ? p.int_digits[k] : p.frac_digits[k - n_int]) - '0';
    if (k < keep) {
      if (acc > (limit - static_cast<uint64_t>(d)) / 10) return NumberStatus::kOverflow;
      acc = acc * 10 + static_cast<uint64_t>(d);
    } else {
      if (k == keep) round_up = d >= 5;
      if (d != 0) dropped_nonzero = true;
    }
  }
  if (acc != 0) {
    for (int64_t k = total; k < keep; ++k) {
      if (acc > limit / 10) return NumberStatus::kOverflow;
      acc *= 10;
    }
  }
  if (require_integral && dropped_nonzero) return NumberStatus::kNotIntegral;
  if (round_up) {
    if (acc == limit) return NumberStatus::kOverflow;
    ++acc;
  }
  out = p.negative ? static_cast<int64_t>(0 - acc) : static_cast<int64_t>(acc);
  return NumberStatus::kOk;
}

}  // namespace tg::internal
