#include "rules.hpp"

namespace zl::conform {

const std::vector<Rule>& rules() {
  // The order a reader meets the ABI in: the file, the table, the devices,
  // then how the backend behaves in the process around them.
  static const std::vector<Rule> all{
      {"loads", "the loader's probe accepts the file (ELF, entry, ABI major, table, names, list, state)", nullptr},
      {"exports", "the entry point is the only symbol the file exports", nullptr},
      {"table-size", "the table's struct_size reaches the last entry of the minor it claims", table_size},
      {"entries", "required entries are set; NULL only where the ABI allows it", entries},
      {"strings", "every string of the table is non-empty, one line of printable UTF-8", strings},
      {"extensions", "the extension chain is well formed; unknown extensions passed in are skipped", extensions},
      {"lifecycle", "initialize and shutdown succeed, with an extension they do not know", lifecycle, true},
      {"devices", "enumerate succeeds and its list passes every check the core makes of it", devices},
      {"enumerate-idempotent", "enumerate called again reports the same devices", enumerate_idempotent},
      {"enumerate-entries-agree", "enumerate and enumerate_devices report the same devices", enumerate_entries_agree},
      {"visibility-ignored", "enumerate reports every device whatever the visibility variables say",
       visibility_ignored},
      {"device-state", "query_device_state answers for each device and refuses an id that names none", device_state},
      {"stdout-silent", "nothing is written on stdout, from load to shutdown", stdout_silent, true},
      {"no-threads-on-load", "loading the file and calling its entry starts no thread", no_threads_on_load},
  };
  return all;
}

const Rule* find_rule(const std::string& id) {
  for (const Rule& r : rules()) {
    if (id == r.id) return &r;
  }
  return nullptr;
}

}  // namespace zl::conform
