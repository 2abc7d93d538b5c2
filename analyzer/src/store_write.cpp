// TEMPORARY placeholder while the store writer is written; replaced before the first commit.
#include "tracegate/store.h"
namespace tg {
Status WriteStore(const Trace&, const std::string& path) { return Unsupported(path + ": store not built yet"); }
}  // namespace tg
