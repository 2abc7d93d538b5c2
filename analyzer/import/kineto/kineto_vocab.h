// Kineto's vocabulary: event categories of both generations and the names Kineto gives copies,
// memsets and syncs, as written by libkineto (ActivityType.cpp, CuptiActivity.cpp,
// cupti_strings.cpp, output_json.cpp). Internal to the Kineto importer.
#pragma once

#include <cstdint>
#include <string_view>

#include "tracegate/analyzer/model.h"

namespace tg::internal {

enum class Cat : uint8_t {
  kUnmodelled, kKernel, kMemcpy, kMemset, kRuntime, kDriver, kSync,
  kUserAnnotation, kGpuUserAnnotation, kCpuOp, kPythonFunction,
};

// The category of an 'X' event: new lowercase names and the capitalised 2020-2021 ones.
Cat Classify(std::string_view cat);

// Flow categories that link a CUDA API call to its GPU activity (id = correlation id):
// "ac2g" (new), "async_gpu" and "async" (old). fwd/bwd flows are not among them.
bool IsLaunchFlow(std::string_view cat);

// "Memcpy HtoD (Pageable -> Device)" -> kind and memory kinds; unknown parts stay kUnknown.
void ParseMemcpyName(std::string_view name, Memcpy& m);

// "Memset (Device)" -> kDevice.
MemKind ParseMemsetName(std::string_view name);

// "Event Sync", "Stream Wait Event", "Stream Sync", "Context Sync"; anything else kUnknown.
SyncKind SyncKindFrom(std::string_view s);

}  // namespace tg::internal
