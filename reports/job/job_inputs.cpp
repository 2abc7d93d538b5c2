// Which files make a job, and the rank a file's name gives.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <system_error>

#include "tracegate/reports/job.h"

namespace tg {

namespace {

bool EndsWith(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

// The trace files of a directory: what the importers read, not the reports written beside them.
bool IsTraceName(std::string_view name) {
  if (name.empty() || name[0] == '.' || EndsWith(name, ".report.json")) return false;
  for (std::string_view ext : {".json", ".json.gz", ".sqlite", ".db"})
    if (EndsWith(name, ext)) return true;
  return false;
}

}  // namespace

StatusOr<std::vector<std::string>> ListJobFiles(const std::vector<std::string>& args) {
  std::vector<std::string> files;
  for (const std::string& arg : args) {
    std::error_code ec;
    if (!std::filesystem::is_directory(arg, ec)) {
      files.push_back(arg);
      continue;
    }
    std::vector<std::string> found;
    for (const auto& entry : std::filesystem::directory_iterator(arg, ec)) {
      std::error_code fe;
      if (entry.is_regular_file(fe) && IsTraceName(entry.path().filename().string()))
        found.push_back(entry.path().string());
    }
    if (ec) return InvalidInput(arg + ": cannot list the directory (" + ec.message() + ")");
    if (found.empty())
      return InvalidInput(arg + ": no trace files in the directory (*.json, *.json.gz, *.sqlite, *.db)");
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
  }
  return files;
}

std::optional<int64_t> RankFromFileName(std::string_view path) {
  const size_t slash = path.find_last_of('/');
  std::string name(slash == std::string_view::npos ? path : path.substr(slash + 1));
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  std::optional<int64_t> rank;
  size_t rank_at = 0;
  for (std::string_view word : {"rank", "worker"}) {
    for (size_t at = name.find(word); at != std::string::npos; at = name.find(word, at + 1)) {
      // A word of its own: "rank" in "cranky" or "prerank3" is not one.
      if (at > 0 && std::isalpha(static_cast<unsigned char>(name[at - 1]))) continue;
      size_t d = at + word.size();
      if (d < name.size() && (name[d] == '-' || name[d] == '_')) ++d;
      size_t end = d;
      while (end < name.size() && std::isdigit(static_cast<unsigned char>(name[end]))) ++end;
      if (end == d || end - d > 9) continue;
      // The last such word of the name: "job7_rank3" is rank 3.
      if (!rank || at > rank_at) {
        rank = std::stoll(name.substr(d, end - d));
        rank_at = at;
      }
    }
  }
  return rank;
}


}  // namespace tg
