// The injected collector's settings, read from the environment `tracegate record` sets
// (collector/src/parts.h). CUDA-free so tests can feed any environment.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tracegate/collector/recorder.h"

namespace tg::cupti {

struct CollectorOptions {
  std::string parts_dir;       // TRACEGATE_PARTS_DIR: where part-<pid>.db goes
  RecordingOptions recording;  // TRACEGATE_FLUSH_MS, _DRIVER_API, _BUFFER_MB, _BUFFER_CAP_MB
};

using GetEnv = std::function<const char*(const char* name)>;

// Reads the options. A value that is not an integer in range (or 0/1 for the driver switch) keeps
// its default and adds one line to *warnings saying so. A missing TRACEGATE_PARTS_DIR leaves
// parts_dir empty: the caller decides (the injection does not record without it).
CollectorOptions ReadCollectorOptions(const GetEnv& getenv, std::vector<std::string>* warnings);

}  // namespace tg::cupti
