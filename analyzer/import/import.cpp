// Format detection and importer dispatch.
#include "tracegate/analyzer/import.h"

#include <zlib.h>

#include <charconv>
#include <cstring>
#include <string>

#include <nlohmann/json.hpp>

#include "analyzer/util/fileio.h"

namespace tg {

using internal::CheckReadableFile;

namespace {
constexpr unsigned char kGzipMagic[] = {0x1f, 0x8b};
constexpr char kSqliteMagic[] = "SQLite format 3";  // 16 bytes with the trailing NUL

// Reads up to `n` bytes of the file's content, transparently gunzipping.
Status ReadHead(const std::string& path, std::string& head, bool& gzipped, size_t n) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return IoError(path + ": cannot open: " + std::strerror(errno));
  unsigned char magic[2] = {0, 0};
  size_t got = std::fread(magic, 1, 2, f);
  std::fclose(f);
  gzipped = got == 2 && magic[0] == kGzipMagic[0] && magic[1] == kGzipMagic[1];
  gzFile gz = gzopen(path.c_str(), "rb");
  if (!gz) return IoError(path + ": cannot open");
  head.resize(n);
  int r = gzread(gz, head.data(), static_cast<unsigned>(n));
  int err = 0;
  const char* msg = gzerror(gz, &err);
  std::string error_text = (r < 0 && msg) ? msg : "";
  gzclose(gz);
  // zlib's message may already start with the path; keep only the part after it.
  if (error_text.rfind(path + ": ", 0) == 0) error_text.erase(0, path.size() + 2);
  if (r < 0) return InvalidInput(path + ": corrupt gzip data (" + error_text + ")");
  head.resize(static_cast<size_t>(r));
  return Status::Ok();
}
}  // namespace

Status DetectFormat(const std::string& path, TraceFormat* format_out) {
  TraceFormat& format = *format_out;
  format = TraceFormat::kUnknown;
  TG_RETURN_IF_ERROR(CheckReadableFile(path));
  std::string head;
  bool gzipped = false;
  TG_RETURN_IF_ERROR(ReadHead(path, head, gzipped, 4096));
  if (!gzipped && head.size() >= sizeof(kSqliteMagic) &&
      std::memcmp(head.data(), kSqliteMagic, sizeof(kSqliteMagic)) == 0) {
    format = TraceFormat::kSqlite;
    return Status::Ok();
  }
  size_t i = 0;
  if (head.compare(0, 3, "\xEF\xBB\xBF") == 0) i = 3;  // UTF-8 byte order mark
  // JSON white space only (strchr would also match the terminating NUL of its set).
  while (i < head.size() && (head[i] == ' ' || head[i] == '\t' || head[i] == '\r' || head[i] == '\n')) ++i;
  if (i == head.size()) {
    return InvalidInput(path + (gzipped ? ": gzip content is empty" : ": file holds only white space"));
  }
  if (head[i] == '{' || head[i] == '[') {
    format = TraceFormat::kKinetoJson;
    return Status::Ok();
  }
  return InvalidInput(path +
                      ": not a trace tracegate reads (expected PyTorch profiler / Chrome-trace "
                      "JSON, optionally gzip, or a SQLite file from tracegate or Nsight Systems)");
}

Status PeekTraceRank(const std::string& path, TraceRankPeek* peek) {
  TraceRankPeek& out = *peek;
  out = {};
  // The header keys (schemaVersion, deviceProperties for every GPU, distributedInfo) are a few KiB.
  constexpr size_t kPrefix = size_t{1} << 20;
  std::string head;
  bool gzipped = false;
  TG_RETURN_IF_ERROR(ReadHead(path, head, gzipped, kPrefix));
  if (!gzipped && head.compare(0, sizeof(kSqliteMagic) - 1, kSqliteMagic) == 0) return Status::Ok();
  const size_t events = head.find("\"traceEvents\"");
  const std::string_view header = std::string_view(head).substr(0, events);
  const size_t key = header.find("\"distributedInfo\"");
  if (key == std::string_view::npos) {
    out.known = events != std::string::npos;  // the header is over: no distributedInfo
    return Status::Ok();
  }
  // The object after the key: its braces balanced, strings skipped.
  const size_t open = header.find('{', key);
  int depth = 0;
  bool in_string = false;
  size_t end = std::string_view::npos;
  for (size_t i = open; i < header.size() && end == std::string_view::npos; ++i) {
    const char c = header[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{') {
      ++depth;
    } else if (c == '}' && --depth == 0) {
      end = i + 1;
    }
  }
  if (open == std::string_view::npos || end == std::string_view::npos) return Status::Ok();
  const nlohmann::json info = nlohmann::json::parse(header.substr(open, end - open), nullptr, false);
  if (info.is_discarded()) return Status::Ok();  // the import will say what is wrong
  out.known = true;
  // As the job reads the importer's "rank" metadata: a non-negative integer, or its text.
  auto it = info.find("rank");
  if (it == info.end()) return Status::Ok();
  if ((it->is_number_unsigned() && it->get<uint64_t>() <= INT64_MAX) ||
      (it->is_number_integer() && !it->is_number_unsigned() && it->get<int64_t>() >= 0)) {
    out.rank = it->get<int64_t>();
  } else if (it->is_string()) {
    const std::string& text = it->get_ref<const std::string&>();
    int64_t v = 0;
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec == std::errc() && p == text.data() + text.size() && v >= 0) out.rank = v;
  }
  return Status::Ok();
}

Status ImportTrace(const std::string& path, const ImportOptions& options, Trace* out) {
  Trace& trace = *out;
  TraceFormat format = TraceFormat::kUnknown;
  TG_RETURN_IF_ERROR(DetectFormat(path, &format));
  Status s = format == TraceFormat::kSqlite ? ImportSqlite(path, &trace) : ImportKineto(path, options, &trace);
  if (!s.ok()) return s;
  trace.metadata[std::string(meta::kSourcePath)] = path;
  FinalizeTrace(trace);
  return Status::Ok();
}

}  // namespace tg
