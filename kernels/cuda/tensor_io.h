// Moving host float tensors to and from device tensors in the storage precision (fp32 as is,
// fp16 converted with the host binary16 of tracegate/kernels/half.h, int8: the host values are
// the quantised q, stored as int8_t after QuantizeInt8, and downloaded back as q). Synchronous;
// for set-up and checks, never inside timed regions.
#pragma once

#include <span>
#include <vector>

#include "device_buffer.h"
#include "tracegate/kernels/reference.h"

namespace tg::kernels::cuda {

DeviceBuffer Upload(std::span<const float> values, Precision storage);
void UploadInto(std::span<const float> values, Precision storage, void* device);
std::vector<float> Download(const void* device, size_t count, Precision storage);
// A real-valued host tensor quantised with `scale` (QuantizeTensor) into a new int8 device tensor.
DeviceBuffer UploadQuantized(std::span<const float> values, float scale);

}  // namespace tg::kernels::cuda
