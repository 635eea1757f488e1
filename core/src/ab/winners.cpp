#include "runner_parts.hpp"

namespace zl::ab {

std::vector<std::string> winner_args(const Options& o, const std::string& label, int round, const std::string& record) {
  if (round == 0) return {"--isolate-tuner-cache", "1", "--autotune", "record"};
  const SideSpec& side = label == "B" ? o.b : o.a;
  // Into the side's own cache (side_env), where its warm worker runs the replay.
  if (!side.replay_from.empty()) return {"--replay-from", side.replay_from, "--replay-in-cache"};
  switch (o.winners) {
    case Winners::record: return {"--replay-from", record, "--replay-in-cache"};
    case Winners::given: return {"--replay-from", o.same_winners, "--replay-in-cache"};
    case Winners::own: break;
  }
  return {};
}

}  // namespace zl::ab
