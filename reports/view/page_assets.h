// What every tracegate HTML page shares: the style sheet, the one inline script (zoom and pan of
// time charts, sortable and filterable tables), and the head and end of the page with a
// Content-Security-Policy that lets exactly that script run (by its SHA-256) and loads nothing
// from the network. Keep these signatures stable: other pages (compare, history) use them.
#pragma once

#include <string>

namespace tg::internal {

// The style sheet (classes of report_svg.h's charts, cards, tables, findings, the timeline).
const std::string& PageStyle();
// The script. It acts on markup only: svg.tl-zoom (data-x0, data-w, data-t0/t1 full range,
// data-v0/v1 first view, all in ns; children with data-s/data-d are placed; g.axis-x gets its
// ticks and data-axis-title with the unit), div.tl-tools buttons (data-act in/out/fit/all),
// table.sortable (th[data-sort] "num" or "text"; cells' data-v for numbers), input.filter
// (data-table: the table's id). When done it sets data-tg-ready="1" on <html>.
const std::string& PageScript();

// From <!DOCTYPE html> to the opening <body>: charset, the policy, the title (escaped here) and
// the style sheet plus `extra_css`.
std::string PageHead(const std::string& title, const std::string& extra_css = "");
// The footer (escaped here), the script, </body></html>.
std::string PageEnd(const std::string& footer);

}  // namespace tg::internal
