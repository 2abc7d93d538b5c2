// Importers: each trace format is one importer that fills the same Trace model. The format is
// detected from the file's content (magic bytes, first JSON token), never from its name.
#pragma once

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
[[nodiscard]] Status DetectFormat(const std::string& path, TraceFormat& format);

// Kineto / Chrome-trace JSON, plain or gzip.
[[nodiscard]] Status ImportKineto(const std::string& path, Trace& trace, const ImportOptions& options = {});

// A SQLite file: tracegate's own store or an Nsight Systems export (same tables; see store.h).
[[nodiscard]] Status ImportSqlite(const std::string& path, Trace& trace);

// Detects the format and runs the matching importer, then FinalizeTrace.
// Every error message starts with the path: "<path>: <problem>".
[[nodiscard]] Status ImportTrace(const std::string& path, Trace& trace, const ImportOptions& options = {});

}  // namespace tg
