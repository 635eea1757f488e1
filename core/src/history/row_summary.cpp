#include "row_summary.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

namespace zl::history {
namespace {

// The standard error of a normal sample's median against its mean's.
constexpr double kMedianEfficiency = 1.2533;

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : v[n / 2 - 1] / 2 + v[n / 2] / 2;  // halves first: no overflow
}

double sd_of(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  double mean = 0;
  for (double x : v) mean += x;
  mean /= static_cast<double>(v.size());
  double ss = 0;
  for (double x : v) ss += (x - mean) * (x - mean);
  return std::sqrt(ss / static_cast<double>(v.size() - 1));
}

Row make_row(const compare::ResultRow& r, const char* side, double center, double sd, int n, const std::string& timer) {
  Row out;
  out.op = r.op;
  out.dtype = r.dtype;
  out.shape = r.shape;
  out.side = side;
  out.median_ms = center;
  out.n = std::max(n, 1);
  // A spread the file gave as negative or beyond a double is no interval.
  if (!std::isfinite(sd) || sd < 0) sd = 0;
  const double half = kZ95 * kMedianEfficiency * sd / std::sqrt(static_cast<double>(out.n));
  out.lo_ms = std::max(center - half, 0.0);
  out.hi_ms = center + half;
  out.timer = timer;
  return out;
}

bool usable(std::optional<double> v) { return v && std::isfinite(*v) && *v > 0; }

// Every side the row has a latency for, plausible or not.
std::vector<Row> every_side(const compare::ResultRow& r) {
  std::vector<Row> out;
  if (!r.error.empty()) return out;
  if (!r.placements_ms.empty()) {
    out.push_back(make_row(r, "gems", median_of(r.placements_ms), sd_of(r.placements_ms),
                           static_cast<int>(r.placements_ms.size()), r.timer));
  } else if (usable(r.latency_ms)) {
    out.push_back(make_row(r, "gems", *r.latency_ms, 0, 1, r.timer));
  }
  if (usable(r.latency_base_ms)) {
    const double sd = *r.latency_base_ms * r.spread_base_pct / 100 / 2;
    out.push_back(make_row(r, "base", *r.latency_base_ms, sd, r.repeats, r.timer_base));
  }
  return out;
}

}  // namespace

bool plausible(const Row& r) {
  return std::isfinite(r.median_ms) && std::isfinite(r.lo_ms) && std::isfinite(r.hi_ms) && r.median_ms > 0 &&
         r.lo_ms >= 0 && r.lo_ms <= r.median_ms && r.median_ms <= r.hi_ms && r.n >= 1;
}

std::vector<Row> summarize(const compare::ResultRow& r) {
  std::vector<Row> out = every_side(r);
  out.erase(std::remove_if(out.begin(), out.end(), [](const Row& x) { return !plausible(x); }), out.end());
  return out;
}

std::vector<compare::ResultRow> pool_rows(const std::vector<std::vector<compare::ResultRow>>& runs) {
  std::vector<compare::ResultRow> out;
  std::map<std::tuple<std::string, std::string, std::string>, size_t> at;
  std::map<size_t, int> base_count;
  for (const auto& rows : runs) {
    for (const compare::ResultRow& r : rows) {
      if (!r.error.empty()) continue;
      auto [it, fresh] = at.try_emplace({r.op, r.dtype, r.shape}, out.size());
      if (fresh) {
        out.push_back(r);
        base_count[it->second] = usable(r.latency_base_ms) ? 1 : 0;
        continue;
      }
      compare::ResultRow& p = out[it->second];
      p.placements_ms.insert(p.placements_ms.end(), r.placements_ms.begin(), r.placements_ms.end());
      if (usable(r.latency_base_ms)) {
        const int k = base_count[it->second]++;
        p.latency_base_ms = (p.latency_base_ms.value_or(0) * k + *r.latency_base_ms) / (k + 1);
        p.spread_base_pct = std::max(p.spread_base_pct, r.spread_base_pct);
      }
    }
  }
  return out;
}

}  // namespace zl::history
