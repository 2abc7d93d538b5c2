// Kineto's spellings, both ways: the Kineto importer parses them and the Chrome export writes
// them, from the same tables (Kineto's memoryKindString / syncTypeString in cupti_strings.cpp
// and memcpy/memset names in CuptiActivity.cpp).
#pragma once

#include <string>
#include <string_view>

#include "tracegate/analyzer/model.h"

namespace tg {

std::string_view KinetoMemKindName(MemKind k);   // "Pageable", "Device Static", ..., "Unknown"
MemKind MemKindFromKineto(std::string_view s);   // inverse; kUnknown when not one of them
std::string_view KinetoSyncKindName(SyncKind k); // "Event Sync", ..., "Unknown Sync"
SyncKind SyncKindFromKineto(std::string_view s); // inverse; kUnknown when not one of them
CopyKind CopyKindFromName(std::string_view s);   // inverse of CopyKindName ("HtoD" ...)

// "Memcpy HtoD (Pageable -> Device)" and "Memset (Device)".
std::string KinetoMemcpyName(CopyKind kind, MemKind src, MemKind dst);
std::string KinetoMemsetName(MemKind kind);

}  // namespace tg
