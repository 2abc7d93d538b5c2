// Usage errors of the tracegate command line: one clear line on stderr ("tracegate: error: ..."),
// with a "did you mean" for a mistyped command or option (CLI11 has no suggestions: the closest
// known names by edit distance), then the usage of the command being parsed and where its help is.
// Exit code 2, as for any bad input. With no arguments at all tracegate prints its help on stdout
// and exits 2 too (nothing was done: a script that lost its arguments must not pass).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
class ParseError;
}  // namespace CLI

namespace tg::cli {

// The candidates closest to `typed` (case-insensitive optimal string alignment distance, a swap of
// two neighbours counting one): at most 2 edits for names of 5 or more characters, 1 for shorter
// ones, and a candidate `typed` is a prefix of (3 characters or more) counts as 1 edit. The best
// ones, at most three, in the order given; empty when none is close.
std::vector<std::string> ClosestNames(std::string_view typed, const std::vector<std::string>& candidates);

// "'a'", "'a' or 'b'", "'a', 'b' or 'c'".
std::string QuotedAlternatives(const std::vector<std::string>& names);

// Before parsing: the command words of argv (tracegate baseline save ...) must name commands.
// Prints the error and returns 2 when one does not; -1 when they all do.
int CheckCommandWords(const CLI::App& app, int argc, char** argv);

// A CLI11 parse error: prints it as above and returns 2.
int ReportUsageError(const CLI::App& app, const CLI::ParseError& error, int argc, char** argv);

// tracegate with no arguments: the help on stdout; returns 2.
int NoArguments(const CLI::App& app);

}  // namespace tg::cli
