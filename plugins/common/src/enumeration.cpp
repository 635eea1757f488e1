#include "zl_kit/enumeration.hpp"

#include "zl_kit/text.hpp"

namespace zl_kit {

std::string one_line(std::string_view s) {
  std::string out;
  for (const std::string& line : split_lines(s)) {
    std::string t = trim(line);
    if (t.empty()) continue;
    if (!out.empty()) out += "; ";
    out += t;
  }
  return out;
}

zl_error* deliver(const Enumeration& e, zl_device_list** out) {
  if (e.devices.empty() && e.parse_failed) return make_error(ZL_ERROR_PARSE, one_line(e.reason));
  std::string reason = one_line(e.reason);
  if (e.devices.empty() && reason.empty()) reason = "no devices found";
  zl_device_list* list = make_device_list(e.devices, e.source, reason);
  if (list == nullptr) return make_error(ZL_ERROR_INTERNAL, "out of memory building the device list");
  *out = list;
  return nullptr;
}

}  // namespace zl_kit
