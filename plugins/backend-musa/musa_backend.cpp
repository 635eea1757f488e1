// Moore Threads GPUs through mthreads-gmi.
//
// MTML (libmtml.so) is not used: its public header is not available to this
// build, and declaring its device and memory structs by guesswork could
// corrupt memory inside the zlcore process. The tool's query form (JSON where
// the release has it, else `-q` text) is the surface we rely on.
//
// Environment (see docs/backends.md):
//   ZL_MUSA_GMI   mthreads-gmi to run instead of the one on PATH
#include <string>

#include "musa_parse.hpp"
#include "zl_kit/enumeration.hpp"
#include "zl_kit/tool.hpp"

namespace {

bool ran_ok(const zl_kit::ToolResult& r) { return r.started && !r.timed_out && r.term_signal == 0 && r.exit_code == 0; }

zl_kit::Enumeration enumerate() {
  zl_kit::Enumeration e;
  const std::string gmi = zl_kit::env_or("ZL_MUSA_GMI", "mthreads-gmi");
  std::string reason = "libmtml.so not used (tool only)";

  zl_kit::ToolResult js = zl_kit::run_tool({gmi, "-q", "--json"});
  if (!js.started) {
    e.reason = reason + "; " + zl_kit::describe_failure(gmi, js);
    return e;
  }
  std::string json_problem;
  if (ran_ok(js)) {
    zl_kit::ParseResult p = zl_musa::parse_gmi_json(js.out);
    if (p.ok() && !p.devices.empty()) {
      e.devices = std::move(p.devices);
      e.source = "tool";
      return e;
    }
    json_problem = p.ok() ? gmi + " -q --json listed no GPUs" : gmi + " -q --json not understood: " + p.error;
  } else {
    // Releases without --json reject the option; the text query follows.
    json_problem = zl_kit::describe_failure(gmi + " -q --json", js);
  }

  zl_kit::ToolResult q = zl_kit::run_tool({gmi, "-q"});
  if (!ran_ok(q)) {
    e.reason = reason + "; " + json_problem + "; " + zl_kit::describe_failure(gmi + " -q", q);
    return e;
  }
  zl_kit::ParseResult p = zl_musa::parse_gmi_query_text(q.out);
  if (!p.ok()) {
    e.reason = json_problem + "; " + gmi + " -q not understood: " + p.error;
    e.parse_failed = true;
    return e;
  }
  e.devices = std::move(p.devices);
  e.source = "tool";
  if (e.devices.empty()) e.reason = reason + "; " + gmi + " listed no GPUs";
  return e;
}

zl_error* enumerate_devices(zl_device_list** out) { return zl_kit::guarded_enumerate(out, enumerate); }
void destroy_list(zl_device_list* list) { zl_kit::destroy_device_list(list); }
void destroy_error(zl_error* error) { zl_kit::destroy_error(error); }

const char* const kAliases[] = {"mthreads", "mt", nullptr};
const char* const kVisibility[] = {"MUSA_VISIBLE_DEVICES", nullptr};
const zl_capability kCapabilities[] = {
    {"device_events", "1"},
};

const zl_backend_api kApi = {
    sizeof(zl_backend_api),
    ZL_BACKEND_ABI_MAJOR,
    ZL_BACKEND_ABI_MINOR,
    "musa",
    kAliases,
    kVisibility,
    kCapabilities,
    sizeof kCapabilities / sizeof kCapabilities[0],
    "musa",
    "mthreads",
    enumerate_devices,
    destroy_list,
    destroy_error,
    "musa 0.1.0",
};

}  // namespace

extern "C" ZL_BACKEND_EXPORT const zl_backend_api* zl_backend_get_api(uint32_t, uint32_t) { return &kApi; }
