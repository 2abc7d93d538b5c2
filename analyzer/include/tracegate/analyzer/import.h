// Importers: each trace format is one importer that fills the same Trace model. The format is
// detected from the file's content (magic bytes, first JSON token), never from its name.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "tracegate/analyzer/model.h"
#include "tracegate/analyzer/status.h"

namespace tg {

enum class TraceFormat { kUnknown, kKinetoJson, kSqlite };

struct ImportOptions {
  // Kineto/Chrome JSON: maximum nesting depth accepted before the file is rejected.
  int max_json_depth = 512;
  // Kineto/Chrome JSON: parser threads. 0 = automatic (2 for a plain file of 16 MiB or more on a
  // machine with 2+ cores, else 1); 1 = sequential. Results do not depend on it.
  int threads = 0;
};

// Looks at the first bytes of the file (after gunzip when it is gzip) to decide the format.
// Returns kUnknown with a status explaining why when it is none we read.
[[nodiscard]] Status DetectFormat(const std::string& path, TraceFormat* format);

// Kineto / Chrome-trace JSON, plain or gzip.
[[nodiscard]] Status ImportKineto(const std::string& path, const ImportOptions& options, Trace* trace);
[[nodiscard]] inline Status ImportKineto(const std::string& path, Trace* trace) {
  return ImportKineto(path, {}, trace);
}

// A SQLite file: tracegate's own store or an Nsight Systems export (same tables; see store.h).
[[nodiscard]] Status ImportSqlite(const std::string& path, Trace* trace);

// The rank a trace names, found without loading it (for a job's fail-fast duplicate check): a
// Kineto file's distributedInfo.rank, read from a bounded prefix (PyTorch writes it with the
// other header keys before traceEvents). `known`: whether that is what ImportTrace will find,
// i.e. distributedInfo was read, or the header ended without one (then `rank` is nullopt). A file
// it cannot decide (a SQLite file, a header past the prefix) is not known, and not an error.
struct TraceRankPeek {
  bool known = false;
  std::optional<int64_t> rank;
};
[[nodiscard]] Status PeekTraceRank(const std::string& path, TraceRankPeek* out);

// Detects the format and runs the matching importer, then FinalizeTrace.
// Every error message starts with the path: "<path>: <problem>".
[[nodiscard]] Status ImportTrace(const std::string& path, const ImportOptions& options, Trace* trace);
[[nodiscard]] inline Status ImportTrace(const std::string& path, Trace* trace) { return ImportTrace(path, {}, trace); }

}  // namespace tg
