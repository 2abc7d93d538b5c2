// ClassifyInput: is a file a tracegate report or a trace? Decided from the first bytes and, for
// JSON, from the top-level keys read with a SAX parser that stops as soon as it knows, so a
// large Chrome trace is never loaded whole here.
#include <fstream>
#include <nlohmann/json.hpp>

#include "tracegate/reports/compare.h"
#include "analyzer/util/fileio.h"

namespace tg {

using internal::CheckReadableFile;

namespace {

using nlohmann::json;

// Stops (returns false) once the top level decides: an array or a "traceEvents" member is a
// trace, a "schema" member is a report.
class TopLevelSniffer : public nlohmann::json_sax<json> {
 public:
  bool decided = false;
  bool report = false;

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override {
    ++depth_;
    return true;
  }
  bool end_object() override {
    --depth_;
    return true;
  }
  bool start_array(std::size_t) override {
    if (depth_ == 0) return Decide(false);
    ++depth_;
    return true;
  }
  bool end_array() override {
    --depth_;
    return true;
  }
  bool key(string_t& k) override {
    if (depth_ != 1) return true;
    if (k == "schema") return Decide(true);
    if (k == "traceEvents") return Decide(false);
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

 private:
  bool Decide(bool is_report) {
    decided = true;
    report = is_report;
    return false;
  }
  int depth_ = 0;
};

}  // namespace

Status ClassifyInput(const std::string& path, InputKind* kind) {
  TG_RETURN_IF_ERROR(CheckReadableFile(path));
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(path + ": cannot open the file");
  char head[16] = {};
  in.read(head, sizeof head);
  const std::string magic(head, static_cast<size_t>(in.gcount()));
  *kind = InputKind::kTrace;
  if (magic.starts_with("\x1f\x8b") || magic.starts_with(std::string("SQLite format 3\0", 16))) return Status::Ok();
  in.clear();
  in.seekg(0);
  TopLevelSniffer sniffer;
  (void)json::sax_parse(in, &sniffer);
  if (sniffer.decided && sniffer.report) *kind = InputKind::kReport;
  return Status::Ok();
}

}  // namespace tg
