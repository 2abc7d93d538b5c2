// cupti_floor's two halves: the CUDA loops (cupti_floor.cu) and the CUPTI set-up (cupti_floor_setup.cpp).
#pragma once

#include <cstdint>
#include <string>

extern const char* const kFloorConfigs[];  // in-process configurations, nullptr-terminated
// Sets up CUPTI for `config` before CUDA starts; false (with a line on stderr) when it cannot.
bool SetUpFloorConfig(const std::string& config, std::string* note);
// Flushes CUPTI; the records and buffers it delivered.
void FinishFloorConfig(uint64_t* records, uint64_t* buffers);
