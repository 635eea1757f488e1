#include "device_facts.hpp"

#include <filesystem>
#include <system_error>

#include "../loader/named_value_json.hpp"
#include "../util/json.hpp"

namespace zl {
namespace {

namespace fs = std::filesystem;

void record_state(Identity& id, const Backend& backend, const Device& device, const std::string& when) {
  if (!backend.has_state()) return;  // a 1.1 backend: nothing to say, and nothing pretends to
  const DeviceState st = backend.query_state(device);
  if (!st.error.empty()) id.set("device.state_error_" + when, st.error);
  id.set("device.state_" + when, json::named_values(st.values, id.alloc()));
}

bool is_peak(const std::string& name) {
  return name == "memory_bandwidth_peak_gbps" || name.rfind("compute_peak_tflops.", 0) == 0;
}

}  // namespace

void record_device_start(Identity& id, const Backend& backend, const Device& device) {
  id.set("device.attributes", json::named_values(device.attributes, id.alloc()));
  record_state(id, backend, device, "start");
}

void record_device_end(Identity& id, const Backend& backend, const Device& device) {
  record_state(id, backend, device, "end");
}

void add_device_env(std::map<std::string, std::string>& env, const Backend& backend, const Device& device) {
  rapidjson::Document peaks(rapidjson::kObjectType);
  NamedValues numeric;
  for (const NamedValue& v : device.attributes) {
    if (is_peak(v.name) && v.number()) numeric.push_back(v);
  }
  env["ZL_DEVICE_PEAKS"] = json::compact(json::named_values(numeric, peaks.GetAllocator()));
  if (!backend.has_state()) return;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return;
  // The backend's own directory: the child finds the same backend whatever
  // --backend-dir or ZL_BACKEND_PATH the run was given.
  const std::string dir = fs::path(backend.path()).parent_path().string();
  rapidjson::Document argv(rapidjson::kArrayType);
  auto& a = argv.GetAllocator();
  for (const std::string& s : {exe.string(), std::string("--backend-dir"), dir, std::string("devices"),
                               std::string("--backend"), backend.name(), std::string("--serve-state"), device.id}) {
    argv.PushBack(json::str(s, a), a);
  }
  env["ZL_DEVICE_STATE_ARGV"] = json::compact(argv);
  env["ZL_DEVICE_STATE_ID"] = device.id;
}

}  // namespace zl
