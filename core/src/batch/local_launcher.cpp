// The local launcher: the whole batch on this host, over the devices the
// command line chose (still there now). BatchRun (batch_run.hpp) owns the
// batch directory (ops_status.csv, runs/, logs/, batch.log,
// batch_identity.json), works out what --resume still has to do, runs the
// optional warm-up pass and the timed pass through the work queue, and
// prints the summary.
#include <algorithm>

#include "batch_run.hpp"
#include "zlcore/errors.hpp"
#include "zlcore/signals.hpp"

namespace zl::batch {
namespace {

class LocalLauncher : public Launcher {
 public:
  const char* name() const override { return "local"; }

  int launch(const BatchOptions& o, const Backend& backend) override {
    signals::install();
    DeviceQuery q = backend.enumerate();
    if (q.devices.empty()) {
      throw PreflightError(
          "device", "backend '" + backend.name() + "' reports no devices: " + (q.reason.empty() ? q.error : q.reason));
    }
    std::vector<Device> devices;
    for (int index : o.device_indices) {
      auto it = std::find_if(q.devices.begin(), q.devices.end(), [&](const Device& d) { return d.index == index; });
      if (it == q.devices.end()) throw UsageError("device " + std::to_string(index) + " is gone");
      devices.push_back(*it);
    }
    BatchRun run(o, backend, devices);
    return run.execute();
  }
};

}  // namespace

std::unique_ptr<Launcher> make_local_launcher() { return std::make_unique<LocalLauncher>(); }

}  // namespace zl::batch
