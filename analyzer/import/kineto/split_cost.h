// Where the two-thread Kineto import splits a file: at the byte where half the estimated cost of
// reading it lies, not half its bytes. A byte of a kernel costs the reader less than a byte of a
// launch flow but its event costs more (more members, more columns): a file whose halves hold
// different kinds of events (a trace with its host ops and Python frames first and its GPU work
// after them) would otherwise leave one thread idle while the other reads on. Internal to the
// Kineto importer.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

namespace tg::internal {

// Rows of the importer's tables, in KinetoBuilder's order: kernels, copies, memsets, syncs, API
// calls, ranges.
using TableRows = std::array<uint64_t, 6>;

// The estimated cost, in instructions of the reader and builder, of the events whose "cat"
// member lies in `text` (a window of a trace file, cut anywhere); `events` (may be null): how
// many were counted; `rows` (may be null): the rows they add to each table.
uint64_t EstimatedReadCost(std::string_view text, uint64_t* events = nullptr, TableRows* rows = nullptr);

// Window i of `rows` was sampled from the i-th of rows.size() equal stretches of a `size`-byte
// file, `window` bytes of it: the rows of bytes [from, size), each stretch taken at its window's
// rows per byte (a stretch that begins before `from`, for its bytes from there). Zero for a
// stretch shorter than its window.
TableRows EstimatedRows(std::span<const TableRows> rows, uint64_t window, uint64_t size, uint64_t from);

// Window i of `costs` was sampled from the i-th of costs.size() equal stretches of a `size`-byte
// file, `window` bytes of it: the byte where half the file's estimated cost lies, each stretch
// taken at its window's cost per byte. A window that counted no event takes the mean of those
// that did; with none, or a stretch shorter than its window, the file's middle byte.
uint64_t CostMiddle(std::span<const uint64_t> costs, uint64_t window, uint64_t size);

}  // namespace tg::internal
