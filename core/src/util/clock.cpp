#include "clock.hpp"

#include <sys/time.h>

#include <cstdio>
#include <ctime>

namespace zl {

std::string utc_now_iso() {
  timeval tv{};
  gettimeofday(&tv, nullptr);
  std::tm tm{};
  gmtime_r(&tv.tv_sec, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[80];
  std::snprintf(out, sizeof out, "%s.%03dZ", buf, static_cast<int>(tv.tv_usec / 1000));
  return out;
}

}  // namespace zl
