// Host <-> device tensors in the storage precision (see tensor_io.h).
//
// Copies are synchronous with respect to every stream: the device is synchronised before a
// download (work queued on a non-blocking stream is not ordered with cudaMemcpy) and after an
// upload (so no stream can read the buffer before the copy has landed).
#include "tensor_io.h"

#include <cuda_runtime.h>

#include <cstdint>

#include "cuda_check.h"
#include "tracegate/kernels/half.h"

namespace tg::kernels::cuda {

DeviceBuffer Upload(std::span<const float> values, Precision storage) {
  DeviceBuffer buffer(values.size() * ElementBytes(storage));
  UploadInto(values, storage, buffer.get());
  return buffer;
}

void UploadInto(std::span<const float> values, Precision storage, void* device) {
  if (values.empty()) return;
  if (storage == Precision::kFp32) {
    TG_CUDA_CHECK(cudaMemcpy(device, values.data(), values.size_bytes(), cudaMemcpyHostToDevice));
  } else if (storage == Precision::kFp16) {
    std::vector<uint16_t> bits(values.size());
    for (size_t i = 0; i < values.size(); ++i) bits[i] = FloatToHalfBits(values[i]);
    TG_CUDA_CHECK(cudaMemcpy(device, bits.data(), bits.size() * sizeof(uint16_t), cudaMemcpyHostToDevice));
  } else {
    std::vector<int8_t> q(values.size());
    for (size_t i = 0; i < values.size(); ++i) q[i] = static_cast<int8_t>(QuantizeInt8(values[i]));
    TG_CUDA_CHECK(cudaMemcpy(device, q.data(), q.size(), cudaMemcpyHostToDevice));
  }
  TG_CUDA_CHECK(cudaDeviceSynchronize());
}

std::vector<float> Download(const void* device, size_t count, Precision storage) {
  std::vector<float> values(count);
  if (count == 0) return values;
  TG_CUDA_CHECK(cudaDeviceSynchronize());
  if (storage == Precision::kFp32) {
    TG_CUDA_CHECK(cudaMemcpy(values.data(), device, count * sizeof(float), cudaMemcpyDeviceToHost));
  } else if (storage == Precision::kFp16) {
    std::vector<uint16_t> bits(count);
    TG_CUDA_CHECK(cudaMemcpy(bits.data(), device, count * sizeof(uint16_t), cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < count; ++i) values[i] = HalfBitsToFloat(bits[i]);
  } else {
    std::vector<int8_t> q(count);
    TG_CUDA_CHECK(cudaMemcpy(q.data(), device, count, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < count; ++i) values[i] = static_cast<float>(q[i]);
  }
  return values;
}

DeviceBuffer UploadQuantized(std::span<const float> values, float scale) {
  return Upload(QuantizeTensor(values, scale), Precision::kInt8);
}

}  // namespace tg::kernels::cuda
