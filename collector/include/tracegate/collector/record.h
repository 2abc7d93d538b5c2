// `tracegate record -- CMD ARGS...`: runs a command with the collector injected into every CUDA
// process under it, samples GPU telemetry meanwhile, and writes one trace. CUDA-free: the
// injection library is only named (CUDA_INJECTION64_PATH), never loaded by the launcher.
//
// Sequence: parts dir beside the output -> fork/exec with the environment of parts.h (the child
// keeps our process group, so a terminal's Ctrl-C reaches it directly; SIGINT/SIGTERM sent to
// the launcher alone are forwarded) -> NVML sampling thread -> wait for the command and, as the
// launcher is a child subreaper, for every process it started -> MergeParts + samples -> the
// output written atomically -> parts dir removed.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "tracegate/analyzer/model.h"
#include "tracegate/analyzer/status.h"
#include "tracegate/collector/recorder.h"

namespace tg {

// Metadata keys a recording carries (besides the collector's own).
namespace record_meta {
inline constexpr std::string_view kSourceFormat = "tracegate_record";  // value of meta::kSourceFormat
inline constexpr std::string_view kCommand = "record.command";        // the command line, as typed
inline constexpr std::string_view kExit = "record.exit";              // "exit 3", "signal 9 (Killed)"
inline constexpr std::string_view kTelemetry = "record.telemetry";    // NvmlSampler::Note()
inline constexpr std::string_view kProcesses = "record.processes";    // part files merged
// Why the trace holds no CUDA activity (only set then); `analyze` prints it.
inline constexpr std::string_view kNoActivity = "record.no_cuda_activity";
}  // namespace record_meta

struct RecordOptions {
  std::vector<std::string> command;  // argv of the command; [0] is searched in PATH
  std::string output;                // empty: DefaultOutputPath(".")
  std::string inject_lib;            // the injection library (FindInjectLibrary)
  int64_t sample_ms = 100;           // NVML sampling period
  bool driver_api = true;            // false: TRACEGATE_DRIVER_API=0
  ApiRecording api = ApiRecording::kAnalysis;  // TRACEGATE_API (recorder.h)
  GraphTrace graph_trace = GraphTrace::kNode;  // TRACEGATE_CUDA_GRAPH_TRACE
  std::string capture_range;         // "nvtx:NAME" or empty (TRACEGATE_CAPTURE_RANGE)
  std::string iterations;            // "K:N" or empty; needs capture_range (TRACEGATE_ITERATIONS)
  int64_t flush_ms = 1000;           // TRACEGATE_FLUSH_MS for the collector (unless set already)
  std::string nvml_library = "libnvidia-ml.so.1";
};

// What merging the parts of a recording found (MergeParts, collector/src/parts.h).
struct MergeResult {
  size_t parts = 0;                // part files read
  size_t incomplete_parts = 0;     // without the completion marker
  std::vector<std::string> notes;  // one line per part that could not be read or was incomplete
};

struct RecordResult {
  int exit_code = 0;        // the command's; 128 + signal when a signal killed it, as a shell says
  std::string output;       // the file written
  uint64_t output_bytes = 0;
  TimeNs duration_ns = 0;   // wall time of the command
  MergeResult merge;
  Trace trace;              // what was written
};

// The injection library: $TRACEGATE_INJECT_LIB, else libtracegate_inject.so beside the running
// executable. NotFound (one line saying how to get it) when it is not there, as in a build
// without the CUDA toolkit.
[[nodiscard]] Status FindInjectLibrary(std::string* path);

// Loads the injection library in a child process, as the CUDA driver will in the command's: the
// error says what the dynamic loader said (dlerror), instead of a recording in which "no process
// initialized CUDA". Record calls it first (InvalidInput when the library cannot be loaded).
[[nodiscard]] Status CheckInjectLibrary(const std::string& path);

// The capture range and iterations of `options`, checked (Record calls it first).
[[nodiscard]] Status CheckWindow(const RecordOptions& options);

// "<dir>/tracegate1.db", or the first "<dir>/tracegate<N>.db" that does not exist.
std::string DefaultOutputPath(const std::string& dir);

// Runs the command and writes the trace (see the top of this file). The command failing or
// being killed is not an error (it is in exit_code, and a killed process's part is kept and
// counted as trace_incomplete). Errors: the command cannot be started (NotFound /
// InvalidInput, "cannot run ..."), capture_range or iterations malformed (or iterations without
// capture_range; InvalidInput), the parts dir or the output cannot be written.
[[nodiscard]] Status Record(const RecordOptions& options, RecordResult* result);

// The one-screen summary: output and size, command and exit, duration, processes, events by
// kind, dropped records and other data-quality errors, telemetry, incomplete parts.
void PrintRecordSummary(std::ostream& out, const RecordResult& result);

}  // namespace tg
