#include "reports/report/json_writer.h"

#include <array>
#include <cassert>
#include <charconv>
#include <cmath>
#include <utility>

namespace tg::internal {

namespace {

using nlohmann::json;

// Every double of `v`, in the order Tree() writes them (objects in key order, as iterated).
void CollectDoubles(const json& v, std::vector<double>& out) {
  if (v.is_number_float()) {
    out.push_back(v.get<double>());
  } else if (v.is_structured()) {
    for (const json& child : v) CollectDoubles(child, out);
  }
}

// Bytes that nlohmann's escaping writes unchanged (with ensure_ascii off, valid multi-byte UTF-8
// is written unchanged too, but telling valid from invalid is nlohmann's job).
bool PlainAscii(std::string_view s) {
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7F || c == '"' || c == '\\') return false;
  }
  return true;
}

}  // namespace

DoubleTexts::DoubleTexts(std::span<const double> values) {
  // What dump() does with a double (serializer::dump_float): null when not finite, else the
  // digits of nlohmann's own Grisu2 (detail::to_chars, into a buffer of the serializer's size),
  // called here directly: an array of json values built to be dumped cost ~1,200 instructions a
  // double. The unit tests compare every text with dump()'s.
  text_.reserve(2 + values.size() * 12);
  ends_.reserve(values.size());
  text_ += '[';
  std::array<char, 64> buffer{};
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) text_ += ',';
    const double v = values[i];
    if (!std::isfinite(v)) {
      text_ += "null";
    } else {
      const char* end = nlohmann::detail::to_chars(buffer.data(), buffer.data() + buffer.size(), v);
      text_.append(buffer.data(), static_cast<size_t>(end - buffer.data()));
    }
    ends_.push_back(text_.size());
  }
  text_ += ']';
}

std::string_view DoubleTexts::operator[](size_t i) const {
  const size_t start = i == 0 ? 1 : ends_[i - 1] + 1;
  return std::string_view(text_).substr(start, ends_[i] - start);
}

JsonWriter::JsonWriter(int indent) : indent_(indent) { assert(indent >= 0); }

void JsonWriter::BeginObject() {
  BeforeValue();
  text_ += '{';
  open_.push_back({true, 0});
}

void JsonWriter::EndObject() { Close(true, '}'); }

void JsonWriter::BeginArray() {
  BeforeValue();
  text_ += '[';
  open_.push_back({false, 0});
}

void JsonWriter::EndArray() { Close(false, ']'); }

void JsonWriter::Key(std::string_view key) {
  assert(!open_.empty() && open_.back().object && !after_key_);
  NextItem();
  Quoted(key);
  text_ += ": ";
  after_key_ = true;
}

void JsonWriter::Null() {
  BeforeValue();
  text_ += "null";
}

void JsonWriter::Bool(bool v) {
  BeforeValue();
  text_ += v ? "true" : "false";
}

void JsonWriter::Int(int64_t v) {
  BeforeValue();
  char buf[24];
  text_.append(buf, static_cast<size_t>(std::to_chars(buf, buf + sizeof buf, v).ptr - buf));
}

void JsonWriter::Uint(uint64_t v) {
  BeforeValue();
  char buf[24];
  text_.append(buf, static_cast<size_t>(std::to_chars(buf, buf + sizeof buf, v).ptr - buf));
}

void JsonWriter::String(std::string_view v) {
  BeforeValue();
  Quoted(v);
}

void JsonWriter::Double(const DoubleTexts& texts, size_t i) {
  BeforeValue();
  text_ += texts[i];
}

void JsonWriter::Value(const json& v) {
  std::vector<double> doubles;
  CollectDoubles(v, doubles);
  const DoubleTexts texts(doubles);
  size_t next = 0;
  Tree(v, texts, next);
}

JsonWriter JsonWriter::Fork(size_t count) {
  assert(!open_.empty() && !open_.back().object);
  JsonWriter fork(indent_);
  fork.open_ = open_;
  open_.back().items += count;
  return fork;
}

std::string JsonWriter::TakeText() { return std::exchange(text_, std::string()); }

// In an array each value starts a new element; in an object its Key() did that.
void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  assert(open_.empty() || !open_.back().object);
  if (!open_.empty()) NextItem();
}

// dump(indent): "{" or "[", then each item on a line of its own, indented one level deeper,
// separated by ","; the closing bracket on a line at the container's own level.
void JsonWriter::NextItem() {
  text_ += open_.back().items++ ? ",\n" : "\n";
  text_.append(open_.size() * static_cast<size_t>(indent_), ' ');
}

// An empty container is "{}" or "[]" on one line.
void JsonWriter::Close(bool object, char bracket) {
  assert(!open_.empty() && open_.back().object == object && !after_key_);
  (void)object;
  const bool empty = open_.back().items == 0;
  open_.pop_back();
  if (!empty) {
    text_ += '\n';
    text_.append(open_.size() * static_cast<size_t>(indent_), ' ');
  }
  text_ += bracket;
}

void JsonWriter::Quoted(std::string_view s) { AppendQuoted(text_, s); }

void JsonWriter::AppendQuoted(std::string& out, std::string_view s) {
  if (PlainAscii(s)) {
    out += '"';
    out += s;
    out += '"';
  } else {
    out += json(s).dump(-1, ' ', false, json::error_handler_t::replace);
  }
}

void JsonWriter::RawMembers(std::string_view text) {
  assert(!open_.empty() && open_.back().object && !after_key_);
  if (text.empty()) return;
  text_ += text;
  open_.back().items++;
}

void JsonWriter::Tree(const json& v, const DoubleTexts& doubles, size_t& next) {
  switch (v.type()) {
    case json::value_t::object:
      BeginObject();
      for (auto it = v.begin(); it != v.end(); ++it) {
        Key(it.key());
        Tree(*it, doubles, next);
      }
      EndObject();
      return;
    case json::value_t::array:
      BeginArray();
      for (const json& element : v) Tree(element, doubles, next);
      EndArray();
      return;
    case json::value_t::string:
      String(v.get_ref<const std::string&>());
      return;
    case json::value_t::boolean:
      Bool(v.get<bool>());
      return;
    case json::value_t::number_integer:
      Int(v.get<int64_t>());
      return;
    case json::value_t::number_unsigned:
      Uint(v.get<uint64_t>());
      return;
    case json::value_t::number_float:
      Double(doubles, next++);
      return;
    case json::value_t::null:
      Null();
      return;
    case json::value_t::binary:
    case json::value_t::discarded:
      break;
  }
  BeforeValue();
  text_ += v.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace tg::internal
