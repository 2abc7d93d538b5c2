// The report's key list (reports/document/report_keys.h) against the JSON Schema and the writer:
// the schema `tracegate schema` prints (ReportSchemaJson) has every headline key with its declared
// type and, when nullable, the "<key>_reason" rule, while the template it is made from has none of
// them (they are declared once); every iteration-row key is a property of the schema's row with
// the declared type; the golden report holds exactly the declared headline and iteration-row keys.
#include "reports/document/report_keys.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "tracegate/reports/report_schema.h"

namespace tg::internal::keys {
namespace {

using nlohmann::json;

json LoadJson(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  return json::parse(in, nullptr, /*allow_exceptions=*/false);
}

const json& Schema() {
  static const json schema = json::parse(ReportSchemaJson(), nullptr, /*allow_exceptions=*/false);
  return schema;
}

const json& Template() {
  static const json schema =
      LoadJson(std::string(TRACEGATE_SOURCE_DIR) + "/reports/schema/tracegate.report.v1.schema.in.json");
  return schema;
}

// A property's schema with one level of "$ref" into $defs resolved.
const json& Resolve(const json& property) {
  if (property.contains("$ref")) {
    const std::string ref = property["$ref"].get<std::string>();
    const std::string prefix = "#/$defs/";
    if (ref.rfind(prefix, 0) == 0) return Schema()["$defs"][ref.substr(prefix.size())];
  }
  return property;
}

// The JSON types a property admits: its "type" (a string or a list), or the types of its "enum".
std::set<std::string> Types(const json& property) {
  const json& p = Resolve(property);
  std::set<std::string> types;
  if (p.contains("type")) {
    if (p["type"].is_string()) types.insert(p["type"].get<std::string>());
    else
      for (const json& t : p["type"]) types.insert(t.get<std::string>());
  }
  if (p.contains("enum"))
    for (const json& v : p["enum"]) types.insert(v.is_null() ? "null" : v.is_string() ? "string" : "number");
  return types;
}

std::string Expected(KeyType type) {
  switch (type) {
    case KeyType::kInteger: return "integer";
    case KeyType::kNumber: return "number";
    case KeyType::kString: return "string";
    case KeyType::kNumberArray: return "array";
    case KeyType::kObject: return "object";
  }
  return "";
}

void CheckAgainst(const json& properties, const Key& k, const std::string& where) {
  ASSERT_TRUE(properties.contains(std::string(k.name))) << k.name << " is declared but not in the schema's " << where;
  const json& p = properties[std::string(k.name)];
  const std::set<std::string> types = Types(p);
  if (k.type == KeyType::kObject && types.empty()) return;  // an object defined by its own properties
  EXPECT_TRUE(types.count(Expected(k.type))) << k.name << ": the schema does not admit " << Expected(k.type);
  EXPECT_EQ(types.count("null") == 1, k.nullable) << k.name << ": nullable in one and not the other";
}

TEST(ReportKeys, HeadlineKeysAreSchemaProperties) {
  const json& properties = Schema()["properties"];
  std::set<std::string> reasons;  // the schema's "<key>_reason when null" rules
  for (const json& rule : Schema()["allOf"])
    if (rule.contains("$ref")) reasons.insert(rule["$ref"].get<std::string>());
  for (const Key* k : kHeadline) {
    CheckAgainst(properties, *k, "properties");
    if (k->nullable) {
      EXPECT_TRUE(reasons.count("#/$defs/reason_if_null_" + std::string(k->name)))
          << k->name << ": nullable, but the schema does not require " << k->name << "_reason when it is null";
    }
  }
}

TEST(ReportKeys, HeadlineKeysAreDeclaredOnlyInTheKeyList) {
  ASSERT_TRUE(Template().is_object());
  for (const Key* k : kHeadline) {
    const std::string name(k->name);
    EXPECT_FALSE(Template()["properties"].contains(name)) << name << ": in the template as well as in report_keys.h";
    for (const json& r : Template()["required"]) EXPECT_NE(r, name) << name << ": required by the template too";
  }
  // The schema is valid JSON and requires every headline key.
  ASSERT_TRUE(Schema().is_object());
  std::set<std::string> required;
  for (const json& r : Schema()["required"]) required.insert(r.get<std::string>());
  for (const Key* k : kHeadline) EXPECT_TRUE(required.count(std::string(k->name))) << k->name;
}

TEST(ReportKeys, IterationRowKeysAreSchemaProperties) {
  const json& row = Schema()["$defs"]["iteration"];
  ASSERT_TRUE(row.contains("properties"));
  std::set<std::string> declared;
  for (const Key* k : kIterationRowKeys) {
    CheckAgainst(row["properties"], *k, "iteration row");
    declared.insert(std::string(k->name));
  }
  // And nothing in the schema's row that the list lacks.
  for (const auto& [name, _] : row["properties"].items()) EXPECT_TRUE(declared.count(name)) << name;
  for (const json& name : row["required"]) EXPECT_TRUE(declared.count(name.get<std::string>())) << name;
}

TEST(ReportKeys, ListsAreConsistent) {
  std::set<const Key*> headline(kHeadline.begin(), kHeadline.end());
  EXPECT_EQ(headline.size(), kHeadline.size()) << "a key listed twice in kHeadline";
  for (const Key* k : kCards) EXPECT_TRUE(headline.count(k)) << k->name << ": a card, not in kHeadline";
  for (const Key* k : kHeadline) {
    if (k->shown & (kInTable | kKeyFigure | kTextLine)) {
      EXPECT_FALSE(k->label.empty()) << k->name << ": shown, no label";
    }
  }
  for (const Key* k : kPhaseRatioKeys) EXPECT_TRUE(headline.count(k)) << k->name;
  for (const Key* k : kIterationColumns)
    EXPECT_NE(std::find(kIterationRowKeys.begin(), kIterationRowKeys.end(), k), kIterationRowKeys.end()) << k->name;
  // The writer streams a row's keys in name order (nlohmann's order): the list keeps them findable.
  std::set<std::string_view> names;
  for (const Key* k : kIterationRowKeys) EXPECT_TRUE(names.insert(k->name).second) << k->name;
}

TEST(ReportKeys, GoldenReportHoldsTheDeclaredKeys) {
  const json doc = LoadJson(std::string(TRACEGATE_FIXTURES_DIR) + "/summary/expected_report.json");
  for (const Key* k : kHeadline) EXPECT_TRUE(doc.contains(std::string(k->name)) || (k->shown & kIfPresent)) << k->name;
  ASSERT_TRUE(doc.contains("iteration_table"));
  ASSERT_FALSE(doc["iteration_table"].empty());
  std::set<std::string> declared;
  for (const Key* k : kIterationRowKeys) declared.insert(std::string(k->name));
  for (const json& row : doc["iteration_table"])
    for (const auto& [name, _] : row.items()) EXPECT_TRUE(declared.count(name)) << name << ": written, not declared";
}

}  // namespace
}  // namespace tg::internal::keys
