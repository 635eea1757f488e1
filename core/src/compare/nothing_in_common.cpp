// compare with no row in common says which keys kept the sides apart.
#include <set>

#include "../util/text.hpp"
#include "zlcore/compare.hpp"

namespace zl::compare {
namespace {

using Pick = std::string OneSided::*;

// The distinct values of `field` on one side, among the rows `keep` accepts.
template <typename Keep>
std::set<std::string> values(const Report& r, const std::string& side, Pick field, Keep keep) {
  std::set<std::string> out;
  for (const OneSided& row : r.one_sided) {
    if (row.side == side && keep(row)) out.insert(row.*field);
  }
  return out;
}

std::string listed(const std::set<std::string>& items) {
  return zl::text::join_some(std::vector<std::string>(items.begin(), items.end()), 4, ", ");
}

bool meet(const std::set<std::string>& a, const std::set<std::string>& b) {
  for (const std::string& x : a) {
    if (b.count(x)) return true;
  }
  return false;
}

}  // namespace

std::string nothing_in_common(const Report& r) {
  if (!r.rows.empty()) return "";
  const std::string head = r.a.path + " (A) and " + r.b.path + " (B) have no row in common: ";
  const auto all = [](const OneSided&) { return true; };
  const std::set<std::string> ops_a = values(r, "A", &OneSided::op, all), ops_b = values(r, "B", &OneSided::op, all);
  if (ops_a.empty() || ops_b.empty()) {
    return head + (ops_a.empty() ? "A" : "B") + " has no result rows (its run_identity.json and pytest.log say why)";
  }
  if (!meet(ops_a, ops_b)) {
    return head + "different ops (A: " + listed(ops_a) + "; B: " + listed(ops_b) + "); compare runs of the same ops";
  }
  std::set<std::string> common;
  for (const std::string& op : ops_a) {
    if (ops_b.count(op)) common.insert(op);
  }
  const auto shared = [&common](const OneSided& row) { return common.count(row.op) > 0; };
  const std::set<std::string> dt_a = values(r, "A", &OneSided::dtype, shared);
  const std::set<std::string> dt_b = values(r, "B", &OneSided::dtype, shared);
  if (!meet(dt_a, dt_b)) {
    return head + "different dtypes of " + listed(common) + " (A: " + listed(dt_a) + "; B: " + listed(dt_b) +
           "); run both with the same --dtypes";
  }
  return head + "different shapes of " + listed(common) + " (A: " + listed(values(r, "A", &OneSided::shape, shared)) +
         "; B: " + listed(values(r, "B", &OneSided::shape, shared)) +
         "); run both with the same --level and shape file";
}

}  // namespace zl::compare
