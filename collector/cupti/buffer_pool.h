// Fixed-size activity buffers for CUPTI from a pool with a cap (CUPTI advises 1-10 MB buffers).
// CUPTI asks for a buffer on its own threads and hands it back full in the completed callback;
// the collector converts it and returns it here for reuse. When every buffer the cap allows is in
// CUPTI's hands, Acquire refuses: CUPTI then drops records (cuptiActivityGetNumDroppedRecords
// counts them) and the refusal itself is counted, so a trace that lost data says so. CUDA-free.
//
// Every buffer the pool hands out is zero-filled, so CUPTI need not zero it itself
// (CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER): CUPTI asks for buffers on the application's
// threads, where zeroing 8 MB stalls the program for a millisecond or more, once per flush
// interval per thread. The pool zeroes a buffer when it takes it back (on the thread that
// completed it, never the application's), only the bytes CUPTI wrote, and when it creates one;
// Reserve creates them ahead of time, off the application's critical path. The collector keeps one
// ready buffer per thread that asked for one, plus two (CUPTI fills one buffer per thread).
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace tg::cupti {

class BufferPool {
 public:
  // Buffers of buffer_bytes; at most max(1, cap_bytes / buffer_bytes) exist at once.
  BufferPool(size_t buffer_bytes, size_t cap_bytes);
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;
  ~BufferPool();  // frees the free list; buffers still out are CUPTI's and leak by design

  // A free, zero-filled buffer (8-byte aligned, as CUPTI requires), or nullptr when the cap is
  // reached. Thread-safe; allocates only when no free buffer is left.
  uint8_t* Acquire();
  // Takes back a buffer Acquire returned, zeroing its first `used_bytes` first (outside the lock):
  // CUPTI wrote nothing past the valid bytes it reported, so the rest is still zero. Thread-safe.
  void Release(uint8_t* buffer, size_t used_bytes);
  void Release(uint8_t* buffer) { Release(buffer, buffer_bytes_); }
  // Creates zero-filled buffers (their pages touched) until `free_buffers` are free, within the
  // cap. Thread-safe; the allocation and zeroing happen outside the lock.
  void Reserve(size_t free_buffers);

  size_t buffer_bytes() const { return buffer_bytes_; }
  size_t max_buffers() const { return max_buffers_; }
  size_t allocated() const;   // buffers created so far (free or out)
  size_t free_buffers() const;
  uint64_t refusals() const;  // Acquire calls refused because of the cap

 private:
  uint8_t* NewZeroed() const;  // nullptr when out of memory

  const size_t buffer_bytes_;
  const size_t max_buffers_;
  mutable std::mutex mu_;
  std::vector<uint8_t*> free_;
  size_t allocated_ = 0;
  uint64_t refusals_ = 0;
};

}  // namespace tg::cupti
