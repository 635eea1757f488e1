#include "table_read.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>

#include "../util/printable.hpp"
#include "safe_read.hpp"

namespace zl::loader {
namespace {

std::string unreadable(const std::string& what, const void* at) {
  return what + " at " + pointer_words(at) + " is not readable";
}

// Element i of an array the backend claims: as an integer, so that an array
// near the top of the address space wraps instead of overflowing a pointer.
const void* element(const void* array, size_t i, size_t size) {
  // Only ever read through the bounded safe reads, never dereferenced.
  // NOLINTNEXTLINE(performance-no-int-to-ptr)
  return reinterpret_cast<const void*>(reinterpret_cast<uintptr_t>(array) + i * size);
}

// A NULL-terminated array of strings (aliases, visibility_env).
std::vector<std::string> read_name_list(const char* const* list, const char* what, std::string* problem) {
  std::vector<std::string> out;
  if (list == nullptr) return out;
  for (size_t i = 0;; ++i) {
    if (i == kMaxTableNames) {
      *problem = std::string(what) + " has no NULL within " + std::to_string(kMaxTableNames) + " entries";
      return out;
    }
    const char* entry = nullptr;
    const void* at = element(list, i, sizeof entry);
    if (!copy_from_backend(at, &entry, sizeof entry)) {
      *problem = unreadable(std::string(what) + " [" + std::to_string(i) + "]", at);
      return out;
    }
    if (entry == nullptr) return out;
    std::optional<std::string> s = read_backend_string(entry);
    if (!s) {
      *problem = unreadable(std::string(what) + " [" + std::to_string(i) + "]'s string", entry);
      return out;
    }
    if (!s->empty()) out.push_back(std::move(*s));
  }
}

// An optional string of the table: "" for NULL.
std::string read_optional(const char* p, const char* what, std::string* problem) {
  if (p == nullptr) return {};
  std::optional<std::string> s = read_backend_string(p);
  if (!s) {
    *problem = unreadable(what, p);
    return {};
  }
  return printable(*s);
}

void read_capabilities(const zl_backend_api& t, TableRead& r) {
  if (t.capability_count == 0 || t.capabilities == nullptr) return;  // negotiate_abi names a count without array
  if (t.capability_count > kMaxCapabilities) {
    r.problem = "table declares " + std::to_string(t.capability_count) + " capabilities; at most " +
                std::to_string(kMaxCapabilities) + " are read";
    return;
  }
  for (size_t i = 0; i < t.capability_count; ++i) {
    const std::string which = "capability [" + std::to_string(i) + "] of " + std::to_string(t.capability_count);
    zl_capability cap{};
    const void* at = element(t.capabilities, i, sizeof cap);
    if (!copy_from_backend(at, &cap, sizeof cap)) {
      r.problem = unreadable(which, at) + " (capability_count larger than the array?)";
      return;
    }
    if (cap.key == nullptr) continue;
    std::optional<std::string> key = read_backend_string(cap.key);
    if (!key) {
      r.problem = unreadable(which + "'s key", cap.key);
      return;
    }
    std::string value = "1";
    if (cap.value != nullptr) {
      std::optional<std::string> v = read_backend_string(cap.value);
      if (!v) {
        r.problem = unreadable(which + "'s value", cap.value);
        return;
      }
      value = printable(*v);
    }
    if (!key->empty()) r.capabilities.emplace_back(printable(*key), std::move(value));
  }
}

void read_extensions(const zl_extension_base* chain, TableRead& r) {
  for (size_t hop = 0; chain != nullptr; ++hop) {
    if (hop == kMaxExtensions) {
      r.problem = "extension chain does not end within " + std::to_string(kMaxExtensions) + " entries (a loop?)";
      return;
    }
    std::optional<zl_extension_base> e = copy_struct<zl_extension_base>(chain);
    const std::string which = "extension [" + std::to_string(hop) + "]";
    if (!e) {
      r.problem = unreadable(which, chain);
      return;
    }
    if (e->struct_size < ZL_EXTENSION_BASE_STRUCT_SIZE) {
      r.problem = which + " has struct_size " + std::to_string(e->struct_size) + ", less than an extension's " +
                  std::to_string(ZL_EXTENSION_BASE_STRUCT_SIZE) + " bytes";
      return;
    }
    r.extensions.push_back(e->type);
    chain = e->next;
  }
}

}  // namespace

TableRead read_table(const zl_backend_api* api) {
  TableRead r;
  if (api == nullptr) return r;
  std::optional<zl_backend_api> t = copy_struct<zl_backend_api>(api);
  if (!t) {
    // The version alone, for negotiate_abi's own reasons about a short table.
    size_t head[2] = {};
    if (copy_from_backend(api, head, sizeof head)) {
      r.table.struct_size = head[0];
      r.problem = "table's struct_size " + std::to_string(head[0]) + " reaches memory that is not readable";
    } else {
      r.problem = unreadable("table", api);
    }
    return r;
  }
  r.table = *t;
  r.header_read = true;
  const zl_backend_api& a = r.table;
  std::string* p = &r.problem;
  if (a.name != nullptr) {
    std::optional<std::string> name = read_backend_string(a.name);
    if (!name) {
      r.problem = unreadable("table's name", a.name);
      return r;
    }
    // printable(): negotiate_abi refuses a name that needed escaping, but
    // the loader reads the table again, and a table may change between reads.
    r.name = printable(*name);
    if (r.name != *name) r.problem = "name '" + r.name + "' is not printable text";
  }
  r.aliases = read_name_list(a.aliases, "aliases", p);
  for (std::string& alias : r.aliases) alias = printable(alias);
  if (r.problem.empty()) r.visibility_env = read_name_list(a.visibility_env, "visibility_env", p);
  for (const std::string& var : r.visibility_env) {
    if (printable(var) == var) continue;
    // A variable name escaped would pin some other variable: none is kept.
    if (r.problem.empty()) r.problem = "visibility_env '" + printable(var) + "' is not printable text";
    r.visibility_env.clear();
    break;
  }
  if (r.problem.empty()) read_capabilities(a, r);
  if (r.problem.empty()) r.torch_device = read_optional(a.torch_device, "torch_device", p);
  if (r.problem.empty()) r.framework_vendor = read_optional(a.framework_vendor, "framework_vendor", p);
  if (r.problem.empty() && a.abi_minor >= 1 && ZL_STRUCT_HAS_FIELD(&a, zl_backend_api, backend_version)) {
    r.backend_version = read_optional(a.backend_version, "backend_version", p);
  }
  if (r.problem.empty() && a.abi_minor >= 2 && ZL_STRUCT_HAS_FIELD(&a, zl_backend_api, extension_start)) {
    read_extensions(a.extension_start, r);
  }
  return r;
}

}  // namespace zl::loader
