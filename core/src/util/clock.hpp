// Wall-clock timestamps as every zlcore file writes them.
#pragma once

#include <string>

namespace zl {

// UTC, ISO 8601 with milliseconds: 2026-12-02T11:57:11.438Z. One format for
// identities, ops_status.csv and logs, so rows sort and compare as text.
std::string utc_now_iso();

}  // namespace zl
