// TwoCoreJobs: independent jobs of known weight (bytes, rows) shared between this core and a
// second one: the heaviest first, each to the core with less queued.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <utility>
#include <vector>

#include "analyzer/util/side_task.h"

namespace tg::internal {

class TwoCoreJobs {
 public:
  void Add(size_t weight, std::function<void()> job) { jobs_.push_back({weight, std::move(job)}); }
  // Runs every job and returns when all are done: on two cores, or here in the order added when
  // the weights sum to less than `min_two`. The jobs are dropped after.
  void Run(size_t min_two = 0) {
    size_t total = 0;
    for (const Job& j : jobs_) total += j.weight;
    if (total < min_two) {
      for (const Job& j : jobs_) j.run();
      jobs_.clear();
      return;
    }
    std::stable_sort(jobs_.begin(), jobs_.end(), [](const Job& a, const Job& b) { return a.weight > b.weight; });
    std::vector<const Job*> here, there;
    size_t here_weight = 0, there_weight = 0;
    for (const Job& j : jobs_) {
      const bool to_here = here_weight <= there_weight;
      (to_here ? here : there).push_back(&j);
      (to_here ? here_weight : there_weight) += j.weight;
    }
    {
      SideTask side([&] {
        for (const Job* j : there) j->run();
      });
      for (const Job* j : here) j->run();
      side.Wait();
    }
    jobs_.clear();
  }

 private:
  struct Job {
    size_t weight;
    std::function<void()> run;
  };
  std::vector<Job> jobs_;
};

}  // namespace tg::internal
