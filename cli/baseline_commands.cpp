// tracegate baseline save|list|show|history: stored reports to gate against, and their trend.
// The texts are the gate stage's (tracegate/reports/baseline.h); this file only dispatches.
#include <cstdio>
#include <string>
#include <vector>

#include "commands.h"
#include "analyzer/util/fileio.h"
#include "tracegate/reports/baseline.h"
#include "tracegate/reports/report_html.h"

namespace tg::cli {

using tg::internal::WriteFileAtomic;

namespace {

int PrintOk(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  return kExitOk;
}

}  // namespace

int RunBaselineSave(const BaselineArgs& args) {
  // Checked before a trace is analyzed: a bad name should not cost the analysis.
  if (Status s = ValidateBaselineName(args.name); !s.ok()) return Fail(s);
  nlohmann::json report;
  if (Status s = ReadReportOrTrace(args.input, &report); !s.ok()) return Fail(s);
  if (Status s = SaveBaseline(args.dir, args.name, report, args.input); !s.ok()) return Fail(s);
  return PrintOk(BaselineSavedText(args.name, BaselinePath(args.dir, args.name), report));
}

int RunBaselineList(const BaselineArgs& args) {
  std::vector<BaselineInfo> list;
  if (Status s = ListBaselines(args.dir, &list); !s.ok()) return Fail(s);
  return PrintOk(BaselineListText(args.dir, list));
}

int RunBaselineShow(const BaselineArgs& args) {
  nlohmann::json report;
  std::string path;
  if (Status s = LoadBaseline(args.dir, args.name, &report, &path); !s.ok()) return Fail(s);
  return PrintOk(BaselineShowText(args.name, path, report));
}

int RunBaselineHistory(const BaselineArgs& args) {
  std::vector<HistoryRow> rows;
  if (Status s = ReadHistory(args.dir, args.name, &rows); !s.ok()) return Fail(s);
  if (rows.empty())
    return Fail(NotFound(HistoryPath(args.dir) + ": no history for '" + args.name +
                         "' (tracegate baseline save and gate record it)"));
  if (!args.html_out.empty())
    if (Status s = WriteFileAtomic(args.html_out, BaselineHistoryHtml(args.name, args.dir, rows)); !s.ok()) return Fail(s);
  return PrintOk(BaselineHistoryText(args.name, args.dir, rows) +
                 (args.html_out.empty() ? "" : "HTML history written to " + args.html_out + "\n"));
}

}  // namespace tg::cli
