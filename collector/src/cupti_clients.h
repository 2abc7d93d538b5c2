// Other CUPTI clients in a recorded process. CUPTI serves one subscriber per process: the
// collector subscribes when CUDA starts, so a profiler that starts later in the same process (the
// PyTorch profiler, Kineto, is the common one) gets CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
// and records no CUDA activity, while tracegate's recording is unaffected. The collector notes,
// per process, which loaded libraries are CUPTI clients and whether a refusal was seen, and
// `tracegate record` prints one line per such process. CUDA-free.
//
// What is detected, and how:
//   - a CUPTI client library: a loaded object (the program or a shared library) other than the
//     collector's own that imports cuptiSubscribe, cuptiSubscribe_v2 or
//     cuptiActivityRegisterCallbacks (an undefined dynamic symbol named by one of its
//     relocations), found by walking the loaded objects (dl_iterate_phdr) at the end of the
//     recording. It says that the process can profile through CUPTI, not that it did; a client
//     that finds CUPTI with dlsym is not seen.
//   - a refusal: CUPTI's last error (cuptiGetLastError, per thread) on the thread that stops the
//     recording is CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED. The collector's own subscription
//     succeeded, so another client's failed; a refusal on another thread is not seen.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace tg::internal {

// Part metadata keys. Values are per process, "pid N: ..." (MergeParts joins the processes' values
// with "; ").
inline constexpr const char* kOtherCuptiClientsKey = "cupti_other_clients";  // "pid N: libA.so, libB.so"
inline constexpr const char* kCuptiRefusedKey = "cupti_other_client_refused";  // "pid N"

// The functions whose import makes an object a CUPTI client.
inline constexpr std::string_view kCuptiClientImports[] = {"cuptiSubscribe", "cuptiSubscribe_v2",
                                                           "cuptiActivityRegisterCallbacks"};

// The file names (no directory) of the loaded objects that import any of `symbols`, sorted, each
// once; the object that contains the address `self` is left out (nullptr: none is). The main
// program is named by /proc/self/exe. Reads only memory inside the objects' loaded segments.
std::vector<std::string> ObjectsImporting(const std::vector<std::string_view>& symbols, const void* self);

// The metadata a process adds for the clients it found and the refusal it saw; empty when neither.
std::map<std::string, std::string> OtherCuptiClientsMetadata(int64_t pid, const std::vector<std::string>& clients,
                                                             bool refused);

// One line per process that the recording's metadata names (after MergeParts), for `record`'s
// summary: what happened, that tracegate's recording of the process is unaffected (CUPTI stayed
// with tracegate), and what to do.
std::vector<std::string> OtherCuptiClientLines(const std::map<std::string, std::string, std::less<>>& metadata);

}  // namespace tg::internal
