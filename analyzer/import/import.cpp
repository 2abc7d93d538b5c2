// Format detection and importer dispatch.
#include "tracegate/analyzer/import.h"

#include <zlib.h>

#include <cstring>
#include <string>

#include "analyzer/util/fileio.h"

namespace tg {

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

Status DetectFormat(const std::string& path, TraceFormat& format) {
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

Status ImportTrace(const std::string& path, Trace& trace, const ImportOptions& options) {
  TraceFormat format = TraceFormat::kUnknown;
  TG_RETURN_IF_ERROR(DetectFormat(path, format));
  Status s = format == TraceFormat::kSqlite ? ImportSqlite(path, trace)
                                            : ImportKineto(path, trace, options);
  if (!s.ok()) return s;
  trace.metadata[std::string(meta::kSourcePath)] = path;
  FinalizeTrace(trace);
  return Status::Ok();
}

}  // namespace tg
