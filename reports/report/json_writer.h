// JsonWriter: JSON text written a value at a time, laid out byte for byte as
// nlohmann::json::dump(indent, ' ', /*ensure_ascii=*/false, error_handler_t::replace) lays out
// the same document. The report writes its iteration rows with it instead of holding them in a
// tree (a trace of thousands of iterations would hold tens of MB of JSON nodes), and the rest of
// the document from its tree with Value(), so that the file is exactly what WriteJsonFile would
// write for the tree with the rows in it.
//
// Numbers and strings keep nlohmann's own text: integers as decimal digits (std::to_chars writes
// the same), doubles by nlohmann itself (DoubleTexts), strings escaped by nlohmann unless every
// byte is printable ASCII other than '"' and '\', which it writes unchanged.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tg::internal {

// The text nlohmann::json(v).dump() writes for each of `values` (shortest-form Grisu2 digits,
// ".0" after integral values, exponents as "1e-05", null for NaN and infinities), from one dump
// of them all as an array: building the serializer costs more than formatting one number. We do
// not format doubles ourselves because Grisu2 is not always the shortest form: std::to_chars
// writes other digits for ~0.14% of values (91925.255717 where nlohmann writes 91925.25571699999).
class DoubleTexts {
 public:
  DoubleTexts() = default;
  explicit DoubleTexts(std::span<const double> values);

  size_t size() const { return ends_.size(); }
  std::string_view operator[](size_t i) const;

 private:
  std::string text_;          // "[t0,t1,...]": no number's text holds a comma
  std::vector<size_t> ends_;  // where each text ends: at its ',' or the closing ']'
};

class JsonWriter {
 public:
  // Spaces per nesting level; as dump(indent) with indent >= 0 (newlines after every bracket).
  explicit JsonWriter(int indent = 2);

  // Objects and arrays. In an object, each value follows its Key(); nlohmann writes the keys of
  // an object sorted (bytewise), so a caller that wants its layout gives them in that order.
  void BeginObject();
  void EndObject();
  void BeginArray();
  void EndArray();
  void Key(std::string_view key);

  void Null();
  void Bool(bool v);
  void Int(int64_t v);
  void Uint(uint64_t v);
  void String(std::string_view v);
  // texts[i]: the double formatted as nlohmann writes it.
  void Double(const DoubleTexts& texts, size_t i);
  // A whole tree, its doubles formatted in one run. Binary values (only CBOR and similar
  // parsers make them) and discarded ones (only parser callbacks) are written as dump() writes
  // them without indentation: a document built from values has neither.
  void Value(const nlohmann::json& v);

  // A writer for the next `count` elements of the array open here, with a text of its own that
  // goes right after this writer's text so far (TakeText() first); this writer goes on as if
  // those elements had been written. Lets another thread write a run of elements.
  JsonWriter Fork(size_t count);
  // Appends `text` as members of the object open here, already laid out as this writer lays
  // them out at this depth (separators, indentation, nested containers closed); the object then
  // counts as not empty. For a caller that writes many objects of one shape (analysis_json.cpp's
  // iteration rows: their layout recorded once with a Fork).
  void RawMembers(std::string_view text);
  // `s` as String() writes it, appended to `out`.
  static void AppendQuoted(std::string& out, std::string_view s);
  // The text written since the last TakeText(); the writer keeps its place in the document.
  std::string TakeText();
  void Reserve(size_t bytes) { text_.reserve(bytes); }
  // Writes on into `buffer` (emptied; its room kept) from here: the text of a part already
  // written elsewhere, so that its pages are not faulted in again.
  void UseBuffer(std::string buffer) {
    buffer.clear();
    buffer.append(text_);
    text_ = std::move(buffer);
  }

 private:
  struct Open {
    bool object;
    size_t items;
  };
  void BeforeValue();
  void NextItem();
  void Close(bool object, char bracket);
  void Quoted(std::string_view s);
  void Tree(const nlohmann::json& v, const DoubleTexts& doubles, size_t& next);

  int indent_;
  std::string text_;
  std::vector<Open> open_;
  bool after_key_ = false;
};

}  // namespace tg::internal
