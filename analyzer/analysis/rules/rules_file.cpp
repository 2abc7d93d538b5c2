// The rules file (--rules rules.json) over the rule table's defaults: RulesConfig holds the
// effective parameters and which rules are enabled; LoadRules reads a file into it.
#include "tracegate/analyzer/rules.h"

#include <cassert>
#include <cmath>
#include <nlohmann/json.hpp>

#include "analyzer/util/json_file.h"
#include "tracegate/analyzer/kernel_class.h"

namespace tg {

using internal::ReadJsonFile;

RulesConfig::RulesConfig() {
  for (const RuleDef& d : RuleDefs()) {
    auto& params = values_[d.id];
    for (const RuleParam& p : d.params) params[p.key] = p.value;
    enabled_[d.id] = true;
  }
}

bool RulesConfig::Enabled(std::string_view id) const {
  auto it = enabled_.find(id);
  return it != enabled_.end() && it->second;
}

double RulesConfig::Get(std::string_view id, std::string_view key) const {
  auto r = values_.find(id);
  assert(r != values_.end());
  auto p = r->second.find(key);
  assert(p != r->second.end());
  return p->second;
}

Status RulesConfig::Set(std::string_view id, std::string_view key, double value) {
  auto r = values_.find(id);
  if (r == values_.end()) return InvalidInput("unknown rule '" + std::string(id) + "'");
  auto p = r->second.find(key);
  if (p == r->second.end()) {
    std::string known;
    for (const auto& [k, v] : r->second) known += (known.empty() ? "" : ", ") + k;
    return InvalidInput("rule '" + std::string(id) + "' has no parameter '" + std::string(key) +
                        "' (it has: " + known + ", enabled)");
  }
  if (!std::isfinite(value) || value < 0)
    return InvalidInput("rule '" + std::string(id) + "': '" + std::string(key) + "' must be a finite number >= 0");
  p->second = value;
  return Status::Ok();
}

Status RulesConfig::SetEnabled(std::string_view id, bool enabled) {
  auto it = enabled_.find(id);
  if (it == enabled_.end()) return InvalidInput("unknown rule '" + std::string(id) + "'");
  it->second = enabled;
  return Status::Ok();
}

namespace {

Status ReadRules(const nlohmann::json& rules, RulesConfig* config) {
  if (!rules.is_object()) return InvalidInput("'rules' must be an object of rule id -> settings");
  for (const auto& [id, settings] : rules.items()) {
    if (!FindRule(id)) {
      std::string known;
      for (const RuleDef& d : RuleDefs()) known += (known.empty() ? "" : ", ") + std::string(d.id);
      return InvalidInput("unknown rule '" + id + "' (rules: " + known + ")");
    }
    if (!settings.is_object()) return InvalidInput("rule '" + id + "' must be an object");
    for (const auto& [key, value] : settings.items()) {
      if (key == "enabled") {
        if (!value.is_boolean()) return InvalidInput("rule '" + id + "': 'enabled' must be true or false");
        TG_RETURN_IF_ERROR(config->SetEnabled(id, value.get<bool>()));
        continue;
      }
      if (!value.is_number()) return InvalidInput("rule '" + id + "': '" + key + "' must be a number");
      TG_RETURN_IF_ERROR(config->Set(id, key, value.get<double>()));
    }
  }
  return Status::Ok();
}

Status ReadKernelClasses(const nlohmann::json& classes, RulesConfig* config) {
  if (!classes.is_object()) return InvalidInput("'kernel_classes' must be an object of class -> regex");
  for (const auto& [name, pattern] : classes.items()) {
    KernelClass c;
    if (!ParseKernelClass(name, &c) || c == KernelClass::kOther)
      return InvalidInput("unknown kernel class '" + name + "'");
    if (!pattern.is_string()) return InvalidInput("kernel class '" + name + "' must be a regex string");
    config->kernel_class_patterns[name] = pattern.get<std::string>();
  }
  return Status::Ok();
}

Status ReadGpu(const nlohmann::json& gpu, RulesConfig* config) {
  if (!gpu.is_object()) return InvalidInput("'gpu' must be an object");
  for (const auto& [key, value] : gpu.items()) {
    double* field = key == "peak_bandwidth_gbs" ? &config->peak_bandwidth_gbs
                    : key == "peak_tflops"      ? &config->peak_tflops
                                                : nullptr;
    if (!field) return InvalidInput("'gpu' has no setting '" + key + "' (use peak_bandwidth_gbs, peak_tflops)");
    if (!value.is_number() || value.get<double>() <= 0 || !std::isfinite(value.get<double>()))
      return InvalidInput("'gpu." + key + "' must be a number > 0");
    *field = value.get<double>();
  }
  return Status::Ok();
}

}  // namespace

Status LoadRules(const std::string& path, RulesConfig* config) {
  nlohmann::json doc;
  TG_RETURN_IF_ERROR(ReadJsonFile(path, "rules file", &doc));
  if (!doc.is_object()) return InvalidInput(path + ": a rules file is a JSON object");
  for (const auto& [key, value] : doc.items()) {
    Status s = key == "rules"            ? ReadRules(value, config)
               : key == "kernel_classes" ? ReadKernelClasses(value, config)
               : key == "gpu"            ? ReadGpu(value, config)
               : key == "$schema" || key == "comment"
                   ? Status::Ok()
                   : InvalidInput("unknown key '" + key + "' (a rules file has rules, kernel_classes, gpu)");
    if (!s.ok()) return InvalidInput(path + ": " + s.message());
  }
  return Status::Ok();
}

}  // namespace tg
