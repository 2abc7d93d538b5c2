#include "tracegate/reports/json_out.h"

#include "analyzer/util/fileio.h"

namespace tg {

std::string JsonText(const nlohmann::json& doc, int indent) {
  std::string text = doc.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
  text.push_back('\n');
  return text;
}

Status WriteJsonFile(const std::string& path, const nlohmann::json& doc, int indent) {
  return WriteFileAtomic(path, JsonText(doc, indent));
}

}  // namespace tg
