// JSON pieces shared by the A/B report and the calibration report (which is
// also the noise-floor file), so both describe the method the same way.
#pragma once

#include "../util/json.hpp"
#include "zlcore/compare.hpp"

namespace zl::compare {

json::Value method_json(const Options& o, json::Alloc& a);

}  // namespace zl::compare
