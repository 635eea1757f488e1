// Builds the C structs a backend hands across the ABI from ordinary C++
// values. Everything a list points to lives in one heap block owned by the
// list, so device_list_destroy is the only release a backend needs.
#pragma once

#include <zl/backend.h>

#include <cstdint>
#include <string>
#include <vector>

namespace zl_kit {

struct Device {
  int32_t index = 0;
  std::string id;
  std::string name;
  uint64_t memory_total_bytes = 0;
  int64_t memory_used_bytes = -1;
  int32_t utilization_percent = -1;
  std::string visibility_value;  // empty: no visibility variable
};

// A list with devices (reason NULL) or, when devices is empty, with a reason.
zl_device_list* make_device_list(const std::vector<Device>& devices, const std::string& source,
                                 const std::string& reason_if_empty);
void destroy_device_list(zl_device_list* list);

zl_error* make_error(zl_error_code code, const std::string& message);
void destroy_error(zl_error* error);

}  // namespace zl_kit
