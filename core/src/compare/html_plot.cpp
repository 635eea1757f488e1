// The speedup plot, drawn as SVG in C++ so the page needs no script and
// nothing from the network. A log scale makes 2x faster and 2x slower the
// same height; crisp edges keep the bar colours exact (the page test looks
// for them in a screenshot). Every bar is labelled with its dtype and shape
// under the axis, so a screenshot or a slide still says which bar is which;
// bars narrow down to a label's height and the plot scrolls past that. Each
// op is labelled once under its group (shaded in turn), and a bar's numbers
// are its hover text, over the whole column so a short bar is as easy to
// point at as a tall one. A whisker clipped at the axis ends in an arrow
// with the interval's end written beside it.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "html.hpp"
#include "text.hpp"

namespace zl::compare::html {
namespace {

// kWidth: what the page's plot box shows without scrolling at 1400 px.
constexpr int kWidth = 1320, kMaxBar = 16, kMinBar = 4, kGroupGap = 14, kLeft = 64, kRight = 16, kTop = 36,
              kPlotH = 300;
constexpr double kCharW = 6.6;  // average width of an 11 px sans-serif character
// The bars' labels: 10 px text set vertically needs a column of 12 px; past
// kLabelChars a label is cut (the hover text and the table have it whole).
constexpr double kLabelStep = 12, kLabelCharW = 5.6;
constexpr size_t kLabelChars = 34;

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string clip(const std::string& s, size_t n) { return s.size() <= n ? s : s.substr(0, n - 1) + "~"; }

struct Group {
  size_t begin, end;  // bars [begin, end)
  double x0, x1;      // its extent
};

// A bar's label: its dtype, short (f16, bf16, i32), and its shape.
std::string bar_label(const Compared& c) {
  std::string d = c.dtype;
  for (const auto& [from, to] : {std::pair{"bfloat", "bf"}, {"float", "f"}, {"uint", "u"}, {"int", "i"}}) {
    if (d.rfind(from, 0) == 0) {
      d = to + d.substr(std::string(from).size());
      break;
    }
  }
  return clip(d + " " + c.shape, kLabelChars);
}

// The interval as a whisker, clipped to the plot so a wide one does not
// squash every bar. An end past the axis is an arrow with its value beside
// it, so a clipped whisker never reads as a narrow one.
template <class Y>
std::string whisker(double cx, double arm, double lo, double hi, double lim, const Y& y) {
  const bool hi_past = hi > lim, lo_past = lo < 1 / lim;
  const double hi_y = y(std::min(hi, lim)), lo_y = y(std::max(lo, 1 / lim));
  std::ostringstream out;
  out << "<path d=\"M" << num(cx) << " " << num(hi_y) << "V" << num(lo_y);
  if (!hi_past) out << "M" << num(cx - arm) << " " << num(hi_y) << "H" << num(cx + arm);
  if (!lo_past) out << "M" << num(cx - arm) << " " << num(lo_y) << "H" << num(cx + arm);
  out << "\" stroke=\"#24292f\" stroke-width=\"1\" fill=\"none\"/>";
  auto past = [&](double end_y, double dir, double value) {
    // dir -1: the arrow points up (the interval runs above the axis).
    const double base = end_y - dir * 7, tx = cx - 2, ty = end_y - dir * 9;
    out << "<path class=\"past-axis\" d=\"M" << num(cx) << " " << num(end_y) << "L" << num(cx - arm - 1) << " "
        << num(base) << "H" << num(cx + arm + 1) << "Z\" fill=\"#24292f\"/>"
        << "<text class=\"past-axis\" x=\"" << num(tx) << "\" y=\"" << num(ty) << "\" transform=\"rotate(-90 "
        << num(tx) << " " << num(ty) << ")\" text-anchor=\"" << (dir < 0 ? "end" : "start")
        << "\" font-size=\"10\" fill=\"#24292f\" stroke=\"#ffffff\" stroke-width=\"3\" paint-order=\"stroke\">"
        // Set vertically, a right arrow points up and a left arrow down.
        << (dir < 0 ? "" : "&#8592; ") << text::ratio(value) << (dir < 0 ? " &#8594;" : "") << "</text>";
  };
  if (hi_past) past(hi_y, -1, hi);
  if (lo_past) past(lo_y, 1, lo);
  return out.str();
}

// Where everything goes: the scale, the bars' width and step, the groups'
// extents, and the room the labels under the axis need.
struct Layout {
  std::vector<const Compared*> bars;
  double span = 0;  // log2 of the speedup at the top of the plot
  double step = 0, bar_w = 0;
  std::vector<Group> gs;
  bool slanted = false;  // op names set at an angle
  int bar_label_h = 0, label_h = 0, width = 0, height = 0;
  double y(double s) const { return kTop + kPlotH / 2.0 - std::log2(s) / span * (kPlotH / 2.0); }
};

Layout layout_of(const std::vector<const Compared*>& bars) {
  Layout plot;
  plot.bars = bars;
  // Symmetric log2 range, at least 1.25x each way so small effects still show.
  plot.span = std::log2(1.25);
  for (const Compared* c : bars) plot.span = std::max(plot.span, std::fabs(std::log2(*c->speedup)));
  plot.span *= 1.1;

  size_t groups = 1;
  for (size_t i = 1; i < bars.size(); ++i) groups += bars[i]->op != bars[i - 1]->op;
  // The widest bar (with its gap) that fits; below kMinBar the plot scrolls.
  const double room = kWidth - kLeft - kRight - static_cast<double>(groups) * kGroupGap;
  const double step = plot.step = std::clamp(room / static_cast<double>(bars.size()), kLabelStep, kMaxBar + 4.0);
  const double bar_w = plot.bar_w = std::max(static_cast<double>(kMinBar), std::floor(step * 0.8));

  std::vector<Group>& gs = plot.gs;
  double x = kLeft + kGroupGap / 2.0;
  for (size_t i = 0; i < bars.size(); ++i) {
    if (i == 0 || bars[i]->op != bars[i - 1]->op) {
      if (!gs.empty()) {
        gs.back().x1 = x + kGroupGap / 2.0 - (step - bar_w);
        x += kGroupGap;
      }
      gs.push_back({i, i, x - kGroupGap / 2.0, 0});
    }
    gs.back().end = i + 1;
    x += step;
  }
  gs.back().x1 = x + kGroupGap / 2.0 - (step - bar_w);
  // An op name that does not fit under its group is set at an angle.
  bool& slanted = plot.slanted;
  size_t longest = 0;
  for (const Group& g : gs) {
    const size_t n = clip(bars[g.begin]->op, 28).size();
    slanted = slanted || n * kCharW > g.x1 - g.x0 - 4;
    longest = std::max(longest, n);
  }
  size_t longest_bar = 0;
  for (const Compared* c : bars) longest_bar = std::max(longest_bar, bar_label(*c).size());
  plot.bar_label_h = 8 + static_cast<int>(std::ceil(static_cast<double>(longest_bar) * kLabelCharW));
  // sin 40 degrees of the longest name, and the space above it.
  plot.label_h = slanted ? 24 + static_cast<int>(std::ceil(longest * kCharW * 0.643)) : 28;
  plot.width = std::max(640, static_cast<int>(std::ceil(gs.back().x1)) + kRight);
  plot.height = kTop + kPlotH + plot.bar_label_h + plot.label_h;

  return plot;
}

// The shaded groups, the threshold's band, the grid, the axis title and the
// verdict colours.
void draw_frame(std::ostringstream& svg, const Layout& plot, const Report& r) {
  const int width = plot.width;
  const double span = plot.span;
  const std::vector<Group>& gs = plot.gs;
  auto y = [&plot](double s) { return plot.y(s); };
  const double right = width - kRight;
  // Every other op's group shaded, so where one op ends is plain without a label per bar.
  for (size_t g = 1; g < gs.size(); g += 2) {
    svg << "<rect x=\"" << num(gs[g].x0) << "\" y=\"" << kTop << "\" width=\"" << num(gs[g].x1 - gs[g].x0)
        << "\" height=\"" << kPlotH << "\" fill=\"#f6f8fa\"/>\n";
  }
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
      << ")\" text-anchor=\"middle\" fill=\"#24292f\">speedup A/B (log)</text>\n";
  // The verdict colours, once (how to read the plot is the caption above it, in the page).
  double lx = kLeft;
  for (Verdict v : kVerdicts) {
    svg << "<rect x=\"" << num(lx) << "\" y=\"12\" width=\"10\" height=\"10\" fill=\"" << text::verdict_colour(v)
        << "\"/><text x=\"" << num(lx + 14) << "\" y=\"21\" fill=\"#57606a\">" << verdict_name(v) << "</text>\n";
    lx += 14 + std::string(verdict_name(v)).size() * kCharW + 14;
  }
}

// One op's bars, each with its whisker, label and hover text, and the op's
// name under them.
void draw_group(std::ostringstream& svg, const Layout& plot, const Group& g) {
  const std::vector<const Compared*>& bars = plot.bars;
  const double step = plot.step, bar_w = plot.bar_w, lim = std::exp2(plot.span);
  const bool slanted = plot.slanted;
  const int bar_label_h = plot.bar_label_h;
  auto y = [&plot](double s) { return plot.y(s); };
  for (size_t i = g.begin; i < g.end; ++i) {
    const Compared& c = *bars[i];
    const double bx = g.x0 + kGroupGap / 2.0 + static_cast<double>(i - g.begin) * step;
    const double top = std::min(y(*c.speedup), y(1.0)), bottom = std::max(y(*c.speedup), y(1.0));
    svg << "<g><title>" << escape(c.op + "  " + c.dtype + "  " + c.shape) << "\nA " << text::ms(c.a_ms) << " ms, B "
        << text::ms(c.b_ms) << " ms\nspeedup " << text::ratio(c.speedup) << ", " << kConfidence * 100 << " % CI "
        << text::interval(c.ci_lo, c.ci_hi) << "\n"
        << verdict_name(c.verdict) << (c.note.empty() ? "" : "\n" + escape(c.note))
        << "</title>"
        // The hover target: the whole column, invisible.
        << "<rect x=\"" << num(bx - (step - bar_w) / 2) << "\" y=\"" << kTop << "\" width=\"" << num(step)
        << "\" height=\"" << kPlotH << "\" fill=\"#ffffff\" fill-opacity=\"0\"/>"
        << "<rect x=\"" << num(bx) << "\" y=\"" << num(top) << "\" width=\"" << num(bar_w) << "\" height=\""
        << num(std::max(2.0, bottom - top)) << "\" fill=\"" << text::verdict_colour(c.verdict)
        << "\" shape-rendering=\"crispEdges\"/>";
    if (c.ci_lo && c.ci_hi) svg << whisker(bx + bar_w / 2.0, std::min(4.0, bar_w / 2.0), *c.ci_lo, *c.ci_hi, lim, y);
    // The label, set vertically under the axis and read upwards.
    const double tx = bx + bar_w / 2.0 + 3.5, ty = kTop + kPlotH + 6;
    svg << "<text class=\"bar-label\" x=\"" << num(tx) << "\" y=\"" << num(ty) << "\" transform=\"rotate(-90 "
        << num(tx) << " " << num(ty) << ")\" text-anchor=\"end\" font-size=\"10\" fill=\"#24292f\">"
        << escape(bar_label(c)) << "</text>";
    svg << "</g>\n";
  }
  const double mid = (g.x0 + g.x1) / 2, ly = kTop + kPlotH + bar_label_h + 16;
  const std::string label = escape(clip(bars[g.begin]->op, 28));
  if (slanted) {
    svg << "<text x=\"" << num(mid) << "\" y=\"" << num(ly) << "\" transform=\"rotate(-40 " << num(mid) << " "
        << num(ly) << ")\" text-anchor=\"end\" font-weight=\"bold\" fill=\"#24292f\">" << label << "</text>\n";
  } else {
    svg << "<text x=\"" << num(mid) << "\" y=\"" << num(ly) << "\" text-anchor=\"middle\" font-weight=\"bold\" "
        << "fill=\"#24292f\">" << label << "</text>\n";
  }
}

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

  const Layout plot = layout_of(bars);
  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << plot.width << "\" height=\"" << plot.height
      << "\" viewBox=\"0 0 " << plot.width << " " << plot.height
      << "\" font-family=\"sans-serif\" font-size=\"11\" role=\"img\" "
      << "aria-label=\"speedup per shape, grouped by op\">\n";
  draw_frame(svg, plot, r);
  for (const Group& g : plot.gs) draw_group(svg, plot, g);
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace zl::compare::html
