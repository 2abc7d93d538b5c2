#include "analyzer/import/kineto/kineto_event.h"

#include <simdjson.h>

#include <array>
#include <cstring>
#include <string>
#include <utility>

#include "analyzer/import/kineto/json_stream.h"
#include "analyzer/import/kineto/kineto_numbers.h"
#include "tracegate/analyzer/strings.h"

namespace tg::internal {

namespace od = simdjson::ondemand;
using simdjson::error_code;
using simdjson::SUCCESS;

static_assert(kJsonPadding >= simdjson::SIMDJSON_PADDING, "the scanner must leave simdjson's padding");
static_assert(kJsonPadding >= kMemberNameReadable, "member names are read in whole words");

namespace {

std::string_view Trim(std::string_view t) {
  while (!t.empty() && IsJsonSpace(t.back())) {
    t.remove_suffix(1);
  }
  return t;
}

// A member's name: the raw bytes when it has no escape (the usual case: no copy), else unescaped.
error_code KeyOf(od::field& f, std::string_view& key) {
  const char* p = f.key().raw();
  const char* q = p;
  while (*q != '"' && *q != '\\') ++q;  // stage 1 has checked the string is closed
  if (*q == '"') {
    key = std::string_view(p, static_cast<size_t>(q - p));
    return SUCCESS;
  }
  if (error_code e = f.unescaped_key().get(key)) return e;
  // EventMember and ArgsMember read kMemberNameReadable bytes from the name's start.
  thread_local std::string copy;
  copy.assign(key);
  copy.append(kMemberNameReadable, '\0');
  key = std::string_view(copy.data(), key.size());
  return SUCCESS;
}

// Walks a value we do not read, so that every byte of the event is checked: On-Demand only
// validates what it is asked for. Recursion depth is bounded by the scanner's depth limit.
error_code Validate(od::value v) {
  od::json_type t;
  if (error_code e = v.type().get(t)) return e;
  switch (t) {
    case od::json_type::object: {
      od::object o;
      if (error_code e = v.get_object().get(o)) return e;
      for (auto member : o) {
        od::field f;
        std::string_view key;
        if (error_code e = std::move(member).get(f)) return e;
        if (error_code e = KeyOf(f, key)) return e;
        if (error_code e = Validate(f.value())) return e;
      }
      return SUCCESS;
    }
    case od::json_type::array: {
      od::array a;
      if (error_code e = v.get_array().get(a)) return e;
      for (auto el : a) {
        od::value x;
        if (error_code e = el.get(x)) return e;
        if (error_code e = Validate(x)) return e;
      }
      return SUCCESS;
    }
    case od::json_type::number:
      return IsJsonNumber(v.raw_json_token()) ? SUCCESS : simdjson::NUMBER_ERROR;
    case od::json_type::string: {
      std::string_view s;
      return v.get_string().get(s);
    }
    case od::json_type::boolean: {
      bool b = false;
      if (v.get_bool().get(b) == SUCCESS) return SUCCESS;
      return v.raw_json_token().substr(0, 1) == "t" ? simdjson::T_ATOM_ERROR : simdjson::F_ATOM_ERROR;
    }
    case od::json_type::null: {
      bool is_null = false;
      if (error_code e = v.is_null().get(is_null)) return e;
      return is_null ? SUCCESS : simdjson::N_ATOM_ERROR;
    }
  }
  return simdjson::TAPE_ERROR;
}

// Reads a scalar into `f`; containers are validated and recorded as kOther.
error_code ReadField(od::value v, Field& f) {
  od::json_type t;
  if (error_code e = v.type().get(t)) return e;
  switch (t) {
    case od::json_type::number: {
      std::string_view tok = Trim(v.raw_json_token());
      if (!IsJsonNumber(tok)) return simdjson::NUMBER_ERROR;
      f.type = FieldType::kNumber;
      f.text = tok;
      return SUCCESS;
    }
    case od::json_type::string: {
      std::string_view s;
      if (error_code e = v.get_string().get(s)) return e;
      f.type = FieldType::kString;
      f.text = s;
      return SUCCESS;
    }
    case od::json_type::null:
      f.type = FieldType::kNull;
      f.text = {};
      return Validate(v);
    default:
      f.type = FieldType::kOther;
      f.text = {};
      return Validate(v);
  }
}

error_code ReadDim3(od::value v, Dim3& d) {
  d = Dim3{};
  od::json_type t;
  if (error_code e = v.type().get(t)) return e;
  if (t != od::json_type::array) {
    d.type = t == od::json_type::null ? FieldType::kNull : FieldType::kOther;
    return Validate(v);
  }
  od::array a;
  if (error_code e = v.get_array().get(a)) return e;
  int n = 0;
  bool ok = true;
  for (auto el : a) {
    od::value x;
    if (error_code e = el.get(x)) return e;
    Field f;
    if (error_code e = ReadField(x, f)) return e;
    int64_t value = 0;
    if (n < 3 && f.type == FieldType::kNumber &&
        DecimalToInt64(f.text, 0, true, value) == NumberStatus::kOk && value >= INT32_MIN &&
        value <= INT32_MAX) {
      d.v[n] = static_cast<int32_t>(value);
    } else {
      ok = false;
    }
    ++n;
  }
  d.type = ok && n == 3 ? FieldType::kNumber : FieldType::kOther;
  return SUCCESS;
}

error_code ReadArgs(od::value v, RawEvent& ev) {
  od::json_type t;
  if (error_code e = v.type().get(t)) return e;
  if (t != od::json_type::object) {
    Field f;
    if (error_code e = ReadField(v, f)) return e;
    ev.args = f.type;
    return SUCCESS;
  }
  ev.args = FieldType::kOther;
  ev.args_is_object = true;
  od::object o;
  if (error_code e = v.get_object().get(o)) return e;
  for (auto member : o) {
    od::field fld;
    std::string_view key;
    if (error_code e = std::move(member).get(fld)) return e;
    if (error_code e = KeyOf(fld, key)) return e;
    od::value& x = fld.value();
    Field* f = nullptr;
    Dim3* dim = nullptr;
    if (ArgsMember(ev, key, f, dim) == ArgsSlot::kDim3) {
      if (error_code e = ReadDim3(x, *dim)) return e;
      continue;
    }
    error_code e = f ? ReadField(x, *f) : Validate(x);
    if (e) return e;
  }
  return SUCCESS;
}

error_code ReadEvent(od::document& doc, RawEvent& ev) {
  ev = RawEvent{};
  od::json_type t;
  if (error_code e = doc.type().get(t)) return e;
  if (t != od::json_type::object) {
    // Not an event; still has to be valid JSON.
    od::value v;
    if (t == od::json_type::array) {
      od::array a;
      if (error_code e = doc.get_array().get(a)) return e;
      for (auto el : a) {
        if (error_code e = el.get(v)) return e;
        if (error_code e = Validate(v)) return e;
      }
      return SUCCESS;
    }
    if (t == od::json_type::string) {
      std::string_view s;
      return doc.get_string().get(s);
    }
    // A scalar at the root: simdjson checks it when asked for its type.
    if (t == od::json_type::number) {
      std::string_view tok;
      if (error_code e = doc.raw_json_token().get(tok)) return e;
      return IsJsonNumber(tok) ? SUCCESS : simdjson::NUMBER_ERROR;
    }
    if (t == od::json_type::boolean) {
      bool b = false;
      return doc.get_bool().get(b);
    }
    bool is_null = false;
    if (error_code e = doc.is_null().get(is_null)) return e;
    return is_null ? SUCCESS : simdjson::N_ATOM_ERROR;
  }
  ev.is_object = true;
  od::object o;
  if (error_code e = doc.get_object().get(o)) return e;
  for (auto member : o) {
    od::field fld;
    std::string_view key;
    if (error_code e = std::move(member).get(fld)) return e;
    if (error_code e = KeyOf(fld, key)) return e;
    od::value& x = fld.value();
    Field* f = nullptr;
    if (EventMember(ev, key, f) == EventSlot::kArgs) {
      if (error_code e = ReadArgs(x, ev)) return e;
      continue;
    }
    error_code e = f ? ReadField(x, *f) : Validate(x);
    if (e) return e;
  }
  return SUCCESS;
}

}  // namespace

namespace {

// Member names we read, found by a hash of their first and last bytes and their length that is
// collision-free for each table (checked at compile time): one lookup and one compare per
// member, instead of a branch per candidate name that the branch predictor keeps missing.
struct MemberKey {
  std::string_view key;  // empty: no name hashes here
  MemberSlot slot;
  // The name as three little-endian words and the masks of its bytes in them.
  uint64_t word[3] = {0, 0, 0};
  uint64_t mask[3] = {0, 0, 0};

  // Whether `k` (kMemberNameReadable bytes readable) is this name: three loads, no loop, no call;
  // a name longer than the three words (wait_on_cuda_event_record_corr_id) compares its tail once
  // the rest matched (k then has all its bytes).
  bool Is(std::string_view k) const {
    uint64_t w[3];
    std::memcpy(w, k.data(), sizeof w);
    if ((((w[0] ^ word[0]) & mask[0]) | ((w[1] ^ word[1]) & mask[1]) | ((w[2] ^ word[2]) & mask[2]) |
         (k.size() ^ key.size())) != 0)
      return false;
    return key.size() <= sizeof word ||
           std::memcmp(k.data() + sizeof word, key.data() + sizeof word, key.size() - sizeof word) == 0;
  }
};
static_assert(kMemberNameReadable >= 24);

struct KeyHash {
  int first, last, length;
  constexpr size_t operator()(std::string_view k) const {
    return (static_cast<unsigned char>(k.front()) * first + static_cast<unsigned char>(k.back()) * last +
            static_cast<int>(k.size()) * length) & 63;
  }
};

template <size_t N>
constexpr std::array<MemberKey, 64> MakeTable(const MemberKey (&keys)[N], KeyHash hash) {
  std::array<MemberKey, 64> table{};
  for (MemberKey k : keys) {
    // Not a constant expression (so a compile error) when two names share a slot or one is too long.
    if (!table[hash(k.key)].key.empty()) throw "member names collide: change the hash";
    if (k.key.empty() || k.key.size() > 48) throw "member names must have 1 to 48 bytes";
    for (size_t i = 0; i < k.key.size() && i < 24; ++i) {
      k.word[i / 8] |= uint64_t{static_cast<unsigned char>(k.key[i])} << (8 * (i % 8));
      k.mask[i / 8] |= uint64_t{0xFF} << (8 * (i % 8));
    }
    table[hash(k.key)] = k;
  }
  return table;
}

constexpr KeyHash kEventHash{1, 0, 7};
constexpr MemberKey kEventNames[] = {
    {"ph", {&RawEvent::ph}},   {"cat", {&RawEvent::cat}}, {"name", {&RawEvent::name}},
    {"pid", {&RawEvent::pid}}, {"tid", {&RawEvent::tid}}, {"ts", {&RawEvent::ts}},
    {"dur", {&RawEvent::dur}}, {"id", {&RawEvent::id}},   {"args", {nullptr, nullptr, true}},
};
constexpr auto kEventTable = MakeTable(kEventNames, kEventHash);

constexpr KeyHash kArgsHash{0, 3, 7};
constexpr MemberKey kArgsNames[] = {
    {"pid", {&RawEvent::arg_pid}},
    {"grid", {nullptr, &RawEvent::grid}},
    {"name", {&RawEvent::arg_name}},
    {"block", {nullptr, &RawEvent::block}},
    {"bytes", {&RawEvent::bytes}},
    {"device", {&RawEvent::device}},
    {"stream", {&RawEvent::stream}},
    {"inDevice", {&RawEvent::in_device}},
    {"correlation", {&RawEvent::correlation}},
    {"shared memory", {&RawEvent::shared_memory}},
    {"cuda_sync_kind", {&RawEvent::sync_kind}},
    {"registers per thread", {&RawEvent::registers}},
    {"wait_on_cuda_event_id", {&RawEvent::wait_event_id}},
    {"wait_on_stream", {&RawEvent::wait_stream}},
    {"wait_on_cuda_event_record_corr_id", {&RawEvent::wait_record_corr}},
    // PyTorch's collective metadata on NCCL kernels (record_param_comms)
    {"Collective name", {&RawEvent::coll_name}},
    {"dtype", {&RawEvent::coll_dtype}},
    {"In msg nelems", {&RawEvent::coll_in_nelems}},
    {"Out msg nelems", {&RawEvent::coll_out_nelems}},
    {"Group size", {&RawEvent::coll_group_size}},
    {"Process Group Name", {&RawEvent::coll_group}},
    {"Process Group Ranks", {&RawEvent::coll_group_ranks}},
    {"Seq", {&RawEvent::coll_seq}},
};
constexpr auto kArgsTable = MakeTable(kArgsNames, kArgsHash);

template <size_t N>
const MemberSlot* Find(const std::array<MemberKey, N>& table, KeyHash hash, std::string_view key) {
  if (key.empty()) return nullptr;
  const MemberKey& m = table[hash(key)];
  return m.Is(key) ? &m.slot : nullptr;
}

}  // namespace

const MemberSlot* FindEventMember(std::string_view key) { return Find(kEventTable, kEventHash, key); }
const MemberSlot* FindArgsMember(std::string_view key) { return Find(kArgsTable, kArgsHash, key); }

EventSlot EventMember(RawEvent& ev, std::string_view key, Field*& f) {
  f = nullptr;
  const MemberSlot* m = FindEventMember(key);
  if (!m) return EventSlot::kNone;
  if (m->args) {
    ev.duplicate_key |= ev.args != FieldType::kAbsent;
    return EventSlot::kArgs;
  }
  f = &(ev.*m->field);
  ev.duplicate_key |= f->type != FieldType::kAbsent;
  return EventSlot::kField;
}

ArgsSlot ArgsMember(RawEvent& ev, std::string_view key, Field*& f, Dim3*& dim) {
  f = nullptr;
  dim = nullptr;
  const MemberSlot* m = FindArgsMember(key);
  if (!m) return ArgsSlot::kNone;
  if (m->dim) {
    dim = &(ev.*m->dim);
    ev.duplicate_key |= dim->type != FieldType::kAbsent;
    return ArgsSlot::kDim3;
  }
  f = &(ev.*m->field);
  ev.duplicate_key |= f->type != FieldType::kAbsent;
  return ArgsSlot::kField;
}


struct EventParser::Impl {
  od::parser parser;
  std::string repaired;
};

EventParser::EventParser(int max_depth) : max_depth_(max_depth) {}

EventParser::~EventParser() = default;

Status EventParser::Parse(std::string_view json, uint64_t offset, RawEvent& event) {
  if (!impl_) {
    // On first use: most events take the fast path (kineto_fast.h), many files none of this one.
    impl_ = std::make_unique<Impl>();
    // The scanner enforces the depth limit; simdjson's own limit just has to be above it.
    // A failure here (no memory) surfaces again, as an error, from the first iterate().
    error_code e = impl_->parser.allocate(64 * 1024, static_cast<size_t>(max_depth_) + 8);
    (void)e;
  }
  simdjson::padded_string_view view(json.data(), json.size(), json.size() + simdjson::SIMDJSON_PADDING);
  od::document doc;
  error_code e = impl_->parser.iterate(view).get(doc);
  const bool iterated = !e;  // only then does `doc` have a position to ask for
  if (!e) e = ReadEvent(doc, event);
  if (e && e != simdjson::UTF8_ERROR) {
    // Where simdjson stopped, when it can tell, else the start of the event.
    const char* at = nullptr;
    uint64_t where = offset;
    if (iterated && doc.current_location().get(at) == SUCCESS && at >= json.data() &&
        at < json.data() + json.size()) {
      where = offset + static_cast<uint64_t>(at - json.data());
    }
    return InvalidInput("invalid JSON at byte " + std::to_string(where) + " (in the event at byte " +
                        std::to_string(offset) + "): " + simdjson::error_message(e));
  }
  if (e == simdjson::UTF8_ERROR) {
    // Names with invalid UTF-8 happen (truncated multi-byte names): keep the event, repaired; the
    // importer counts it (invalid_utf8).
    ++repaired_utf8_;
    impl_->repaired = tg::RepairUtf8(json);
    impl_->repaired.reserve(impl_->repaired.size() + simdjson::SIMDJSON_PADDING);
    simdjson::padded_string_view fixed(impl_->repaired.data(), impl_->repaired.size(),
                                       impl_->repaired.capacity());
    e = impl_->parser.iterate(fixed).get(doc);
    if (!e) e = ReadEvent(doc, event);
  }
  if (e) {
    return InvalidInput("invalid JSON in the event at byte " + std::to_string(offset) + ": " +
                        simdjson::error_message(e));
  }
  return Status::Ok();
}

}  // namespace tg::internal
