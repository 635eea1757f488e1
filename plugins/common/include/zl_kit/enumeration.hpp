// What every vendor backend does between "ask the driver or tool" and "hand a
// list across the ABI": collect devices or a reason, then deliver them as the
// ABI wants (reason for an absent driver, ZL_ERROR_PARSE for output in an
// unknown form), with no exception ever leaving the backend.
#pragma once

#include <zl/backend.h>

#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "zl_kit/device_list.hpp"

namespace zl_kit {

// What a parser makes of one tool's text: devices, or why the text was not
// in a form it knows. A parser is a pure function of the text.
struct ParseResult {
  std::vector<Device> devices;
  std::string error;  // non-empty: the text was not understood
  bool ok() const { return error.empty(); }
  static ParseResult fail(std::string why) {
    ParseResult r;
    r.error = std::move(why);
    return r;
  }
};

struct Enumeration {
  std::vector<Device> devices;
  std::string source = "none";  // "library", "tool"
  std::string reason;           // why there are no devices
  bool parse_failed = false;    // the reason is a parse failure
};

// Squeezes tool text into one line for a reason: newlines become "; ".
std::string one_line(std::string_view s);

// Stores a list in *out (or returns an error) as enumerate_devices must.
zl_error* deliver(const Enumeration& e, zl_device_list** out);

// Runs an enumeration body, turning anything it throws into an error value.
template <class Body>
zl_error* guarded_enumerate(zl_device_list** out, Body body) {
  if (out == nullptr) return make_error(ZL_ERROR_INVALID_ARGUMENT, "out is NULL");
  *out = nullptr;
  try {
    return deliver(body(), out);
  } catch (const std::exception& e) {
    return make_error(ZL_ERROR_INTERNAL, std::string("enumeration failed: ") + e.what());
  } catch (...) {
    return make_error(ZL_ERROR_INTERNAL, "enumeration failed");
  }
}

}  // namespace zl_kit
