// tracegate-gen-kineto --events N [--streams S] [--seed X] -o FILE
#include <cstdio>
#include <cstdlib>
#include <string>

#include "gen_kineto.h"

int main(int argc, char** argv) {
  long long events = 100000;
  int streams = 4;
  unsigned long long seed = 1;
  const char* path = nullptr;
  const char* usage = "usage: tracegate-gen-kineto --events N [--streams S] [--seed X] -o FILE\n";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (i + 1 >= argc) { std::fputs(usage, stderr); return 2; }
    const char* v = argv[++i];
    if (a == "--events") events = std::atoll(v);
    else if (a == "--streams") streams = std::atoi(v);
    else if (a == "--seed") seed = std::strtoull(v, nullptr, 10);
    else if (a == "-o") path = v;
    else { std::fputs(usage, stderr); return 2; }
  }
  if (!path || events <= 0 || streams <= 0 || streams > 64) { std::fputs(usage, stderr); return 2; }
  long long n = tg::bench::WriteKinetoTrace(path, events, streams, seed);
  if (n < 0) { std::perror(path); return 2; }
  std::fprintf(stderr, "wrote %lld events to %s\n", n, path);
  return 0;
}
