#include "reports/html/kernel_table_html.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <string_view>

#include "reports/report/report_view.h"
#include "tracegate/analyzer/kernel_class.h"
#include "tracegate/reports/report_html.h"

namespace tg::internal {

namespace {

std::string Esc(std::string_view s) { return HtmlEscape(s); }

bool IsWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Words that never tell two instances apart by meaning.
bool Noise(const std::string& t) {
  static const std::set<std::string> kNoise{"void",   "const",  "unsigned", "signed",   "long",   "int",     "char",
                                            "short",  "bool",   "lambda",   "instance", "operator", "anonymous",
                                            "namespace", "struct", "class",  "auto",    "true",   "false",   "T1",
                                            "T2",     "T3",     "T4",       "std",      "at",     "detail",  "c10"};
  return kNoise.count(t) > 0;
}

// The words of a name after its short name, in order, each once.
std::vector<std::string> Words(const std::string& name, const std::string& short_name) {
  std::set<std::string> own;
  for (size_t i = 0; i < short_name.size();) {
    size_t j = i;
    while (j < short_name.size() && IsWordChar(short_name[j])) ++j;
    if (j > i) own.insert(short_name.substr(i, j - i));
    i = j + 1;
  }
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (size_t i = 0; i < name.size();) {
    size_t j = i;
    while (j < name.size() && IsWordChar(name[j])) ++j;
    if (j > i) {
      std::string w = name.substr(i, j - i);
      if (!own.count(w) && !Noise(w) && seen.insert(w).second) out.push_back(std::move(w));
    }
    i = j + 1;
  }
  return out;
}

bool HasLetter(const std::string& w) {
  return std::any_of(w.begin(), w.end(), [](char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; });
}

}  // namespace

std::map<std::string, KernelLabel> KernelLabels(const std::vector<std::string>& names) {
  std::map<std::string, KernelLabel> out;
  std::map<std::string, std::vector<std::string>> groups;  // short name -> distinct names
  for (const std::string& n : names) {
    if (out.count(n)) continue;
    out[n].short_name = ShortKernelName(n);
    groups[out[n].short_name].push_back(n);
  }
  for (const auto& [short_name, members] : groups) {
    if (members.size() < 2) continue;
    std::vector<std::vector<std::string>> words;
    std::map<std::string, size_t> members_with;
    for (const std::string& m : members) {
      words.push_back(Words(m, short_name));
      for (const std::string& w : words.back()) members_with[w]++;
    }
    for (size_t i = 0; i < members.size(); ++i) {
      // Greedy: add the word that leaves the fewest other members sharing every chosen word;
      // words with letters before bare numbers, then the rarer, then the earlier.
      std::set<size_t> alike;
      for (size_t j = 0; j < members.size(); ++j)
        if (j != i) alike.insert(j);
      std::vector<size_t> chosen;  // positions in words[i]
      while (!alike.empty() && chosen.size() < 3) {
        size_t best = words[i].size(), best_left = alike.size();
        for (size_t w = 0; w < words[i].size(); ++w) {
          if (std::find(chosen.begin(), chosen.end(), w) != chosen.end()) continue;
          size_t left = 0;
          for (size_t j : alike)
            left += std::find(words[j].begin(), words[j].end(), words[i][w]) != words[j].end();
          if (left == alike.size()) continue;  // tells none apart
          auto key = [&](size_t x, size_t l) {
            return std::make_tuple(!HasLetter(words[i][x]), l, members_with[words[i][x]], x);
          };
          if (best == words[i].size() || key(w, left) < key(best, best_left)) best = w, best_left = left;
        }
        if (best == words[i].size()) break;  // nothing tells the rest apart (same words)
        chosen.push_back(best);
        for (auto it = alike.begin(); it != alike.end();)
          it = std::find(words[*it].begin(), words[*it].end(), words[i][best]) == words[*it].end() ? alike.erase(it)
                                                                                                     : std::next(it);
      }
      std::sort(chosen.begin(), chosen.end());
      std::string hint;
      for (size_t w : chosen) hint += (hint.empty() ? "" : " ") + words[i][w];
      out[members[i]].hint = Cut(hint, 48);
    }
  }
  return out;
}

std::map<std::string, KernelLabel> ReportKernelLabels(const json& doc) {
  std::vector<std::string> names;
  for (const json& k : Array(doc, "top_kernels")) names.push_back(Text(k, "name"));
  const json& table = Array(doc, "kernel_table");
  for (size_t i = 0; i < table.size() && i < kKernelRows; ++i) names.push_back(Text(table[i], "name"));
  return KernelLabels(names);
}

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
