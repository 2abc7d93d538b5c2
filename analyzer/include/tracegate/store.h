// The trace store: a SQLite file. Tables that Nsight Systems exports also have keep nsys's names
// and columns (StringIds, CUPTI_ACTIVITY_KIND_KERNEL, _MEMCPY, _MEMSET, _RUNTIME (runtime and, with
// eventClass 1, driver calls, as nsys exports them), _SYNCHRONIZATION, NVTX_EVENTS, PROCESSES,
// TARGET_INFO_GPU), so SQL written against nsys exports runs on our files and one reader
// (ImportSqlite) serves both. What nsys has no table for lives in tracegate_* tables (schema
// version, metadata, samples, data-quality counters, GPU-projected ranges) and in tg* columns.
// The full layout and its conventions: analyzer/src/store_schema.{h,cpp}.
#pragma once

#include <memory>
#include <string>

#include "tracegate/model.h"
#include "tracegate/status.h"

namespace tg {

inline constexpr int kStoreSchemaVersion = 1;

// Writes a store incrementally (the collector appends batches while it records). Rows go to a
// temp file beside `path`; Finish renames it into place, so `path` appears whole or not at all and
// an existing file there is replaced only by a complete one. Not thread-safe.
class StoreWriter {
 public:
  // Creates the temp file and the schema. Errors: "<path>: ...".
  [[nodiscard]] static Status Create(const std::string& path, std::unique_ptr<StoreWriter>* out);
  StoreWriter(const StoreWriter&) = delete;
  StoreWriter& operator=(const StoreWriter&) = delete;
  // Removes the temp file unless Finish succeeded.
  ~StoreWriter();

  // Appends every row of batch's event tables (kernels, copies, memsets, syncs, API calls,
  // ranges, samples): pass only rows not appended before. Names are ids into batch.strings; they
  // are mapped to the file's string ids, so each batch may use its own StringTable. Metadata,
  // devices, processes and quality counters of `batch` are ignored (see Finish).
  [[nodiscard]] Status Append(const Trace& batch);

  // Writes final_state's metadata, devices, processes and quality counters (its event tables are
  // ignored), builds the indexes and renames the file into place. After an error the writer is
  // unusable and the temp file is gone once it is destroyed.
  [[nodiscard]] Status Finish(const Trace& final_state);

 private:
  struct Impl;
  explicit StoreWriter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Writes the whole trace to `path` atomically (StoreWriter: one Append, then Finish).
[[nodiscard]] Status WriteStore(const Trace& trace, const std::string& path);

}  // namespace tg
