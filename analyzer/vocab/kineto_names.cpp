#include "analyzer/vocab/kineto_names.h"

#include <utility>

namespace tg::internal {

namespace {

constexpr std::pair<MemKind, std::string_view> kMemKinds[] = {{MemKind::kPageable, "Pageable"},
                                                              {MemKind::kPinned, "Pinned"},
                                                              {MemKind::kDevice, "Device"},
                                                              {MemKind::kArray, "Array"},
                                                              {MemKind::kManaged, "Managed"},
                                                              {MemKind::kDeviceStatic, "Device Static"},
                                                              {MemKind::kManagedStatic, "Managed Static"}};

constexpr std::pair<SyncKind, std::string_view> kSyncKinds[] = {{SyncKind::kEventSync, "Event Sync"},
                                                                {SyncKind::kStreamWaitEvent, "Stream Wait Event"},
                                                                {SyncKind::kStreamSync, "Stream Sync"},
                                                                {SyncKind::kContextSync, "Context Sync"}};

}  // namespace

std::string_view KinetoMemKindName(MemKind k) {
  for (const auto& [kind, name] : kMemKinds)
    if (kind == k) return name;
  return "Unknown";
}

MemKind MemKindFromKineto(std::string_view s) {
  for (const auto& [kind, name] : kMemKinds)
    if (name == s) return kind;
  return MemKind::kUnknown;
}

std::string_view KinetoSyncKindName(SyncKind k) {
  for (const auto& [kind, name] : kSyncKinds)
    if (kind == k) return name;
  return "Unknown Sync";
}

SyncKind SyncKindFromKineto(std::string_view s) {
  for (const auto& [kind, name] : kSyncKinds)
    if (name == s) return kind;
  return SyncKind::kUnknown;
}

CopyKind CopyKindFromName(std::string_view s) {
  for (int k = 1; k <= static_cast<int>(CopyKind::kPtoP); ++k)
    if (CopyKindName(static_cast<CopyKind>(k)) == s) return static_cast<CopyKind>(k);
  return CopyKind::kUnknown;
}

std::string KinetoMemcpyName(CopyKind kind, MemKind src, MemKind dst) {
  std::string out = "Memcpy ";
  out += kind == CopyKind::kUnknown ? std::string_view("Unknown") : CopyKindName(kind);
  out += " (";
  out += KinetoMemKindName(src);
  out += " -> ";
  out += KinetoMemKindName(dst);
  out += ")";
  return out;
}

std::string KinetoMemsetName(MemKind kind) { return "Memset (" + std::string(KinetoMemKindName(kind)) + ")"; }

}  // namespace tg::internal
