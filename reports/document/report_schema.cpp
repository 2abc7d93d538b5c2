// ReportSchemaJson: the schema template with the headline keys put in (report_schema.h).
#include "tracegate/reports/report_schema.h"

#include <string_view>

#include <nlohmann/json.hpp>

#include "analyzer/util/fileio.h"
#include "reports/document/report_keys.h"

namespace tg {
namespace internal {
extern const std::string_view kReportSchemaTemplate;  // report_schema_template.cpp, generated
}  // namespace internal

namespace {

using ordered_json = nlohmann::ordered_json;
namespace keys = internal::keys;

// The headline keys follow this key, in "properties" and in "required", where the original hand-written
// schema had them.
constexpr std::string_view kHeadlineAfter = "profiling_date";

// `object` with `add` inserted after its key `after` (at the end when it has no such key).
ordered_json InsertAfter(const ordered_json& object, std::string_view after, const ordered_json& add) {
  ordered_json out = ordered_json::object();
  bool placed = false;
  for (const auto& [name, value] : object.items()) {
    out[name] = value;
    if (name == after) {
      for (const auto& [k, v] : add.items()) out[k] = v;
      placed = true;
    }
  }
  if (!placed)
    for (const auto& [k, v] : add.items()) out[k] = v;
  return out;
}

// The "<key>_reason is required when <key> is null" rule, as the template's $defs write it.
ordered_json ReasonIfNull(std::string_view key) {
  const std::string name(key);
  ordered_json rule;
  rule["if"]["required"] = {name};
  rule["if"]["properties"][name]["type"] = "null";
  rule["then"]["required"] = {keys::ReasonKey(key)};
  return rule;
}

}  // namespace

std::string ReportSchemaJson() {
  ordered_json schema = ordered_json::parse(internal::kReportSchemaTemplate);
  ordered_json properties = ordered_json::object();
  ordered_json required = ordered_json::array();
  for (const auto& entry : schema["required"]) {
    required.push_back(entry);
    if (entry == kHeadlineAfter)
      for (const keys::Key* k : keys::kHeadline) required.push_back(k->name);
  }
  if (required.size() == schema["required"].size())
    for (const keys::Key* k : keys::kHeadline) required.push_back(k->name);
  ordered_json& all_of = schema["allOf"];
  ordered_json& defs = schema["$defs"];
  for (const keys::Key* k : keys::kHeadline) {
    ordered_json property = ordered_json::parse(k->schema);
    if (!k->meaning.empty()) property["description"] = k->meaning;
    properties[std::string(k->name)] = std::move(property);
    if (!k->nullable) continue;
    const std::string def = "reason_if_null_" + std::string(k->name);
    if (!defs.contains(def)) defs[def] = ReasonIfNull(k->name);
    all_of.push_back({{"$ref", "#/$defs/" + def}});
  }
  schema["required"] = std::move(required);
  schema["properties"] = InsertAfter(schema["properties"], kHeadlineAfter, properties);
  return schema.dump(2) + "\n";
}

Status WriteReportSchema(const std::string& path) { return internal::WriteFileAtomic(path, ReportSchemaJson()); }

}  // namespace tg
