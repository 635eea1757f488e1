// The page's provenance table: one cell across both sides where they agree,
// so what differs between A and B stands out.
#include <sstream>

#include "html.hpp"
#include "provenance.hpp"

namespace zl::compare::html {

std::string provenance_section(const Report& r) {
  std::ostringstream out;
  out << "<h2 id=\"provenance\">Provenance</h2>\n<div class=\"legend\">where and with what each side was measured, "
         "as its runs recorded it; unknown: no run of that side recorded it</div>\n"
      << "<table class=\"provenance\"><tr><th></th><th>A</th><th>B</th></tr>\n";
  for (const provenance::Line& l : provenance::lines(r)) {
    out << "<tr><th>" << escape(l.what) << "</th>";
    if (l.same()) {
      out << "<td class=\"s\" colspan=\"2\">" << escape(l.a) << "</td>";
    } else {
      out << "<td class=\"s diff\">" << escape(l.a) << "</td><td class=\"s diff\">" << escape(l.b) << "</td>";
    }
    out << "</tr>\n";
  }
  out << "</table>\n";
  return out.str();
}

}  // namespace zl::compare::html
