// zl/backend_kit.hpp -- a backend in C++ as its parsing plus a table.
//
// Header-only and compiled into the backend (nothing here crosses the ABI
// as a C++ type): the backend describes itself in a BackendSpec, writes
// functions that return plain C++ values (an Enumeration, a State), and
// ZL_KIT_BACKEND_ENTRY(spec) makes the zl_backend_api table, the C
// trampolines and the one exported entry point. Every trampoline runs behind
// the exception barrier: a C++ exception (a bad_alloc, a parser's throw) comes
// back to the core as a zl_error, never as an unwinding through C frames
// (docs/backend-abi.md, rule 6).
#pragma once

#include <zl/backend.h>
#include <zl/backend_kit.h>

#include <cstdint>
#include <exception>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace zl_kit {

// One named value (zl_named_value) as an ordinary C++ value.
struct Value {
  std::string name;
  zl_value_type type = ZL_VALUE_STRING;
  std::string text;
  int64_t integer = 0;
  double real = 0;

  static Value str(std::string name, std::string text) { return {std::move(name), ZL_VALUE_STRING, std::move(text)}; }
  static Value i64(std::string name, int64_t v) { return {std::move(name), ZL_VALUE_INT64, {}, v}; }
  static Value f64(std::string name, double v) { return {std::move(name), ZL_VALUE_DOUBLE, {}, 0, v}; }
  static Value flag(std::string name, bool v) { return {std::move(name), ZL_VALUE_BOOL, {}, v ? 1 : 0}; }
};

struct Device {
  int32_t index = 0;
  std::string id;
  std::string name;
  uint64_t memory_total_bytes = 0;
  int64_t memory_used_bytes = -1;
  int32_t utilization_percent = -1;
  std::string visibility_value;  // empty: no visibility variable
  std::vector<Value> attributes;
  // Readings of now (temperature, power, clocks) a tool gave along with the
  // list: not part of the list, but what state_from() answers with.
  std::vector<Value> state;
};

// What a parser makes of one tool's text: devices, or why the text was not
// in a form it knows. A parser is a pure function of the text.
struct ParseResult {
  std::vector<Device> devices;
  std::string error;  // non-empty: the text was not understood
  bool ok() const { return error.empty(); }
  static ParseResult fail(std::string why) {
    ParseResult r;
    r.error = std::move(why);
    return r;
  }
};

struct Enumeration {
  std::vector<Device> devices;
  std::string source = "none";  // "library", "tool"
  std::string reason;           // why there are no devices
  bool parse_failed = false;    // the reason is a parse failure
};

// A device's state now, or why it cannot be had.
struct State {
  std::vector<Value> values;
  std::string error;  // non-empty: returned as a zl_error with `code`
  zl_error_code code = ZL_ERROR_UNAVAILABLE;
  static State fail(zl_error_code code, std::string why) {
    State s;
    s.code = code;
    s.error = std::move(why);
    return s;
  }
};

// Squeezes tool text into one line for a reason: line breaks become "; ".
inline std::string one_line(std::string_view s) {
  std::string out, line;
  auto flush = [&] {
    size_t b = line.find_first_not_of(" \t\r");
    size_t e = line.find_last_not_of(" \t\r");
    if (b != std::string::npos) {
      if (!out.empty()) out += "; ";
      out += line.substr(b, e - b + 1);
    }
    line.clear();
  };
  for (char c : s) {
    if (c == '\n') {
      flush();
    } else {
      line += c;
    }
  }
  flush();
  return out;
}

inline zl_error* make_error(zl_error_code code, const std::string& message) {
  return zl_kit_error(code, "%s", message.c_str());
}

namespace detail {
inline std::vector<zl_named_value> c_values(const std::vector<Value>& values) {
  std::vector<zl_named_value> out;
  out.reserve(values.size());
  for (const Value& v : values) {
    zl_named_value c = zl_kit_int_value(v.name.c_str(), v.integer);
    c.type = v.type;
    c.string_value = v.type == ZL_VALUE_STRING ? v.text.c_str() : nullptr;
    c.double_value = v.real;
    out.push_back(c);
  }
  return out;
}
}  // namespace detail

// The list as the ABI wants it: one block (zl_kit_device_list); the reason
// is kept only when there are no devices.
inline zl_error* make_device_list(const std::vector<Device>& devices, const std::string& source,
                                  const std::string& reason_if_empty, zl_device_list** out) {
  std::vector<std::vector<zl_named_value>> attrs;
  std::vector<zl_device_info> infos;
  attrs.reserve(devices.size());
  for (const Device& d : devices) {
    attrs.push_back(detail::c_values(d.attributes));
    zl_device_info c{};
    c.struct_size = ZL_DEVICE_INFO_STRUCT_SIZE;
    c.index = d.index;
    c.id = d.id.c_str();
    c.name = d.name.c_str();
    c.memory_total_bytes = d.memory_total_bytes;
    c.memory_used_bytes = d.memory_used_bytes;
    c.utilization_percent = d.utilization_percent;
    c.visibility_value = d.visibility_value.empty() ? nullptr : d.visibility_value.c_str();
    c.attribute_count = attrs.back().size();
    c.attributes = attrs.back().empty() ? nullptr : attrs.back().data();
    infos.push_back(c);
  }
  return zl_kit_device_list(infos.data(), infos.size(), source.c_str(),
                            reason_if_empty.empty() ? nullptr : reason_if_empty.c_str(), out);
}

// Stores a list in *out (or returns an error) as enumerate must: a reason
// for an absent driver, ZL_ERROR_PARSE for output in an unknown form.
inline zl_error* deliver(const Enumeration& e, zl_device_list** out) {
  const std::string reason = one_line(e.reason);
  if (e.devices.empty() && e.parse_failed) return make_error(ZL_ERROR_PARSE, reason);
  return make_device_list(e.devices, e.source, reason, out);
}

inline zl_error* deliver(const State& s, zl_device_state** out) {
  if (!s.error.empty()) return make_error(s.code, one_line(s.error));
  std::vector<zl_named_value> values = detail::c_values(s.values);
  return zl_kit_device_state(values.data(), values.size(), out);
}

// A state query answered by enumerating again, for a backend whose tool
// reads a device's state in the same call that lists it: the device's
// utilization and memory in use, plus its Device::state readings.
inline State state_from(const Enumeration& e, int32_t index, const std::string& id) {
  for (const Device& d : e.devices) {
    if (d.index != index || d.id != id) continue;
    State s;
    if (d.utilization_percent >= 0) s.values.push_back(Value::i64("utilization_percent", d.utilization_percent));
    if (d.memory_used_bytes >= 0) s.values.push_back(Value::i64("memory_used_bytes", d.memory_used_bytes));
    s.values.insert(s.values.end(), d.state.begin(), d.state.end());
    return s;
  }
  if (e.devices.empty()) return State::fail(e.parse_failed ? ZL_ERROR_PARSE : ZL_ERROR_UNAVAILABLE, one_line(e.reason));
  return State::fail(ZL_ERROR_INVALID_ARGUMENT,
                     "no device with index " + std::to_string(index) + " and id '" + id + "' now");
}

// The exception barrier: runs `body` (returning zl_error*), and turns anything
// it throws into an error value naming `what` failed.
template <class Body>
zl_error* barrier(const char* what, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::exception& e) {
    return zl_kit_error(ZL_ERROR_INTERNAL, "%s failed: %s", what, e.what());
  } catch (...) {
    return zl_kit_error(ZL_ERROR_INTERNAL, "%s failed", what);
  }
}

// A backend, described. Everything a pointer names has static lifetime.
struct BackendSpec {
  const char* name;
  const char* const* aliases;         // NULL-terminated, may be nullptr
  const char* const* visibility_env;  // NULL-terminated, may be nullptr
  const zl_capability* capabilities;
  size_t capability_count;
  const char* torch_device;
  const char* framework_vendor;  // may be nullptr
  const char* version;           // may be nullptr
  Enumeration (*enumerate)();
  // Optional (nullptr): the device's state now.
  State (*state)(int32_t index, const std::string& id);
  // Optional: "" when ready, else why the backend cannot work at all.
  std::string (*initialize)();
  // Optional: releases what initialize opened.
  void (*shutdown)();
};

template <size_t N>
constexpr size_t count_of(const zl_capability (&)[N]) {
  return N;
}

// The table and its trampolines for one spec.
template <const BackendSpec& S>
struct Table {
  static zl_error* enumerate(zl_enumerate_args* args) {
    return barrier("enumerate", [&]() -> zl_error* {
      if (args == nullptr || !ZL_STRUCT_HAS_FIELD(args, zl_enumerate_args, devices)) {
        return make_error(ZL_ERROR_INVALID_ARGUMENT, "enumerate args are NULL or too small");
      }
      args->devices = nullptr;
      return deliver(S.enumerate(), &args->devices);
    });
  }
  static zl_error* enumerate_devices(zl_device_list** out) {
    return barrier("enumerate_devices", [&]() -> zl_error* {
      if (out == nullptr) return make_error(ZL_ERROR_INVALID_ARGUMENT, "out is NULL");
      *out = nullptr;
      return deliver(S.enumerate(), out);
    });
  }
  static zl_error* query_state(zl_device_state_args* args) {
    return barrier("query_device_state", [&]() -> zl_error* {
      if (args == nullptr || !ZL_STRUCT_HAS_FIELD(args, zl_device_state_args, state)) {
        return make_error(ZL_ERROR_INVALID_ARGUMENT, "device state args are NULL or too small");
      }
      args->state = nullptr;
      return deliver(S.state(args->index, args->id != nullptr ? args->id : ""), &args->state);
    });
  }
  static zl_error* initialize(zl_initialize_args*) {
    return barrier("initialize", [&]() -> zl_error* {
      const std::string why = S.initialize();
      return why.empty() ? nullptr : make_error(ZL_ERROR_UNAVAILABLE, one_line(why));
    });
  }
  static zl_error* shutdown(zl_shutdown_args*) {
    return barrier("shutdown", [&]() -> zl_error* {
      S.shutdown();
      return nullptr;
    });
  }
  static void destroy_list(zl_device_list* list) { zl_kit_device_list_free(list); }
  static void destroy_error(zl_error* error) { zl_kit_error_free(error); }
  static void destroy_state(zl_device_state* state) { zl_kit_device_state_free(state); }

  static const zl_backend_api* get() {
    static const zl_backend_api api = {
        ZL_BACKEND_API_STRUCT_SIZE,
        ZL_BACKEND_ABI_MAJOR,
        ZL_BACKEND_ABI_MINOR,
        S.name,
        S.aliases,
        S.visibility_env,
        S.capabilities,
        S.capability_count,
        S.torch_device,
        S.framework_vendor,
        enumerate_devices,
        destroy_list,
        destroy_error,
        S.version,
        nullptr,  // extension_start: nothing beyond the header yet
        S.initialize != nullptr ? initialize : nullptr,
        S.shutdown != nullptr ? shutdown : nullptr,
        enumerate,
        S.state != nullptr ? query_state : nullptr,
        destroy_state,
    };
    return &api;
  }
};

}  // namespace zl_kit

// The one exported symbol, for a backend described by `spec` (a BackendSpec
// with static storage). Use once, at namespace scope, outside any namespace.
#define ZL_KIT_BACKEND_ENTRY(spec)                                                            \
  extern "C" ZL_BACKEND_EXPORT const zl_backend_api* zl_backend_get_api(uint32_t, uint32_t) { \
    return ::zl_kit::Table<spec>::get();                                                      \
  }
