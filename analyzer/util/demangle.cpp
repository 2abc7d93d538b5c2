#include "analyzer/util/demangle.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace tg::internal {

std::string Demangle(std::string_view name) {
  if (name.size() < 3 || name[0] != '_' || name[1] != 'Z') return std::string(name);
  std::string owned(name);
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(
      abi::__cxa_demangle(owned.c_str(), nullptr, nullptr, &status), std::free);
  if (status != 0 || !out) return owned;
  return std::string(out.get());
}

}  // namespace tg::internal
