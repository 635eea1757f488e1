#include "command.hpp"

namespace zl::cli {

int cmd_backends(Context&, const std::vector<std::string>&);
int cmd_devices(Context&, const std::vector<std::string>&);
int cmd_plan(Context&, const std::vector<std::string>&);
int cmd_compare(Context&, const std::vector<std::string>&);
int cmd_batch(Context&, const std::vector<std::string>&);
int cmd_run(Context&, const std::vector<std::string>&);
int cmd_ops(Context&, const std::vector<std::string>&);

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"backends", "list loaded backends and rejected files", cmd_backends},
      {"devices", "list one backend's devices", cmd_devices},
      {"plan", "show the pytest plugins and timer derived from a backend's capabilities", cmd_plan},
      {"compare", "compare two runs or batches: caliber check, speedup and verdict per shape", cmd_compare},
      {"batch", "run many ops over the devices of this host; resumable ops_status.csv", cmd_batch},
      {"run", "run one operator end to end into a run directory", cmd_run},
      {"ops", "list the suite's operators (its pytest marks) and the files that mark them", cmd_ops},
  };
  return table;
}

}  // namespace zl::cli
