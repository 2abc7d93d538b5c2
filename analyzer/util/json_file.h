// Reading a small JSON document (rules, costs, reports) whole, with errors that name the file.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "tracegate/analyzer/status.h"

namespace tg::internal {

// NotFound "<path>: cannot open the <what>" or InvalidInput "<path>: not valid JSON (...)".
Status ReadJsonFile(const std::string& path, const char* what, nlohmann::json* out);

}  // namespace tg::internal
