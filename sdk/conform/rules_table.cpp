// Rules about the table a backend returns: its size for the minor it
// claims, which entries may be NULL, its strings and its extension chain.
#include <cctype>

#include "check_util.hpp"
#include "enumerate_once.hpp"
#include "lifecycle.hpp"
#include "rules.hpp"
#include "safe_read.hpp"
#include "util/printable.hpp"

namespace zl::conform {
namespace {

// Types no reader knows: one reserved for the header and never assigned
// (the header defines none yet), one from the vendors' range.
constexpr uint32_t kUnknownReservedType = ZL_EXTENSION_TYPE_VENDOR_FIRST - 1;
constexpr uint32_t kUnknownVendorType = 0x7fff0000u;

struct UnknownChain {
  zl_extension_base vendor{ZL_EXTENSION_BASE_STRUCT_SIZE, kUnknownVendorType, nullptr};
  zl_extension_base reserved{ZL_EXTENSION_BASE_STRUCT_SIZE, kUnknownReservedType, &vendor};
  const zl_extension_base* start() const { return &reserved; }
};

std::string error_words(const zl_backend_api* api, zl_error* err) {
  std::string words = loader::error_text(err);
  if (const std::string bad = error_problem(err); !bad.empty()) words += " (" + bad + ")";
  api->error_destroy(err);
  return words;
}

// An environment variable's name as a shell and setenv accept it.
bool is_env_name(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

// The strings of a NULL-terminated array, or why not.
std::string array_problem(const char* const* array, const char* what, bool env_names) {
  if (array == nullptr) return {};
  for (size_t i = 0; i < loader::kMaxTableNames; ++i) {
    const char* p = nullptr;
    if (!loader::copy_from_backend(array + i, &p, sizeof p)) return std::string(what) + " is not readable";
    if (p == nullptr) return {};
    const auto s = loader::read_backend_string(p);
    const std::string at = std::string(what) + " [" + std::to_string(i) + "]";
    if (!s || s->empty()) return at + " is empty";
    if (!is_text(*s)) return at + " '" + printable(*s) + "' is not printable text";
    if (env_names && !is_env_name(*s)) return at + " '" + *s + "' is not an environment variable's name";
  }
  return std::string(what) + " has no NULL within " + std::to_string(loader::kMaxTableNames) + " entries";
}

// A string the table may leave NULL; when set, it is one line of text.
std::string optional_string_problem(const char* p, const char* what) {
  if (p == nullptr) return {};
  const auto s = loader::read_backend_string(p);
  if (!s || s->empty()) return std::string(what) + " is set but empty (NULL says 'none')";
  if (!is_text(*s)) return std::string(what) + " '" + printable(*s) + "' is not printable text";
  return {};
}

}  // namespace

Outcome table_size(Subject& s) {
  const zl_backend_api& t = s.table.table;
  const uint32_t minor = t.abi_minor;
  const size_t need = minor >= 2   ? ZL_BACKEND_API_STRUCT_SIZE
                      : minor == 1 ? ZL_BACKEND_API_STRUCT_SIZE_1_1
                                   : ZL_BACKEND_API_STRUCT_SIZE_1_0;
  if (t.struct_size < need) {
    return fail("table struct_size " + std::to_string(t.struct_size) + " does not reach the last entry of ABI 1." +
                std::to_string(minor) + " (" + std::to_string(need) + " bytes): set it to ZL_BACKEND_API_STRUCT_SIZE");
  }
  return pass();
}

Outcome entries(Subject& s) {
  const zl_backend_api& t = s.table.table;
  // The loader rejected a table without enumerate_devices,
  // device_list_destroy or error_destroy, and one with a state query but no
  // destroy, already (loads). What it tolerates and the ABI does not allow:
  if (t.capability_count > loader::kMaxCapabilities) {
    return fail("capability_count " + std::to_string(t.capability_count) + " is more than the core reads (" +
                std::to_string(loader::kMaxCapabilities) + ")");
  }
  for (size_t i = 0; i < t.capability_count; ++i) {
    zl_capability c{};
    const std::string at = "capability [" + std::to_string(i) + "]";
    if (!loader::copy_from_backend(t.capabilities + i, &c, sizeof c)) return fail(at + " is not readable");
    if (c.key == nullptr) return fail(at + " has a NULL key");
    if (c.value == nullptr) return fail(at + " has a NULL value (\"1\" for a plain flag)");
  }
  if (ZL_ENTRY(&t, device_state_destroy) != nullptr && ZL_ENTRY(&t, query_device_state) == nullptr) {
    return fail("table has device_state_destroy but no query_device_state");
  }
  if (t.torch_device == nullptr) return fail("torch_device is NULL: the child calls torch.<torch_device>");
  return pass();
}

Outcome strings(Subject& s) {
  const zl_backend_api& t = s.table.table;
  const auto torch = loader::read_backend_string(t.torch_device);
  if (!torch || torch->empty()) return fail("torch_device is NULL or empty");
  std::string bad = array_problem(t.aliases, "aliases", false);
  if (bad.empty()) bad = array_problem(t.visibility_env, "visibility_env", true);
  if (bad.empty() && !is_text(*torch)) bad = "torch_device '" + printable(*torch) + "' is not printable text";
  if (bad.empty()) bad = optional_string_problem(t.framework_vendor, "framework_vendor");
  if (bad.empty() && t.abi_minor >= 1) bad = optional_string_problem(t.backend_version, "backend_version");
  for (size_t i = 0; bad.empty() && i < t.capability_count; ++i) {
    const std::string at = "capability [" + std::to_string(i) + "]";
    bad = optional_string_problem(t.capabilities[i].key, (at + " key").c_str());
    if (bad.empty()) bad = optional_string_problem(t.capabilities[i].value, (at + " value").c_str());
  }
  return bad.empty() ? pass() : fail(bad);
}

Outcome extensions(Subject& s) {
  const zl_backend_api& t = s.table.table;
  if (t.abi_minor < 2) return skip("ABI 1." + std::to_string(t.abi_minor) + " has no extension chain");
  const zl_extension_base* link = ZL_ENTRY(&t, extension_start);
  for (size_t i = 0; link != nullptr; ++i) {
    const std::string at = "extension [" + std::to_string(i) + "]";
    if (i == loader::kMaxExtensions) return fail("the chain has more than 256 links (a cycle?)");
    const auto e = loader::copy_struct<zl_extension_base>(link);
    if (!e) return fail(at + " at " + loader::pointer_words(link) + " is not readable");
    if (e->struct_size < ZL_EXTENSION_BASE_STRUCT_SIZE) {
      return fail(at + " struct_size " + std::to_string(e->struct_size) + " is below ZL_EXTENSION_BASE_STRUCT_SIZE");
    }
    if (e->type < ZL_EXTENSION_TYPE_VENDOR_FIRST) {
      return fail(at + " type " + std::to_string(e->type) + " is reserved for the header, which defines none");
    }
    link = e->next;
  }
  auto enumerate = ZL_ENTRY(&t, enumerate);
  if (enumerate == nullptr) return pass();
  const UnknownChain chain;
  zl_enumerate_args args{};
  args.struct_size = ZL_ENUMERATE_ARGS_STRUCT_SIZE;
  args.extension_start = chain.start();
  if (zl_error* err = enumerate(&args)) {
    return fail("enumerate given extensions it does not know returned an error: " + error_words(s.api, err));
  }
  if (args.devices == nullptr) return fail("enumerate given extensions it does not know returned no list");
  s.api->device_list_destroy(args.devices);
  return pass();
}

Outcome lifecycle(Subject& s) {
  const zl_backend_api& t = s.table.table;
  auto init = ZL_ENTRY(&t, initialize);
  auto shut = ZL_ENTRY(&t, shutdown);
  if (init == nullptr && shut == nullptr) return skip("the table has no initialize and no shutdown (both optional)");
  const UnknownChain chain;
  if (init != nullptr) {
    zl_initialize_args args{};
    args.struct_size = ZL_INITIALIZE_ARGS_STRUCT_SIZE;
    args.extension_start = chain.start();
    if (zl_error* err = init(&args)) return fail("initialize returned an error: " + error_words(s.api, err));
  }
  const DeviceQuery q = loader::enumerate_once(s.api, s.pin_var);
  if (!q.error.empty()) return fail("enumerate after initialize returned an error: " + q.error);
  if (shut != nullptr) {
    zl_shutdown_args args{};
    args.struct_size = ZL_SHUTDOWN_ARGS_STRUCT_SIZE;
    args.extension_start = chain.start();
    if (zl_error* err = shut(&args)) return fail("shutdown returned an error: " + error_words(s.api, err));
  }
  return pass();
}

}  // namespace zl::conform
