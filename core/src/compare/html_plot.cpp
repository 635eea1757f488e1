// The speedup plot, drawn as SVG in C++ so the page needs no script and
// nothing from the network. A log scale makes 2x faster and 2x slower the
// same height; crisp edges keep the bar colours exact (the page test looks
// for them in a screenshot).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "html.hpp"
#include "text.hpp"

namespace zl::compare::html {
namespace {

constexpr int kBar = 16, kGap = 4, kGroupGap = 28, kLeft = 64, kRight = 24, kTop = 40, kPlotH = 300, kLabelH = 140;

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string clip(const std::string& s, size_t n) { return s.size() <= n ? s : s.substr(0, n - 1) + "~"; }

}  // namespace

std::string escape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += ch;
    }
  }
  return out;
}

std::string speedup_plot(const Report& r) {
  std::vector<const Compared*> bars;
  for (const Compared& c : r.rows) {
    if (c.speedup) bars.push_back(&c);
  }
  if (bars.empty()) return "<p>No row has a speedup on both sides, so there is nothing to plot.</p>";

  // Symmetric log2 range, at least 1.25x each way so small effects still show.
  double span = std::log2(1.25);
  for (const Compared* c : bars) span = std::max(span, std::fabs(std::log2(*c->speedup)));
  span *= 1.1;
  auto y = [&](double s) { return kTop + kPlotH / 2.0 - std::log2(s) / span * (kPlotH / 2.0); };

  int groups = 1;
  for (size_t i = 1; i < bars.size(); ++i) groups += bars[i]->op != bars[i - 1]->op;
  const int width = std::max(640, kLeft + kRight + static_cast<int>(bars.size()) * (kBar + kGap) + groups * kGroupGap);
  const int height = kTop + kPlotH + kLabelH;

  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height << "\" viewBox=\"0 0 "
      << width << " " << height << "\" font-family=\"sans-serif\" font-size=\"11\" role=\"img\" "
      << "aria-label=\"speedup per shape, grouped by op\">\n";
  const double right = width - kRight;
  // The band within which a difference is below the threshold.
  const double band_top = y(1 + r.options.threshold), band_bottom = y(1 / (1 + r.options.threshold));
  svg << "<rect x=\"" << kLeft << "\" y=\"" << num(band_top) << "\" width=\"" << num(right - kLeft) << "\" height=\""
      << num(band_bottom - band_top) << "\" fill=\"#eef1f4\"/>\n";
  for (double g : {0.25, 0.5, 0.67, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5, 2.0, 4.0}) {
    if (std::fabs(std::log2(g)) > span) continue;
    const std::string gy = num(y(g));
    svg << "<line x1=\"" << kLeft << "\" x2=\"" << num(right) << "\" y1=\"" << gy << "\" y2=\"" << gy << "\" stroke=\""
        << (g == 1.0 ? "#57606a" : "#d0d7de") << "\" stroke-width=\"1\" shape-rendering=\"crispEdges\"/>\n"
        << "<text x=\"" << kLeft - 6 << "\" y=\"" << num(y(g) + 4) << "\" text-anchor=\"end\" fill=\"#57606a\">" << g
        << "x</text>\n";
  }
  svg << "<text x=\"14\" y=\"" << kTop + kPlotH / 2 << "\" transform=\"rotate(-90 14 " << kTop + kPlotH / 2
      << ")\" text-anchor=\"middle\" fill=\"#24292f\">speedup A/B (log)</text>\n"
      << "<text x=\"" << kLeft << "\" y=\"" << kTop - 22 << "\" fill=\"#24292f\">above 1: B faster; below 1: B slower; "
      << "grey band: within the threshold; whiskers: the interval</text>\n";

  double x = kLeft + kGroupGap / 2.0;
  size_t group_start = 0;
  auto close_group = [&](size_t end, double x_end) {
    const double x0 = x_end - (end - group_start) * (kBar + kGap);
    svg << "<text x=\"" << num((x0 + x_end - kGap) / 2) << "\" y=\"" << height - 8 << "\" text-anchor=\"middle\" "
        << "font-weight=\"bold\" fill=\"#24292f\">" << escape(clip(bars[group_start]->op, 24)) << "</text>\n";
  };
  for (size_t i = 0; i < bars.size(); ++i) {
    const Compared& c = *bars[i];
    if (i > 0 && c.op != bars[i - 1]->op) {
      close_group(i, x);
      const double sep = x + kGroupGap / 2.0 - kGap / 2.0;
      svg << "<line x1=\"" << num(sep) << "\" x2=\"" << num(sep) << "\" y1=\"" << kTop << "\" y2=\"" << height - 4
          << "\" stroke=\"#d0d7de\" stroke-dasharray=\"4 3\"/>\n";
      x += kGroupGap;
      group_start = i;
    }
    const double top = std::min(y(*c.speedup), y(1.0)), bottom = std::max(y(*c.speedup), y(1.0));
    svg << "<rect x=\"" << num(x) << "\" y=\"" << num(top) << "\" width=\"" << kBar << "\" height=\""
        << num(std::max(2.0, bottom - top)) << "\" fill=\"" << text::verdict_colour(c.verdict)
        << "\" shape-rendering=\"crispEdges\"><title>" << escape(c.op + " " + c.dtype + " " + c.shape) << ": "
        << text::ratio(c.speedup) << " " << text::interval(c.ci_lo, c.ci_hi) << " " << verdict_name(c.verdict)
        << "</title></rect>\n";
    if (c.ci_lo && c.ci_hi) {
      // The interval as a whisker, clipped to the plot: a wide one should
      // not squash every bar.
      const double lim = std::exp2(span);
      const double cx = x + kBar / 2.0, hi_y = y(std::min(*c.ci_hi, lim)), lo_y = y(std::max(*c.ci_lo, 1 / lim));
      svg << "<path d=\"M" << num(cx) << " " << num(hi_y) << "V" << num(lo_y) << "M" << num(cx - 4) << " " << num(hi_y) << "H"
          << num(cx + 4) << "M" << num(cx - 4) << " " << num(lo_y) << "H" << num(cx + 4)
          << "\" stroke=\"#24292f\" stroke-width=\"1\" fill=\"none\"/>\n";
    }
    const double lx = x + kBar / 2.0 + 4, ly = kTop + kPlotH + 6;
    svg << "<text x=\"" << num(lx) << "\" y=\"" << num(ly) << "\" transform=\"rotate(-90 " << num(lx) << " " << num(ly)
        << ")\" text-anchor=\"end\" font-size=\"9\" fill=\"#57606a\">" << escape(clip(c.dtype + " " + c.shape, 22))
        << "</text>\n";
    x += kBar + kGap;
  }
  close_group(bars.size(), x);
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace zl::compare::html
