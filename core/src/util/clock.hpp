// Wall-clock timestamps as every zlcore file and directory name writes them.
// Always UTC: identities, ops_status.csv and run/batch directory names are
// read side by side across hosts (a Slurm batch spans nodes that may sit in
// different time zones), and only UTC text sorts and compares as time there.
#pragma once

#include <string>

namespace zl {

// ISO 8601 with milliseconds: 2026-12-02T11:57:11.438Z. One format for
// identities, ops_status.csv and logs, so rows sort and compare as text.
std::string utc_now_iso();
// Now, to the second, in a strftime format: the one formatter behind the
// compact stamps below and file-name suffixes.
std::string utc_now_format(const char* strftime_format);
// Compact, to the second: 20261202-115711. The prefix of run and batch
// directory names.
std::string utc_stamp_compact();

}  // namespace zl
