// Name and alias lookup over the loaded backends, case-insensitive.
#pragma once

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
  // Throws UsageError naming what is loaded when nothing matches, or when
  // `name_or_alias` is empty (`what` names the input, e.g. "--backend").
  const Backend& select(const std::string& name_or_alias, const std::string& what) const;

 private:
  LoadReport report_;
};

}  // namespace zl
