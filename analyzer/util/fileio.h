// File helpers shared by every writer: outputs appear whole or not at all.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

#include "tracegate/analyzer/status.h"

namespace tg::internal {

// A temp path in the same directory as `path` (so rename is atomic), unique per process+call.
std::string TempPathFor(const std::string& path);

// Writes `content` to a temp file, fsyncs it, renames it over `path` and fsyncs the directory.
// On any failure the temp file is removed and an existing `path` is left untouched.
[[nodiscard]] Status WriteFileAtomic(const std::string& path, std::string_view content);
// The same for content given in pieces, written one after the other (no joined copy).
[[nodiscard]] Status WriteFileAtomic(const std::string& path, std::initializer_list<std::string_view> parts);

// A file written in pieces at given offsets (from two threads at once when they write disjoint
// bytes) that appears at `path` only on Commit, as WriteFileAtomic's does: a temp file beside
// it, fsynced, renamed over it, the directory fsynced. Each piece's writeback to the disk starts
// as soon as it is written, so that Commit's fsync waits for less. The temp file is removed
// unless committed.
class AtomicFile {
 public:
  explicit AtomicFile(std::string path) : path_(std::move(path)) {}
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  [[nodiscard]] Status Open();
  [[nodiscard]] Status WriteAt(uint64_t offset, std::string_view content);
  // Fsyncs and closes the temp file and hands its name over (WriteTempFile's half: the caller
  // renames it with CommitTempFile, or removes it).
  [[nodiscard]] Status Close(std::string* tmp);
  [[nodiscard]] Status Commit();  // Close, then CommitTempFile

 private:
  std::string path_;
  std::string tmp_;  // removed by the destructor until handed over
  int fd_ = -1;
};

// The first half of WriteFileAtomic: writes and fsyncs a temp file beside `path` (its name in
// *tmp), for callers that must do something else before the rename (CommitTempFile) makes it
// visible. Nothing is left behind on failure.
[[nodiscard]] Status WriteTempFile(const std::string& path, std::initializer_list<std::string_view> parts,
                                   std::string* tmp);

// Renames a finished temp file over `path` and fsyncs the directory; removes tmp on failure.
[[nodiscard]] Status CommitTempFile(const std::string& tmp, const std::string& path);

// Checks that `path` names a readable regular file. Message: "<path>: <problem>".
[[nodiscard]] Status CheckReadableFile(const std::string& path);

}  // namespace tg::internal
