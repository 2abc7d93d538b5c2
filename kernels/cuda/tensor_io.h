// Moving host float tensors to and from device tensors in the storage precision (fp32 as is,
// fp16 converted with the host binary16 of tracegate/kernels/half.h). Synchronous; for set-up and
// checks, never inside timed regions.
#pragma once

#include <span>
#include <vector>

#include "device_buffer.h"
#include "tracegate/kernels/reference.h"

namespace tg::kernels::cuda {

DeviceBuffer Upload(std::span<const float> values, Precision storage);
void UploadInto(std::span<const float> values, Precision storage, void* device);
std::vector<float> Download(const void* device, size_t count, Precision storage);

}  // namespace tg::kernels::cuda
