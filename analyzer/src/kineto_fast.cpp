#include "kineto_fast.h"

#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "kineto_numbers.h"

namespace tg::internal {

namespace {

// Deeper values are left to the slow path (the recursion here stays shallow).
constexpr int kMaxFastLevels = 32;

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
// What may follow a number or literal inside an object or array.
bool EndsScalar(char c) { return IsSpace(c) || c == ',' || c == '}' || c == ']'; }

class Reader {
 public:
  Reader(const char* p, const char* end, int max_levels)
      : p_(p), end_(end), max_levels_(max_levels < kMaxFastLevels ? max_levels : kMaxFastLevels) {}

  const char* pos() const { return p_; }

  bool Event(RawEvent& ev) {
    ev.Reset();
    if (*p_ != '{' || max_levels_ < 1) return false;
    ev.is_object = true;
    return Members([&](std::string_view key) {
      Field* f = nullptr;
      switch (EventMember(ev, key, f)) {
        case EventSlot::kField: return Scalar(*f, 1);
        case EventSlot::kArgs: return Args(ev);
        case EventSlot::kNone: break;
      }
      return Skip(1);
    });
  }

 private:
  void Ws() {
    // Every white space byte is <= ' ', so most calls stop at the first test.
    while (p_ < end_ && static_cast<unsigned char>(*p_) <= ' ' && IsSpace(*p_)) ++p_;
  }
  // Consumes `c` after optional white space.
  bool Expect(char c) {
    Ws();
    if (p_ >= end_ || *p_ != c) return false;
    ++p_;
    return true;
  }

  // A string without escapes, control characters or non-ASCII bytes; `out` is its content.
  bool String(std::string_view& out) {
    const char* s = ++p_;  // after the opening quote
    const char* q = s;
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\'), space = _mm_set1_epi8(0x20);
    for (;;) {
      if (q >= end_) return false;
      // Reads at most 15 bytes past end_, inside the padding.
      __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
      // Signed compare: bytes >= 0x80 are negative, so "< 0x20" also catches non-ASCII.
      __m128i stop = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, backslash)),
                                  _mm_cmplt_epi8(x, space));
      auto mask = static_cast<unsigned>(_mm_movemask_epi8(stop));
      if (mask) {
        q += __builtin_ctz(mask);
        break;
      }
      q += 16;
    }
#else
    while (q < end_ && *q != '"' && *q != '\\' && static_cast<unsigned char>(*q) >= 0x20 &&
           static_cast<unsigned char>(*q) < 0x80) {
      ++q;
    }
#endif
    if (q >= end_ || *q != '"') return false;
    out = std::string_view(s, static_cast<size_t>(q - s));
    p_ = q + 1;
    return true;
  }

  // -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? followed by a delimiter. With `f`, also
  // gathers the digits for GatheredToInt64 (f->frac stays Field::kNoDigits for exponents and
  // tokens of more than 18 characters after the sign).
  bool Number(std::string_view& out, Field* f = nullptr) {
    const char* s = p_;
    const char* q = p_;
    if (*q == '-') ++q;
    const char* body = q;
    uint64_t acc = 0;  // wraps for long tokens, which are not kept
    // Single bytes past end_ are read only from the padding; digit runs stop at end_.
    auto digits = [&] {
      if (q >= end_ || !IsDigit(*q)) return false;
      while (q < end_ && IsDigit(*q)) acc = acc * 10 + static_cast<uint64_t>(*q++ - '0');
      return true;
    };
    if (*q == '0') {
      ++q;
    } else if (!digits()) {
      return false;
    }
    int frac = -1;
    if (*q == '.') {
      const char* point = ++q;
      if (!digits()) return false;
      frac = static_cast<int>(q - point);
    }
    bool exponent = false;
    if (*q == 'e' || *q == 'E') {
      exponent = true;
      ++q;
      if (*q == '+' || *q == '-') ++q;
      if (!digits()) return false;
    }
    if (q >= end_ || !EndsScalar(*q)) return false;
    out = std::string_view(s, static_cast<size_t>(q - s));
    if (f) {
      const bool gathered = !exponent && q - body <= 18;
      f->frac = gathered ? static_cast<int8_t>(frac) : Field::kNoDigits;
      f->digits = acc;
    }
    p_ = q;
    return true;
  }

  bool Literal(const char* word, size_t n) {
    if (std::memcmp(p_, word, n) != 0 || p_ + n >= end_ || !EndsScalar(p_[n])) return false;
    p_ += n;
    return true;
  }

  // A '{' ... '}' or '[' ... ']' (`close`) whose items `item()` reads, separated by commas.
  template <typename Item>
  bool Sequence(char close, Item item) {
    ++p_;  // the opening bracket
    Ws();
    if (p_ < end_ && *p_ == close) {
      ++p_;
      return true;
    }
    for (;;) {
      if (p_ >= end_ || !item()) return false;
      Ws();
      if (p_ >= end_) return false;
      char c = *p_++;
      if (c == close) return true;
      if (c != ',') return false;
      Ws();
    }
  }
  // An object whose values `member(key)` reads (callers check the level).
  template <typename Member>
  bool Members(Member member) {
    return Sequence('}', [&] {
      std::string_view key;
      if (*p_ != '"' || !String(key) || !Expect(':')) return false;
      Ws();
      return p_ < end_ && member(key);
    });
  }
  template <typename Element>
  bool Elements(Element element) {
    return Sequence(']', element);
  }

  // Any value inside a container of level `level`, validated and dropped.
  bool Skip(int level) {
    std::string_view unused;
    switch (*p_) {
      case '{':
        return level < max_levels_ && Members([&](std::string_view) { return Skip(level + 1); });
      case '[':
        return level < max_levels_ && Elements([&] { return Skip(level + 1); });
      case '"': return String(unused);
      case 't': return Literal("true", 4);
      case 'f': return Literal("false", 5);
      case 'n': return Literal("null", 4);
      default: return Number(unused);
    }
  }

  // As EventParser's ReadField: numbers and strings keep their text, containers and booleans
  // are kOther.
  bool Scalar(Field& f, int level) {
    f.text = {};
    switch (*p_) {
      case '"':
        f.type = FieldType::kString;
        return String(f.text);
      case 'n':
        f.type = FieldType::kNull;
        return Literal("null", 4);
      case '{': case '[': case 't': case 'f':
        f.type = FieldType::kOther;
        return Skip(level);
      default:
        f.type = FieldType::kNumber;
        return Number(f.text, &f);
    }
  }

  // As EventParser's ReadDim3.
  bool Dim(Dim3& d, int level) {
    d = Dim3{};
    if (*p_ != '[') {
      d.type = *p_ == 'n' ? FieldType::kNull : FieldType::kOther;
      return Skip(level);
    }
    if (level >= max_levels_) return false;
    int n = 0;
    bool ok = true;
    bool read = Elements([&] {
      Field f;
      if (!Scalar(f, level + 1)) return false;
      int64_t value = 0;
      if (n < 3 && f.type == FieldType::kNumber && FieldToInt64(f, 0, true, value) == NumberStatus::kOk &&
          value >= INT32_MIN && value <= INT32_MAX) {
        d.v[n] = static_cast<int32_t>(value);
      } else {
        ok = false;
      }
      ++n;
      return true;
    });
    d.type = ok && n == 3 ? FieldType::kNumber : FieldType::kOther;
    return read;
  }

  // As EventParser's ReadArgs.
  bool Args(RawEvent& ev) {
    if (*p_ != '{') {
      Field f;
      if (!Scalar(f, 1)) return false;
      ev.args = f.type;
      return true;
    }
    if (max_levels_ < 2) return false;
    ev.args = FieldType::kOther;
    ev.args_is_object = true;
    return Members([&](std::string_view key) {
      Field* f = nullptr;
      Dim3* dim = nullptr;
      switch (ArgsMember(ev, key, f, dim)) {
        case ArgsSlot::kField: return Scalar(*f, 2);
        case ArgsSlot::kDim3: return Dim(*dim, 2);
        case ArgsSlot::kNone: break;
      }
      return Skip(2);
    });
  }

  const char* p_;
  const char* end_;
  int max_levels_;
};

}  // namespace

size_t FastParseEvent(const char* p, const char* end, int max_levels, RawEvent& ev) {
  Reader r(p, end, max_levels);
  if (!r.Event(ev)) return 0;
  return static_cast<size_t>(r.pos() - p);
}

}  // namespace tg::internal
