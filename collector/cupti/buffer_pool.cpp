// The capped pool of CUPTI activity buffers; see buffer_pool.h.
#include "buffer_pool.h"

#include <algorithm>
#include <cstring>
#include <new>

namespace tg::cupti {

namespace {
constexpr std::align_val_t kAlign{8};  // CUPTI's required activity buffer alignment
}

BufferPool::BufferPool(size_t buffer_bytes, size_t cap_bytes)
    : buffer_bytes_(buffer_bytes), max_buffers_(std::max<size_t>(1, cap_bytes / buffer_bytes)) {}

BufferPool::~BufferPool() {
  for (uint8_t* b : free_) ::operator delete(b, kAlign);
}

uint8_t* BufferPool::NewZeroed() const {
  auto* b = static_cast<uint8_t*>(::operator new(buffer_bytes_, kAlign, std::nothrow));
  if (b) std::memset(b, 0, buffer_bytes_);  // also faults its pages in, here rather than in CUPTI's writes
  return b;
}

uint8_t* BufferPool::Acquire() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!free_.empty()) {
      uint8_t* b = free_.back();
      free_.pop_back();
      return b;
    }
    if (allocated_ >= max_buffers_) {
      refusals_++;
      return nullptr;
    }
    allocated_++;  // reserved under the lock, created outside it
  }
  uint8_t* b = NewZeroed();
  if (!b) {  // out of host memory: the same as the cap for CUPTI (records dropped, counted)
    std::lock_guard<std::mutex> lock(mu_);
    allocated_--;
    refusals_++;
  }
  return b;
}

void BufferPool::Release(uint8_t* buffer, size_t used_bytes) {
  if (!buffer) return;
  std::memset(buffer, 0, std::min(used_bytes, buffer_bytes_));
  std::lock_guard<std::mutex> lock(mu_);
  free_.push_back(buffer);
}

void BufferPool::Reserve(size_t free_buffers) {
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (free_.size() >= free_buffers || allocated_ >= max_buffers_) return;
      allocated_++;
    }
    uint8_t* b = NewZeroed();
    std::lock_guard<std::mutex> lock(mu_);
    if (!b) {
      allocated_--;
      return;
    }
    free_.push_back(b);
  }
}

size_t BufferPool::allocated() const {
  std::lock_guard<std::mutex> lock(mu_);
  return allocated_;
}

size_t BufferPool::free_buffers() const {
  std::lock_guard<std::mutex> lock(mu_);
  return free_.size();
}

uint64_t BufferPool::refusals() const {
  std::lock_guard<std::mutex> lock(mu_);
  return refusals_;
}

}  // namespace tg::cupti
