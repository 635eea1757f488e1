// Stage `resolve`: everything `zlcore run` decides before it writes anything,
// so a bad suite, op, shape file, Python or device costs no run directory.
#include <filesystem>

#include "../util/clock.hpp"
#include "../util/text.hpp"
#include "stages.hpp"
#include "zlcore/errors.hpp"
#include "zlcore/l2_policy.hpp"
#include "zlcore/paths.hpp"

namespace zl::run_stage {

namespace fs = std::filesystem;

// Throws PreflightError when the backend offers no device at all, UsageError
// (listing the valid ones) when the index is not among them.
Device pick_device(const Backend& backend, const VisibleDevices& visible, int index) {
  const DeviceQuery& devices = visible.query;
  if (devices.devices.empty()) {
    throw PreflightError("device", "backend '" + backend.name() + "' reports no devices: " + devices.reason);
  }
  if (index < 0) return devices.devices.front();
  std::vector<std::string> valid;
  for (const Device& d : devices.devices) {
    if (d.index == index) return d;
    valid.push_back(std::to_string(d.index));
  }
  throw UsageError("--device " + std::to_string(index) + " is not a " + backend.name() + " device" +
                   (visible.pins.empty() ? "" : " within " + visible.describe() + " (set in zlcore's environment)") +
                   "; valid: " + text::join(valid, ", "));
}

Resolved resolve(const Backend& backend, const RunOptions& opts) {
  Resolved r;
  // `started` and `seconds` share one origin, so started + seconds is when
  // the run ended (the batch checks that two ops never overlap on a device).
  r.started_at = utc_now_iso();
  // No suite given: the example suite installed with zlcore, so that a first
  // `zlcore run --backend host --op abs` works anywhere.
  r.embedded = opts.flaggems_dir.empty();
  const std::string suite_dir = r.embedded ? embedded_suite_dir() : opts.flaggems_dir;
  r.provider = FlagGemsProvider(fs::absolute(suite_dir).lexically_normal().string());
  const std::string& root = r.provider.root();
  if (!fs::is_directory(root)) {
    throw PreflightError("flaggems_dir", r.embedded ? "no FlagGems directory given (--flaggems-dir / FLAGGEMS_DIR) and "
                                                      "the embedded example suite is not at " +
                                                          root
                                                    : root + " is not a directory (--flaggems-dir / FLAGGEMS_DIR)");
  }
  // Before the op is looked up: in a directory laid out otherwise no file
  // marks it, and "no file marks 'abs'" would hide the real mistake.
  r.provider.check_layout(!opts.dtypes.empty(), opts.shape_mode == "file");
  r.target = r.provider.resolve(opts.target);
  RunOptions& o = r.options;
  o = opts;
  // No file given is preflight's to name (check=shape_file), not a path error.
  if (o.shape_mode == "file" && !o.shape_file.empty()) {
    o.shape_file = fs::absolute(o.shape_file).lexically_normal().string();
  }
  preflight(r.provider, r.target, o);
  r.python = choose_python(o.python, modules_for_device(backend.torch_device()));
  o.python = r.python.command;

  r.visible = visible_devices(backend);
  r.device = pick_device(backend, r.visible, o.device);
  if (auto l2 = o.knobs.find(kL2Knob); l2 != o.knobs.end()) {
    check_l2_device(l2->second, backend.name(), r.device, o.env_choices.count(kL2Knob) ? kL2Knob : "--l2");
  }
  // A pin already set is a choice the environment made: on record with the others.
  for (const auto& [var, value] : r.visible.pins) o.env_choices[var] = value;
  return r;
}

}  // namespace zl::run_stage
