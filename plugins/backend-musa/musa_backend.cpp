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
  if (zl_kit::ran_ok(js)) {
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
  if (!zl_kit::ran_ok(q)) {
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

// State from the same tool: what the enumeration reports for the device now.
zl_kit::State state(int32_t index, const std::string& id) { return zl_kit::state_from(enumerate(), index, id); }

const char* const kAliases[] = {"mthreads", "mt", nullptr};
const char* const kVisibility[] = {"MUSA_VISIBLE_DEVICES", nullptr};
const zl_capability kCapabilities[] = {
    {"device_events", "1"},
};

const zl_kit::BackendSpec kSpec = {
    "musa",  kAliases,   kVisibility,        kCapabilities, zl_kit::count_of(kCapabilities),
    "musa",  "mthreads", ZL_BACKEND_VERSION, enumerate,     state,
    nullptr, nullptr,
};

}  // namespace

ZL_KIT_BACKEND_ENTRY(kSpec)
