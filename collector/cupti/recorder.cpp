// The in-process recorder; see tracegate/recorder.h.
#include "tracegate/collector/recorder.h"

#include <unistd.h>

#include <filesystem>
#include <mutex>

#include "collector.h"
#include "collector/src/parts.h"
#include "tracegate/collector/record.h"
#include "tracegate/analyzer/store.h"

namespace tg {

using internal::MergeParts;
using internal::PartPath;

namespace {

std::mutex g_mu;
std::string g_path;       // under g_mu; empty when not recording
std::string g_parts_dir;  // under g_mu

}  // namespace

Status StartRecording(const std::string& path, const RecordingOptions& options) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (!g_path.empty()) return {StatusCode::kInternal, "a recording to " + g_path + " is running; call StopRecording first"};
  const std::string dir = path + ".parts-" + std::to_string(::getpid());
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);  // left by an earlier run of this pid that crashed
  if (!std::filesystem::create_directories(dir, ec) || ec)
    return IoError(dir + ": cannot create the recording's parts directory: " + (ec ? ec.message() : "exists"));
  if (Status s = cupti::StartCollector(options, PartPath(dir, ::getpid())); !s.ok()) {
    std::filesystem::remove_all(dir, ec);
    return s;
  }
  g_path = path;
  g_parts_dir = dir;
  return Status::Ok();
}

Status StopRecording() {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_path.empty()) return {StatusCode::kInternal, "no recording is running; call StartRecording first"};
  const std::string path = g_path, dir = g_parts_dir;
  g_path.clear();
  g_parts_dir.clear();

  Status s = cupti::StopCollector();
  Trace trace;
  MergeResult merged;
  if (s.ok()) s = MergeParts(dir, &trace, &merged);
  if (s.ok()) {
    trace.metadata[std::string(meta::kSourceFormat)] = record_meta::kSourceFormat;
    trace.metadata[std::string(record_meta::kProcesses)] = std::to_string(merged.parts);
    if (trace.GpuEventCount() == 0) {
      auto missed = trace.metadata.find(cupti::kMissedKey);
      trace.metadata[std::string(record_meta::kNoActivity)] =
          missed != trace.metadata.end() ? "the collector could not record: " + missed->second
                                         : "the program ran no CUDA work between StartRecording and StopRecording";
    }
    s = WriteStore(trace, path);
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return s;
}

}  // namespace tg
