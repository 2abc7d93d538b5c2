// A byte-level scanner that walks one top-level JSON value read in chunks, so memory grows with
// the largest single element, not with the file. It finds where each value starts and ends
// (tracking strings, escapes and nesting) but leaves full validation of each element to its
// consumer (the Kineto importer parses every element with simdjson).
//
// Layouts it understands, as Chrome-trace producers write them:
//   {"traceEvents": [ev, ev, ...], "otherKey": value, ...}   every member but traceEvents is
//                                                            handed over whole (they are small)
//   [ev, ev, ...]                                            the JSON Array Format
// Internal to the analyzer. Messages carry no path; the importer prefixes it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "gz_reader.h"
#include "tracegate/status.h"

namespace tg::internal {

// Readable bytes guaranteed after every view handed to a sink (simdjson needs 64).
inline constexpr size_t kJsonPadding = 64;

class JsonSink {
 public:
  virtual ~JsonSink() = default;
  // One element of the event array. `offset` is its first byte in the (uncompressed) text.
  // The view stays valid only during the call.
  virtual Status OnEvent(std::string_view json, uint64_t offset) = 0;
  // A top-level member other than "traceEvents"; `key` is the raw text between the quotes.
  virtual Status OnMember(std::string_view key, std::string_view json, uint64_t offset) = 0;
};

struct StreamStats {
  bool top_level_array = false;   // the file is a bare array of events
  bool saw_trace_events = false;  // an object with a "traceEvents" member
  uint64_t elements = 0;          // elements of the event array(s)
  uint64_t bytes = 0;             // uncompressed bytes read
};

struct ScanOptions {
  int max_depth = 512;               // containers nested deeper than this are an error
  size_t chunk_bytes = 1 << 20;      // read size; also the initial buffer size
};

// Reads all of `in`. Errors: truncated data, mismatched brackets, missing commas/colons at the
// levels it walks, a top level that is not an object or array, traceEvents that is not an
// array, nesting deeper than max_depth, anything after the top-level value.
[[nodiscard]] Status StreamTraceJson(GzReader& in, const ScanOptions& options, JsonSink& sink,
                                     StreamStats& stats);

}  // namespace tg::internal
