// `zlcore devices --backend NAME`: what the backend sees right now.
#include <iomanip>
#include <iostream>

#include "../util/json.hpp"
#include "command.hpp"

namespace zl::cli {
namespace {

std::string mib(int64_t bytes) { return bytes < 0 ? "?" : std::to_string(bytes / (1024 * 1024)) + " MiB"; }

}  // namespace

int cmd_devices(Context& ctx, const std::vector<std::string>& args) {
  po::options_description desc("devices: list one backend's devices");
  desc.add_options()("backend", po::value<std::string>(), "backend name or alias (env ZL_BACKEND)")(
      "json", "print one JSON object");
  add_help(desc);
  po::variables_map vm;
  if (!parse("devices", desc, args, vm)) return 0;
  const Backend& b = ctx.registry().select(flag_or_env(vm, "backend", "ZL_BACKEND"), "--backend / ZL_BACKEND");
  DeviceQuery q = b.enumerate();

  if (vm.count("json")) {
    rapidjson::Document doc(rapidjson::kObjectType);
    auto& a = doc.GetAllocator();
    json::Value list(rapidjson::kArrayType);
    for (const Device& d : q.devices) {
      json::Value o(rapidjson::kObjectType);
      o.AddMember("index", d.index, a);
      o.AddMember("id", json::str(d.id, a), a);
      o.AddMember("name", json::str(d.name, a), a);
      o.AddMember("memory_total_bytes", d.memory_total_bytes, a);
      o.AddMember("memory_used_bytes", d.memory_used_bytes, a);
      o.AddMember("utilization_percent", d.utilization_percent, a);
      o.AddMember("visibility_value", json::str(d.visibility_value, a), a);
      list.PushBack(o, a);
    }
    doc.AddMember("backend", json::str(b.name(), a), a);
    doc.AddMember("devices", list, a);
    if (q.devices.empty()) {
      doc.AddMember("reason", json::str(q.reason, a), a);
    } else {
      doc.AddMember("reason", json::Value(rapidjson::kNullType), a);
    }
    doc.AddMember("source", json::str(q.source, a), a);
    std::cout << json::pretty(doc);
    return 0;
  }

  std::cout << b.name() << ": ";
  if (q.devices.empty()) {
    std::cout << "no devices: " << q.reason << "\n";
    return 0;
  }
  std::cout << q.devices.size() << " device(s) via " << q.source << "\n";
  for (const Device& d : q.devices) {
    std::cout << "  [" << d.index << "] " << d.name << "  id " << d.id << "  memory " << mib(static_cast<int64_t>(d.memory_total_bytes))
              << " (used " << mib(d.memory_used_bytes) << ")  util "
              << (d.utilization_percent < 0 ? std::string("?") : std::to_string(d.utilization_percent) + "%") << "\n";
  }
  return 0;
}

}  // namespace zl::cli
