// tracegate-gen-kineto --events N [--streams S] [--seed X] -o FILE [--store DB] [--nsys DB]
// tracegate-gen-kineto --events N [--streams S] [--seed X] --ranks R -o DIR
// tracegate-gen-kineto --shape dense|stacks|serving --steps N [--streams S] [--seed X] -o FILE [--store DB] [--nsys DB]
// tracegate-gen-kineto --serving N [--mix KIND:BUCKET=W,...] [--slow KIND:BUCKET=F,...] [--noise PCT] [--seed X]
//                      -o FILE [--answers FILE] [--capture-out FILE]
// Writes the Kineto JSON FILE; --store also writes it as a tracegate store, --nsys as an
// Nsight-Systems-shaped SQLite export (same rows; see gen_store.h). With --ranks, the R ranks of one
// job into DIR (rank-<r>.json, N events each; see WriteKinetoRanks). With --shape, N steps of one of
// the benchmark matrix's shapes (see WriteKinetoShape). With --serving, a vLLM serving run of N
// steps and its known answers (see WriteServingRun; --answers defaults to FILE less .json plus
// .answers.json).
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "gen_kineto.h"
#include "gen_store.h"

int main(int argc, char** argv) {
  long long events = 100000;
  int streams = 4;
  int ranks = 0;
  long long steps = 0;
  std::string shape;
  unsigned long long seed = 1;
  const char* path = nullptr;
  std::string store, nsys;
  tg::bench::ServingRunSpec serving;
  bool serving_run = false;
  std::string answers, capture_out;
  const char* usage =
      "usage: tracegate-gen-kineto --events N [--streams S] [--seed X] -o FILE [--store DB] [--nsys DB]\n"
      "       tracegate-gen-kineto --events N [--streams S] [--seed X] --ranks R -o DIR\n"
      "       tracegate-gen-kineto --shape dense|stacks|serving --steps N [--streams S] [--seed X] -o FILE "
      "[--store DB] [--nsys DB]\n"
      "       tracegate-gen-kineto --serving N [--mix KIND:BUCKET=W,...] [--slow KIND:BUCKET=F,...] [--noise PCT] "
      "[--seed X] -o FILE [--answers FILE] [--capture-out FILE]\n";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (i + 1 >= argc) { std::fputs(usage, stderr); return 2; }
    const char* v = argv[++i];
    if (a == "--events") events = std::atoll(v);
    else if (a == "--streams") streams = std::atoi(v);
    else if (a == "--seed") seed = std::strtoull(v, nullptr, 10);
    else if (a == "-o") path = v;
    else if (a == "--store") store = v;
    else if (a == "--nsys") nsys = v;
    else if (a == "--ranks") ranks = std::atoi(v);
    else if (a == "--shape") shape = v;
    else if (a == "--steps") steps = std::atoll(v);
    else if (a == "--serving") serving.steps = std::atoll(v), serving_run = true;
    else if (a == "--mix" || a == "--slow") {
      if (std::string e = tg::bench::ParseServingGroups(v, a == "--mix" ? &serving.mix : &serving.slow); !e.empty()) {
        std::fprintf(stderr, "tracegate-gen-kineto: %s %s\n", a.c_str(), e.c_str());
        return 2;
      }
    } else if (a == "--noise") serving.noise_pct = std::atof(v);
    else if (a == "--answers") answers = v;
    else if (a == "--capture-out") capture_out = v;
    else { std::fputs(usage, stderr); return 2; }
  }
  if (!path || events <= 0 || streams <= 0 || streams > 32 || ranks < 0 || ranks > 4096) {
    std::fputs(usage, stderr);
    return 2;
  }
  if (!serving_run && (!serving.mix.empty() || !serving.slow.empty() || !answers.empty() || !capture_out.empty())) {
    std::fputs(usage, stderr);  // --mix, --slow, --answers and --capture-out belong to --serving
    return 2;
  }
  if (serving_run) {
    if (serving.steps <= 0 || serving.noise_pct < 0 || serving.noise_pct >= 50 || ranks > 0 || !shape.empty()) {
      std::fputs(usage, stderr);
      return 2;
    }
    serving.seed = seed;
    if (answers.empty()) {
      answers = path;
      if (answers.size() > 5 && answers.compare(answers.size() - 5, 5, ".json") == 0)
        answers.resize(answers.size() - 5);
      answers += ".answers.json";
    }
    long long n =
        tg::bench::WriteServingRun(path, serving, answers.c_str(), capture_out.empty() ? nullptr : capture_out.c_str());
    if (n < 0) {
      std::perror(path);
      return 2;
    }
    std::fprintf(stderr, "wrote %lld events (%lld serving steps) to %s, the known answers to %s%s%s\n", n,
                 serving.steps, path, answers.c_str(), capture_out.empty() ? "" : ", the graphs' capture to ",
                 capture_out.c_str());
    return 0;
  }
  if (ranks > 0) {
    long long n = tg::bench::WriteKinetoRanks(path, ranks, events, streams, seed);
    if (n < 0) { std::perror(path); return 2; }
    std::fprintf(stderr, "wrote %d ranks, %lld events in all, to %s\n", ranks, n, path);
    return 0;
  }
  const bool shaped = !shape.empty();
  // --shape by the names the shapes' files and traces carry (ShapeName).
  std::optional<tg::bench::TraceShape> kind;
  for (auto s : {tg::bench::TraceShape::kDense, tg::bench::TraceShape::kStacks, tg::bench::TraceShape::kServing})
    if (shape == tg::bench::ShapeName(s)) kind = s;
  if (shaped && (steps <= 0 || ranks > 0 || !kind)) {
    std::fputs(usage, stderr);
    return 2;
  }
  long long n = shaped ? tg::bench::WriteKinetoShape(path, *kind, steps, streams, seed)
                       : tg::bench::WriteKinetoTrace(path, events, streams, seed);
  if (n < 0) { std::perror(path); return 2; }
  std::fprintf(stderr, "wrote %lld events to %s\n", n, path);
  if (!store.empty() || !nsys.empty()) {
    std::string e = tg::bench::WriteStoreAndNsys(path, store, nsys);
    if (!e.empty()) { std::fprintf(stderr, "%s\n", e.c_str()); return 2; }
    if (!store.empty()) std::fprintf(stderr, "wrote the store %s\n", store.c_str());
    if (!nsys.empty()) std::fprintf(stderr, "wrote the nsys-shaped export %s\n", nsys.c_str());
  }
  return 0;
}
