// The trace store: a SQLite file. Tables that Nsight Systems exports also have keep nsys's names
// and columns (StringIds, CUPTI_ACTIVITY_KIND_KERNEL, _MEMCPY, _MEMSET, _RUNTIME, _DRIVER,
// _SYNCHRONIZATION, NVTX_EVENTS, TARGET_INFO_GPU), so SQL written against nsys exports runs on
// our files and one reader (ImportSqlite) serves both. What nsys has no table for lives in
// tracegate_* tables (schema version, metadata, samples, data-quality counters, processes).
#pragma once

#include <string>

#include "tracegate/model.h"
#include "tracegate/status.h"

namespace tg {

inline constexpr int kStoreSchemaVersion = 1;

// Writes the whole trace to `path` atomically: a temp file beside it, then rename.
[[nodiscard]] Status WriteStore(const Trace& trace, const std::string& path);

}  // namespace tg
