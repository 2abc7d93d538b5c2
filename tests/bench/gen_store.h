// The benchmark inputs beside the Kineto JSON: the same generated trace as a tracegate store and as
// an Nsight-Systems-shaped SQLite export (the store's nsys tables and columns only: every
// tracegate_* table and tg* column dropped, a META_DATA_EXPORT saying export schema 3.0).
#pragma once

#include <string>

namespace tg::bench {

// Imports the Kineto JSON `json` and writes it as a store to `store` (when not empty) and as an
// nsys-shaped export to `nsys` (when not empty). Returns an empty string or the error.
std::string WriteStoreAndNsys(const std::string& json, const std::string& store, const std::string& nsys);

}  // namespace tg::bench
