// One recorded process's part of a recording. The CUPTI collector (collector/cupti/) converts
// activity records into batches of trace-model rows and hands them to a PartWriter; a background
// thread appends them to the part file every flush interval, so a process that is killed loses at
// most about one interval of events. `tracegate record` merges the parts of every process into one
// trace (parts.h). CUDA-free: the fake activity source of the tests drives it the same way.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "tracegate/analyzer/model.h"
#include "tracegate/analyzer/quality.h"
#include "tracegate/analyzer/status.h"

namespace tg::internal {

struct PartWriterOptions {
  std::string path;                 // the part file, written in place (never renamed)
  int64_t flush_interval_ms = 1000; // background append period
  // False: no background thread; the owner calls Flush on its own schedule (the CUPTI collector
  // does, from its one flush thread, right after CUPTI's flush).
  bool background = true;
};

// Thread-safe: Submit, AddQuality, SetMetadata, AddDevice, AddProcess may be called from any
// thread (CUPTI's buffer-completed callback, the NVTX hooks, the injection's init code).
class PartWriter {
 public:
  // Creates the part file with the store schema and starts the background thread (unless
  // options.background is false).
  // Errors: "<path>: ...".
  [[nodiscard]] static Status Open(const PartWriterOptions& options, std::unique_ptr<PartWriter>* out);
  PartWriter(const PartWriter&) = delete;
  PartWriter& operator=(const PartWriter&) = delete;
  ~PartWriter();  // Finish() if it was not called; errors are printed once to stderr

  // Queues a batch of event rows (names are ids into batch.strings; the batch has its own
  // StringTable). Never blocks on I/O. Metadata, devices, processes and quality of `batch`
  // are ignored: use the calls below.
  void Submit(Trace&& batch);
  void AddQuality(Quality q, uint64_t n = 1);
  void SetMetadata(const std::string& key, const std::string& value);
  void AddDevice(const Device& device);  // replaces an earlier device with the same id
  void AddProcess(const Process& process);

  // Appends everything queued so far and the current metadata, devices, processes and quality
  // counters, and waits until it is in the file (visible to a reader even if this process is
  // killed right after).
  [[nodiscard]] Status Flush();
  // Flush, then marks the part complete (meta key "tracegate.part_complete" = "1") and stops
  // the thread. Further calls are no-ops returning the first result.
  [[nodiscard]] Status Finish();

  // Events queued or written so far, by table (for the record summary and tests).
  uint64_t EventsSubmitted() const;
  // Events submitted after a write failed (full disk, file size limit), which were dropped: the
  // first failure is printed on stderr at once and ends the recording of this process.
  uint64_t EventsDropped() const;

 private:
  struct Impl;
  explicit PartWriter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tg::internal
