// The in-place fast path of the Kineto importer: reads one event straight from the read buffer in
// a single pass, for the shape nearly every event has (an object whose strings are printable ASCII
// without escapes). It validates what it reads against the JSON grammar and fills RawEvent exactly
// as EventParser would; anything else (escapes, non-ASCII bytes, nesting near the depth limit,
// invalid JSON, an event cut by the end of the buffer) it declines, and the event takes the
// scanner + simdjson path, which also produces the error message. Internal to the importer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "analyzer/import/kineto/kineto_event.h"

namespace tg::internal {

// What the fast path learns from the events it has read, to read the next ones with fewer steps.
// Machine-written traces repeat the same few member sequences with the same spacing, so the bytes
// between one value and the next (`, "cat": `, or `{"ph": ` at an object's start, or `}` at its
// end) recur: each such "literal" seen in the event or args object is kept with what its member is,
// and with the literals that followed it. At each step the reader first compares the bytes ahead
// with the literals that followed the previous one (two 16-byte compares each); only on a miss
// does it read separator, name and colon one by one, and learn that literal. A match is the same
// bytes the byte-by-byte path accepted before, so it reads to exactly the same result.
// One per thread: the reader writes it.
class FastParseMemo {
 public:
  FastParseMemo();

  static constexpr int kMaxLiterals = 96;
  static constexpr int kMaxLength = 32;  // bytes of a literal; longer ones are not learned
  static constexpr int kWays = 4;        // successors kept per literal
  static constexpr uint8_t kNone = 0xFF;

  struct Literal {
    alignas(16) char bytes[kMaxLength];
    uint32_t mask = 0;  // bit i: byte i is part of the literal
    uint8_t length = 0;
    uint8_t level = 0;   // 1: the event object, 2: its args
    bool end = false;    // closes the object ('}' after optional white space)
    const MemberSlot* slot = nullptr;  // the member, or nullptr for one that is dropped
    uint8_t next[kWays];               // literals that followed this one (kNone: unused)
    uint8_t replace = 0;               // the way the next new successor takes
  };

  // The pseudo-literal whose successors start an object of `level` (1 or 2).
  static uint8_t Start(int level) { return static_cast<uint8_t>(level - 1); }
  Literal& at(uint8_t id) { return literals_[id]; }
  // The id of the literal `bytes` (at most kMaxLength) of `level`, added when new; kNone when the
  // table is full.
  uint8_t Learn(std::string_view bytes, int level, bool end, const MemberSlot* slot);
  // Records that `id` followed `from`.
  void Link(uint8_t from, uint8_t id);

 private:
  Literal literals_[kMaxLiterals];
  int used_ = 2;  // the two start pseudo-literals
};

// `p` is the first byte of an element of the event array, [p, end) the bytes read so far, and at
// least 64 readable bytes follow `end`. `max_levels` is how many nested containers the element
// may open (the scanner's max_depth minus the array's depth). Returns the element's length in
// bytes with `ev` filled, or 0 when the slow path must read it (`ev` is then unspecified).
size_t FastParseEvent(const char* p, const char* end, int max_levels, RawEvent& ev, FastParseMemo& memo);

}  // namespace tg::internal
