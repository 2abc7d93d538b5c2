#include "gz_reader.h"

#include <cerrno>
#include <climits>
#include <cstring>

namespace tg::internal {

namespace {
// zlib's own input buffer; large enough that inflate is not starved by small reads.
constexpr unsigned kZlibBuffer = 256 * 1024;
}  // namespace

GzReader::~GzReader() {
  if (gz_) gzclose(gz_);
}

std::string GzReader::ZlibMessage(const char* msg) const {
  std::string m = msg && *msg ? msg : "unknown error";
  if (m.compare(0, path_.size() + 2, path_ + ": ") == 0) m.erase(0, path_.size() + 2);
  return m;
}

Status GzReader::Open(const std::string& path) {
  path_ = path;
  errno = 0;
  gz_ = gzopen(path.c_str(), "rb");
  if (!gz_) {
    return IoError(std::string("cannot open: ") + (errno ? std::strerror(errno) : "out of memory"));
  }
  gzbuffer(gz_, kZlibBuffer);
  // gzdirect is only meaningful after the first read has looked at the header, so peek a byte.
  int c = gzgetc(gz_);
  if (c >= 0) gzungetc(c, gz_);
  gzipped_ = gzdirect(gz_) == 0;
  int err = 0;
  const char* msg = gzerror(gz_, &err);
  if (err != Z_OK && err != Z_BUF_ERROR) {
    return InvalidInput("corrupt gzip data (" + ZlibMessage(msg) + ")");
  }
  return Status::Ok();
}

Status GzReader::Read(char* dst, size_t n, size_t& got) {
  got = 0;
  if (n > static_cast<size_t>(INT_MAX)) n = static_cast<size_t>(INT_MAX);
  int r = gzread(gz_, dst, static_cast<unsigned>(n));
  int err = 0;
  const char* msg = gzerror(gz_, &err);
  if (r < 0 || (err != Z_OK && err != Z_BUF_ERROR)) {
    if (err == Z_ERRNO) return IoError(std::string("read failed: ") + std::strerror(errno));
    return InvalidInput("corrupt gzip data (" + ZlibMessage(msg) + ")");
  }
  if (err == Z_BUF_ERROR) {
    // zlib's way of saying the compressed stream ended before its trailer.
    return InvalidInput("truncated gzip data (the compressed stream ends early)");
  }
  got = static_cast<size_t>(r);
  return Status::Ok();
}

}  // namespace tg::internal
