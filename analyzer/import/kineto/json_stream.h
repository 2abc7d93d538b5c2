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

#include "analyzer/import/kineto/gz_reader.h"
#include "tracegate/analyzer/status.h"

namespace tg::internal {

// Readable bytes guaranteed after every view handed to a sink (simdjson needs 64).
inline constexpr size_t kJsonPadding = 64;

class JsonSink {
 public:
  virtual ~JsonSink() = default;
  // One element of the event array. `offset` is its first byte in the (uncompressed) text.
  // The view stays valid only during the call.
  virtual Status OnEvent(std::string_view json, uint64_t offset) = 0;
  // Optional fast path, offered every element before it is scanned: `p` is its first byte,
  // [p, end) the data in the read buffer (kJsonPadding readable bytes follow), `depth` the
  // array's depth. Returns the element's length when it has consumed it (and counts as its
  // OnEvent), or 0 to have it scanned and passed to OnEvent.
  virtual size_t OnEventInPlace(const char* p, const char* end, int depth, uint64_t offset) {
    (void)p, (void)end, (void)depth, (void)offset;
    return 0;
  }
  // Parallel import: called when an element of an event array starts at ScanOptions::split_at.
  // Returning true says the rest of that array was read elsewhere: `elements` of them, the ']'
  // closing it ending before byte `resume`, where the scan continues.
  virtual bool OnSplit(uint64_t& resume, uint64_t& elements) {
    (void)resume, (void)elements;
    return false;
  }
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
  uint64_t split_at = UINT64_MAX;    // see JsonSink::OnSplit
};

// Reads all of `in`. Errors: truncated data, mismatched brackets, missing commas/colons at the
// levels it walks, a top level that is not an object or array, traceEvents that is not an
// array, nesting deeper than max_depth, anything after the top-level value.
[[nodiscard]] Status StreamTraceJson(GzReader& in, const ScanOptions& options, JsonSink& sink,
                                     StreamStats& stats);

// The second half of a parallel import: `in` is positioned at byte `offset`, where an element of
// an event array at `depth` is taken to start; streams the elements from there through the ']'
// that closes the array, `end` being the byte after it. An error means only that the guess or
// the data is bad: the caller then reads this part sequentially, which gives the real message.
[[nodiscard]] Status StreamArrayTail(GzReader& in, uint64_t offset, int depth, const ScanOptions& options,
                                     JsonSink& sink, StreamStats& stats, uint64_t& end);

}  // namespace tg::internal
