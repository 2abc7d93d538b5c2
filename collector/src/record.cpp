// The `tracegate record` launcher: fork/exec with the collector's environment, signal
// forwarding, waiting for every process the command started, then merge and write.
#include "tracegate/collector/record.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <map>

#include "analyzer/util/fileio.h"
#include "collector/src/nvml_sampler.h"
#include "collector/src/parts.h"
#include "tracegate/analyzer/store.h"

extern char** environ;

namespace tg {

using internal::kDeviceUuidPrefix;
using internal::MergeParts;
using internal::NvmlSampler;
using internal::NvmlSamplerOptions;
using internal::ParseCaptureRange;
using internal::ParseIterations;

using internal::TempPathFor;

namespace {

constexpr const char* kInjectLibName = "libtracegate_inject.so";
constexpr int kForwarded[] = {SIGINT, SIGTERM};

// The command's pid while it runs; 0 before and after. Read by the signal handler.
std::atomic<pid_t> g_child{0};
// Set by SIGINT/SIGTERM once the command has exited: stop waiting for the processes it left.
std::atomic<bool> g_stop_waiting{false};
static_assert(std::atomic<pid_t>::is_always_lock_free && std::atomic<bool>::is_always_lock_free);

void ForwardSignal(int sig, siginfo_t* info, void*) {
  pid_t child = g_child.load();
  if (child <= 0) {
    g_stop_waiting.store(true);
    return;
  }
  // A terminal's Ctrl-C (si_code SI_KERNEL) went to the whole foreground process group, the
  // command included (it shares ours): sending it again would deliver it twice.
  if (info->si_code != SI_KERNEL) ::kill(child, sig);
}

std::string DirOf(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  return dir.empty() ? "." : dir;
}

// One word per argument, quoted the way a POSIX shell would read it back when needed.
std::string CommandLine(const std::vector<std::string>& argv) {
  std::string line;
  for (const std::string& a : argv) {
    if (!line.empty()) line += ' ';
    bool plain = !a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                   "0123456789_-+=./:,@%") == std::string::npos;
    if (plain) {
      line += a;
      continue;
    }
    line += '\'';
    for (char c : a) line += c == '\'' ? std::string("'\\''") : std::string(1, c);
    line += '\'';
  }
  return line;
}

// The child's environment: ours plus the collector's variables.
std::vector<std::string> ChildEnvironment(const RecordOptions& o, const std::string& parts_dir) {
  std::vector<std::pair<std::string, std::string>> set = {
      {internal::kPartsDir, parts_dir},
      {internal::kCudaInjection, o.inject_lib},
      {internal::kNvtxInjection, o.inject_lib},
  };
  if (!o.driver_api) set.emplace_back(internal::kDriverApi, "0");
  set.emplace_back(internal::kApi, o.api == ApiRecording::kAll ? "all" : "default");
  set.emplace_back(internal::kGraphTrace, o.graph_trace == GraphTrace::kGraph ? "graph" : "node");
  // Always set, so a value in the launcher's own environment never leaks into the command's.
  set.emplace_back(internal::kCaptureRange, o.capture_range);
  set.emplace_back(internal::kIterations, o.iterations);
  if (!std::getenv(internal::kFlushMs)) set.emplace_back(internal::kFlushMs, std::to_string(o.flush_ms));
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string_view kv(*e);
    std::string_view key = kv.substr(0, kv.find('='));
    bool replaced = false;
    for (const auto& [k, v] : set) replaced = replaced || key == k;
    if (!replaced) env.emplace_back(kv);
  }
  for (const auto& [k, v] : set) env.push_back(k + "=" + v);
  return env;
}

struct Launch {
  pid_t pid = -1;
  int exec_errno = 0;  // the exec failed with this (the child is gone)
};

// fork + execvpe. SIGINT/SIGTERM are blocked by the caller, so no signal is handled between fork
// and g_child being set; the child restores the dispositions and mask the launcher started with.
Status Spawn(const RecordOptions& o, const std::vector<std::string>& env, const struct sigaction* old_actions,
             const sigset_t& old_mask, Launch* launch) {
  std::vector<char*> argv, envp;
  for (const std::string& a : o.command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return IoError(std::string("cannot create a pipe: ") + std::strerror(errno));
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return IoError(std::string("cannot fork: ") + std::strerror(errno));
  }
  if (pid == 0) {  // the child: async-signal-safe calls only
    ::close(fds[0]);
    for (size_t i = 0; i < std::size(kForwarded); ++i) ::sigaction(kForwarded[i], &old_actions[i], nullptr);
    ::sigprocmask(SIG_SETMASK, &old_mask, nullptr);
    ::execvpe(argv[0], argv.data(), envp.data());
    int err = errno;
    ssize_t written = ::write(fds[1], &err, sizeof err);  // the parent reads why
    (void)written;
    ::_exit(127);
  }
  ::close(fds[1]);
  launch->pid = pid;
  int err = 0;
  ssize_t n;
  while ((n = ::read(fds[0], &err, sizeof err)) < 0 && errno == EINTR) {
  }
  ::close(fds[0]);
  if (n == sizeof err) launch->exec_errno = err;  // 0 bytes: the exec closed the pipe
  return Status::Ok();
}

// Waits for the command and every process it left behind (we are their subreaper), until none
// is left or SIGINT/SIGTERM arrives after the command exited. Returns the command's wait status.
int WaitAll(pid_t child) {
  int child_status = 0;
  bool child_done = false;
  for (;;) {
    int st = 0;
    pid_t p = ::waitpid(-1, &st, 0);
    if (p < 0) {
      if (errno == EINTR && !(child_done && g_stop_waiting.load())) continue;
      break;  // ECHILD: nothing left; EINTR: told to stop waiting
    }
    if (p == child) {
      g_child.store(0);
      child_status = st;
      child_done = true;
      if (g_stop_waiting.load()) break;
    }
  }
  return child_status;
}

std::string ExitText(int status) {
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    const char* name = ::strsignal(sig);
    return "signal " + std::to_string(sig) + (name ? std::string(" (") + name + ")" : std::string());
  }
  return "exit " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : 0);
}

int ExitCode(int status) {
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

std::string NoActivityReason(const MergeResult& merge) {
  if (merge.parts == 0)
    return "no process of the command initialized CUDA (the CUDA driver loads the collector into a "
           "process when it initializes CUDA, and none did): either the command does no GPU work, or "
           "its processes ran with an environment without CUDA_INJECTION64_PATH (sudo, env -i, some "
           "container launchers)";
  return std::to_string(merge.parts) + " process" + (merge.parts == 1 ? "" : "es") +
         " initialized CUDA but ran no kernel, copy or memset while recorded (or was killed before "
         "its first flush)";
}

void Describe(const RecordOptions& o, int status, const std::string& telemetry, RecordResult* r) {
  auto& md = r->trace.metadata;
  md[std::string(meta::kSourceFormat)] = record_meta::kSourceFormat;
  md[std::string(meta::kSourceVersion)] = std::to_string(kStoreSchemaVersion);
  md[std::string(meta::kProducer)] = "tracegate " TRACEGATE_VERSION;
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) == 0 && host[0]) md.try_emplace(std::string(meta::kHost), host);
  md[std::string(record_meta::kCommand)] = CommandLine(o.command);
  md[std::string(record_meta::kExit)] = ExitText(status);
  md[std::string(record_meta::kTelemetry)] = telemetry;
  md[std::string(record_meta::kProcesses)] = std::to_string(r->merge.parts);
  if (r->trace.GpuEventCount() == 0) md[std::string(record_meta::kNoActivity)] = NoActivityReason(r->merge);
}

// NVML numbers every GPU; CUDA only those CUDA_VISIBLE_DEVICES shows, in its order. When the
// parts name their CUDA devices' UUIDs, each sample moves to the CUDA device with its GPU's UUID,
// and GPUs the command could not see are left out; otherwise samples keep NVML's index.
void AddSamplesByUuid(const NvmlSampler& sampler, Trace* trace) {
  std::map<std::string, int32_t> cuda_id;  // UUID -> CUDA device
  for (const auto& [key, value] : trace->metadata)
    if (key.rfind(kDeviceUuidPrefix, 0) == 0) cuda_id[value] = std::atoi(key.c_str() + kDeviceUuidPrefix.size());
  const std::vector<std::string>& uuids = sampler.Uuids();
  const SampleTable& samples = sampler.Samples();
  for (size_t i = 0; i < samples.size(); ++i) {
    Sample s = samples.Row(i);
    if (!cuda_id.empty()) {
      const size_t nvml = static_cast<size_t>(s.device);
      auto it = nvml < uuids.size() ? cuda_id.find(uuids[nvml]) : cuda_id.end();
      if (it == cuda_id.end()) continue;
      s.device = it->second;
    }
    trace->samples.Add(s);
  }
}

// The default output must never replace a file: the trace is written under a temp name, then
// linked to the first free tracegate<N>.db (link fails when the name exists, even in a race).
Status WriteNew(const Trace& trace, const std::string& dir, std::string* path) {
  std::string tmp = TempPathFor(dir + "/tracegate.db");
  TG_RETURN_IF_ERROR(WriteStore(trace, tmp));
  Status result = IoError(dir + ": no free tracegate<N>.db name");
  for (int tries = 0; tries < 1000; ++tries) {
    std::string candidate = DefaultOutputPath(dir);
    if (::link(tmp.c_str(), candidate.c_str()) == 0) {
      *path = candidate;
      result = Status::Ok();
      break;
    }
    if (errno != EEXIST) {
      result = IoError(candidate + ": cannot create: " + std::strerror(errno));
      break;
    }
  }
  ::unlink(tmp.c_str());
  return result;
}

}  // namespace

Status FindInjectLibrary(std::string* path) {
  if (const char* env = std::getenv(internal::kInjectLib); env && *env) {
    if (::access(env, R_OK) != 0)
      return NotFound(std::string(internal::kInjectLib) + "=" + env + ": " + std::strerror(errno));
    // Absolute: the driver opens it in the command's processes, which may change directory.
    std::error_code ec;
    std::filesystem::path abs = std::filesystem::absolute(env, ec);
    *path = ec ? std::string(env) : abs.lexically_normal().string();
    return Status::Ok();
  }
  char exe[4096];
  ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  std::string dir = n > 0 ? DirOf(std::string(exe, static_cast<size_t>(n))) : ".";
  std::string lib = dir + "/" + kInjectLibName;
  if (::access(lib.c_str(), R_OK) != 0)
    return NotFound("the collector's injection library " + lib +
                    " is missing: this tracegate was built without the CUDA toolkit (CUPTI); install it and "
                    "rebuild, or point " + internal::kInjectLib + " at a libtracegate_inject.so");
  *path = lib;
  return Status::Ok();
}

Status CheckInjectLibrary(const std::string& path) {
  // In a child: loading runs the library's static constructors and may map libcupti, neither of
  // which belongs in the launcher. Our environment is the command's, less the collector's
  // variables, so the child finds what the command's processes would.
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return IoError(std::string("cannot create a pipe: ") + std::strerror(errno));
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return IoError(std::string("cannot fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::close(fds[0]);
    if (::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) ::_exit(0);
    const char* err = ::dlerror();
    std::string why = err ? err : "unknown dlopen error";
    ssize_t written = ::write(fds[1], why.data(), why.size());
    (void)written;
    ::_exit(1);
  }
  ::close(fds[1]);
  std::string why;
  char buf[512];
  for (;;) {
    ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n > 0) why.append(buf, static_cast<size_t>(n));
    else if (n == 0 || errno != EINTR) break;
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return Status::Ok();
  if (why.empty()) why = "the test load ended with " + ExitText(status);
  return InvalidInput("the collector's injection library cannot be loaded, so the CUDA driver could not load it "
                      "into the command either and nothing would be recorded: " + why +
                      " (libtracegate_inject.so finds its libraries through its RUNPATH and LD_LIBRARY_PATH; "
                      "with a ci/gpu_bundle.sh bundle, source its env.sh first)");
}

std::string DefaultOutputPath(const std::string& dir) {
  for (int n = 1;; ++n) {
    std::string p = dir + "/tracegate" + std::to_string(n) + ".db";
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0) return p;
  }
}

Status CheckWindow(const RecordOptions& o) {
  std::string name;
  int64_t skip = 0, count = 0;
  if (!o.capture_range.empty()) TG_RETURN_IF_ERROR(ParseCaptureRange(o.capture_range, &name));
  if (o.iterations.empty()) return Status::Ok();
  TG_RETURN_IF_ERROR(ParseIterations(o.iterations, &skip, &count));
  if (o.capture_range.empty())
    return InvalidInput("iterations " + o.iterations + " counts the ranges of a capture range; name one (--capture-range nvtx:NAME)");
  return Status::Ok();
}

Status Record(const RecordOptions& o, RecordResult* r) {
  if (o.command.empty()) return InvalidInput("record: no command given (tracegate record -- CMD ARGS...)");
  TG_RETURN_IF_ERROR(CheckWindow(o));
  if (!o.inject_lib.empty()) TG_RETURN_IF_ERROR(CheckInjectLibrary(o.inject_lib));
  std::string out_dir = o.output.empty() ? "." : DirOf(o.output);
  // Absolute: the command's processes write their parts there from wherever they cd to.
  std::string parts_dir = out_dir + "/.tracegate-parts-" + std::to_string(::getpid());
  if (std::error_code abs_ec; !parts_dir.empty() && parts_dir[0] != '/')
    parts_dir = std::filesystem::absolute(parts_dir, abs_ec).lexically_normal().string();
  std::error_code ec;
  std::filesystem::remove_all(parts_dir, ec);  // a leftover of a killed launcher with our pid
  if (::mkdir(parts_dir.c_str(), 0700) != 0)
    return IoError(parts_dir + ": cannot create the recording's parts directory: " + std::strerror(errno));
  struct RemoveParts {
    std::string dir;
    ~RemoveParts() {
      std::error_code e;
      std::filesystem::remove_all(dir, e);
    }
  } remove_parts{parts_dir};
  // Orphans of the command (daemons, pools whose parent exited) are re-parented to us, so we
  // can wait for their parts too. Not inherited by the command itself.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);

  std::vector<std::string> env = ChildEnvironment(o, parts_dir);
  sigset_t block, old_mask;
  sigemptyset(&block);
  for (int sig : kForwarded) sigaddset(&block, sig);
  ::sigprocmask(SIG_BLOCK, &block, &old_mask);
  struct sigaction forward {}, old_actions[std::size(kForwarded)];
  forward.sa_sigaction = ForwardSignal;
  forward.sa_flags = SA_SIGINFO;  // no SA_RESTART: a signal interrupts waitpid
  sigemptyset(&forward.sa_mask);
  for (size_t i = 0; i < std::size(kForwarded); ++i) ::sigaction(kForwarded[i], &forward, &old_actions[i]);
  auto restore = [&] {
    for (size_t i = 0; i < std::size(kForwarded); ++i) ::sigaction(kForwarded[i], &old_actions[i], nullptr);
    ::sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  };

  g_stop_waiting.store(false);
  auto start = std::chrono::steady_clock::now();
  Launch launch;
  if (Status s = Spawn(o, env, old_actions, old_mask, &launch); !s.ok()) {
    restore();
    return s;
  }
  if (launch.exec_errno != 0) {
    ::waitpid(launch.pid, nullptr, 0);
    restore();
    std::string why = std::strerror(launch.exec_errno);
    return launch.exec_errno == ENOENT ? NotFound("cannot run '" + o.command[0] + "': " + why)
                                       : InvalidInput("cannot run '" + o.command[0] + "': " + why);
  }
  g_child.store(launch.pid);
  // Started with SIGINT/SIGTERM blocked, so the sampling thread never runs the handler.
  NvmlSamplerOptions nvml_options;
  nvml_options.library = o.nvml_library;
  nvml_options.interval_ms = o.sample_ms;
  std::unique_ptr<NvmlSampler> sampler = NvmlSampler::Start(nvml_options);
  ::sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  int status = WaitAll(launch.pid);
  g_child.store(0);
  restore();  // from here a second Ctrl-C stops tracegate itself
  r->duration_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
  sampler->Stop();
  r->exit_code = ExitCode(status);

  TG_RETURN_IF_ERROR(MergeParts(parts_dir, &r->trace, &r->merge));
  AddSamplesByUuid(*sampler, &r->trace);
  Describe(o, status, sampler->Note(), r);
  if (o.output.empty()) {
    TG_RETURN_IF_ERROR(WriteNew(r->trace, out_dir, &r->output));
  } else {
    r->output = o.output;
    TG_RETURN_IF_ERROR(WriteStore(r->trace, o.output));
  }
  struct stat st {};
  if (::stat(r->output.c_str(), &st) == 0) r->output_bytes = static_cast<uint64_t>(st.st_size);
  return Status::Ok();
}

}  // namespace tg
