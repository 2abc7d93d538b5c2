// The trace store: a SQLite file. Tables that Nsight Systems exports also have keep nsys's names
// and columns (StringIds, CUPTI_ACTIVITY_KIND_KERNEL, _MEMCPY, _MEMSET, _RUNTIME (runtime and, with
// eventClass 1, driver calls, as nsys exports them), _SYNCHRONIZATION, NVTX_EVENTS, PROCESSES,
// TARGET_INFO_GPU), so SQL written against nsys exports runs on our files and one reader
// (ImportSqlite) serves both. What nsys has no table for lives in tracegate_* tables (schema
// version, metadata, samples, data-quality counters, GPU-projected ranges) and in tg* columns.
// The full layout and its conventions: analyzer/src/store_schema.{h,cpp}.
#pragma once

#include <memory>
#include <span>
#include <string>

#include "tracegate/analyzer/model.h"
#include "tracegate/analyzer/status.h"

namespace tg {

inline constexpr int kStoreSchemaVersion = 1;

struct StoreWriterOptions {
  // false: rows go to a temp file beside `path` that Finish renames into place, so `path` appears
  // whole or not at all (an output file).
  // true: rows go straight into `path` (an existing file is replaced at Create) and every Append
  // is a committed transaction that a reader sees even if the writing process is killed right
  // after (a recorded process's part file). A transaction cut short by a kill is rolled back by
  // RecoverStore. Safe against a killed process, not against a power loss (no fsync per commit).
  bool in_place = false;
};

// Writes a store incrementally (the collector appends batches while it records). By default rows
// go to a temp file beside `path`; Finish renames it into place, so `path` appears whole or not at
// all and an existing file there is replaced only by a complete one. StoreWriterOptions::in_place
// writes `path` itself, crash-safely. Not thread-safe.
class StoreWriter {
 public:
  // Creates the file (temp or in place) and the schema. Errors: "<path>: ...".
  [[nodiscard]] static Status Create(const std::string& path, std::unique_ptr<StoreWriter>* out);
  [[nodiscard]] static Status Create(const std::string& path, const StoreWriterOptions& options,
                                     std::unique_ptr<StoreWriter>* out);
  StoreWriter(const StoreWriter&) = delete;
  StoreWriter& operator=(const StoreWriter&) = delete;
  // Removes the temp file unless Finish succeeded (an in-place file stays as last committed).
  ~StoreWriter();

  // Appends every row of batch's event tables (kernels, copies, memsets, syncs, API calls,
  // ranges, samples): pass only rows not appended before. Names are ids into batch.strings; they
  // are mapped to the file's string ids, so each batch may use its own StringTable. Metadata,
  // devices, processes and quality counters of `batch` are ignored (see Finish).
  [[nodiscard]] Status Append(const Trace& batch);

  // Appends the rows of every batch (as Append) and replaces the file's metadata, devices,
  // processes and quality counters with state's (its event tables are ignored), all in one
  // transaction: an in-place file always holds a state that matches its rows.
  [[nodiscard]] Status AppendWithState(std::span<const Trace> batches, const Trace& state);

  // Writes final_state's metadata, devices, processes and quality counters (its event tables are
  // ignored; they replace what AppendWithState wrote), builds the indexes and renames the file
  // into place (in place: commits and syncs it). After an error the writer is unusable and the
  // temp file is gone once it is destroyed.
  [[nodiscard]] Status Finish(const Trace& final_state);

 private:
  struct Impl;
  explicit StoreWriter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Writes the whole trace to `path` atomically (StoreWriter: one Append, then Finish).
[[nodiscard]] Status WriteStore(const Trace& trace, const std::string& path);

// Makes an in-place store whose writer was killed readable: opening it read-write rolls back the
// transaction the kill cut short (left in "<path>-journal"), which a read-only reader such as
// ImportSqlite cannot do. A file that is not a store is left alone (the reader then says why).
// Errors: "<path>: ...".
[[nodiscard]] Status RecoverStore(const std::string& path);

}  // namespace tg
