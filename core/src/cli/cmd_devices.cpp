// `zlcore devices --backend NAME`: what the backend sees right now, and which
// of those devices a visibility variable already set in the environment
// leaves to zlcore. Exit 1 when the backend could not be asked (a tool that
// answered in a form it does not understand, no answer in time): an empty
// list must not read as "this host has no devices".
#include <algorithm>
#include <iomanip>
#include <iostream>

#include "../loader/named_value_json.hpp"
#include "../util/json.hpp"
#include "../util/printable.hpp"
#include "command.hpp"
#include "zlcore/errors.hpp"
#include "zlcore/visible_devices.hpp"

namespace zl::cli {
namespace {

std::string mib(int64_t bytes) { return bytes < 0 ? "?" : std::to_string(bytes / (1024 * 1024)) + " MiB"; }

bool is_hidden(const VisibleDevices& v, const Device& d) {
  for (const Device& h : v.hidden) {
    if (h.index == d.index && h.id == d.id) return true;
  }
  return false;
}

// One line of JSON per line read on stdin, until EOF: the state of one
// device, asked the moment the line arrives. The graph timer keeps one of
// these per worker so a reading costs a pipe round trip, not a process start
// and a library open, and lands while its replays run (docs/graph-timer.md).
int serve_state(const Backend& b, const std::vector<Device>& all, const std::string& id) {
  const Device* device = nullptr;
  std::string ids;
  for (const Device& d : all) {
    if (d.id == id) device = &d;
    ids += (ids.empty() ? "" : ", ") + d.id;
  }
  if (device == nullptr) {
    std::cerr << "zlcore: devices --serve-state " << printable(id) << ": " << b.name() << " reports no such device"
              << (ids.empty() ? std::string(" (it lists none)") : "; ids: " + ids) << "\n";
    return kExitUsage;
  }
  if (!b.has_state()) {
    std::cerr << "zlcore: devices --serve-state: " << b.name() << " answers no state queries (ABI " << b.abi()
              << "; state needs 1.2)\n";
    return kExitUsage;
  }
  std::string line;
  while (std::getline(std::cin, line)) {
    const DeviceState st = b.query_state(*device);
    rapidjson::Document doc(rapidjson::kObjectType);
    auto& a = doc.GetAllocator();
    doc.AddMember("id", json::str(device->id, a), a);
    doc.AddMember("state", json::named_values(st.values, a), a);
    if (!st.error.empty()) doc.AddMember("state_error", json::str(st.error, a), a);
    std::cout << json::compact(doc) << "\n" << std::flush;
    if (!std::cout) return kExitFailed;  // the reader went away
  }
  return kExitOk;
}

// --json: every device with its attributes and, where the backend offers
// it, its state asked now; the devices left out and why.
void print_json(const Backend& b, const VisibleDevices& v, const std::vector<Device>& all) {
  const DeviceQuery& q = v.query;
  rapidjson::Document doc(rapidjson::kObjectType);
  auto& a = doc.GetAllocator();
  json::Value list(rapidjson::kArrayType);
  for (const Device& d : all) {
    json::Value o(rapidjson::kObjectType);
    o.AddMember("index", d.index, a);
    o.AddMember("id", json::str(d.id, a), a);
    o.AddMember("name", json::str(d.name, a), a);
    o.AddMember("memory_total_bytes", d.memory_total_bytes, a);
    o.AddMember("memory_used_bytes", d.memory_used_bytes, a);
    o.AddMember("utilization_percent", d.utilization_percent, a);
    o.AddMember("visibility_value", json::str(d.visibility_value, a), a);
    o.AddMember("visible", !is_hidden(v, d), a);
    o.AddMember("attributes", json::named_values(d.attributes, a), a);
    // State is asked now, per device, only where the backend offers it.
    if (b.has_state()) {
      const DeviceState st = b.query_state(d);
      o.AddMember("state", json::named_values(st.values, a), a);
      if (!st.error.empty()) o.AddMember("state_error", json::str(st.error, a), a);
    } else {
      o.AddMember("state", json::Value(rapidjson::kNullType), a);
    }
    list.PushBack(o, a);
  }
  json::Value rejected(rapidjson::kArrayType);
  for (const RejectedDevice& r : q.rejected) {
    json::Value o(rapidjson::kObjectType);
    o.AddMember("index", r.device.index, a);
    o.AddMember("id", json::str(r.device.id, a), a);
    o.AddMember("reason", json::str(r.reason, a), a);
    rejected.PushBack(o, a);
  }
  doc.AddMember("backend", json::str(b.name(), a), a);
  doc.AddMember("abi", json::str(b.abi(), a), a);
  doc.AddMember("devices", list, a);
  doc.AddMember("rejected_devices", rejected, a);
  if (all.empty()) {
    doc.AddMember("reason", json::str(q.reason, a), a);
  } else {
    doc.AddMember("reason", json::Value(rapidjson::kNullType), a);
  }
  if (q.error.empty()) {
    doc.AddMember("error", json::Value(rapidjson::kNullType), a);
  } else {
    doc.AddMember("error", json::str(q.error, a), a);
  }
  doc.AddMember("pinned_by_env", json::str_map(v.pins, a), a);
  doc.AddMember("source", json::str(q.source, a), a);
  std::cout << json::pretty(doc);
}

// One line a device, then its attributes, then what a visibility variable
// already set leaves to run and batch.
void print_text(const Backend& b, const VisibleDevices& v, const std::vector<Device>& all,
                const std::string& pin_error) {
  const DeviceQuery& q = v.query;
  if (all.empty() && q.rejected.empty()) {
    std::cout << b.name() << ": no devices: " << q.reason << "\n";
    return;
  }
  std::cout << b.name() << ": " << all.size() << " device(s) via " << q.source << "\n";
  for (const Device& d : all) {
    std::cout << "  [" << d.index << "] " << d.name << "  id " << d.id << "  memory "
              << mib(static_cast<int64_t>(d.memory_total_bytes)) << " (used " << mib(d.memory_used_bytes) << ")  util "
              << (d.utilization_percent < 0 ? std::string("?") : std::to_string(d.utilization_percent) + "%")
              << (is_hidden(v, d) ? "  (left out by " + v.describe() + ")" : "") << "\n";
  }
  for (const Device& d : all) {
    if (d.attributes.empty()) continue;
    std::string line;
    for (const NamedValue& nv : d.attributes) line += (line.empty() ? "" : ", ") + nv.name + "=" + nv.display();
    std::cout << "      [" << d.index << "] " << line << "\n";
  }
  if (!v.pins.empty() && pin_error.empty()) {
    std::cout << v.describe() << " is set in this environment: run and batch use only the " << q.devices.size()
              << " device(s) it names\n";
  }
}

}  // namespace

int cmd_devices(Context& ctx, const std::vector<std::string>& args) {
  po::options_description desc("devices: list one backend's devices");
  desc.add_options()("backend", po::value<std::string>(), "backend name or alias (env ZL_BACKEND)")(
      "json", "print one JSON object")(
      "serve-state", po::value<std::string>(),
      "answer each line read on stdin with one JSON line of this device's state (by id), until EOF");
  add_help(desc);
  po::variables_map vm;
  if (!parse("devices", desc, args, vm)) return 0;
  const Backend& b = ctx.registry().select(flag_or_env(vm, "backend", "ZL_BACKEND"), "--backend / ZL_BACKEND");
  VisibleDevices v;
  std::string pin_error;
  try {
    v = visible_devices(b);
  } catch (const UsageError& e) {
    pin_error = e.what();
    v = VisibleDevices{};
    v.query = b.enumerate();
  }
  // Every device the backend reports, in its order; the pin only marks them.
  std::vector<Device> all = v.query.devices;
  all.insert(all.end(), v.hidden.begin(), v.hidden.end());
  std::sort(all.begin(), all.end(), [](const Device& x, const Device& y) { return x.index < y.index; });
  const DeviceQuery& q = v.query;
  if (vm.count("serve-state")) {
    if (!q.error.empty()) {
      std::cerr << "zlcore: devices: " << b.name() << " could not list its devices: " << q.error << "\n";
      return kExitFailed;
    }
    return serve_state(b, all, vm["serve-state"].as<std::string>());
  }
  const int code = !q.error.empty() ? kExitFailed : !pin_error.empty() ? kExitUsage : kExitOk;

  if (vm.count("json")) {
    print_json(b, v, all);
  } else if (q.error.empty()) {
    print_text(b, v, all, pin_error);  // an error is said once, on stderr, below
  }
  for (const RejectedDevice& r : q.rejected) {
    std::cerr << "zlcore: devices: " << b.name() << ": left out: " << r.reason << "\n";
  }
  std::cout.flush();
  if (!q.error.empty()) {
    std::cerr << "zlcore: devices: " << b.name() << " could not list its devices: " << q.error << "\n";
  } else if (!pin_error.empty()) {
    std::cerr << "zlcore: " << pin_error << "\n";
  }
  return code;
}

}  // namespace zl::cli
