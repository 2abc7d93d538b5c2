// File helpers shared by every writer: outputs appear whole or not at all.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

#include "tracegate/analyzer/status.h"

namespace tg::internal {

// A temp path in the same directory as `path` (so rename is atomic), unique per process+call.
std::string TempPathFor(const std::string& path);

// Writes `content` to a temp file, fsyncs it, renames it over `path` and fsyncs the directory.
// On any failure the temp file is removed and an existing `path` is left untouched.
[[nodiscard]] Status WriteFileAtomic(const std::string& path, std::string_view content);
// The same for content given in pieces, written one after the other (no joined copy).
[[nodiscard]] Status WriteFileAtomic(const std::string& path, std::initializer_list<std::string_view> parts);

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
