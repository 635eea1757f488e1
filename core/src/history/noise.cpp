// The noise a series shows, and the pace the whole machine shows: both from
// the data, never from a setting. A host whose speed wanders by several
// percent between batches moves every series of a batch together; that
// common move is the run's pace, and what is left is each series' own noise.
#include <algorithm>
#include <cmath>
#include <map>

#include "zlcore/history.hpp"

namespace zl::history {
namespace {

constexpr double kMadToSd = 1.4826;  // a normal's sd over its median absolute deviation

double median_in_place(std::vector<double>& v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

// Successive differences, not deviations from the mean: a step moves one
// difference only, so the median absolute deviation of the differences
// reads the noise around it. Var(y[i+1] - y[i]) = 2 sd^2.
double learned_noise(const std::vector<double>& y) {
  if (y.size() < 3) return 0;
  std::vector<double> d;
  for (size_t i = 1; i < y.size(); ++i) d.push_back(y[i] - y[i - 1]);
  const double med = median_in_place(d);
  std::vector<double> dev;
  for (double x : d) dev.push_back(std::fabs(x - med));
  return kMadToSd * median_in_place(dev) / std::sqrt(2.0);
}

std::vector<double> run_pace(const std::vector<std::vector<Point>>& series, size_t runs) {
  std::vector<std::vector<double>> at(runs);
  for (const std::vector<Point>& s : series) {
    std::map<std::string, std::vector<double>> by_segment;
    for (const Point& p : s) by_segment[p.segment].push_back(std::log(p.value_ms));
    std::map<std::string, double> level;
    for (auto& [seg, v] : by_segment) {
      // A segment of one point says nothing about the run's pace.
      if (v.size() >= 3) level[seg] = median_in_place(v);
    }
    for (const Point& p : s) {
      auto it = level.find(p.segment);
      if (it != level.end() && p.run < runs) at[p.run].push_back(std::log(p.value_ms) - it->second);
    }
  }
  std::vector<double> pace(runs, 0.0);
  for (size_t r = 0; r < runs; ++r)
    if (!at[r].empty()) pace[r] = median_in_place(at[r]);
  return pace;
}

}  // namespace zl::history
