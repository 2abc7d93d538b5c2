// Fixed-size activity buffers for CUPTI from a pool with a cap (CUPTI advises 1-10 MB buffers).
// CUPTI asks for a buffer on its own threads and hands it back full in the completed callback;
// the collector converts it and returns it here for reuse. When every buffer the cap allows is in
// CUPTI's hands, Acquire refuses: CUPTI then drops records (cuptiActivityGetNumDroppedRecords
// counts them) and the refusal itself is counted, so a trace that lost data says so. CUDA-free.
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

  // A free buffer (8-byte aligned, as CUPTI requires), or nullptr when the cap is reached.
  // Thread-safe.
  uint8_t* Acquire();
  // Takes back a buffer Acquire returned. Thread-safe.
  void Release(uint8_t* buffer);

  size_t buffer_bytes() const { return buffer_bytes_; }
  size_t max_buffers() const { return max_buffers_; }
  size_t allocated() const;   // buffers created so far (free or out)
  uint64_t refusals() const;  // Acquire calls refused because of the cap

 private:
  const size_t buffer_bytes_;
  const size_t max_buffers_;
  mutable std::mutex mu_;
  std::vector<uint8_t*> free_;
  size_t allocated_ = 0;
  uint64_t refusals_ = 0;
};

}  // namespace tg::cupti
