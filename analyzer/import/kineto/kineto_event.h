// One Chrome-trace event, read with simdjson On-Demand into plain fields (views, no copies) and
// validated whole: every value of the event, wanted or not, is checked against the JSON grammar.
// Internal to the Kineto importer.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "analyzer/import/kineto/kineto_numbers.h"
#include "tracegate/analyzer/status.h"

namespace tg::internal {

enum class FieldType : uint8_t { kAbsent, kNumber, kString, kNull, kOther };

// A scalar field: the number's text (trailing white space trimmed) or the unescaped string.
// The in-place reader also keeps a number's digits as it validates them (`frac` >= -1), so the
// builder need not scan them again (FieldToInt64 below).
struct Field {
  FieldType type = FieldType::kAbsent;
  int8_t frac = kNoDigits;  // kNumber: digits after the point (-1: none), or kNoDigits
  std::string_view text;
  uint64_t digits = 0;      // kNumber with frac >= -1: every digit of the text, as one integer

  // `digits` and `frac` are not set: the number is converted from `text`.
  static constexpr int8_t kNoDigits = -2;
};

// A kNumber field as NumberToInt64 of its text, from the digits the reader gathered when it did.
inline NumberStatus FieldToInt64(const Field& f, int scale, bool require_integral, int64_t& out) {
  if (f.type == FieldType::kNumber && f.frac != Field::kNoDigits)
    return GatheredToInt64(f.text, !f.text.empty() && f.text[0] == '-', f.digits, f.frac, scale, require_integral, out);
  return NumberToInt64(f.text, scale, require_integral, out);
}

// grid / block: [x, y, z] of int32.
struct Dim3 {
  FieldType type = FieldType::kAbsent;  // kOther when present but not 3 integers
  int32_t v[3] = {0, 0, 0};
};

// The fields the importer reads. Views point into the parser or the input and stay valid until
// the next Parse.
struct RawEvent {
  bool is_object = false;
  Field ph, cat, name, pid, tid, ts, dur, id;
  FieldType args = FieldType::kAbsent;  // kOther for an object or an array
  bool args_is_object = false;
  // args members
  Field device, stream, correlation, bytes, registers, shared_memory, sync_kind, wait_event_id, wait_stream,
      wait_record_corr, in_device, arg_name, arg_pid;
  // collective metadata (NCCL kernels)
  Field coll_name, coll_dtype, coll_in_nelems, coll_out_nelems, coll_group_size, coll_group, coll_group_ranks,
      coll_seq;
  Dim3 grid, block;
  // A member we read appeared twice in the event or its args (the last occurrence wins).
  bool duplicate_key = false;

  // Back to an empty event, as RawEvent{} but writing only the types and flags: readers look at
  // a field's text only when its type says it was present. Cheaper than clearing ~500 bytes for
  // each of a million events.
  void Reset() {
    is_object = false;
    args = FieldType::kAbsent;
    args_is_object = false;
    duplicate_key = false;
    // One store each (a loop over a list of their addresses costs several times more).
    ph.type = cat.type = name.type = pid.type = tid.type = ts.type = dur.type = id.type = FieldType::kAbsent;
    device.type = stream.type = correlation.type = bytes.type = registers.type = shared_memory.type = sync_kind.type =
        wait_event_id.type = wait_stream.type = wait_record_corr.type = in_device.type = arg_name.type = arg_pid.type =
            coll_name.type = coll_dtype.type = coll_in_nelems.type = coll_out_nelems.type = coll_group_size.type =
                coll_group.type = coll_group_ranks.type = coll_seq.type = FieldType::kAbsent;
    grid = Dim3{};  // read without a type check (absent = 0, 0, 0)
    block = Dim3{};
  }
};

// What a member name we read stands for: a scalar field of the event or of its args, args' grid
// or block, or the event's args object.
struct MemberSlot {
  Field RawEvent::*field = nullptr;
  Dim3 RawEvent::*dim = nullptr;
  bool args = false;
};

// The lookups read this many bytes from the start of a member's name, whatever its length: names
// must lie in padded input (the fast path's buffer, simdjson's document) or in a padded copy.
inline constexpr size_t kMemberNameReadable = 24;

// The slot of a member of the event object or of its args, or nullptr for a member we do not read
// (validated and dropped).
const MemberSlot* FindEventMember(std::string_view key);
const MemberSlot* FindArgsMember(std::string_view key);

// Where a member of the event object goes: a scalar field, the args object, or nowhere. Sets
// `duplicate_key` when the member was seen before. Used by EventParser.
enum class EventSlot : uint8_t { kNone, kField, kArgs };
EventSlot EventMember(RawEvent& ev, std::string_view key, Field*& field);
// Members of args: a scalar field, grid / block, or nowhere.
enum class ArgsSlot : uint8_t { kNone, kField, kDim3 };
ArgsSlot ArgsMember(RawEvent& ev, std::string_view key, Field*& field, Dim3*& dim);

class EventParser {
 public:
  explicit EventParser(int max_depth);
  ~EventParser();
  EventParser(const EventParser&) = delete;
  EventParser& operator=(const EventParser&) = delete;

  // `json` must be followed by at least 64 readable bytes. Invalid JSON gives a non-ok status
  // naming the byte offset (`offset` is where `json` starts in the file). Invalid UTF-8 is not
  // an error: the bytes are replaced with U+FFFD and the event is read again.
  Status Parse(std::string_view json, uint64_t offset, RawEvent& event);

  uint64_t repaired_utf8() const { return repaired_utf8_; }

 private:
  struct Impl;
  int max_depth_;
  std::unique_ptr<Impl> impl_;  // made by the first Parse (simdjson's buffers: 0.75 MB)
  uint64_t repaired_utf8_ = 0;
};

}  // namespace tg::internal
