#include "zlcore/visible_devices.hpp"

#include <algorithm>
#include <cstdlib>

#include "zlcore/errors.hpp"

namespace zl {
namespace {

std::vector<std::string> tokens(const std::string& value) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : value + ",") {
    if (c == ',') {
      while (!cur.empty() && cur.back() == ' ') cur.pop_back();
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else if (!(c == ' ' && cur.empty())) {
      cur += c;
    }
  }
  return out;
}

bool names(const std::string& token, const Device& d) {
  return token == d.visibility_value || token == d.id || token == std::to_string(d.index);
}

}  // namespace

std::string VisibleDevices::describe() const {
  std::string out;
  for (const auto& [var, value] : pins) out += (out.empty() ? "" : ", ") + var + "=" + value;
  return out;
}

VisibleDevices visible_devices(const Backend& backend) {
  VisibleDevices v;
  v.query = backend.enumerate();
  for (const std::string& var : backend.visibility_env()) {
    const char* value = std::getenv(var.c_str());
    if (value != nullptr && *value != '\0') v.pins[var] = value;
  }
  // No devices at all is the caller's to report, with the backend's reason.
  if (v.pins.empty() || v.query.devices.empty()) return v;
  std::vector<Device> kept;
  for (const auto& [var, value] : v.pins) {
    for (const std::string& t : tokens(value)) {
      if (std::none_of(v.query.devices.begin(), v.query.devices.end(), [&](const Device& d) { return names(t, d); })) {
        std::string known;
        for (const Device& d : v.query.devices) known += (known.empty() ? "" : ", ") + std::to_string(d.index);
        throw UsageError(var + "=" + value + " is set in zlcore's environment, but " + backend.name() +
                         " reports no device '" + t + "' (its devices: " + known +
                         ", by index, stable id or visibility value; zlcore devices --backend " + backend.name() +
                         " lists them)");
      }
    }
  }
  for (const Device& d : v.query.devices) {
    const bool named_by_all = std::all_of(v.pins.begin(), v.pins.end(), [&](const auto& pin) {
      const std::vector<std::string> ts = tokens(pin.second);
      return std::any_of(ts.begin(), ts.end(), [&](const std::string& t) { return names(t, d); });
    });
    (named_by_all ? kept : v.hidden).push_back(d);
  }
  v.query.devices = kept;
  if (kept.empty()) v.query.reason = v.describe() + " in zlcore's environment leaves none of its devices";
  return v;
}

}  // namespace zl
