// The in-process recorder: a program that links tracegate (target tracegate_cupti) records its own
// CUDA activity around a region, with the machinery `tracegate record` injects into other
// programs: the same CUPTI collector writes a part file, which StopRecording merges into a
// tracegate store at `path`, written atomically.
//
//   tg::Status s = tg::StartRecording("resnet.db");
//   ... launch work ...
//   cudaDeviceSynchronize();          // work still on the device when recording stops is lost
//   s = tg::StopRecording();
//
// One recording per process at a time; CUPTI being used by another tool is no error (the store
// says what was missed, see collector/cupti/collector.h). Not to be used in a process that
// `tracegate record` already records (CUPTI allows one collector: the second one records nothing).
#pragma once

#include <cstdint>
#include <string>

#include "tracegate/analyzer/status.h"

namespace tg {

struct RecordingOptions {
  int64_t flush_ms = 1000;      // CUPTI flush and part append period
  bool driver_api = true;       // record driver API calls besides runtime API calls
  int64_t buffer_mb = 8;        // one CUPTI activity buffer
  int64_t buffer_cap_mb = 512;  // all buffers together; beyond it records are dropped and counted
};

// Starts recording. `path`'s directory must exist; a parts directory "<path>.parts-<pid>" is used
// meanwhile. Errors: a recording is already running, the parts directory cannot be created.
[[nodiscard]] Status StartRecording(const std::string& path, const RecordingOptions& options = {});

// Stops the recording and writes the store (replacing a file at the path only with a complete
// one). Errors: no recording running; the store cannot be written.
[[nodiscard]] Status StopRecording();

}  // namespace tg
