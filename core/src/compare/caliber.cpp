// The caliber check: every identity field that changes a number, compared
// run pair by run pair, so that a difference in one operator of a batch is
// named with that operator instead of being averaged away.
#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "../util/text.hpp"
#include "zlcore/compare.hpp"
#include "zlcore/identity_schema.hpp"

namespace zl::compare {
namespace {

// Variables of the identity's env that are run's plumbing, kept there (the
// overhead bench rebuilds the child's environment from it) but not compared:
// how run reaches the device's state server names the device's id, and that
// id is not compared (another device of the same model measures alike; its
// name and attributes are).
const std::set<std::string> kRunPlumbing = {"ZL_DEVICE_STATE_ID", "ZL_DEVICE_STATE_ARGV"};

// An env knob that is absent is unset; any other absent or empty field
// (an empty fallback_shapes list, a field an older identity lacks) is none.
std::string shown(const std::string& v) { return v.empty() ? "(none)" : v; }
std::string shown_env(const std::string& v) { return v.empty() ? "(unset)" : v; }

struct Pair {
  const RunInfo* a;
  const RunInfo* b;
};

// Two single runs pair with each other whatever their op; batches pair by op.
std::vector<Pair> pair_runs(const Side& a, const Side& b, std::vector<std::string>& notes) {
  std::vector<Pair> pairs;
  if (a.runs.size() == 1 && b.runs.size() == 1) {
    pairs.push_back({&a.runs[0], &b.runs[0]});
    return pairs;
  }
  for (const RunInfo& ra : a.runs) {
    auto it = std::find_if(b.runs.begin(), b.runs.end(), [&](const RunInfo& rb) { return rb.op == ra.op; });
    if (it == b.runs.end()) {
      notes.push_back("op " + ra.op + " ran on A only");
    } else {
      pairs.push_back({&ra, &*it});
    }
  }
  for (const RunInfo& rb : b.runs) {
    bool paired = std::any_of(a.runs.begin(), a.runs.end(), [&](const RunInfo& ra) { return ra.op == rb.op; });
    if (!paired) notes.push_back("op " + rb.op + " ran on B only");
  }
  return pairs;
}

struct Pairing {
  std::string name;
  bool fair = false;
  std::string a, b;  // each side's mode as listed in a difference
};

// Both runs say which winners they used: the same winners are the same
// kernel configurations, whichever mode chose them (two tunes that agree, a
// replay of a record, an op that tunes nothing); different ones are named
// kernel by kernel.
Pairing winners_pairing(const RunInfo& a, const RunInfo& b, const std::string& ma, const std::string& mb) {
  const size_t n = a.autotune_winners.size();
  if (a.autotune_winners_hash == b.autotune_winners_hash) {
    return {ma + "/" + mb + ": same winners (" + std::to_string(n) + " kernel" + (n == 1 ? "" : "s") + ")", true, ma,
            mb};
  }
  std::vector<std::string> differ;
  for (const auto& [kernel, sha] : a.autotune_winners) {
    auto it = b.autotune_winners.find(kernel);
    differ.push_back(kernel + (it == b.autotune_winners.end() ? " (A only)" : it->second != sha ? "" : " (same)"));
  }
  for (const auto& [kernel, sha] : b.autotune_winners) {
    if (!a.autotune_winners.count(kernel)) differ.push_back(kernel + " (B only)");
  }
  differ.erase(
      std::remove_if(differ.begin(), differ.end(),
                     [](const std::string& k) { return k.size() > 7 && k.compare(k.size() - 7, 7, " (same)") == 0; }),
      differ.end());
  const std::string kernels = differ.empty() ? "the same kernels" : text::join(differ);
  return {ma + "/" + mb + ": different winners in " + kernels, false,
          ma + ", winners " + a.autotune_winners_hash.substr(0, 12),
          mb + ", winners " + b.autotune_winners_hash.substr(0, 12)};
}

// Record on A and replay of exactly that record on B pins both sides to the
// same kernel configurations, so what remains is codegen. Two replays of one
// record are as good. Anything else lets tuning luck into the numbers.
// Runs that say which winners they used are judged by those instead.
Pairing autotune_pairing(const RunInfo& a, const RunInfo& b) {
  const std::string ma = a.autotune_mode.empty() ? "unknown" : a.autotune_mode;
  const std::string mb = b.autotune_mode.empty() ? "unknown" : b.autotune_mode;
  if (!a.autotune_winners_hash.empty() && !b.autotune_winners_hash.empty()) return winners_pairing(a, b, ma, mb);
  Pairing p{ma + "/" + mb, false, ma, mb};
  if (mb == "replay") {
    const bool of_a = !b.autotune_source.empty() && b.autotune_source == a.run_id;
    p.b = of_a ? "replay of A" : "replay of another run";
    // The records may have been edited since A wrote them: then B replays
    // something A never ran, whatever the run id says.
    const bool same_records = a.autotune_records_hash.empty() || b.autotune_records_hash.empty() ||
                              a.autotune_records_hash == b.autotune_records_hash;
    if (ma == "record" && of_a && !same_records) {
      return {"record/replay of changed records: B's records hash differs from A's", false, ma,
              "replay of changed records"};
    }
    if (ma == "record" && of_a) return {"record/replay (fair)", true, ma, p.b};
    if (ma == "replay" && !a.autotune_source.empty() && a.autotune_source == b.autotune_source) {
      return {"replay/replay of one record (fair)", true, "replay", "replay of the same record"};
    }
    if (ma == "record") p.name = "record/replay of another run: B's winners are not A's";
    if (ma == "replay") p.name = "replay/replay of different records";
  }
  if (ma == "replay" && mb != "replay") p.name = ma + "/" + mb + ": only A's winners are pinned";
  if (ma == "tune" && mb == "tune") p.name = "tune/tune: each side tuned itself, winners may differ";
  if (ma == "record" && mb == "tune") p.name = "record/tune: B tuned itself instead of replaying A";
  return p;
}

// The first entries that only one side has, so the cell's counts can be
// traced to shapes.
std::string fallback_detail(const RunInfo& a, const RunInfo& b) {
  constexpr size_t kShown = 2;
  std::vector<std::string> parts;
  for (const auto& [side, mine, theirs] : {std::tuple<const char*, const RunInfo*, const RunInfo*>{"A", &a, &b},
                                           std::tuple<const char*, const RunInfo*, const RunInfo*>{"B", &b, &a}}) {
    size_t only = 0;
    std::string shown_entries;
    for (const FallbackShape& f : mine->fallback_shapes) {
      if (theirs->fallback_shapes.count(f)) continue;
      if (only++ < kShown) {
        shown_entries += (shown_entries.empty() ? "" : ", ") + (f.dtype.empty() ? "" : f.dtype + " ") + f.shape +
                         (f.side.empty() ? "" : " " + f.side);
      }
    }
    if (only == 0) continue;
    parts.push_back(std::to_string(only) + " only on " + side + ": " + shown_entries + (only > kShown ? ", ..." : ""));
  }
  return text::join(parts, "; ");
}

// Differences in the order first seen, each (key, A's value, B's value)
// once with the ops that show it. Indexed: an identity may carry 10^5
// environment keys, and a scan per key made compare quadratic in them.
class Differences {
 public:
  void add(const std::string& key, const std::string& a, const std::string& b, const std::string& op,
           const std::string& detail = "") {
    const auto [at, fresh] = index_.try_emplace(std::make_tuple(key, a, b), list_.size());
    if (fresh) {
      list_.push_back({key, a, b, detail, {op}, false});
      ops_.push_back({op});
    } else if (ops_[at->second].insert(op).second) {
      list_[at->second].ops.push_back(op);
    }
  }
  std::vector<Difference>& list() { return list_; }

 private:
  std::vector<Difference> list_;
  std::map<std::tuple<std::string, std::string, std::string>, size_t> index_;
  std::vector<std::set<std::string>> ops_;
};

}  // namespace

// Identity paths whose change moves a number: the schema's caliber fields.
const std::vector<std::string>& caliber_keys() { return identity::caliber_paths(); }

bool expected_by(const std::string& key, const std::vector<std::string>& patterns) {
  for (const std::string& p : patterns) {
    if (key == p || key == "env." + p) return true;
    if (p.size() >= 2 && p.compare(p.size() - 2, 2, ".*") == 0 && key.rfind(p.substr(0, p.size() - 1), 0) == 0) {
      return true;
    }
  }
  return false;
}

size_t Caliber::unexpected() const {
  return static_cast<size_t>(
      std::count_if(differences.begin(), differences.end(), [](const Difference& d) { return !d.expected; }));
}

Caliber check_caliber(const Side& a, const Side& b, const std::vector<std::string>& expect_diff) {
  Caliber c;
  const std::vector<Pair> pairs = pair_runs(a, b, c.notes);
  c.pairs = pairs.size();

  Differences keyed, env, autotune;
  std::vector<std::string> pairing_names;
  c.autotune_fair = !pairs.empty();
  for (const Pair& p : pairs) {
    const std::string& op = p.a->op;
    // With the winners themselves compared, how many were inherited from a
    // shared cache no longer matters: the same winners measure the same.
    const bool winners_known = !p.a->autotune_winners_hash.empty() && !p.b->autotune_winners_hash.empty();
    for (const std::string& key : caliber_keys()) {
      if (key == "timer.fallback_shapes") {
        if (p.a->fallback_shapes != p.b->fallback_shapes) {
          keyed.add(key, fallback_summary(p.a->fallback_shapes), fallback_summary(p.b->fallback_shapes), op,
                    fallback_detail(*p.a, *p.b));
        }
        continue;
      }
      if (key == "tuner_cache.inherited_winners" && winners_known) continue;
      const std::string& va = p.a->caliber.at(key);
      const std::string& vb = p.b->caliber.at(key);
      if (va != vb) keyed.add(key, shown(va), shown(vb), op);
    }
    std::map<std::string, std::pair<std::string, std::string>> knobs;
    for (const auto& [k, v] : p.a->env) knobs[k].first = v;
    for (const auto& [k, v] : p.b->env) knobs[k].second = v;
    for (const auto& [k, v] : knobs) {
      if (kRunPlumbing.count(k)) continue;
      if (v.first != v.second) env.add("env." + k, shown_env(v.first), shown_env(v.second), op);
    }
    Pairing at = autotune_pairing(*p.a, *p.b);
    if (std::find(pairing_names.begin(), pairing_names.end(), at.name) == pairing_names.end()) {
      pairing_names.push_back(at.name);
    }
    if (!at.fair) {
      c.autotune_fair = false;
      autotune.add("autotune", at.a, at.b, op, at.name);
    }
    if (!p.a->run_id.empty() && p.a->run_id == p.b->run_id)
      c.notes.push_back("A and B are the same run " + p.a->run_id);
  }
  for (const std::string& n : pairing_names) c.autotune_pairing += (c.autotune_pairing.empty() ? "" : "; ") + n;
  if (pairing_names.size() > 1) c.autotune_pairing = "mixed: " + c.autotune_pairing;

  std::sort(env.list().begin(), env.list().end(),
            [](const Difference& x, const Difference& y) { return x.key < y.key; });
  for (auto* part : {&keyed, &autotune, &env})
    c.differences.insert(c.differences.end(), part->list().begin(), part->list().end());
  for (Difference& d : c.differences) d.expected = expected_by(d.key, expect_diff);
  for (const std::string& p : expect_diff) {
    bool used = std::any_of(c.differences.begin(), c.differences.end(),
                            [&](const Difference& d) { return expected_by(d.key, {p}); });
    if (!used) c.notes.push_back("--expect-diff " + p + ": the sides do not differ there");
  }
  for (const Side* s : {&a, &b}) {
    for (const RunInfo& r : s->runs) {
      if (r.status.empty() || r.status == "passed") continue;
      c.notes.push_back(s->label + ": " + r.dir + " status " + r.status);
      c.not_passed.push_back({s->label, r.op, r.dir, r.status, r.reason});
    }
  }
  return c;
}

}  // namespace zl::compare
