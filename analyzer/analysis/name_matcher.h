// A range-name matcher for the options that name ranges by regular expression (--iteration,
// --phase pre=/infer=/post=): the expression runs once per distinct name, verdicts cached by
// StringId. Shared by the iteration analysis and the idle-cause finder (host pre/post stages).
#pragma once

#include <array>
#include <cstdint>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "tracegate/analyzer/model.h"
#include "tracegate/analyzer/status.h"

namespace tg::internal {

// One option's regular expression and its verdict per StringId (-1: not evaluated yet).
struct NameMatcher {
  std::regex re;
  // match_continuous for patterns anchored at the start: the same answer, but std::regex_search
  // no longer retries the pattern at every later position of the name.
  std::regex_constants::match_flag_type flags = std::regex_constants::match_default;
  // When every match must begin with one of a few known bytes (FirstBytes in name_matcher.cpp):
  // those bytes; a name that begins otherwise is no match without running the expression (names
  // unique to each step, such as a serving engine's, would each run it once).
  bool first_known = false;
  std::array<bool, 256> first{};
  std::vector<int8_t> verdict;
  const Trace* trace = nullptr;

  bool operator()(StringId id) {
    int8_t& v = verdict[id];
    if (v < 0) {
      std::string_view name = trace->Name(id);
      if (first_known && (name.empty() || !first[static_cast<unsigned char>(name[0])])) {
        v = 0;
        return false;
      }
      try {
        v = std::regex_search(name.begin(), name.end(), re, flags) ? 1 : 0;
      } catch (const std::regex_error&) {
        v = 0;  // error_complexity / error_stack on a pathological name: treat as no match
      }
    }
    return v == 1;
  }
};

// Fills, once per process, the cache of the global locale's ctype<char>::narrow that libstdc++'s
// regex compiler writes lazily: two threads compiling expressions at once (the job's worker
// pool runs an analysis per rank) would race on it. After this the compiler only reads it.
// RunAnalysis calls it before any expression is compiled.
void WarmRegexLocale();

// The bytes every match of the ECMAScript `pattern` (case-insensitive) must begin with, when the
// pattern says so plainly: '^', then a letter, digit or '_' that no quantifier makes optional, or a
// group ("(...)" or "(?:...)") of alternatives that each begin so and that no quantifier makes
// optional. Both cases of each letter. false when it cannot tell (the matcher then runs the
// expression on every name).
bool FirstBytes(std::string_view pattern, std::array<bool, 256>& first);

// Compiles `pattern` (ECMAScript, case-insensitive) for names of `t`. InvalidInput naming
// `option` when the expression is invalid.
Status CompileNameMatcher(const Trace& t, const std::string& pattern, std::string_view option, NameMatcher* m);

}  // namespace tg::internal
