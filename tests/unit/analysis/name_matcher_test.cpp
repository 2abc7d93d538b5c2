#include "analyzer/analysis/name_matcher.h"

#include <gtest/gtest.h>

#include <array>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "tracegate/analyzer/iterations.h"
#include "tracegate/analyzer/model.h"

namespace tg::internal {
namespace {

std::string FirstSet(std::string_view pattern) {
  std::array<bool, 256> first{};
  if (!FirstBytes(pattern, first)) return "?";
  std::string out;
  for (int c = 0; c < 256; ++c)
    if (first[static_cast<size_t>(c)]) out += static_cast<char>(c);
  return out;
}

TEST(NameMatcherFirstBytes, PlainPatternsOnly) {
  EXPECT_EQ(FirstSet(kDefaultIterationRegex), "IPSips");
  EXPECT_EQ(FirstSet(kDefaultPreRegex), "Pp");
  EXPECT_EQ(FirstSet(kDefaultInferRegex), "FIfi");
  EXPECT_EQ(FirstSet(kDefaultPostRegex), "Pp");
  EXPECT_EQ(FirstSet("^step"), "Ss");
  EXPECT_EQ(FirstSet("^(?:a|B9)x"), "ABab");
  EXPECT_EQ(FirstSet("^(a(b|c)|_d)"), "A_a");
  EXPECT_EQ(FirstSet("^a+"), "Aa");
  EXPECT_EQ(FirstSet("^(a|b)+c"), "ABab");
  EXPECT_EQ(FirstSet("^(a[|)]b|c)"), "ACac");  // '|' and ')' inside a class end nothing
  EXPECT_EQ(FirstSet("^(a\\|b|c)"), "ACac");   // nor an escaped '|'
  // Not plain: the expression runs on every name.
  for (const char* p : {"step",   "^",          "^a?b",     "^a*b",     "^a{0,1}b", "^(a|b)?c", "^(a|b)*c", "^(a|)b",
                        "^(|a)b", "^()a",       "^(?=a)a",  "^(?!a)b",  "^\\d+",    "^[ab]",    "^.x",      "^a|b",
                        "^(a|b",  "^(a|b){0}c", "^(\\w|a)", "^((a)|b)", "^-x",      "^ x",      "(^a)"})
    EXPECT_EQ(FirstSet(p), "?") << p;
}

// The verdicts with the first-byte test are the expression's own, for patterns with and without
// known first bytes and names that begin with every kind of byte.
TEST(NameMatcherFirstBytes, VerdictsAsTheExpressionGives) {
  const std::vector<std::string> patterns = {kDefaultIterationRegex,
                                             kDefaultPreRegex,
                                             kDefaultInferRegex,
                                             kDefaultPostRegex,
                                             "^step",
                                             "^(?:a|B9)x",
                                             "^(a(b|c)|_d)",
                                             "^a+",
                                             "^(a|b)+c",
                                             "^(a[|)]b|c)",
                                             "^a?b",
                                             "^(a|b)?c",
                                             "^[ab]",
                                             "^\\d+",
                                             "a",
                                             "^(a|b)$"};
  std::vector<std::string> names = {"",
                                    "ProfilerStep#12",
                                    "profilerstep#3",
                                    "iteration 7",
                                    "ITER",
                                    "step_4",
                                    "Step",
                                    "steps",
                                    "pre",
                                    "PREPROCESSING",
                                    "post",
                                    "infer",
                                    "Forward",
                                    "execute_18_context_0(sq0sk0sqsq0sqsk0)_generation_18(sq18sk1007sqsq18sqsk1007)",
                                    " step",
                                    "\xc3\xa9tape",
                                    "9",
                                    "_d",
                                    "B9x",
                                    "b9X",
                                    "ax",
                                    "ab",
                                    "ac",
                                    "c",
                                    "aab",
                                    "bbc",
                                    "b",
                                    "a|b",
                                    "a)b"};
  std::mt19937 rng(7);
  const std::string alphabet = "abcABC9_|)x \x01\xff";
  for (int k = 0; k < 3000; ++k) {
    std::string s;
    for (int n = static_cast<int>(rng() % 5); n > 0; --n) s += alphabet[rng() % alphabet.size()];
    names.push_back(s);
  }
  Trace t;
  std::vector<StringId> ids;
  for (const std::string& n : names) ids.push_back(t.strings.Intern(n));
  for (const std::string& p : patterns) {
    NameMatcher m;
    ASSERT_TRUE(CompileNameMatcher(t, p, "--iteration", &m).ok()) << p;
    const std::regex re(p, std::regex::ECMAScript | std::regex::icase);
    for (size_t i = 0; i < names.size(); ++i)
      EXPECT_EQ(m(ids[i]), std::regex_search(names[i], re)) << "pattern " << p << ", name '" << names[i] << "'";
  }
}

}  // namespace
}  // namespace tg::internal
