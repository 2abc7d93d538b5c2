#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "tracegate/analyzer/status.h"

namespace tg {

// The text WriteJsonFile writes: `doc` dumped with `indent`, then a newline.
std::string JsonText(const nlohmann::json& doc, int indent = 2);

// Serialises with nlohmann::json (never string templates) and writes atomically. Strings that
// are not valid UTF-8 are written with U+FFFD in place of bad bytes rather than failing.
[[nodiscard]] Status WriteJsonFile(const nlohmann::json& doc, const std::string& path, int indent = 2);

}  // namespace tg
