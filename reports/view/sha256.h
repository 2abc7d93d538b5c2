// SHA-256 and Base64, for the Content-Security-Policy hash that lets a page's one inline script
// run and nothing else (internal to the HTML pages).
#pragma once

#include <array>
#include <string>
#include <string_view>

namespace tg::internal {

std::array<unsigned char, 32> Sha256(std::string_view data);
std::string Base64(std::string_view bytes);
// "'sha256-<base64 of the digest>'": a CSP script-src source for exactly this script text.
std::string CspSha256(std::string_view script);

}  // namespace tg::internal
