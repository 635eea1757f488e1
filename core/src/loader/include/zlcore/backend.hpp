// A loaded backend as the core sees it: the C table from the plugin, read once
// into ordinary values, plus the call to enumerate devices.
#pragma once

#include <zl/backend.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "zlcore/named_value.hpp"

namespace zl {

struct Device {
  int index = 0;
  std::string id;
  std::string name;
  uint64_t memory_total_bytes = 0;
  int64_t memory_used_bytes = -1;  // -1: unknown
  int utilization_percent = -1;    // -1: unknown
  std::string visibility_value;    // empty: the backend pins nothing
  NamedValues attributes;          // ABI 1.2: architecture, peaks, driver, ...
};

// A device the backend listed that breaks a rule the core relies on
// (no id; no visibility_value although the backend pins devices).
struct RejectedDevice {
  Device device;
  std::string reason;
};

struct DeviceQuery {
  std::vector<Device> devices;
  std::vector<RejectedDevice> rejected;  // left out of devices, with why
  std::string reason;                    // why devices is empty
  std::string source;                    // which source answered ("library", "tool", ...)
  std::string error;                     // a fault the backend returned as a zl_error
};

// A device's state now (ABI 1.2 query_device_state): clocks, power,
// temperature, throttle reasons. `error` says why there is none.
struct DeviceState {
  NamedValues values;
  std::string error;
};

class Backend {
 public:
  // `api` must have passed negotiate_abi(); it stays valid for the process.
  Backend(const zl_backend_api* api, std::string path);

  const std::string& name() const { return name_; }
  const std::vector<std::string>& aliases() const { return aliases_; }
  const std::vector<std::string>& visibility_env() const { return visibility_env_; }
  // Keyed by capability name; a key declared twice keeps its last value.
  const std::map<std::string, std::string>& capabilities() const { return capabilities_; }
  const std::string& torch_device() const { return torch_device_; }
  const std::string& framework_vendor() const { return framework_vendor_; }
  const std::string& backend_version() const { return backend_version_; }
  const std::string& path() const { return path_; }
  // The types of the extensions the table's chain offers (ABI 1.2), in
  // chain order. The core knows none yet: they are recorded, then skipped.
  const std::vector<uint32_t>& extensions() const { return extensions_; }
  // "major.minor" as the backend was built.
  std::string abi() const;
  // Why this read of the table is not one the core may keep ("" when it
  // is): a table that changed since negotiate_abi read it. The loader
  // rejects such a backend; its strings are printable text all the same.
  const std::string& table_problem() const { return table_problem_; }

  // Asks the backend for its devices now. Waits at most backend_timeout_s()
  // (ZL_BACKEND_TIMEOUT): a backend that does not answer in time gives a
  // query with no devices and `error` saying so.
  DeviceQuery enumerate() const;

  // True when the backend answers query_device_state (ABI 1.2).
  bool has_state() const;
  // The device's state now, under the same time limit as enumerate; a
  // backend without the query gives an error saying so.
  DeviceState query_state(const Device& device) const;

 private:
  const zl_backend_api* api_;
  std::string path_;
  std::string name_;
  std::string table_problem_;
  std::vector<std::string> aliases_;
  std::vector<std::string> visibility_env_;
  std::map<std::string, std::string> capabilities_;
  std::string torch_device_;
  std::string framework_vendor_;
  std::string backend_version_;
  std::vector<uint32_t> extensions_;
  // enumerate_devices calls that ran out of time and have not returned yet
  // (possibly never): shared by copies of this Backend and by the threads
  // making the calls.
  std::shared_ptr<std::atomic<int>> overdue_;
};

// Checks a table a plugin returned against the ABI this core speaks. Returns
// an empty string when the table is usable, else the reason it is not.
std::string negotiate_abi(const zl_backend_api* api);

}  // namespace zl
