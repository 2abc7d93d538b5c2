// tracegate-timed-run OUT COMMAND [ARGS...]
// Runs COMMAND (its stdout to /dev/null, its stderr to ours) and writes "SECONDS KIB" to OUT: its
// wall time to the microsecond, from before the child is created until it has been reaped, and
// its peak resident set (ru_maxrss of wait4, as GNU time's %M). The benchmark scripts
// (compare_shapes.sh, compare_tools.sh) time with it: GNU time's %e prints hundredths of a second,
// truncated, so a 0.229 s run reads 0.22 and a 0.22-s command's speed is overstated by up to 4.5%.
// A small C++ program rather than Python: a child forked from Python starts with Python's resident
// set, and ru_maxrss would never read below it.
// Exit status: the command's; 128 + the signal when one killed it; 125 when it was stopped on the
// way (SIGSTOP, as a shared machine's schedulers send): that wall time is no measurement, and OUT is
// then not written; 127 when it could not be started.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>

namespace {

double Now() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: tracegate-timed-run OUT COMMAND [ARGS...]\n");
    return 2;
  }
  const char* out = argv[1];
  const double start = Now();
  const pid_t pid = fork();
  if (pid < 0) {
    std::fprintf(stderr, "tracegate-timed-run: fork: %s\n", std::strerror(errno));
    return 127;
  }
  if (pid == 0) {
    const int null = open("/dev/null", O_WRONLY);
    if (null >= 0) dup2(null, STDOUT_FILENO);
    execvp(argv[2], argv + 2);
    std::fprintf(stderr, "tracegate-timed-run: %s: %s\n", argv[2], std::strerror(errno));
    _exit(127);
  }
  bool stopped = false;
  int status = 0;
  rusage usage{};
  for (;;) {
    if (wait4(pid, &status, WUNTRACED, &usage) < 0) {
      if (errno == EINTR) continue;
      std::fprintf(stderr, "tracegate-timed-run: wait4: %s\n", std::strerror(errno));
      return 127;
    }
    if (!WIFSTOPPED(status)) break;
    stopped = true;
    kill(pid, SIGCONT);  // let it finish; the run is reported as disturbed
  }
  const double seconds = Now() - start;
  if (WIFSIGNALED(status)) {
    std::fprintf(stderr, "tracegate-timed-run: %s was killed by signal %d\n", argv[2], WTERMSIG(status));
    return 128 + WTERMSIG(status);
  }
  if (WEXITSTATUS(status) != 0) return WEXITSTATUS(status);
  if (stopped) {
    std::fprintf(stderr, "tracegate-timed-run: %s was stopped on the way; its time is no measurement\n", argv[2]);
    return 125;
  }
  FILE* f = std::fopen(out, "w");
  if (!f || std::fprintf(f, "%.6f %ld\n", seconds, usage.ru_maxrss) < 0 || std::fclose(f) != 0) {
    std::fprintf(stderr, "tracegate-timed-run: cannot write %s\n", out);
    return 127;
  }
  return 0;
}
