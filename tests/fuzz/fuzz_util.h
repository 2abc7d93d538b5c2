// Shared by the libFuzzer targets: the importers read paths, so each input is written to one
// file per process in /dev/shm (or $TMPDIR) first.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace tg::fuzz {

// Writes the input to this process's scratch file (same path every call) and returns the path.
inline const std::string& WriteInput(const uint8_t* data, size_t size, const char* suffix) {
  static const std::string path = [suffix] {
    const char* dir = std::getenv("TMPDIR");
    std::string base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : (dir ? dir : "/tmp");
    return base + "/tracegate-fuzz-" + std::to_string(getpid()) + suffix;
  }();
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) std::abort();
  if (size > 0 && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
  return path;
}

}  // namespace tg::fuzz
