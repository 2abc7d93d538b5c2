#include "reports/html/kernel_table_html.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <string_view>

#include "reports/view/report_view.h"
#include "tracegate/analyzer/kernel_class.h"
#include "tracegate/reports/report_html.h"

namespace tg::internal {

namespace {

std::string Esc(std::string_view s) { return HtmlEscape(s); }

}  // namespace

std::string KernelTableHtml(const json& doc, const std::map<std::string, KernelLabel>& labels) {
  const bool whole_list = !Array(doc, "kernel_table").empty();
  const json& rows = whole_list ? Array(doc, "kernel_table") : Array(doc, "top_kernels");
  if (rows.empty()) return "";
  double total = 0;
  for (const json& k : rows) total += Number(k, "total_ms").value_or(0);
  std::string out = "<div class=\"tools\"><input class=\"filter\" type=\"search\" data-table=\"kernel-table\" "
                    "placeholder=\"filter by name\" aria-label=\"filter kernels by name\"><span data-count-for=\"kernel-table\">" +
                    StrFormat("%zu kernel%s", rows.size(), rows.size() == 1 ? "" : "s") +
                    "</span><span class=\"note\">click a column to sort</span></div>\n";
  out += "<div class=\"tablewrap\"><table id=\"kernel-table\" class=\"sortable kernels\"><thead><tr>"
         "<th class=\"num\" data-sort=\"num\">#</th><th data-sort=\"text\">Kernel</th><th data-sort=\"text\">GPU</th>"
         "<th data-sort=\"text\">Stream</th><th class=\"num\" data-sort=\"num\">Calls</th>"
         "<th class=\"num\" data-sort=\"num\">Total (ms)</th>";
  out += whole_list ? "<th class=\"num\" data-sort=\"num\">Per iteration (ms)</th><th class=\"num\" data-sort=\"num\">Mean (us)</th>"
                    : "<th class=\"num\" data-sort=\"num\">Mean (us)</th><th class=\"num\" data-sort=\"num\">p95 (us)</th>";
  out += "<th class=\"num\" data-sort=\"num\">Share</th></tr></thead><tbody>\n";
  auto ids = [](const json& k, const char* key) {
    std::string s;
    for (const json& v : Array(k, key)) s += (s.empty() ? "" : ", ") + (v.is_number_integer() ? std::to_string(v.get<int64_t>()) : std::string("?"));
    return s.empty() ? std::string("-") : s;
  };
  auto num = [](std::optional<double> v, const char* format) {
    return v ? StrFormat("<td class=\"num\" data-v=\"%.17g\">", *v) + StrFormat(format, *v) + "</td>"
             : std::string("<td class=\"num\">n/a</td>");
  };
  for (size_t i = 0; i < rows.size() && i < kKernelRows; ++i) {
    const json& k = rows[i];
    const std::string name = Text(k, "name");
    auto label = labels.find(name);
    const KernelLabel l = label != labels.end() ? label->second : KernelLabel{ShortKernelName(name), ""};
    out += "<tr data-name=\"" + Esc(name) + "\">" + StrFormat("<td class=\"num\" data-v=\"%zu\">%zu</td>", i + 1, i + 1) +
           "<td class=\"name\">";
    const std::string shown = Esc(l.short_name) + (l.hint.empty() ? "" : " <span class=\"hint\">\xE2\x80\xB9" + Esc(l.hint) + "\xE2\x80\xBA</span>");
    out += l.short_name == name ? shown : "<details><summary>" + shown + "</summary>" + Esc(name) + "</details>";
    // What launched it and its class (reports written before them have neither).
    const std::string op = Text(k, "op"), cls = Text(k, "class");
    if (!op.empty() || !cls.empty())
      out += "<div class=\"note\">" + Esc(op) + (!op.empty() && !cls.empty() ? " \xC2\xB7 " : "") + Esc(cls) + "</div>";
    out += "</td><td>" + Esc(ids(k, "devices")) + "</td><td>" + Esc(ids(k, "streams")) + "</td>";
    out += num(Number(k, "count"), "%.0f") + num(Number(k, "total_ms"), "%.3f");
    if (whole_list) {
      out += num(Number(k, "per_iteration_ms"), "%.3f") + num(Number(k, "mean_us"), "%.1f");
    } else {
      auto us = [&](const char* key) -> std::optional<double> {
        auto v = Number(k, key);
        return v ? std::optional<double>(*v / 1e3) : std::nullopt;
      };
      out += num(us("mean_ns"), "%.1f") + num(us("p95_ns"), "%.1f");
    }
    const double share = total > 0 ? Number(k, "total_ms").value_or(0) / total : 0;
    out += StrFormat("<td class=\"num\" data-v=\"%.17g\">%.1f%%</td></tr>\n", share, share * 100);
  }
  out += "</tbody></table></div>\n";
  if (rows.size() > kKernelRows)
    out += "<p class=\"note\">" + Esc(StrFormat("The %zu kernels with the most time of %zu; all are in the JSON report.", kKernelRows, rows.size())) +
           "</p>\n";
  return out;
}

}  // namespace tg::internal
