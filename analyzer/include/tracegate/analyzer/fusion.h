// Fusion candidates (finding id fusion_candidate): chains of kernels on one stream inside one
// iteration where every follower is element-wise, normalisation or activation work
// (IsFusableFollower) and starts at most max_gap_ns after its predecessor ends, e.g.
// conv -> batch-norm -> relu -> add. The head may be any kernel. Chains are found greedily in
// start order per (device, stream); a kernel belongs to at most one chain. Chains with the same
// sequence of kernel names are one candidate.
//
// Model of the gain (an assumption the report states): the fused kernel costs the head's time
// plus follower_residual x the followers' time; the launch gaps inside the chain vanish.
//   chain_ns  = sum over occurrences of (last end - head start)
//   saving_ns = sum of (1 - follower_residual) x followers' time + gaps inside the chain
//   S (local) = chain_ns / (chain_ns - saving_ns);   P = chain_ns / total iteration time
//   overall   = 1 / ((1 - P) + P / S) = total / (total - saving_ns)
//
// Details: a stream is keyed by (device, pid, stream id), so two processes' equal stream ids stay
// apart; a kernel outside every kept iteration (kernel_iteration < 0) starts no chain and ends the
// chain before it; a chain has a head and at least one follower; a negative gap (overlap) counts
// 0; saving_ns rounds (1 - follower_residual) x followers_ns to the nearest ns; S, overall and
// upper_bound are +infinity when their denominator is 0, and P, overall are 0 and 1 when
// total_ns is 0. Cost: one sort of the kernels, O(n log n); one map lookup per chain.
#pragma once

#include <cstdint>
#include <utility>
#include <string>
#include <vector>

#include "tracegate/analyzer/iterations.h"
#include "tracegate/analyzer/kernel_class.h"
#include "tracegate/analyzer/model.h"

namespace tg {

struct FusionOptions {
  TimeNs max_gap_ns = 10'000;      // follower starts within this of its predecessor's end
  double follower_residual = 0.25; // share of the followers' time a fused kernel still spends
  size_t max_chain = 8;            // kernels per chain at most
  size_t top = 5;                  // candidates reported (by saving)
  // Per kernel row, OpLinks::kernel_launch_found (may be null): a chain whose kernels a graph
  // replay launched has no launch gaps to save (the graph's nodes follow each other on the
  // device), so its saving is the followers' time only.
  const std::vector<uint8_t>* launch_found = nullptr;
};

struct FusionCandidate {
  std::vector<StringId> names;        // kernel names in chain order (head first)
  std::vector<KernelClass> classes;
  uint64_t occurrences = 0;           // over kept iterations
  double per_iteration = 0;           // occurrences / kept iterations
  TimeNs head_ns = 0, followers_ns = 0, chain_ns = 0;  // sums over occurrences
  TimeNs gaps_ns = 0;              // the gaps between the kernels of the occurrences outside graph replays
  uint64_t graph_occurrences = 0;  // occurrences a graph replay launched (their gaps are not saved)
  TimeNs saving_ns = 0;
  double local_speedup = 1;           // S
  double share = 0;                   // P = chain_ns / total iteration time
  double overall = 1;                 // Amdahl
  double upper_bound = 1;             // 1 / (1 - P)
  TimeNs first_start_ns = 0;          // head start of the first occurrence
  int32_t device = -1;
  int64_t stream = kUnknownId;        // stream of the first occurrence
  std::vector<size_t> first_rows;     // kernel rows of the first occurrence
  // [head start, last follower end) of every occurrence: the chains' wall time is their union
  // (occurrences on concurrent streams overlap; chain_ns sums them).
  std::vector<std::pair<TimeNs, TimeNs>> spans;
};

// Candidates sorted by saving_ns descending (ties: first_start_ns), at most options.top. `classes`
// has one entry per kernel row (ClassifyKernels); none are found when it does not.
std::vector<FusionCandidate> FindFusionCandidates(const Trace& trace, const IterationAnalysis& iterations,
                                                  const std::vector<KernelClass>& classes,
                                                  const FusionOptions& options);

}  // namespace tg
