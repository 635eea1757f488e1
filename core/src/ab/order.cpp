#include "zlcore/ab.hpp"

namespace zl::ab {

std::vector<std::string> round_order(int round, bool calibrate) {
  const bool a_first = round % 2 == 1;
  if (calibrate) return a_first ? std::vector<std::string>{"A", "B", "A2"} : std::vector<std::string>{"A2", "B", "A"};
  return a_first ? std::vector<std::string>{"A", "B"} : std::vector<std::string>{"B", "A"};
}

}  // namespace zl::ab
