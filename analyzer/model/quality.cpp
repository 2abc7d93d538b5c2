#include "tracegate/analyzer/quality.h"

namespace tg {

Quality QualityFromKey(std::string_view key) {
  for (const auto& info : kQualityInfo)
    if (info.key == key) return info.id;
  return Quality::kCount;
}

bool QualityCounters::HasErrors() const {
  for (const auto& info : kQualityInfo)
    if (info.severity == Severity::kError && Get(info.id) > 0) return true;
  return false;
}

uint64_t QualityCounters::Total() const {
  uint64_t t = 0;
  for (uint64_t c : counts_) t += c;
  return t;
}

}  // namespace tg
