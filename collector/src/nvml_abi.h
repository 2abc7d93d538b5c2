// The part of NVML's C ABI that the sampler uses (nvml.h, stable since NVML 4), declared once, so
// that the sampler's function-pointer types and the test's fake libnvidia-ml agree exactly (a
// call through a pointer of another function type is undefined behaviour, and UBSan checks it).
// nvmlReturn_t is an int there; NVML_SUCCESS is 0.
#pragma once

extern "C" {
typedef struct nvmlDevice_st* nvmlDevice_t;
typedef struct nvmlMemory_st {
  unsigned long long total, free, used;  // bytes
} nvmlMemory_t;
}
