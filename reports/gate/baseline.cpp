// Baselines: <dir>/<NAME>.json written atomically, and <dir>/history.db (SQLite) with one row
// per save and per gate (reports/gate/history.cpp). See tracegate/reports/baseline.h.
#include "tracegate/reports/baseline.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "analyzer/util/fileio.h"
#include "reports/document/report_document.h"
#include "reports/document/report_keys.h"
#include "reports/gate/history.h"
#include "tracegate/reports/analysis_report.h"
#include "tracegate/reports/json_out.h"
#include "tracegate/reports/report_provenance.h"

namespace tg {

namespace keys = internal::keys;

using internal::CheckReadableFile;
using internal::TempPathFor;
using internal::WriteTempFile;

namespace {

using nlohmann::json;
using internal::Number;
using internal::Text;
namespace fs = std::filesystem;

constexpr size_t kMaxNameLength = 100;
constexpr const char* kJsonSuffix = ".json";

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Puts a finished temp file in place of `path` so that it can be undone: the old file (if any)
// is kept as a hard link until Keep(). Undo() moves the new file back to its temp name and the
// old one back into place.
class FileSwap {
 public:
  Status Replace(const std::string& tmp, const std::string& path) {
    std::string backup = TempPathFor(path);
    if (::link(path.c_str(), backup.c_str()) == 0) backup_ = std::move(backup);
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
      int err = errno;
      Keep();
      return IoError(path + ": cannot rename temp file into place: " + std::strerror(err));
    }
    return Status::Ok();
  }
  void Undo(const std::string& tmp, const std::string& path) {
    ::rename(path.c_str(), tmp.c_str());
    if (!backup_.empty()) ::rename(backup_.c_str(), path.c_str());
    backup_.clear();
  }
  void Keep() {
    if (!backup_.empty()) ::unlink(backup_.c_str());
    backup_.clear();
  }
  ~FileSwap() { Keep(); }

 private:
  std::string backup_;
};

Status ReadInfo(const std::string& dir, const std::string& name, BaselineInfo* info) {
  json report;
  info->name = name;
  TG_RETURN_IF_ERROR(LoadBaseline(dir, name, &report, &info->path));
  info->model = Text(report, "model");
  info->precision = Text(report, "precision");
  info->commit = Text(report, "commit");
  info->profiling_date = Text(report, "profiling_date");
  info->has_avg_latency = Number(report, keys::kAvgLatencyMs.name).has_value();
  info->avg_latency_ms = Number(report, keys::kAvgLatencyMs.name).value_or(0);
  return Status::Ok();
}

}  // namespace

std::string BaselinePath(const std::string& dir, const std::string& name) {
  return (dir.empty() ? std::string(".") : dir) + "/" + name + kJsonSuffix;
}

std::string HistoryPath(const std::string& dir) { return (dir.empty() ? std::string(".") : dir) + "/history.db"; }

Status ValidateBaselineName(const std::string& name) {
  auto allowed = [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
           c == '-';
  };
  if (name.empty() || name.size() > kMaxNameLength || name[0] == '.' ||
      !std::all_of(name.begin(), name.end(), allowed))
    return InvalidInput("baseline name '" + name + "' is not allowed: use 1-" + std::to_string(kMaxNameLength) +
                        " characters from A-Z a-z 0-9 . _ - (no path separators), not starting with '.'");
  return Status::Ok();
}

HistoryRow HistoryRowFor(const std::string& name, const std::string& kind, const json& report,
                         const std::string& source) {
  HistoryRow row;
  row.name = name;
  row.kind = kind;
  row.recorded_at = internal::NowIso();
  row.commit = Text(report, "commit");
  row.avg_latency_ms = Number(report, keys::kAvgLatencyMs.name).value_or(0);
  row.p95_latency_ms = Number(report, keys::kP95LatencyMs.name).value_or(0);
  row.throughput_fps = Number(report, keys::kThroughputFps.name).value_or(0);
  row.source = source;
  return row;
}

Status SaveBaseline(const std::string& dir, const std::string& name, const json& report,
                    const std::string& source) {
  TG_RETURN_IF_ERROR(ValidateBaselineName(name));
  TG_RETURN_IF_ERROR(CheckReport(report, source));
  if (!Number(report, keys::kAvgLatencyMs.name))
    return InvalidInput(source + ": no avg_latency_ms to gate against (" +
                        Text(report, keys::ReasonKey(keys::kAvgLatencyMs.name)) + "); a baseline needs iterations");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return IoError(dir + ": cannot create the baseline directory: " + ec.message());
  const std::string path = BaselinePath(dir, name);
  const std::string text = JsonText(report);
  const HistoryRow row = HistoryRowFor(name, "saved", report, source);
  // The file is written before the history is locked, so a full disk fails here with nothing
  // changed and without holding up other jobs.
  std::string tmp;
  TG_RETURN_IF_ERROR(WriteTempFile(path, {text}, &tmp));
  Status s = internal::WithHistoryRetry(
      [&](internal::HistoryWrite& h) -> Status {
        TG_RETURN_IF_ERROR(h.Insert(row));
        // The file takes its place inside the row's transaction: both land or neither does.
        FileSwap swap;
        TG_RETURN_IF_ERROR(swap.Replace(tmp, path));
        if (Status c = h.Commit(); !c.ok()) {
          swap.Undo(tmp, path);
          return c;
        }
        swap.Keep();
        return Status::Ok();
      },
      dir);
  ::unlink(tmp.c_str());  // still there when nothing was saved
  if (!s.ok()) return Status(s.code(), s.message() + "; nothing was saved (the baseline and its history are as before)");
  return Status::Ok();
}

Status LoadBaseline(const std::string& dir, const std::string& name_or_file, json* report,
                    std::string* resolved_path) {
  std::string path = name_or_file;
  bool is_file = name_or_file.find('/') != std::string::npos || EndsWith(name_or_file, kJsonSuffix);
  if (!is_file) {
    TG_RETURN_IF_ERROR(ValidateBaselineName(name_or_file));
    path = BaselinePath(dir, name_or_file);
    std::error_code ec;
    if (!fs::exists(path, ec))
      return NotFound(path + ": no baseline named '" + name_or_file + "' (see tracegate baseline list --dir " +
                      dir + ")");
  }
  TG_RETURN_IF_ERROR(CheckReadableFile(path));
  json doc;
  TG_RETURN_IF_ERROR(internal::LoadReportFile(path, "baseline", &doc));
  TG_RETURN_IF_ERROR(CheckReport(doc, path));
  *report = std::move(doc);
  if (resolved_path) *resolved_path = path;
  return Status::Ok();
}

Status ListBaselines(const std::string& dir, std::vector<BaselineInfo>* out) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return NotFound(dir + ": no baseline directory (tracegate baseline save creates it)");
  std::vector<std::string> names;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string file = it->path().filename().string();
    if (!EndsWith(file, kJsonSuffix)) continue;
    std::string name = file.substr(0, file.size() - std::string_view(kJsonSuffix).size());
    if (ValidateBaselineName(name).ok()) names.push_back(std::move(name));
  }
  if (ec) return IoError(dir + ": cannot list the baseline directory: " + ec.message());
  std::sort(names.begin(), names.end());
  out->clear();
  for (const std::string& name : names) {
    BaselineInfo info;
    if (Status s = ReadInfo(dir, name, &info); !s.ok()) {
      info.path = BaselinePath(dir, name);
      info.error = s.message();
    }
    out->push_back(std::move(info));
  }
  return Status::Ok();
}

}  // namespace tg
