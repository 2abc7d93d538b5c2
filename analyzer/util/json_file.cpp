#include "analyzer/util/json_file.h"

#include <fstream>
#include <sstream>

namespace tg::internal {

Status ReadJsonFile(const std::string& path, const char* what, nlohmann::json* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(path + ": cannot open the " + what);
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return IoError(path + ": read error");
  try {
    *out = nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::exception& e) {
    return InvalidInput(path + ": not valid JSON (" + e.what() + ")");
  }
  return Status::Ok();
}

}  // namespace tg::internal
