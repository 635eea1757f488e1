#include "clock.hpp"

#include <sys/time.h>

#include <cstdio>
#include <ctime>

namespace zl {
namespace {

std::string format_utc(std::time_t t, const char* strftime_format) {
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  const size_t n = std::strftime(buf, sizeof buf, strftime_format, &tm);
  return std::string(buf, n);
}

}  // namespace

std::string utc_now_iso() {
  timeval tv{};
  gettimeofday(&tv, nullptr);
  char out[80];
  std::snprintf(out, sizeof out, "%s.%03dZ", format_utc(tv.tv_sec, "%Y-%m-%dT%H:%M:%S").c_str(),
                static_cast<int>(tv.tv_usec / 1000));
  return out;
}

std::string utc_now_format(const char* strftime_format) { return format_utc(std::time(nullptr), strftime_format); }

std::string utc_stamp_compact() { return utc_now_format("%Y%m%d-%H%M%S"); }

}  // namespace zl
