// What the reducer keeps of each rank until every rank is in, packed: its collective calls as
// variable-length deltas (docs/PERFORMANCE.md, "Jobs": a job's memory grows by this per rank).
#include "reports/job/job_internal.h"

namespace tg::internal {

namespace {

uint64_t ZigZag(int64_t v) { return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63); }
int64_t UnZigZag(uint64_t v) { return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1); }

void PutVarint(std::vector<uint8_t>& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<uint8_t>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<uint8_t>(v));
}

uint64_t GetVarint(const uint8_t*& p) {
  uint64_t v = 0;
  for (int shift = 0;; shift += 7) {
    const uint8_t b = *p++;
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
  }
}

// Wrapping differences: exact for any two int64 values, small for the usual ones.
int64_t Delta(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b)); }
int64_t Undelta(int64_t base, int64_t d) {
  return static_cast<int64_t>(static_cast<uint64_t>(base) + static_cast<uint64_t>(d));
}

}  // namespace

// Per call: a byte of flags (counted; the same name and group as the previous call), the name
// and group when they changed, then the zig-zag differences of seq and step from the previous
// call's, start from the previous start, and end from this start. A rank's calls follow each
// other by start with the same few names and consecutive sequence numbers and steps, so most
// fields take one byte and the times two to four: ~12 bytes a call instead of 48.
enum : uint8_t { kCounted = 1, kSameNames = 2 };

void PackedCalls::Add(const RankCall& c) {
  const bool same = size_ > 0 && c.name == last_.name && c.group == last_.group;
  bytes_.push_back(static_cast<uint8_t>((c.counted ? kCounted : 0) | (same ? kSameNames : 0)));
  if (!same) {
    PutVarint(bytes_, c.name);
    PutVarint(bytes_, c.group);
  }
  PutVarint(bytes_, ZigZag(Delta(c.seq, last_.seq)));
  PutVarint(bytes_, ZigZag(Delta(c.step, last_.step)));
  PutVarint(bytes_, ZigZag(Delta(c.start_ns, last_.start_ns)));
  PutVarint(bytes_, ZigZag(Delta(c.end_ns, c.start_ns)));
  last_ = c;
  ++size_;
}

std::vector<RankCall> PackedCalls::Unpack() const {
  std::vector<RankCall> out;
  out.reserve(size_);
  RankCall prev;
  const uint8_t* p = bytes_.data();
  for (size_t i = 0; i < size_; ++i) {
    RankCall c;
    const uint8_t flags = *p++;
    c.counted = (flags & kCounted) != 0;
    if (flags & kSameNames) {
      c.name = prev.name;
      c.group = prev.group;
    } else {
      c.name = static_cast<uint32_t>(GetVarint(p));
      c.group = static_cast<uint32_t>(GetVarint(p));
    }
    c.seq = Undelta(prev.seq, UnZigZag(GetVarint(p)));
    c.step = Undelta(prev.step, UnZigZag(GetVarint(p)));
    c.start_ns = Undelta(prev.start_ns, UnZigZag(GetVarint(p)));
    c.end_ns = Undelta(c.start_ns, UnZigZag(GetVarint(p)));
    out.push_back(c);
    prev = c;
  }
  return out;
}

void PackedCalls::ShrinkToFit() { bytes_.shrink_to_fit(); }

}  // namespace tg::internal
