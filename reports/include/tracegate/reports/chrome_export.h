// Chrome / Perfetto trace-event JSON export (what `tracegate export --format chrome` writes).
#pragma once

#include <string>

#include "tracegate/analyzer/model.h"
#include "tracegate/analyzer/status.h"

namespace tg {

// Chrome/Perfetto trace JSON; written atomically (temp file + CommitTempFile). Streams events to
// disk, so memory stays small for millions of events. ts/dur are microseconds RELATIVE to the
// top-level integer "baseTimeNanoseconds" (= trace window start), printed with 3 decimals so the
// absolute nanosecond times are reconstructed exactly.
[[nodiscard]] Status WriteChromeTrace(const Trace& trace, const std::string& path);

}  // namespace tg
