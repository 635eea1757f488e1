// --launcher NAME -> a Launcher. Adding an engine is one factory and one line
// here; nothing else in the core learns its name.
#include "zlcore/batch.hpp"

namespace zl::batch {
namespace {

struct Entry {
  const char* name;
  std::unique_ptr<Launcher> (*make)();
};

const Entry kLaunchers[] = {
    {"local", make_local_launcher},
    {"slurm", make_slurm_launcher},
};

}  // namespace

std::unique_ptr<Launcher> make_launcher(const std::string& name) {
  for (const Entry& e : kLaunchers) {
    if (name == e.name) return e.make();
  }
  return nullptr;
}

std::vector<std::string> launcher_names() {
  std::vector<std::string> names;
  for (const Entry& e : kLaunchers) names.push_back(e.name);
  return names;
}

}  // namespace zl::batch
