#include "usage_errors.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <regex>

#include "commands.h"

namespace tg::cli {

namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Optimal string alignment distance: insertions, deletions, substitutions and swaps of two
// neighbouring characters each count one.
size_t EditDistance(const std::string& a, const std::string& b) {
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<size_t>> d(n + 1, std::vector<size_t>(m + 1, 0));
  for (size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (size_t i = 1; i <= n; ++i)
    for (size_t j = 1; j <= m; ++j) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[n][m];
}

std::string StripDashes(std::string_view s) {
  while (!s.empty() && s.front() == '-') s.remove_prefix(1);
  return Lower(s);
}

const CLI::App* FindCommand(const CLI::App& app, std::string_view word) {
  for (const CLI::App* sub : app.get_subcommands({}))
    if (sub->get_name() == word) return sub;
  return nullptr;
}

std::vector<std::string> CommandNames(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
  return names;
}

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

// The command argv is running: tracegate, then each word that names a command of the one before.
struct Active {
  const CLI::App* app;
  std::string path;  // "tracegate baseline save"
  int next;          // the first argument after the command words
};

Active Walk(const CLI::App& app, int argc, char** argv) {
  Active a{&app, "tracegate", 1};
  for (; a.next < argc; ++a.next) {
    std::string_view word = argv[a.next];
    const CLI::App* sub = word.empty() || word[0] == '-' ? nullptr : FindCommand(*a.app, word);
    if (!sub) break;
    a.app = sub;
    a.path += " " + sub->get_name();
  }
  return a;
}

// The usage line and where the command's help is: the lines after the error.
void PrintUsage(const Active& a) {
  std::string usage = CLI::Formatter().make_usage(a.app, a.path);
  while (!usage.empty() && usage.back() == '\n') usage.pop_back();
  std::fprintf(stderr, "%s   (run '%s --help' for %s)\n", usage.c_str(), a.path.c_str(),
               a.app->get_parent() == nullptr ? "the commands"
               : a.app->get_subcommands({}).empty() ? "its options" : "its commands");
}

// CLI11's range message, "Value 0 not in range 0.000000 to 1797693...": the bounds as written in
// the help ("must be > 0", "must be in 1..100000").
std::string RangeMessage(const std::string& what) {
  static const std::regex kRange("Value (.*) not in range (\\S+) to (\\S+)$");
  std::smatch m;
  if (!std::regex_search(what, m, kRange)) return what;
  auto trim = [](std::string v) {
    if (v.find('.') != std::string::npos) {
      while (!v.empty() && v.back() == '0') v.pop_back();
      if (!v.empty() && v.back() == '.') v.pop_back();
    }
    return v;
  };
  double lo = std::strtod(m[2].str().c_str(), nullptr), hi = std::strtod(m[3].str().c_str(), nullptr);
  std::string bound = hi >= 1e300 ? (lo < 1e-300 ? "> 0" : ">= " + trim(m[2])) : "in " + trim(m[2]) + ".." + trim(m[3]);
  return what.substr(0, static_cast<size_t>(m.position(0))) + m[1].str() + " is out of range: must be " + bound;
}

bool LooksLikeOption(std::string_view w) {
  if (w.size() < 2 || w[0] != '-' || w == "--") return false;
  if (w[1] == '-') return w.size() > 2;
  return w.size() == 2 && std::isalpha(static_cast<unsigned char>(w[1]));  // -x; not -12 or a -qo cluster
}

std::vector<std::string> OptionNames(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* opt : app.get_options()) {
    for (const std::string& l : opt->get_lnames()) names.push_back("--" + l);
    for (const std::string& s : opt->get_snames()) names.push_back("-" + s);
  }
  return names;
}

std::string Suggestion(std::string_view typed, const std::vector<std::string>& candidates) {
  std::vector<std::string> close = ClosestNames(typed, candidates);
  return close.empty() ? "" : "did you mean " + QuotedAlternatives(close) + "?";
}

}  // namespace

std::vector<std::string> ClosestNames(std::string_view typed, const std::vector<std::string>& candidates) {
  const std::string t = StripDashes(typed);
  if (t.empty()) return {};
  const size_t limit = t.size() >= 5 ? 2 : 1;
  size_t best = limit + 1;
  std::vector<std::string> out;
  for (const std::string& c : candidates) {
    const std::string name = StripDashes(c);
    size_t d = EditDistance(t, name);
    if (t.size() >= 3 && name.size() > t.size() && name.compare(0, t.size(), t) == 0) d = std::min<size_t>(d, 1);
    if (d > limit || d > best) continue;
    if (d < best) {
      best = d;
      out.clear();
    }
    if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  }
  if (out.size() > 3) out.resize(3);
  return out;
}

std::string QuotedAlternatives(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " or " : ", ";
    out += "'" + names[i] + "'";
  }
  return out;
}

int CheckCommandWords(const CLI::App& app, int argc, char** argv) {
  Active a = Walk(app, argc, argv);
  if (a.next >= argc || a.app->get_subcommands({}).empty()) return -1;
  std::string_view word = argv[a.next];
  if (word.empty() || word[0] == '-') return -1;
  std::vector<std::string> names = CommandNames(*a.app);
  std::string kind = a.app == &app ? "" : a.app->get_name() + " ";
  std::string hint = Suggestion(word, names);
  std::fprintf(stderr, "tracegate: error: unknown %scommand '%s'%s (%scommands: %s)\n", kind.c_str(),
               std::string(word).c_str(), hint.empty() ? "" : (": " + hint).c_str(), kind.c_str(),
               Join(names).c_str());
  PrintUsage(a);
  return kExitBadInput;
}

int ReportUsageError(const CLI::App& app, const CLI::ParseError& error, int argc, char** argv) {
  Active a = Walk(app, argc, argv);
  const std::string where = a.app == &app ? "" : a.path.substr(std::string("tracegate ").size()) + ": ";
  // A mistyped option is the cause of whatever CLI11 says (an unexpected argument, a required
  // option missing): name it first.
  // `record` passes everything from the first word that is not an option (or an option's value)
  // on to its command: those are not tracegate's options.
  std::vector<std::string> unknown;
  bool value_next = false;
  for (int i = a.next; i < argc; ++i) {
    std::string_view w = argv[i];
    if (w == "--") break;
    if (!LooksLikeOption(w)) {
      if (a.app->get_prefix_command() && !value_next) break;
      value_next = false;
      continue;
    }
    std::string name(w.substr(0, w.find('=')));
    const CLI::Option* opt = a.app->get_option_no_throw(name);
    if (opt == nullptr) unknown.push_back(name);
    value_next = opt != nullptr && w.find('=') == std::string_view::npos && opt->get_items_expected_min() > 0;
  }
  std::string message;
  if (!unknown.empty()) {
    std::string hint = Suggestion(unknown[0], OptionNames(*a.app));
    message = "unknown option '" + unknown[0] + "'" + (hint.empty() ? "" : " (" + hint + ")");
    if (unknown.size() > 1) message += " and " + std::to_string(unknown.size() - 1) + " more";
  } else if (dynamic_cast<const CLI::RequiredError*>(&error) && !a.app->get_subcommands({}).empty() &&
             std::string(error.what()).find("subcommand") != std::string::npos) {
    message = "a command is required (" + Join(CommandNames(*a.app)) + ")";
  } else if (dynamic_cast<const CLI::ExtrasError*>(&error)) {
    // CLI11: "The following argument(s) was/were not expected: a b"
    std::string what = error.what();
    size_t colon = what.find(": ");
    message = "unexpected argument" + std::string(what.find("arguments") != std::string::npos ? "s" : "") + " " +
              (colon == std::string::npos ? what : what.substr(colon + 2));
  } else {
    message = RangeMessage(error.what());
  }
  std::fprintf(stderr, "tracegate: error: %s%s\n", where.c_str(), message.c_str());
  PrintUsage(a);
  return kExitBadInput;
}

int NoArguments(const CLI::App& app) {
  std::cout << app.help();
  return kExitBadInput;
}

}  // namespace tg::cli
