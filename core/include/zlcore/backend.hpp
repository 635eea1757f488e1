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

namespace zl {

struct Device {
  int index = 0;
  std::string id;
  std::string name;
  uint64_t memory_total_bytes = 0;
  int64_t memory_used_bytes = -1;  // -1: unknown
  int utilization_percent = -1;    // -1: unknown
  std::string visibility_value;    // empty: the backend pins nothing
};

struct DeviceQuery {
  std::vector<Device> devices;
  std::string reason;  // why devices is empty
  std::string source;  // which source answered ("library", "tool", ...)
  std::string error;   // a fault the backend returned as a zl_error
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
  // "major.minor" as the backend was built.
  std::string abi() const;

  // Asks the backend for its devices now. Waits at most backend_timeout_s()
  // (ZL_BACKEND_TIMEOUT): a backend that does not answer in time gives a
  // query with no devices and `error` saying so.
  DeviceQuery enumerate() const;

 private:
  const zl_backend_api* api_;
  std::string path_;
  std::string name_;
  std::vector<std::string> aliases_;
  std::vector<std::string> visibility_env_;
  std::map<std::string, std::string> capabilities_;
  std::string torch_device_;
  std::string framework_vendor_;
  std::string backend_version_;
  // enumerate_devices calls that ran out of time and have not returned yet
  // (possibly never): shared by copies of this Backend and by the threads
  // making the calls.
  std::shared_ptr<std::atomic<int>> overdue_ = std::make_shared<std::atomic<int>>(0);
};

// Checks a table a plugin returned against the ABI this core speaks. Returns
// an empty string when the table is usable, else the reason it is not.
std::string negotiate_abi(const zl_backend_api* api);

}  // namespace zl
