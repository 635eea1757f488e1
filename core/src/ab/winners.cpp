#include "runner_parts.hpp"

namespace zl::ab {

std::vector<std::string> winner_args(const Options& o, const std::string& label, int round, const std::string& record) {
  if (round == 0) return {"--isolate-tuner-cache", "1", "--autotune", "record"};
  const SideSpec& side = label == "B" ? o.b : o.a;
  std::vector<std::string> args;
  if (!side.replay_from.empty()) {
    args = {"--replay-from", side.replay_from};
  } else if (o.winners == Winners::record) {
    args = {"--replay-from", record};
  } else if (o.winners == Winners::given) {
    args = {"--replay-from", o.same_winners};
  } else {
    return {};
  }
  // Warm: into the side's own cache (side_env), where its worker runs it.
  if (warm_sides(o)) args.push_back("--replay-in-cache");
  return args;
}

}  // namespace zl::ab
