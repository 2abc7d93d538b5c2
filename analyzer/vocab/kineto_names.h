// Kineto's spellings, both ways: the Kineto importer parses them and the Chrome export writes
// them, from the same tables: the event categories (libkineto's ActivityType.cpp), the memory
// kinds and sync kinds (memoryKindString / syncTypeString in cupti_strings.cpp) and the names of
// copies and memsets (CuptiActivity.cpp). Its own small target (tracegate_vocab, after the model),
// so the export writes what the importer reads without linking the importer.
#pragma once

#include <string>
#include <string_view>

#include "tracegate/analyzer/model.h"

namespace tg::internal {

// Event categories ("cat") as PyTorch 2.x's Kineto writes them; the importer also reads the
// capitalised 2020-2021 ones (kineto_vocab.cpp).
namespace kineto_cat {
inline constexpr char kKernel[] = "kernel";
inline constexpr char kMemcpy[] = "gpu_memcpy";
inline constexpr char kMemset[] = "gpu_memset";
inline constexpr char kRuntime[] = "cuda_runtime";
inline constexpr char kDriver[] = "cuda_driver";
inline constexpr char kSync[] = "cuda_sync";
inline constexpr char kUserAnnotation[] = "user_annotation";
inline constexpr char kGpuUserAnnotation[] = "gpu_user_annotation";
inline constexpr char kCpuOp[] = "cpu_op";
inline constexpr char kPythonFunction[] = "python_function";
// The flow from a CUDA API call to its GPU activity (id = correlation id).
inline constexpr char kLaunchFlow[] = "ac2g";
}  // namespace kineto_cat

std::string_view KinetoMemKindName(MemKind k);    // "Pageable", "Device Static", ..., "Unknown"
MemKind MemKindFromKineto(std::string_view s);    // inverse; kUnknown when not one of them
std::string_view KinetoSyncKindName(SyncKind k);  // "Event Sync", ..., "Unknown Sync"
SyncKind SyncKindFromKineto(std::string_view s);  // inverse; kUnknown when not one of them
CopyKind CopyKindFromName(std::string_view s);    // inverse of CopyKindName ("HtoD" ...)

// "Memcpy HtoD (Pageable -> Device)" and "Memset (Device)".
std::string KinetoMemcpyName(CopyKind kind, MemKind src, MemKind dst);
std::string KinetoMemsetName(MemKind kind);

}  // namespace tg::internal
