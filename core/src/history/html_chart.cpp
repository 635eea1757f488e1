#include "html_chart.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "../compare/html.hpp"

namespace zl::history {
namespace {

constexpr int kLeft = 56, kRight = 16, kTop = 16, kBottom = 28;
constexpr double kMarkerLine = 13;  // px between stacked marker labels
const char* const kColours[] = {"#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#17becf", "#7f7f7f", "#bcbd22"};

// A series' level the chart draws percentages from: its upper median, 1 for
// a series without points (never divided by zero).
double series_level(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 1 : v[v.size() / 2];
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// The axis labels: 0 and the two ends, less any end whose label would sit on
// another's. A step of +300 % squeezes -2 % and 0 % into one line of text.
template <typename Y>
std::vector<double> axis_ticks(double lo, double hi, Y y) {
  constexpr double kMinGapPx = 14;
  std::vector<double> out{0.0};
  for (double t : {hi - (hi - lo) * 0.05, lo + (hi - lo) * 0.05}) {
    const bool clear =
        std::all_of(out.begin(), out.end(), [&](double u) { return std::abs(y(t) - y(u)) >= kMinGapPx; });
    if (clear) out.push_back(t);
  }
  return out;
}

}  // namespace

std::string timeline_svg(const std::vector<const ReportSeries*>& series, const std::vector<Marker>& markers,
                         size_t runs, int width, int height) {
  const int top = kTop + static_cast<int>(markers.size() * kMarkerLine);
  const double plot_w = width - kLeft - kRight, plot_h = height - top - kBottom;
  // Percent from each series' median; the range covers every interval.
  double lo = -2, hi = 2;
  for (const ReportSeries* s : series) {
    std::vector<double> v;
    for (const Point& p : s->points) v.push_back(p.value_ms);
    const double m = series_level(v);
    for (const Point& p : s->points)
      lo = std::min(lo, (p.lo_ms / m - 1) * 100), hi = std::max(hi, (p.hi_ms / m - 1) * 100);
  }
  const double span = hi - lo;
  lo -= span * 0.05, hi += span * 0.05;
  auto x = [&](double run) { return kLeft + (runs <= 1 ? plot_w / 2 : run * plot_w / static_cast<double>(runs - 1)); };
  auto y = [&](double pct) { return top + (hi - pct) / (hi - lo) * plot_h; };
  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
    << "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  for (double t : axis_ticks(lo, hi, y)) {
    o << "<line x1=\"" << kLeft << "\" x2=\"" << width - kRight << "\" y1=\"" << num(y(t)) << "\" y2=\"" << num(y(t))
      << "\" stroke=\"#ddd\"/><text x=\"" << kLeft - 4 << "\" y=\"" << num(y(t) + 4) << "\" text-anchor=\"end\">"
      << (t > 0 ? "+" : "") << num(t) << " %</text>\n";
  }
  for (size_t r = 0; r < runs; ++r)
    o << "<text x=\"" << num(x(r)) << "\" y=\"" << height - 10 << "\" text-anchor=\"middle\">" << r + 1 << "</text>\n";
  for (size_t i = 0; i < markers.size(); ++i) {
    const Marker& m = markers[i];
    const double mx = (x(m.before_run) + x(m.before_run - 1)) / 2;
    const char* colour = m.step ? "#d62728" : "#888";
    o << "<line x1=\"" << num(mx) << "\" x2=\"" << num(mx) << "\" y1=\"" << top - 4 << "\" y2=\"" << top + plot_h
      << "\" stroke=\"" << colour << "\" stroke-width=\"2\" shape-rendering=\"crispEdges\""
      << (m.step ? "" : " stroke-dasharray=\"4 3\"")
      << "/>\n"
      // Right of the line in the left half, left of it in the right half: the label stays on the picture.
      << "<text x=\"" << num(mx < width / 2.0 ? mx + 3 : mx - 3) << "\" y=\"" << kTop + i * kMarkerLine
      << "\" text-anchor=\"" << (mx < width / 2.0 ? "start" : "end") << "\" fill=\"" << colour << "\">"
      << compare::html::escape(m.label) << "</text>\n";
  }
  for (size_t k = 0; k < series.size(); ++k) {
    const ReportSeries& s = *series[k];
    std::vector<double> v;
    for (const Point& p : s.points) v.push_back(p.value_ms);
    const double m = series_level(v);
    const char* colour = kColours[k % (sizeof kColours / sizeof *kColours)];
    std::string path;
    for (const Point& p : s.points) {
      const double px = x(p.run), py = y((p.value_ms / m - 1) * 100);
      path += (path.empty() ? "M" : " L") + num(px) + " " + num(py);
      o << "<line x1=\"" << num(px) << "\" x2=\"" << num(px) << "\" y1=\"" << num(y((p.lo_ms / m - 1) * 100))
        << "\" y2=\"" << num(y((p.hi_ms / m - 1) * 100)) << "\" stroke=\"" << colour << "\" opacity=\"0.6\"/>"
        << "<circle cx=\"" << num(px) << "\" cy=\"" << num(py) << "\" r=\"2.5\" fill=\"" << colour << "\"/>\n";
    }
    o << "<path d=\"" << path << "\" fill=\"none\" stroke=\"" << colour << "\" stroke-width=\"1\" opacity=\"0.7\"/>\n";
  }
  o << "</svg>\n";
  return o.str();
}

}  // namespace zl::history
