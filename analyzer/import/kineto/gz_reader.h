// GzReader: reads a file through zlib in chunks, so plain and gzip files read the same way.
// Internal to the analyzer. Messages carry no path; the importer prefixes it.
#pragma once

#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "tracegate/analyzer/status.h"

namespace tg::internal {

class GzReader {
 public:
  GzReader();
  GzReader(const GzReader&) = delete;
  GzReader& operator=(const GzReader&) = delete;
  ~GzReader();

  [[nodiscard]] Status Open(const std::string& path);

  // Reads up to `n` bytes into `dst`. `got` == 0 means the end of the data. A gzip stream that
  // stops before its end (truncated file) or fails its checks (corrupt data) is an error, never
  // a short read: zlib reports a premature end only through gzerror's Z_BUF_ERROR.
  [[nodiscard]] Status Read(char* dst, size_t n, size_t& got);

  // Plain files only: continues reading at byte `offset`.
  [[nodiscard]] Status Seek(uint64_t offset);

  // Gzip only, before the first Read: inflates on a second thread ahead of Read. Read returns
  // exactly what it would without (full reads; after an inflate error it reads the file again
  // up to where it was, so the error comes from the same call).
  void ReadAhead();

  bool gzipped() const { return gzipped_; }

 private:
  // zlib's message without the "<path>: " it puts in front.
  std::string ZlibMessage(const char* msg) const;
  Status ReadDirect(char* dst, size_t n, size_t& got);
  Status ReadBuffered(char* dst, size_t n, size_t& got);
  Status Reopen(uint64_t skip);
  void StartInflater();

  struct Ahead;
  std::unique_ptr<Ahead> ahead_;
  gzFile gz_ = nullptr;
  bool gzipped_ = false;
  std::string path_;
};

}  // namespace tg::internal
