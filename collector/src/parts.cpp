// MergeParts: every recorded process's part file read back (ImportSqlite) and appended to one
// trace with its names re-interned.
#include "collector/src/parts.h"

#include <time.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <system_error>

#include "tracegate/analyzer/import.h"
#include "tracegate/analyzer/store.h"

namespace tg::internal {

namespace {

// Metadata ImportSqlite derives from the file it reads (the part), not from the recording.
bool IsReaderKey(std::string_view key) {
  return key == meta::kSourceFormat || key == meta::kSourceVersion || key == meta::kSourcePath ||
         key == meta::kProducer || key.rfind("origin_", 0) == 0 || key == kPartCompleteKey;
}

// Appends every event row of `from` to `to`, names mapped into to's string table.
void AppendEvents(const Trace& from, Trace& to) {
  std::vector<StringId> map(from.strings.size(), StringTable::kNotFound);
  auto name = [&](StringId id) {
    if (map[id] == StringTable::kNotFound) map[id] = to.strings.Intern(from.strings.View(id));
    return map[id];
  };
  for (size_t i = 0; i < from.kernels.size(); ++i) {
    Kernel k = from.kernels.Row(i);
    k.name = name(k.name);
    to.kernels.Add(k);
  }
  for (size_t i = 0; i < from.api_calls.size(); ++i) {
    ApiCall a = from.api_calls.Row(i);
    a.name = name(a.name);
    to.api_calls.Add(a);
  }
  for (size_t i = 0; i < from.ranges.size(); ++i) {
    Range r = from.ranges.Row(i);
    r.name = name(r.name);
    r.domain = name(r.domain);
    to.ranges.Add(r);
  }
  for (size_t i = 0; i < from.memcpys.size(); ++i) to.memcpys.Add(from.memcpys.Row(i));
  for (size_t i = 0; i < from.memsets.size(); ++i) to.memsets.Add(from.memsets.Row(i));
  for (size_t i = 0; i < from.syncs.size(); ++i) to.syncs.Add(from.syncs.Row(i));
  for (size_t i = 0; i < from.samples.size(); ++i) to.samples.Add(from.samples.Row(i));
}

// Devices and processes united (first seen wins), quality summed, metadata as MergeParts says.
void MergeState(const Trace& from, Trace& to) {
  for (const Device& d : from.devices)
    if (!to.FindDevice(d.id)) to.devices.push_back(d);
  for (const Process& p : from.processes)
    if (std::none_of(to.processes.begin(), to.processes.end(), [&](const Process& q) { return q.pid == p.pid; }))
      to.processes.push_back(p);
  for (const QualityInfo& q : kQualityInfo) to.quality.Add(q.id, from.quality.Get(q.id));
  for (const auto& [key, value] : from.metadata) {
    if (IsReaderKey(key)) continue;
    auto [it, inserted] = to.metadata.try_emplace(key, value);
    if (inserted || it->second == value) continue;
    if (key == meta::kMemoryPeakMb) {
      // Each process's own peak; processes sharing a GPU add up, so the sum bounds the peak.
      it->second = StrFormat("%.1f", std::strtod(it->second.c_str(), nullptr) + std::strtod(value.c_str(), nullptr));
      continue;
    }
    // Values that differ between processes (a warning of one of them) are all kept.
    if (("; " + it->second + "; ").find("; " + value + "; ") == std::string::npos) it->second += "; " + value;
  }
}

std::string FileName(const std::string& path) { return std::filesystem::path(path).filename().string(); }

}  // namespace

Status ParseCaptureRange(std::string_view text, std::string* nvtx_name) {
  constexpr std::string_view kPrefix = "nvtx:";
  if (text.substr(0, kPrefix.size()) != kPrefix || text.size() == kPrefix.size())
    return InvalidInput("capture range '" + std::string(text) + "' is not nvtx:NAME (an NVTX range's name)");
  *nvtx_name = std::string(text.substr(kPrefix.size()));
  return Status::Ok();
}

Status ParseIterations(std::string_view text, int64_t* skip, int64_t* count) {
  auto number = [](std::string_view digits, int64_t* out) {
    if (digits.empty() || digits.size() > 12 || digits.find_first_not_of("0123456789") != std::string_view::npos)
      return false;
    *out = std::stoll(std::string(digits));
    return true;
  };
  const size_t colon = text.find(':');
  int64_t k = 0, n = 0;
  if (colon == std::string_view::npos || !number(text.substr(0, colon), &k) || !number(text.substr(colon + 1), &n) ||
      n < 1)
    return InvalidInput("iterations '" + std::string(text) +
                        "' is not K:N (skip K ranges, then record N; K >= 0, N >= 1)");
  *skip = k;
  *count = n;
  return Status::Ok();
}

int64_t RecordClockNs() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

std::string PartPath(const std::string& dir, int64_t pid) { return dir + "/part-" + std::to_string(pid) + ".db"; }

Status MergeParts(const std::string& dir, Trace* out, MergeResult* result) {
  *result = MergeResult{};
  std::set<std::string> paths;  // sorted: the merge does not depend on directory order
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.rfind("part-", 0) == 0 && name.size() > 8 && name.compare(name.size() - 3, 3, ".db") == 0)
      paths.insert(it->path().string());
  }
  if (ec) return IoError(dir + ": cannot list the recording's parts: " + ec.message());
  for (const std::string& path : paths) {
    ++result->parts;
    Trace part;
    Status s = RecoverStore(path);
    if (s.ok()) s = ImportSqlite(path, &part);
    if (!s.ok()) {
      // Killed before its first commit (empty file, no schema yet), or damaged: nothing to keep.
      ++result->incomplete_parts;
      out->quality.Add(Quality::kTraceIncomplete);
      result->notes.push_back(FileName(path) + ": unreadable, skipped: " + s.message());
      continue;
    }
    auto complete = part.metadata.find(kPartCompleteKey);
    if (complete == part.metadata.end() || complete->second != "1") {
      ++result->incomplete_parts;
      out->quality.Add(Quality::kTraceIncomplete);
      result->notes.push_back(FileName(path) + ": the process did not finish its recording (killed or crashed); " +
                              std::to_string(part.kernels.size() + part.api_calls.size() + part.memcpys.size() +
                                             part.memsets.size() + part.syncs.size() + part.ranges.size()) +
                              " events kept up to its last flush");
    }
    AppendEvents(part, *out);
    MergeState(part, *out);
  }
  return Status::Ok();
}

}  // namespace tg::internal
