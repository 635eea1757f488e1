#include "zlcore/time_breakdown.hpp"

#include <cstdio>

namespace zl {

const std::vector<TimePart>& time_parts() {
  static const std::vector<TimePart> parts = {
      {"zlcore", &TimeBreakdown::zlcore, "zlcore run itself: resolve, preflight, run directory, identity, harvest"},
      {"start", &TimeBreakdown::start, "the child's start and exit (a warm worker: handing it the op)"},
      {"imports", &TimeBreakdown::imports, "the suite's conftest and its imports"},
      {"collection", &TimeBreakdown::collection, "collecting the tests"},
      {"compiling", &TimeBreakdown::compiling, "compiling kernels (or loading them from the compiler's cache)"},
      {"autotuning", &TimeBreakdown::autotuning, "benchmarking autotune configurations"},
      {"suite", &TimeBreakdown::suite, "the suite's own per-shape work: inputs, reference calls, metrics"},
      {"measuring_base", &TimeBreakdown::measuring_base, "the timer on the reference (torch) side"},
      {"measuring_gems", &TimeBreakdown::measuring_gems, "the timer on the measured side"},
      {"teardown", &TimeBreakdown::teardown, "the plugins' reports at the session's end"},
  };
  return parts;
}

double TimeBreakdown::total() const {
  double sum = 0;
  for (const TimePart& p : time_parts()) sum += this->*p.field;
  return sum;
}

TimeBreakdown& TimeBreakdown::operator+=(const TimeBreakdown& other) {
  for (const TimePart& p : time_parts()) this->*p.field += other.*p.field;
  known = known || other.known;
  return *this;
}

std::string time_summary(const TimeBreakdown& sum, size_t ops, double wall) {
  std::string out = "where the time went (" + std::to_string(ops) + " runs; seconds summed over them):\n";
  char buf[256];
  std::snprintf(buf, sizeof buf, "  %-15s %10s %6s %9s\n", "part", "seconds", "share", "per run");
  out += buf;
  const double total = sum.total();
  for (const TimePart& p : time_parts()) {
    const double v = sum.*p.field;
    std::snprintf(buf, sizeof buf, "  %-15s %10.1f %5.1f%% %9.2f\n", p.name, v, total > 0 ? 100.0 * v / total : 0.0,
                  ops > 0 ? v / static_cast<double>(ops) : 0.0);
    out += buf;
  }
  std::snprintf(buf, sizeof buf, "  %-15s %10.1f %6s %9.2f   (batch wall %.1f s)\n", "total", total, "",
                ops > 0 ? total / static_cast<double>(ops) : 0.0, wall);
  out += buf;
  return out;
}

}  // namespace zl
