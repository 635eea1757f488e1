#include "zlcore/registry.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>

#include "zlcore/errors.hpp"

namespace zl {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

Registry::Registry(LoadReport report) : report_(std::move(report)) {
  // First file (in sorted order) wins a name; later claimants are rejected
  // whole, so a lookup never depends on which of two plugins answered.
  std::map<std::string, std::string> owner;  // lower-case name -> path
  // A backend's own name is never another's alias, whichever file sorts
  // first: the backend whose alias would shadow it is the one rejected.
  struct Named {
    size_t index;
    std::string name, path;
  };
  std::map<std::string, Named> named;  // lower-case name -> its first backend
  for (size_t i = 0; i < report_.backends.size(); ++i) {
    const Backend& b = report_.backends[i];
    named.emplace(lower(b.name()), Named{i, b.name(), b.path()});
  }
  std::vector<Backend> kept;
  for (size_t i = 0; i < report_.backends.size(); ++i) {
    Backend& b = report_.backends[i];
    std::string shadow;
    for (const std::string& a : b.aliases()) {
      auto it = named.find(lower(a));
      if (it != named.end() && it->second.index != i && lower(it->second.name) != lower(b.name())) {
        shadow = "alias '" + a + "' is the name of backend '" + it->second.name + "' (" + it->second.path +
                 "); an alias may not shadow another backend's name";
        break;
      }
    }
    std::vector<std::string> names{lower(b.name())};
    for (const std::string& a : b.aliases()) names.push_back(lower(a));
    if (!shadow.empty()) {
      for (const std::string& n : names) rejected_names_.emplace(n, report_.rejected.size());
      report_.rejected.push_back({b.path(), shadow});
      continue;
    }
    std::string clash;
    for (const std::string& n : names) {
      auto it = owner.find(n);
      if (it != owner.end()) {
        clash = "name '" + n + "' is already taken by " + it->second;
        break;
      }
    }
    if (!clash.empty()) {
      for (const std::string& n : names) rejected_names_.emplace(n, report_.rejected.size());
      report_.rejected.push_back({b.path(), clash});
      continue;
    }
    for (const std::string& n : names) owner.emplace(n, b.path());
    kept.push_back(std::move(b));
  }
  report_.backends = std::move(kept);
}

const Backend* Registry::find(const std::string& name_or_alias) const {
  const std::string want = lower(name_or_alias);
  for (const Backend& b : report_.backends) {
    if (lower(b.name()) == want) return &b;
    for (const std::string& a : b.aliases()) {
      if (lower(a) == want) return &b;
    }
  }
  return nullptr;
}

const Rejected* Registry::rejected_as(const std::string& name_or_alias) const {
  const std::string want = lower(name_or_alias);
  if (auto it = rejected_names_.find(want); it != rejected_names_.end()) return &report_.rejected[it->second];
  for (const Rejected& r : report_.rejected) {
    const std::string stem = lower(std::filesystem::path(r.path).stem().string());
    for (const char* prefix : {"", "zl_backend_", "libzl_backend_"}) {
      if (stem == prefix + want) return &r;
    }
  }
  return nullptr;
}

const Backend& Registry::select(const std::string& name_or_alias, const std::string& what) const {
  std::string loaded;
  for (const Backend& b : report_.backends) {
    if (!loaded.empty()) loaded += ", ";
    loaded += b.name();
  }
  if (loaded.empty()) loaded = "none (check --backend-dir)";
  if (name_or_alias.empty()) {
    throw UsageError(what + " is required; loaded backends: " + loaded);
  }
  const Backend* b = find(name_or_alias);
  if (b == nullptr) {
    if (const Rejected* r = rejected_as(name_or_alias)) {
      throw UsageError("backend '" + name_or_alias + "' (" + what + ") was found but rejected: " + r->path + ": " +
                       r->reason + "; loaded backends: " + loaded);
    }
    throw UsageError("unknown backend '" + name_or_alias + "' (" + what + "); loaded backends: " + loaded);
  }
  return *b;
}

}  // namespace zl
