#pragma once

#include <string>
#include <string_view>

namespace tg::internal {

// Demangles an Itanium C++ ABI name ("_Z..."); returns the input unchanged when it is not one
// or demangling fails. Names that sources already demangled pass through untouched.
std::string Demangle(std::string_view name);

}  // namespace tg::internal
