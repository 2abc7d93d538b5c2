// Owning device and host buffers and streams (RAII) for the reference workloads.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "cuda_check.h"

namespace tg::kernels::cuda {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes) : bytes_(bytes) {
    if (bytes > 0) TG_CUDA_CHECK(cudaMalloc(&ptr_, bytes));
  }
  ~DeviceBuffer() { if (ptr_) cudaFree(ptr_); }
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* get() const { return ptr_; }
  template <typename T> T* as() const { return static_cast<T*>(ptr_); }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

// Page-locked (pinned = true, cudaMallocHost) or ordinary pageable host memory.
class HostBuffer {
 public:
  HostBuffer() = default;
  HostBuffer(size_t bytes, bool pinned) : bytes_(bytes), pinned_(pinned) {
    if (bytes == 0) return;
    if (pinned) TG_CUDA_CHECK(cudaMallocHost(&ptr_, bytes));
    else ptr_ = ::operator new(bytes);
  }
  ~HostBuffer() { Release(); }
  HostBuffer(HostBuffer&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)), pinned_(o.pinned_) {}
  HostBuffer& operator=(HostBuffer&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
    std::swap(pinned_, o.pinned_);
    return *this;
  }
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;

  void* get() const { return ptr_; }
  template <typename T> T* as() const { return static_cast<T*>(ptr_); }
  size_t bytes() const { return bytes_; }
  bool pinned() const { return pinned_; }

 private:
  void Release() {
    if (!ptr_) return;
    if (pinned_) cudaFreeHost(ptr_);
    else ::operator delete(ptr_);
    ptr_ = nullptr;
  }
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
  bool pinned_ = false;
};

// An owned CUDA stream that does not synchronise with the legacy default stream.
class Stream {
 public:
  Stream() { TG_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  ~Stream() { cudaStreamDestroy(s_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_{};
};

}  // namespace tg::kernels::cuda
