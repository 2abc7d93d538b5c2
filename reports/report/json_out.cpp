#include "tracegate/reports/json_out.h"

#include "analyzer/util/fileio.h"

namespace tg {

using internal::WriteFileAtomic;

std::string JsonText(const nlohmann::json& doc, int indent) {
  std::string text = doc.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
  text.push_back('\n');
  return text;
}

Status WriteJsonFile(const nlohmann::json& doc, const std::string& path, int indent) {
  return WriteFileAtomic(path, JsonText(doc, indent));
}

}  // namespace tg
