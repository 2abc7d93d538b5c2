// The number formats every text of a comparison shares: the gate's own verdict sentences and the
// text, Markdown and JUnit renderers (reports/text/) alike (reports/gate/compare_internal.h).
#include <array>
#include <cctype>
#include <cstdio>
#include <string>

#include "reports/document/report_keys.h"
#include "reports/gate/compare_internal.h"
#include "tracegate/reports/compare.h"

namespace tg {

namespace keys = internal::keys;

using internal::FormatNumber;

std::string internal::FormatNumber(double v, int decimals) {
  char buf[64];
  if (decimals < 0) std::snprintf(buf, sizeof buf, "%g", v);
  else std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string internal::FormatSigned(double v, int decimals) {
  std::string s = FormatNumber(v, decimals);
  return s.front() == '-' ? s : "+" + s;
}

std::string internal::FormatP(double p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", p);
  return buf;
}

int internal::MetricDecimals(const MetricDelta& m) {
  return m.key.ends_with("_ratio") || m.key == keys::kLatencyCv.name ? 4 : 3;
}

std::string internal::VerdictHeading(Verdict v) {
  std::string heading(VerdictName(v));
  for (char& ch : heading) ch = ch == '_' ? ' ' : static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return heading;
}

std::array<size_t, 4> internal::CountChanges(const Comparison& c) {
  std::array<size_t, 4> counts{};
  for (const KernelDelta& k : c.kernels) counts[static_cast<size_t>(k.change)]++;
  return counts;
}

std::string internal::MdCode(const std::string& s, bool in_table) {
  std::string out = "`";
  for (char ch : s) {
    if (ch == '`') out += '\'';
    else if (ch == '|' && in_table) out += "\\|";
    else if (ch == '\n' || ch == '\r') out += ' ';
    else out += ch;
  }
  return out + "`";
}

}  // namespace tg
