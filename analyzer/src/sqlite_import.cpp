// TEMPORARY placeholder while the SQLite importer is written; replaced before the first commit.
#include "tracegate/import.h"
namespace tg {
Status ImportSqlite(const std::string& path, Trace&) { return Unsupported(path + ": SQLite import not built yet"); }
}  // namespace tg
