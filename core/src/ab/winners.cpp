#include "runner_parts.hpp"

namespace zl::ab {

std::vector<std::string> winner_args(const Options& o, const std::string& label, int round, const std::string& record) {
  if (round == 0) return {"--isolate-tuner-cache", "1", "--autotune", "record"};
  const SideSpec& side = label == "B" ? o.b : o.a;
  if (!side.replay_from.empty()) return {"--replay-from", side.replay_from};
  switch (o.winners) {
    case Winners::record: return {"--replay-from", record};
    case Winners::given: return {"--replay-from", o.same_winners};
    case Winners::own: break;
  }
  return {};
}

}  // namespace zl::ab
