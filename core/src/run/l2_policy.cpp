#include "zlcore/l2_policy.hpp"

#include "zlcore/errors.hpp"

namespace zl {

std::string parse_l2_policy(const std::string& text, const std::string& given, bool empty_is_warm) {
  if ((text.empty() && empty_is_warm) || text == "warm") return "warm";
  if (text == "cold") return "cold";
  throw UsageError(given + "'" + text + "' is not allowed; use cold (the L2 cleared before each timed call) or " +
                   "warm (left as the calls before left it)");
}

std::optional<int64_t> l2_cache_bytes(const Device& device) {
  const NamedValue* v = find_value(device.attributes, "l2_cache_bytes");
  if (v == nullptr || v->type != ZL_VALUE_INT64 || v->integer <= 0) return std::nullopt;
  return v->integer;
}

void check_l2_device(const std::string& policy, const std::string& backend, const Device& device,
                     const std::string& given) {
  if (policy != "cold" || l2_cache_bytes(device)) return;
  const NamedValue* v = find_value(device.attributes, "l2_cache_bytes");
  const std::string what = v == nullptr ? "does not report its L2 size (device attribute l2_cache_bytes)"
                                        : "reports l2_cache_bytes as '" + v->display() + "', not a size in bytes";
  throw UsageError(given + (given == "--l2" ? " " : "=") + "cold cannot be honoured on " + backend + " device " +
                   std::to_string(device.index) + " (" + device.name + "): the backend " + what +
                   ", and cold clears that many bytes before each call; use --l2 warm");
}

void check_l2_mode(const std::string& policy, const std::string& mode, const std::string& given) {
  if (policy != "cold" || mode == "kernel" || mode == "cudagraph") return;
  throw UsageError(given + (given == "--l2" ? " " : "=") + "cold cannot be honoured with --mode " + mode +
                   ": FlagGems times that mode itself, on the host, and clears no cache; use --mode kernel or " +
                   "cudagraph, or --l2 warm");
}

}  // namespace zl
