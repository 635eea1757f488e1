#include "zltest/suites.hpp"

#include <sstream>

#include "zltest/files.hpp"

namespace zltest {

namespace {

// pytest.ini's pythonpath line with an entry outside the suite at `src` made
// absolute; every other line as it was.
std::string with_outside_paths_absolute(const std::string& ini, const fs::path& src) {
  const std::string key = "pythonpath = ";
  std::istringstream in(ini);
  std::string out, line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) == 0) {
      const fs::path target = fs::weakly_canonical(src / line.substr(key.size()));
      const std::string rel = target.lexically_relative(fs::weakly_canonical(src)).string();
      if (rel.empty() || rel.rfind("..", 0) == 0) line = key + target.string();
    }
    out += line + "\n";
  }
  return out;
}

}  // namespace

fs::path suite_with_op(const fs::path& src, const fs::path& dest, const std::string& op, const std::string& test_source,
                       const std::string& description) {
  fs::copy(src, dest, fs::copy_options::recursive);
  const std::string ini = with_outside_paths_absolute(slurp(dest / "pytest.ini"), src);
  spit(dest / "pytest.ini", ini + "    " + op + ": operator " + (description.empty() ? op : description) + "\n");
  spit(dest / "benchmark" / ("test_" + op + ".py"), test_source);
  return dest;
}

}  // namespace zltest
