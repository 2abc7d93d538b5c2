// The in-place fast path of the Kineto importer: reads one event straight from the read buffer in
// a single pass, for the shape nearly every event has (an object whose strings are printable ASCII
// without escapes). It validates what it reads against the JSON grammar and fills RawEvent exactly
// as EventParser would; anything else (escapes, non-ASCII bytes, nesting near the depth limit,
// invalid JSON, an event cut by the end of the buffer) it declines, and the event takes the
// scanner + simdjson path, which also produces the error message. Internal to the importer.
#pragma once

#include <cstddef>

#include "kineto_event.h"

namespace tg::internal {

// `p` is the first byte of an element of the event array, [p, end) the bytes read so far, and at
// least 64 readable bytes follow `end`. `max_levels` is how many nested containers the element
// may open (the scanner's max_depth minus the array's depth). Returns the element's length in
// bytes with `ev` filled, or 0 when the slow path must read it (`ev` is then unspecified).
size_t FastParseEvent(const char* p, const char* end, int max_levels, RawEvent& ev);

}  // namespace tg::internal
