// TEMPORARY placeholder while the Kineto importer is written; replaced before the first commit.
#include "tracegate/import.h"
namespace tg {
Status ImportKineto(const std::string& path, Trace&, const ImportOptions&) {
  return Unsupported(path + ": Kineto import not built yet");
}
}  // namespace tg
