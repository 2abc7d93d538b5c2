#include "analyzer/import/kineto/json_stream.h"

#include <array>
#include <bit>
#include <cstring>
#include <new>
#include <string>

namespace tg::internal {

namespace {

// Byte classes for the hot loops: inside a string only '"' and '\\' matter; outside, the
// brackets and the opening quote.
constexpr std::array<bool, 256> MakeTable(std::string_view bytes) {
  std::array<bool, 256> t{};
  for (char c : bytes) t[static_cast<unsigned char>(c)] = true;
  return t;
}
constexpr auto kStringStop = MakeTable("\"\\");
constexpr auto kContainerStop = MakeTable("\"{}[]");
// Bytes that end a number or literal.
constexpr auto kScalarEnd = MakeTable(" \t\r\n,]}[{\":");
constexpr auto kSpace = MakeTable(" \t\r\n");

// Inside strings, eight bytes at a time: the index of the first '"' or '\\' in [i, n), or n.
// On little-endian machines each word is checked with the "has zero byte" trick (the lowest
// flagged byte is always a true match). Outside strings stops come every few bytes, where a
// plain table lookup is faster.
size_t FindStringStop(const char* b, size_t i, size_t n) {
  if constexpr (std::endian::native == std::endian::little) {
    constexpr uint64_t kOnes = 0x0101010101010101ull, kHighs = 0x8080808080808080ull;
    while (i + 8 <= n) {
      uint64_t w;
      std::memcpy(&w, b + i, 8);
      uint64_t hit = 0;
      for (char c : {'"', '\\'}) {
        uint64_t x = w ^ (kOnes * static_cast<unsigned char>(c));
        hit |= (x - kOnes) & ~x & kHighs;
      }
      if (hit) return i + (static_cast<size_t>(std::countr_zero(hit)) >> 3);
      i += 8;
    }
  }
  while (i < n && !kStringStop[static_cast<unsigned char>(b[i])]) ++i;
  return i;
}

// The read buffer holds one value at a time; a single value (one event, or one top-level member
// such as a long log) larger than this is refused rather than exhausting memory.
constexpr size_t kMaxBuffer = size_t{1} << 30;

std::string At(uint64_t offset) { return " at byte " + std::to_string(offset); }

class Scanner {
 public:
  // `base` is the offset in the text of the reader's position.
  Scanner(GzReader& in, const ScanOptions& options, uint64_t base = 0) : in_(in), options_(options), base_(base) {}

  Status Init() {
    TG_RETURN_IF_ERROR(Grow(options_.chunk_bytes < 4096 ? 4096 : options_.chunk_bytes));
    bool eof = false;
    TG_RETURN_IF_ERROR(Fill(eof));
    // A UTF-8 byte order mark is not JSON but some Windows tools write one.
    while (len_ < 3 && !eof_) {
      TG_RETURN_IF_ERROR(Fill(eof));
    }
    if (base_ == 0 && len_ >= 3 && std::memcmp(buf_.get(), "\xEF\xBB\xBF", 3) == 0) pos_ = 3;
    return Status::Ok();
  }

  // Skips white space and reports the next byte without consuming it; eof at the end of data.
  Status Peek(char& c, bool& eof) {
    for (;;) {
      while (pos_ < len_ && kSpace[static_cast<unsigned char>(buf_[pos_])]) ++pos_;
      if (pos_ < len_) {
        c = buf_[pos_];
        eof = false;
        return Status::Ok();
      }
      Discard(pos_);
      TG_RETURN_IF_ERROR(Fill(eof));
      if (eof) return Status::Ok();
    }
  }
  void Advance() { ++pos_; }
  // Offers the element at the current byte to the sink's fast path; true when it took it.
  bool TryInPlace(int depth, JsonSink& sink) {
    size_t n = sink.OnEventInPlace(buf_.get() + pos_, buf_.get() + len_, depth, base_ + pos_);
    pos_ += n;
    return n != 0;
  }
  uint64_t Offset() const { return base_ + pos_; }
  uint64_t BytesRead() const { return base_ + len_; }
  // Continues at byte `offset` (not before the current one), seeking when it is not read yet.
  Status SkipTo(uint64_t offset) {
    if (offset <= base_ + len_) {
      pos_ = static_cast<size_t>(offset - base_);
      return Status::Ok();
    }
    len_ = pos_ = 0;
    base_ = offset;
    eof_ = false;
    std::memset(buf_.get(), ' ', kJsonPadding);
    return in_.Seek(offset);
  }

  // Scans the complete value that starts at the current byte (not white space). `depth` is how
  // many containers enclose it. The view is valid until the next Peek or ScanValue.
  Status ScanValue(int depth, std::string_view& out, uint64_t& offset);

 private:
  // Drops the bytes before `keep_from`; they are never needed again.
  void Discard(size_t keep_from) {
    if (keep_from == 0) return;
    std::memmove(buf_.get(), buf_.get() + keep_from, len_ - keep_from);
    len_ -= keep_from;
    pos_ -= keep_from;
    base_ += keep_from;
  }
  Status Grow(size_t cap) {
    if (cap > kMaxBuffer) {
      return InvalidInput("a single JSON value starting at byte " + std::to_string(base_) + " is larger than " +
                          std::to_string(kMaxBuffer >> 20) + " MiB");
    }
    std::unique_ptr<char[]> b(new (std::nothrow) char[cap + kJsonPadding]);
    if (!b) return IoError("out of memory for a JSON value of " + std::to_string(cap >> 20) + " MiB");
    if (len_) std::memcpy(b.get(), buf_.get(), len_);
    std::memset(b.get() + len_, ' ', cap + kJsonPadding - len_);
    buf_ = std::move(b);
    cap_ = cap;
    return Status::Ok();
  }
  // Appends more data after len_, growing the buffer when a single value fills it.
  Status Fill(bool& eof) {
    eof = false;
    if (eof_) {
      eof = true;
      return Status::Ok();
    }
    // A single value that fills most of the buffer makes it grow; otherwise reads stay large.
    if (cap_ - len_ < cap_ / 4) {
      TG_RETURN_IF_ERROR(Grow(cap_ * 2));
    }
    size_t want = cap_ - len_;
    size_t got = 0;
    TG_RETURN_IF_ERROR(in_.Read(buf_.get() + len_, want, got));
    len_ += got;
    std::memset(buf_.get() + len_, ' ', kJsonPadding);  // keep the padding defined
    if (got == 0) eof_ = eof = true;
    return Status::Ok();
  }

  Status Truncated(uint64_t start) const {
    return InvalidInput("truncated JSON: the data ends at byte " + std::to_string(base_ + len_) +
                        " inside a value that starts at byte " + std::to_string(start));
  }
  Status TooDeep(uint64_t at) const {
    return InvalidInput("JSON nested deeper than " + std::to_string(options_.max_depth) +
                        " levels" + At(at));
  }

  GzReader& in_;
  ScanOptions options_;
  uint64_t base_ = 0;  // offset of buf_[0] in the text
  std::unique_ptr<char[]> buf_;
  size_t cap_ = 0, len_ = 0, pos_ = 0;
  bool eof_ = false;
  std::vector<char> stack_;  // open brackets of the value being scanned
};

Status Scanner::ScanValue(int depth, std::string_view& out, uint64_t& offset) {
  size_t start = pos_;
  offset = base_ + start;
  const char first = buf_[start];
  size_t i = start + 1;
  bool eof = false;
  // Reads more data; first drops everything before the value so only its own bytes move.
  auto more = [&]() -> Status {
    size_t shift = start;
    Discard(start);
    i -= shift;
    start = 0;
    return Fill(eof);
  };
  if (first == '{' || first == '[' || first == '"') {
    bool in_string = first == '"';
    bool escape = false;
    stack_.clear();
    if (!in_string) {
      if (depth + 1 > options_.max_depth) return TooDeep(offset);
      stack_.push_back(first);
    }
    for (;;) {
      if (i >= len_) {
        TG_RETURN_IF_ERROR(more());
        if (eof) return Truncated(offset);
        continue;
      }
      const char* b = buf_.get();
      if (in_string) {
        if (escape) {  // the byte after a backslash, possibly split from it by a refill
          escape = false;
          ++i;
          continue;
        }
        i = FindStringStop(b, i, len_);
        if (i == len_) continue;
        if (b[i++] == '\\') {
          escape = true;
          continue;
        }
        in_string = false;
        if (stack_.empty()) break;  // the value was a string
        continue;
      }
      while (i < len_ && !kContainerStop[static_cast<unsigned char>(b[i])]) ++i;
      if (i == len_) continue;
      char c = b[i++];
      if (c == '"') {
        in_string = true;
      } else if (c == '{' || c == '[') {
        if (depth + static_cast<int>(stack_.size()) + 1 > options_.max_depth) return TooDeep(base_ + i - 1);
        stack_.push_back(c);
      } else {
        char open = c == '}' ? '{' : '[';
        if (stack_.back() != open) {
          return InvalidInput(std::string("invalid JSON: '") + c + "' closes '" + stack_.back() + "'" +
                              At(base_ + i - 1));
        }
        stack_.pop_back();
        if (stack_.empty()) break;
      }
    }
  } else if (first == '-' || (first >= '0' && first <= '9') || first == 't' || first == 'f' ||
             first == 'n') {
    // Number or literal: it ends at a delimiter, or at the end of the data (top level only).
    for (;;) {
      while (i < len_ && !kScalarEnd[static_cast<unsigned char>(buf_[i])]) ++i;
      if (i < len_) break;
      TG_RETURN_IF_ERROR(more());
      if (eof) break;
    }
  } else {
    return InvalidInput(std::string("invalid JSON: unexpected character '") + first + "'" + At(offset));
  }
  out = std::string_view(buf_.get() + start, i - start);
  pos_ = i;
  return Status::Ok();
}

Status ExpectEnd(Scanner& sc) {
  char c = 0;
  bool eof = false;
  TG_RETURN_IF_ERROR(sc.Peek(c, eof));
  if (!eof) return InvalidInput("invalid JSON: unexpected data after the top-level value" + At(sc.Offset()));
  return Status::Ok();
}

// Streams array elements from the current byte (the start of one) through the closing ']'.
template <typename Truncated>
Status StreamElements(Scanner& sc, int depth, const ScanOptions& options, JsonSink& sink, StreamStats& stats,
                      Truncated truncated) {
  char c = 0;
  bool eof = false;
  for (;;) {
    if (sc.Offset() == options.split_at) {
      uint64_t resume = 0, elements = 0;
      if (sink.OnSplit(resume, elements)) {
        stats.elements += elements;
        return sc.SkipTo(resume);
      }
    }
    ++stats.elements;
    if (!sc.TryInPlace(depth, sink)) {
      std::string_view value;
      uint64_t offset = 0;
      TG_RETURN_IF_ERROR(sc.ScanValue(depth, value, offset));
      TG_RETURN_IF_ERROR(sink.OnEvent(value, offset));
    }
    TG_RETURN_IF_ERROR(sc.Peek(c, eof));
    if (eof) return truncated();
    if (c == ']') {
      sc.Advance();
      return Status::Ok();
    }
    if (c != ',') return InvalidInput("invalid JSON: expected ',' or ']' after an event" + At(sc.Offset()));
    sc.Advance();
    TG_RETURN_IF_ERROR(sc.Peek(c, eof));
    if (eof) return truncated();
  }
}

// Streams the elements of the array at the current byte ('['); `depth` counts the array itself.
Status StreamArray(Scanner& sc, int depth, const ScanOptions& options, JsonSink& sink, StreamStats& stats) {
  if (depth > options.max_depth) {
    return InvalidInput("JSON nested deeper than " + std::to_string(options.max_depth) + " levels" + At(sc.Offset()));
  }
  const uint64_t array_start = sc.Offset();
  sc.Advance();
  char c = 0;
  bool eof = false;
  auto truncated = [&] {
    return InvalidInput("truncated JSON: the data ends at byte " + std::to_string(sc.BytesRead()) +
                        " inside the event array that starts at byte " + std::to_string(array_start));
  };
  TG_RETURN_IF_ERROR(sc.Peek(c, eof));
  if (eof) return truncated();
  if (c == ']') {
    sc.Advance();
    return Status::Ok();
  }
  return StreamElements(sc, depth, options, sink, stats, truncated);
}

Status StreamObject(Scanner& sc, const ScanOptions& options, JsonSink& sink, StreamStats& stats) {
  const uint64_t object_start = sc.Offset();
  sc.Advance();  // '{'
  char c = 0;
  bool eof = false;
  auto next = [&]() -> Status {
    TG_RETURN_IF_ERROR(sc.Peek(c, eof));
    if (eof) {
      return InvalidInput("truncated JSON: the data ends at byte " + std::to_string(sc.BytesRead()) +
                          " inside the top-level object that starts at byte " + std::to_string(object_start));
    }
    return Status::Ok();
  };
  TG_RETURN_IF_ERROR(next());
  if (c == '}') {
    sc.Advance();
    return Status::Ok();
  }
  std::string key;
  for (;;) {
    if (c != '"') return InvalidInput("invalid JSON: expected a member name" + At(sc.Offset()));
    std::string_view raw;
    uint64_t offset = 0;
    TG_RETURN_IF_ERROR(sc.ScanValue(1, raw, offset));
    key.assign(raw.substr(1, raw.size() - 2));
    TG_RETURN_IF_ERROR(next());
    if (c != ':') return InvalidInput("invalid JSON: expected ':' after a member name" + At(sc.Offset()));
    sc.Advance();
    TG_RETURN_IF_ERROR(next());
    if (key == "traceEvents") {
      if (c != '[') return InvalidInput("\"traceEvents\" is not an array" + At(sc.Offset()));
      stats.saw_trace_events = true;
      TG_RETURN_IF_ERROR(StreamArray(sc, 2, options, sink, stats));
    } else {
      std::string_view value;
      TG_RETURN_IF_ERROR(sc.ScanValue(1, value, offset));
      TG_RETURN_IF_ERROR(sink.OnMember(key, value, offset));
    }
    TG_RETURN_IF_ERROR(next());
    if (c == '}') {
      sc.Advance();
      return Status::Ok();
    }
    if (c != ',') return InvalidInput("invalid JSON: expected ',' or '}' in the top-level object" + At(sc.Offset()));
    sc.Advance();
    TG_RETURN_IF_ERROR(next());
  }
}

}  // namespace

Status StreamArrayTail(GzReader& in, uint64_t offset, int depth, const ScanOptions& options, JsonSink& sink,
                       StreamStats& stats, uint64_t& end) {
  stats = StreamStats{};
  ScanOptions tail = options;
  tail.split_at = UINT64_MAX;
  Scanner sc(in, tail, offset);
  TG_RETURN_IF_ERROR(sc.Init());
  char c = 0;
  bool eof = false;
  TG_RETURN_IF_ERROR(sc.Peek(c, eof));
  if (eof || sc.Offset() != offset) return InvalidInput("no array element" + At(offset));
  Status s = StreamElements(sc, depth, tail, sink, stats,
                            [&] { return InvalidInput("truncated JSON" + At(sc.BytesRead())); });
  end = sc.Offset();
  stats.bytes = sc.BytesRead();
  return s;
}

Status StreamTraceJson(GzReader& in, const ScanOptions& options, JsonSink& sink, StreamStats& stats) {
  stats = StreamStats{};
  Scanner sc(in, options);
  TG_RETURN_IF_ERROR(sc.Init());
  char c = 0;
  bool eof = false;
  TG_RETURN_IF_ERROR(sc.Peek(c, eof));
  Status s;
  if (eof) {
    s = InvalidInput("no JSON content (the file is empty or only white space)");
  } else if (c == '{') {
    if (options.max_depth < 1) return InvalidInput("JSON nested deeper than " + std::to_string(options.max_depth) + " levels" + At(0));
    s = StreamObject(sc, options, sink, stats);
  } else if (c == '[') {
    stats.top_level_array = true;
    s = StreamArray(sc, 1, options, sink, stats);
  } else {
    s = InvalidInput("the top-level JSON value is not an object or an array" + At(sc.Offset()));
  }
  if (s.ok()) s = ExpectEnd(sc);
  stats.bytes = sc.BytesRead();
  return s;
}

}  // namespace tg::internal
