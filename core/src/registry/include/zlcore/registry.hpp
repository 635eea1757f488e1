// Name and alias lookup over the loaded backends, case-insensitive.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "zlcore/backend.hpp"
#include "zlcore/loader.hpp"

namespace zl {

class Registry {
 public:
  // Takes the loader's backends; one whose name or alias is already taken by
  // an earlier file is moved to `report.rejected` with the reason.
  explicit Registry(LoadReport report);

  const std::vector<Backend>& backends() const { return report_.backends; }
  const std::vector<Rejected>& rejected() const { return report_.rejected; }

  // nullptr when nothing matches.
  const Backend* find(const std::string& name_or_alias) const;
  // The rejected file `name_or_alias` means, case-insensitively: one whose
  // name or alias was refused here (it shadowed or repeated another's), or
  // one named for it (X.so, zl_backend_X.so, libzl_backend_X.so): a file the
  // loader rejected before its table was read has no other name. nullptr
  // when none is.
  const Rejected* rejected_as(const std::string& name_or_alias) const;
  // Throws UsageError naming what is loaded when nothing matches, or when
  // `name_or_alias` is empty (`what` names the input, e.g. "--backend");
  // when a rejected file is the one meant, the line gives its path and the
  // loader's reason, as `zlcore backends` lists them.
  const Backend& select(const std::string& name_or_alias, const std::string& what) const;

 private:
  LoadReport report_;
  std::map<std::string, size_t> rejected_names_;  // lower-case name or alias -> its index in report_.rejected
};

}  // namespace zl
