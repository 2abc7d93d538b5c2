// The capped pool of CUPTI activity buffers; see buffer_pool.h.
#include "buffer_pool.h"

#include <algorithm>
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

uint8_t* BufferPool::Acquire() {
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
  auto* b = static_cast<uint8_t*>(::operator new(buffer_bytes_, kAlign, std::nothrow));
  if (!b) {  // out of host memory: the same as the cap for CUPTI (records dropped, counted)
    refusals_++;
    return nullptr;
  }
  allocated_++;
  return b;
}

void BufferPool::Release(uint8_t* buffer) {
  if (!buffer) return;
  std::lock_guard<std::mutex> lock(mu_);
  free_.push_back(buffer);
}

size_t BufferPool::allocated() const {
  std::lock_guard<std::mutex> lock(mu_);
  return allocated_;
}

uint64_t BufferPool::refusals() const {
  std::lock_guard<std::mutex> lock(mu_);
  return refusals_;
}

}  // namespace tg::cupti
