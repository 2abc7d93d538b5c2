#include "analyzer/import/kineto/kineto_fast.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "analyzer/import/kineto/kineto_numbers.h"

namespace tg::internal {

namespace {

// Deeper values are left to the slow path (the recursion here stays shallow).
constexpr int kMaxFastLevels = 32;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
// What may follow a number or literal inside an object or array: white space, ',', '}' or ']'.
constexpr auto kEndsScalar = [] {
  std::array<bool, 256> t{};
  for (unsigned char c : {' ', '\n', '\r', '\t', ',', '}', ']'}) t[c] = true;
  return t;
}();
bool EndsScalar(char c) { return kEndsScalar[static_cast<unsigned char>(c)]; }

#if defined(__SSE2__)
// Bit i set when byte i of the 16 at `s` is an ASCII digit.
inline unsigned DigitMask(const char* s) {
  const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
  const __m128i digit = _mm_and_si128(_mm_cmpgt_epi8(x, _mm_set1_epi8('0' - 1)), _mm_cmplt_epi8(x, _mm_set1_epi8('9' + 1)));
  return static_cast<unsigned>(_mm_movemask_epi8(digit));
}

// The value of the `n` (1..8) ASCII digits at `s` (8 bytes readable): shifted so that the
// digits fill the top of a little-endian word, then combined pairwise in three multiplications.
inline uint64_t EightDigits(const char* s, int n) {
  uint64_t v;
  std::memcpy(&v, s, 8);
  v <<= 8 * (8 - n);  // the bytes after the digits drop out; zero bytes lead
  v = ((v & 0x0F0F0F0F0F0F0F0FULL) * 2561) >> 8;
  v = ((v & 0x00FF00FF00FF00FFULL) * 6553601) >> 16;
  return ((v & 0x0000FFFF0000FFFFULL) * 42949672960001ULL) >> 32;
}

// The value of the `n` (1..16) ASCII digits at `s` (16 bytes readable).
inline uint64_t DigitsValue(const char* s, int n) {
  return n <= 8 ? EightDigits(s, n) : EightDigits(s, n - 8) * 100000000ULL + EightDigits(s + n - 8, 8);
}

// The value of the `n` (1..19) ASCII digits at `s` (16 bytes readable, 32 when n > 16): below
// 10^19, so in a uint64. Inlined into each window's reader: a call per number was 2.6% of the
// serving shape's instructions (docs/PERFORMANCE.md "The digits inlined").
[[gnu::always_inline]] inline uint64_t ManyDigits(const char* s, int n) {
  return n <= 16 ? DigitsValue(s, n) : EightDigits(s, n - 16) * 10000000000000000ULL + DigitsValue(s + n - 16, 16);
}

constexpr uint64_t kPow10[19] = {1ULL,
                                 10ULL,
                                 100ULL,
                                 1000ULL,
                                 10000ULL,
                                 100000ULL,
                                 1000000ULL,
                                 10000000ULL,
                                 100000000ULL,
                                 1000000000ULL,
                                 10000000000ULL,
                                 100000000000ULL,
                                 1000000000000ULL,
                                 10000000000000ULL,
                                 100000000000000ULL,
                                 1000000000000000ULL,
                                 10000000000000000ULL,
                                 100000000000000000ULL,
                                 1000000000000000000ULL};

// Digits a gathered number may have: below 10^19, its value fits a uint64 without wrapping.
constexpr int kMaxGatheredDigits = 19;
#endif

// Whether the literal is at `p` (32 bytes readable) with at least one more byte of data after it.
bool Matches(const FastParseMemo::Literal& l, const char* p, const char* end) {
  if (end - p <= l.length) return false;
#if defined(__SSE2__)
  const __m128i* b = reinterpret_cast<const __m128i*>(l.bytes);
  const unsigned lo = static_cast<unsigned>(_mm_movemask_epi8(
      _mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)), _mm_load_si128(b))));
  const unsigned hi = static_cast<unsigned>(_mm_movemask_epi8(
      _mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16)), _mm_load_si128(b + 1))));
  return ((lo | hi << 16) & l.mask) == l.mask;
#else
  return std::memcmp(p, l.bytes, l.length) == 0;
#endif
}

class Reader {
 public:
  Reader(const char* p, const char* end, int max_levels, FastParseMemo& memo)
      : p_(p), end_(end), max_levels_(max_levels < kMaxFastLevels ? max_levels : kMaxFastLevels), memo_(memo) {}

  const char* pos() const { return p_; }

  bool Event(RawEvent& ev) {
    ev.Reset();
    if (*p_ != '{' || max_levels_ < 1) return false;
    ev.is_object = true;
    return Learned(1, FindEventMember, [&](const MemberSlot* m) {
      if (!m) return SkipValue(1);
      if (m->args) {
        ev.duplicate_key |= ev.args != FieldType::kAbsent;
        return Args(ev);
      }
      Field& f = ev.*m->field;
      ev.duplicate_key |= f.type != FieldType::kAbsent;
      return Scalar(f, 1);
    });
  }

 private:
  // The members of the event object (level 1) or of its args (level 2), p_ at its '{': what
  // Members does, but each step's separator, name and colon are first looked for among the
  // literals the memo saw after the previous step (see FastParseMemo).
  template <typename Find, typename Value>
  bool Learned(int level, Find find, Value value) {
    // The literal of the previous step; kNone after a step that was not learned (too long, or
    // the memo full): nothing is predicted then. Keeping the previous one would offer literals
    // learned at another position (a first step's "{...") where they must not match.
    uint8_t at = FastParseMemo::Start(level);
    for (bool first = true;; first = false) {
      uint8_t hit = FastParseMemo::kNone;
      if (at != FastParseMemo::kNone) {
        for (uint8_t id : memo_.at(at).next) {
          if (id == FastParseMemo::kNone) break;
          if (Matches(memo_.at(id), p_, end_)) {
            hit = id;
            break;
          }
        }
      }
      const MemberSlot* slot;
      if (hit != FastParseMemo::kNone) {
        const FastParseMemo::Literal& l = memo_.at(hit);
        p_ += l.length;
        if (l.end) return true;
        slot = l.slot;
        at = hit;
        // A literal ends at a value, but this event may have more white space there. Matches left
        // a byte of data after the literal, so p_ < end_ here.
        if (static_cast<unsigned char>(*p_) <= ' ') {
          Ws();
          if (p_ >= end_) return false;
        }
      } else {
        // As Sequence and Members, step by step.
        const char* begin = p_;
        bool end = false;
        if (first) {
          ++p_;  // '{'
          Ws();
          if (p_ < end_ && *p_ == '}') {
            ++p_;
            end = true;
          }
        } else {
          Ws();
          if (p_ >= end_) return false;
          const char c = *p_++;
          if (c == '}') {
            end = true;
          } else {
            if (c != ',') return false;
            Ws();
          }
        }
        std::string_view key;
        if (!end) {
          if (p_ >= end_ || *p_ != '"' || !String(key) || !Expect(':')) return false;
          Ws();
          if (p_ >= end_) return false;
        }
        slot = end ? nullptr : find(key);
        const auto length = static_cast<size_t>(p_ - begin);
        uint8_t id = FastParseMemo::kNone;
        if (length <= FastParseMemo::kMaxLength) id = memo_.Learn(std::string_view(begin, length), level, end, slot);
        if (id != FastParseMemo::kNone && at != FastParseMemo::kNone) memo_.Link(at, id);
        at = id;
        if (end) return true;
      }
      if (!value(slot)) return false;
    }
  }

  void Ws() {
    // Every white space byte is <= ' ', so most calls stop at the first test.
    while (p_ < end_ && static_cast<unsigned char>(*p_) <= ' ' && IsJsonSpace(*p_)) ++p_;
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
  // tokens of more than 19 digits).
  bool Number(std::string_view& out, Field* f = nullptr) {
    // The commonest number of all (a device, a context, a grid's 1): one digit, then a delimiter.
    if (IsDigit(*p_) && end_ - p_ > 1 && EndsScalar(p_[1])) {
      out = std::string_view(p_, 1);
      if (f) {
        f->frac = -1;
        f->digits = static_cast<uint64_t>(*p_ - '0');
      }
      ++p_;
      return true;
    }
#if defined(__SSE2__)
    // The usual shapes (no exponent, at most 15 characters after the sign) without a loop per
    // digit: one 16-byte compare finds both digit runs, and the digits are combined 8 at a time;
    // longer tokens (a profiler's absolute timestamps: 16 digits and 3 decimals,
    // "1695835572943613.123") the same way in 32 bytes (LongNumber). Everything else (and anything
    // too near end_) takes its byte loop, which accepts and gathers exactly the same.
    const char* body = p_ + (*p_ == '-');
    if (end_ - body >= 16) {
      const int read = InWindow<16>(body, out, f);
      if (read >= 0) return read == 1;
    }
#endif
    return LongNumber(out, f);
  }

  // Number past its first window: the 32-byte one, then the byte loop. Out of line, so that
  // the common path above keeps few registers to save.
  [[gnu::noinline]] bool LongNumber(std::string_view& out, Field* f) {
#if defined(__SSE2__)
    const char* body = p_ + (*p_ == '-');
    if (end_ - body >= 32) {
      const int read = InWindow<32>(body, out, f);
      if (read >= 0) return read == 1;
    }
#endif
    return NumberBytes(out, f);
  }

#if defined(__SSE2__)
  // Number within the `W` bytes at `body` (after the sign; W readable): 1 when the token ends
  // inside them (gathered when it has at most 19 digits), 0 when it is no number, -1 when it is
  // not one of the window's shapes (an exponent, a second point, a stray byte, or too long).
  template <int W>
  int InWindow(const char* body, std::string_view& out, Field* f) {
    static_assert(W == 16 || W == 32);
    uint32_t digit = DigitMask(body);
    if constexpr (W == 32) digit |= DigitMask(body + 16) << 16;
    const int whole = std::countr_one(digit);
    if (whole == 0 || (whole > 1 && *body == '0')) return 0;
    const char* q = body + whole;
    int frac = -1;
    if (whole + 1 < W && *q == '.') {
      frac = std::countr_one(digit >> (whole + 1));  // up to the window's end, where digits stop counting
      if (frac == 0) return 0;
      q += 1 + frac;
    }
    // q - body < W: inside the window, so q < end_ and *q is a real byte.
    if (q - body >= W || !EndsScalar(*q)) return -1;
    out = std::string_view(p_, static_cast<size_t>(q - p_));
    if (f) {
      const bool gathered = whole + (frac < 0 ? 0 : frac) <= kMaxGatheredDigits;
      f->frac = gathered ? static_cast<int8_t>(frac) : Field::kNoDigits;
      if (gathered)
        f->digits = frac < 0 ? ManyDigits(body, whole)
                             : ManyDigits(body, whole) * kPow10[frac] + ManyDigits(body + whole + 1, frac);
    }
    p_ = q;
    return 1;
  }
#endif

  bool NumberBytes(std::string_view& out, Field* f) {
    const char* s = p_;
    const char* q = p_;
    if (*q == '-') ++q;
    const char* body = q;
    uint64_t acc = 0;  // wraps past 19 digits, where it is not kept
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
      const bool gathered = !exponent && (q - body) - (frac >= 0) <= kMaxGatheredDigits;
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

  // Skip, with the value of a member nobody reads first tried as what it usually is (an id or an
  // index: "Ev Idx", "Python id", "Record function id"): an integer whose digits end inside 16
  // bytes. It accepts exactly the integers Number accepts (no leading zero but "0" itself, a
  // scalar's delimiter after the digits); anything else, a point or an exponent included, goes to
  // Skip and Number as before.
  bool SkipValue(int level) {
#if defined(__SSE2__)
    const char* body = p_ + (*p_ == '-');
    if (end_ - body >= 16) {
      const int whole = std::countr_one(DigitMask(body));
      if (whole > 0 && whole < 16 && (whole == 1 || *body != '0') && EndsScalar(body[whole])) {
        p_ = body + whole;
        return true;
      }
    }
#endif
    return Skip(level);
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
    return Learned(2, FindArgsMember, [&](const MemberSlot* m) {
      if (!m) return SkipValue(2);
      if (m->dim) {
        Dim3& d = ev.*m->dim;
        ev.duplicate_key |= d.type != FieldType::kAbsent;
        return Dim(d, 2);
      }
      Field& f = ev.*m->field;
      ev.duplicate_key |= f.type != FieldType::kAbsent;
      return Scalar(f, 2);
    });
  }

  const char* p_;
  const char* end_;
  int max_levels_;
  FastParseMemo& memo_;
};

}  // namespace

FastParseMemo::FastParseMemo() {
  for (Literal& l : literals_) std::fill(std::begin(l.next), std::end(l.next), kNone);
}

uint8_t FastParseMemo::Learn(std::string_view bytes, int level, bool end, const MemberSlot* slot) {
  for (int id = 2; id < used_; ++id) {
    const Literal& l = literals_[id];
    if (l.level == level && l.length == bytes.size() && std::memcmp(l.bytes, bytes.data(), bytes.size()) == 0)
      return static_cast<uint8_t>(id);
  }
  if (used_ == kMaxLiterals || bytes.empty() || bytes.size() > kMaxLength) return kNone;
  Literal& l = literals_[used_];
  std::memset(l.bytes, 0, sizeof l.bytes);
  std::memcpy(l.bytes, bytes.data(), bytes.size());
  l.length = static_cast<uint8_t>(bytes.size());
  l.mask = bytes.size() == 32 ? ~0u : (1u << bytes.size()) - 1;
  l.level = static_cast<uint8_t>(level);
  l.end = end;
  l.slot = slot;
  return static_cast<uint8_t>(used_++);
}

void FastParseMemo::Link(uint8_t from, uint8_t id) {
  Literal& l = literals_[from];
  for (uint8_t n : l.next)
    if (n == id) return;
  l.next[l.replace] = id;
  l.replace = static_cast<uint8_t>((l.replace + 1) % kWays);
}

size_t FastParseEvent(const char* p, const char* end, int max_levels, RawEvent& ev, FastParseMemo& memo) {
  Reader r(p, end, max_levels, memo);
  if (!r.Event(ev)) return 0;
  return static_cast<size_t>(r.pos() - p);
}

}  // namespace tg::internal
