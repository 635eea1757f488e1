// Everything the core takes from a backend's table, read once through
// safe_read.hpp: the table's own bytes, its strings and arrays, every
// capability and the whole extension chain. The probe child reads a table
// with this before its verdict is cached, and the loader reads it with this
// again in process, so the core never follows a table pointer this did not
// follow first, and a table that lies is a reason, not a crash.
#pragma once

#include <zl/backend.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace zl::loader {

// The longest arrays the core walks: more reads as a table that lies.
constexpr size_t kMaxTableNames = 64;      // aliases, visibility_env
constexpr size_t kMaxCapabilities = 1024;  // capability_count
constexpr size_t kMaxExtensions = 256;     // hops along extension_start
constexpr size_t kMaxNamedValues = 4096;   // attribute_count, value_count
constexpr size_t kMaxDevices = 4096;       // a device list's count

struct TableRead {
  // The table's own bytes, min(struct_size, sizeof) of them, zero past
  // its struct_size (a field the backend did not write reads as NULL).
  zl_backend_api table{};
  // Every string below is printable() text, however the table changes
  // between two reads; visibility_env is empty when one of its names is not.
  std::string name;
  std::vector<std::string> aliases;
  std::vector<std::string> visibility_env;
  // In table order; keys that are NULL or empty left out, a NULL value "1".
  // Keys and values are printable() text.
  std::vector<std::pair<std::string, std::string>> capabilities;
  std::string torch_device;
  std::string framework_vendor;
  std::string backend_version;  // "" before minor 1 or when NULL
  std::vector<uint32_t> extensions;
  // Why the table cannot be read ("capability [3] of 100 at 0x... is not
  // readable"); "" when all of it can. A table whose own bytes cannot be
  // read has `table` all zero.
  std::string problem;
  bool header_read = false;  // struct_size, abi_major and abi_minor were read
};

TableRead read_table(const zl_backend_api* api);

}  // namespace zl::loader
