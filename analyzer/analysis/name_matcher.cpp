#include "analyzer/analysis/name_matcher.h"

#include <locale>
#include <mutex>

namespace tg::internal {

void WarmRegexLocale() {
  static std::once_flag once;
  std::call_once(once, [] {
    const auto& ctype = std::use_facet<std::ctype<char>>(std::locale());
    for (int c = 0; c < 256; ++c) ctype.narrow(static_cast<char>(c), '\0');  // the default the scanner passes
  });
}

namespace {

// Whether every match of the ECMAScript `pattern` must start at the beginning of the text: it
// starts with '^' and has no '|' outside groups (where the '^' would bind to the first
// alternative only). Unsure cases (an empty class, unbalanced brackets) answer false.
bool AnchoredAtStart(std::string_view pattern) {
  if (pattern.empty() || pattern[0] != '^') return false;
  int depth = 0;
  for (size_t i = 1; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\') {
      ++i;
    } else if (c == '[') {
      size_t j = i + 1;
      if (j < pattern.size() && pattern[j] == '^') ++j;
      if (j < pattern.size() && pattern[j] == ']') return false;
      for (; j < pattern.size() && pattern[j] != ']'; ++j)
        if (pattern[j] == '\\') ++j;
      if (j >= pattern.size()) return false;
      i = j;
    } else if (c == '(') {
      ++depth;
    } else if (c == ')') {
      if (--depth < 0) return false;
    } else if (c == '|' && depth == 0) {
      return false;
    }
  }
  return depth == 0;
}

}  // namespace

Status CompileNameMatcher(const Trace& t, const std::string& pattern, std::string_view option, NameMatcher* m) {
  try {
    m->re = std::regex(pattern, std::regex::ECMAScript | std::regex::icase);
    m->flags = AnchoredAtStart(pattern) ? std::regex_constants::match_continuous : std::regex_constants::match_default;
  } catch (const std::regex_error& e) {
    return InvalidInput(std::string(option) + ": invalid regular expression '" + pattern + "': " + e.what());
  }
  m->verdict.assign(t.strings.size(), -1);
  m->trace = &t;
  return Status::Ok();
}

}  // namespace tg::internal
