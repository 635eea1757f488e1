// negotiate_abi: whether a table a backend returned is one this core can
// use. Apart from the rest of backend.cpp so that the table's fuzz target
// (tests/fuzz/backend_table_fuzz.cpp) links only the reading code.
#include <algorithm>
#include <cstddef>

#include "../util/printable.hpp"
#include "lifecycle.hpp"
#include "table_read.hpp"
#include "zlcore/backend.hpp"

namespace zl {
namespace {
// A backend's name or alias: lower case letters, digits, '-' and '_',
// starting with a letter, at most 32 (docs/backend-abi.md, rule 8).
std::string name_problem(const std::string& name) {
  const bool ok =
      name.size() <= 32 && name[0] >= 'a' && name[0] <= 'z' && std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
      });
  return ok ? "" : "is not lower case letters, digits, '-' and '_' starting with a letter (at most 32)";
}

// The table as it was in ABI 1.0: everything up to error_destroy.
constexpr size_t kMinTableSize = offsetof(zl_backend_api, error_destroy) + sizeof(zl_backend_api::error_destroy);

}  // namespace

std::string negotiate_abi(const zl_backend_api* api) {
  if (api == nullptr) return "entry returned NULL";
  // Every pointer the table holds is followed here, through safe reads:
  // what the core keeps of a backend is what this read.
  const loader::TableRead read = loader::read_table(api);
  const zl_backend_api& t = read.table;
  if (!read.header_read && t.struct_size == 0) return read.problem;
  constexpr size_t version_end = offsetof(zl_backend_api, abi_minor) + sizeof(uint32_t);
  if (t.struct_size < version_end) {
    return "table struct_size " + std::to_string(t.struct_size) + " is too small to hold the ABI version";
  }
  if (!read.header_read) return read.problem;
  if (t.abi_major != ZL_BACKEND_ABI_MAJOR) {
    return "ABI major " + std::to_string(t.abi_major) + " does not match the core's " +
           std::to_string(ZL_BACKEND_ABI_MAJOR);
  }
  if (t.struct_size < kMinTableSize) {
    return "table struct_size " + std::to_string(t.struct_size) + " is smaller than the ABI " +
           std::to_string(ZL_BACKEND_ABI_MAJOR) + ".0 table (" + std::to_string(kMinTableSize) + " bytes)";
  }
  if (t.name != nullptr && read.name.empty() && !read.problem.empty()) return read.problem;
  if (read.name.empty()) return "table has no name";
  // Names are what users type and what the registry matches: one spelling.
  if (const std::string why = name_problem(read.name); !why.empty())
    return "name '" + printable(read.name) + "' " + why;
  for (const std::string& alias : read.aliases) {
    if (const std::string why = name_problem(alias); !why.empty()) return "alias '" + printable(alias) + "' " + why;
  }
  if (!read.problem.empty()) return read.problem;
  if (t.enumerate_devices == nullptr || t.device_list_destroy == nullptr || t.error_destroy == nullptr) {
    return "table lacks a required entry (enumerate_devices, device_list_destroy, error_destroy)";
  }
  if (t.capability_count > 0 && t.capabilities == nullptr) {
    return "table declares " + std::to_string(t.capability_count) + " capabilities but no array";
  }
  // A state the core could not release would leak on every query.
  if (ZL_ENTRY(&t, query_device_state) != nullptr && ZL_ENTRY(&t, device_state_destroy) == nullptr) {
    return "table has query_device_state but no device_state_destroy";
  }
  return {};
}

}  // namespace zl
