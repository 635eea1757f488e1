// The A/B's report: compare's own outputs over the pooled sides, after a
// short section that says how the numbers were taken (rounds, order,
// devices, winners), which rounds failed, and, with --calibrate, the
// false-verdict rate the in-run A/A implies for this table.
#include <cmath>
#include <filesystem>
#include <iostream>
#include <set>
#include <sstream>

#include "../util/json.hpp"
#include "../util/printable.hpp"
#include "runner_parts.hpp"
#include "zlcore/atomic_file.hpp"
#include "zlcore/compare_calibrate.hpp"
#include "zlcore/errors.hpp"

namespace fs = std::filesystem;

namespace zl::ab {
namespace {

struct Settled {
  std::map<std::string, std::map<std::string, std::vector<std::string>>> runs;  // label -> op -> run dirs
  std::map<std::string, int> rounds_done;                                       // op -> measured rounds
  std::map<std::string, std::string> failed, unsupported;                       // op -> why
  size_t retried = 0;                                                           // rounds that failed once and ran again
};

Settled settle(const Options& o, const fs::path& dir, const std::vector<RoundLine>& lines) {
  Settled s;
  std::vector<std::string> labels = {"A", "B"};
  if (o.calibrate) labels.push_back("A2");
  std::map<std::pair<std::string, int>, std::set<int>> attempts;
  for (const RoundLine& l : lines) {
    if (l.side != "*") attempts[{l.op, l.round}].insert(l.attempt);
    if (l.side != "*") continue;
    if (l.status == "failed") s.failed[l.op] = "round " + std::to_string(l.round) + ": " + l.reason;
    if (l.status == "unsupported") s.unsupported[l.op] = l.reason;
    if (l.status != "done" || l.round == 0) continue;
    ++s.rounds_done[l.op];
    for (const std::string& label : labels) s.runs[label][l.op].push_back((dir / l.run_dir / label).string());
  }
  for (const auto& [key, tries] : attempts) s.retried += tries.size() - 1;
  // An op with neither a measured round nor a round that gave up on it was
  // lost from the record (a rounds.csv edited by hand): the A/B is not done
  // with it, whatever the other ops say.
  for (const batch::OpSpec& op : o.ops) {
    if (!s.rounds_done.count(op.name) && !s.failed.count(op.name) && !s.unsupported.count(op.name)) {
      s.failed[op.name] = "no measured round in rounds.csv";
    }
  }
  return s;
}

std::string pct(double f) {
  std::ostringstream s;
  s.precision(2);
  s << std::fixed << f * 100 << " %";
  return s.str();
}

const char* winners_text(Winners w) {
  switch (w) {
    case Winners::record:
      return "side A recorded its autotune winners once per op (round 0); every round of every side replayed them";
    case Winners::given: return "every round of every side replayed one record (--same-winners)";
    case Winners::own:
      return "each side tuned in its own tuner cache (--winners own), in warm workers; winners may differ";
  }
  return "";
}

// The section before compare's report, as markdown lines (the terminal gets
// the same lines without the list marks).
std::vector<std::string> preamble(const Options& o, const Settled& s, const compare::Report& r,
                                  const compare::Calibration* aa) {
  std::vector<std::string> out;
  out.push_back("rounds: " + std::to_string(o.rounds) +
                " per op; order: A then B in odd rounds, B then A in even ones (A B B A ...), so a steady drift of "
                "the machine lands on both sides" +
                (o.calibrate ? "; side A runs twice a round (A B A2, then A2 B A) for the A/A" : "") +
                (o.shards > 0 ? "; " + std::to_string(o.shards) +
                                    " Slurm shards, each a whole A/B over its ops on its own allocation"
                              : "; devices " + std::to_string(o.devices.size())));
  out.push_back("winners: " + std::string(winners_text(o.winners)));
  out.push_back(o.samples == Samples::rounds
                    ? "samples: one value per round and side (the mean of its placement medians); the verdict is "
                      "compare's (Mann-Whitney over the rounds, Hodges-Lehmann interval; 5 rounds a side at least)"
                    : "samples: every round's per-placement medians pooled per side (--samples placements); the "
                      "verdict is compare's (Mann-Whitney over the pooled values, Hodges-Lehmann interval)");
  for (const auto& [op, n] : s.rounds_done) {
    if (n < o.rounds)
      out.push_back("op " + printable(op) + ": " + std::to_string(n) + " of " + std::to_string(o.rounds) +
                    " rounds measured");
  }
  if (s.retried > 0)
    out.push_back(
        std::to_string(s.retried) +
        " round attempt(s) ran again on every side (a side failed, or an earlier invocation was interrupted)");
  // From rounds.csv, and from the suite's own failure reasons: escaped.
  for (const auto& [op, why] : s.failed) out.push_back("FAILED op " + printable(op) + ": " + printable(why));
  for (const auto& [op, why] : s.unsupported) out.push_back("unsupported op " + printable(op) + ": " + printable(why));
  if (aa != nullptr) {
    const compare::CalibrationRate& rate = aa->overall;
    size_t tested = 0;
    for (const auto& [v, n] : r.counts) {
      if (compare::tested(v)) tested += n;
    }
    out.push_back("A/A in this run (A against A2, the same rounds): " + std::to_string(rate.false_verdicts) +
                  " false verdict(s) of " + std::to_string(rate.tested) + " tested rows (" + pct(rate.rate()) +
                  "); at that rate about " + std::to_string(static_cast<long>(std::lround(rate.rate() * tested))) +
                  " of this report's " + std::to_string(tested) + " tested rows read FASTER or SLOWER by chance");
  }
  return out;
}

// What a side is, in words: its suite, its interpreter and the variables
// only it sets; a pooled side's directory line ("(batch, 2 runs)") says none of it.
std::string side_words(const SideSpec& side) {
  std::string s = "FlagGems at " + side.suite_root;
  if (!side.python.empty()) s += ", interpreter " + side.python;
  for (const auto& [k, v] : side.env) s += ", " + k + "=" + v;
  if (!side.replay_from.empty()) s += ", replaying " + side.replay_from;
  return s;
}

// The A/B's own page around compare's report: titled as the A/B it is,
// with how its numbers were taken under the answer.
compare::Page ab_page(const Options& o, const Settled& s, std::vector<std::string> about) {
  compare::Page page;
  const size_t ops = s.rounds_done.size() + s.failed.size() + s.unsupported.size();
  page.title = "zlcore ab: A/B of " + std::to_string(ops) + " op" + (ops == 1 ? "" : "s") + ", " +
               std::to_string(o.rounds) + " rounds a side";
  if (!o.calibrate) {
    about.push_back(
        "calibration: none in this A/B (--calibrate runs side A twice a round and states how many FASTER or "
        "SLOWER verdicts identical code gets)");
  }
  page.about = std::move(about);
  page.a = side_words(o.a);
  page.b = side_words(o.b);
  return page;
}

void write_to(const fs::path& path, const std::string& text) { write_file_atomic(path.string(), text); }

}  // namespace

int write_report(const Options& o, const std::string& ab_dir, const std::vector<RoundLine>& lines, std::ostream& out) {
  const fs::path dir(ab_dir);
  const Settled s = settle(o, dir, lines);
  auto side_of = [&](const std::string& label) {
    auto it = s.runs.find(label);
    static const std::map<std::string, std::vector<std::string>> none;
    return pool_side(label, ab_dir + " (" + label + ")", it == s.runs.end() ? none : it->second, o.samples);
  };
  // Rounds run in both sides' processes again and again, so the test over
  // them already sees how a process lands; the in-run spread bar is for
  // placements of one process each.
  compare::Options options = o.compare;
  options.process_guards = o.samples != Samples::rounds;
  const compare::Report report = compare::compare(side_of("A"), side_of("B"), options);
  std::unique_ptr<compare::Calibration> aa;
  if (o.calibrate) {
    std::vector<compare::Side> sides;
    sides.push_back(side_of("A"));
    sides.push_back(side_of("A2"));
    compare::Options plain = options;
    plain.expect_diff.clear();
    aa = std::make_unique<compare::Calibration>(compare::calibrate(std::move(sides), plain));
    std::ostringstream md, js;
    compare::write_calibration_markdown(md, *aa);
    compare::write_calibration_json(js, *aa);
    write_to(dir / "aa.md", md.str());
    write_to(dir / "aa.json", js.str());
  }
  const std::vector<std::string> pre = preamble(o, s, report, aa.get());

  const compare::Page page = ab_page(o, s, pre);

  std::ostringstream md, csv, js, html;
  compare::write_markdown(md, report, page);
  compare::write_csv(csv, report);
  compare::write_json(js, report);
  compare::write_html(html, report, page);
  write_to(dir / "report.md", md.str());
  write_to(dir / "report.csv", csv.str());
  write_to(dir / "report.json", js.str());
  write_to(dir / "report.html", html.str());

  rapidjson::Document d(rapidjson::kObjectType);
  auto& a = d.GetAllocator();
  d.AddMember("rounds", o.rounds, a);
  rapidjson::Value done(rapidjson::kObjectType);
  for (const auto& [op, n] : s.rounds_done) done.AddMember(json::str(op, a), rapidjson::Value(n), a);
  d.AddMember("rounds_measured", done, a);
  d.AddMember("rounds_retried", static_cast<uint64_t>(s.retried), a);
  d.AddMember("failed_ops", json::str_map(s.failed, a), a);
  d.AddMember("unsupported_ops", json::str_map(s.unsupported, a), a);
  rapidjson::Value counts(rapidjson::kObjectType);
  for (const auto& [v, n] : report.counts)
    counts.AddMember(json::str(compare::verdict_name(v), a), rapidjson::Value(static_cast<uint64_t>(n)), a);
  d.AddMember("verdicts", counts, a);
  if (aa) {
    rapidjson::Value x(rapidjson::kObjectType);
    x.AddMember("tested", static_cast<uint64_t>(aa->overall.tested), a);
    x.AddMember("false_verdicts", static_cast<uint64_t>(aa->overall.false_verdicts), a);
    x.AddMember("rate", aa->overall.rate(), a);
    d.AddMember("aa", x, a);
  }
  d.AddMember("regression", report.regression(), a);
  write_to(dir / "ab_summary.json", json::pretty(d));

  compare::write_table(out, report, page);
  out << "report: " << (dir / "report.md").string() << " (also .csv, .json, .html)" << (aa ? ", A/A: aa.md" : "")
      << "\n"
      << std::flush;

  if (!s.failed.empty()) {
    std::cerr << "AB_FAILED: " << s.failed.size() << " op(s) failed a round; the FAILED lines say why\n";
    return kExitFailed;
  }
  const std::string nothing = compare::nothing_in_common(report);
  if (!nothing.empty()) {
    std::cerr << "NOTHING_COMPARED: " << nothing << "\n";
    return kExitNothingCompared;
  }
  if (o.fail_on_regression && report.regression()) {
    std::cerr << "REGRESSION: " << report.counts.at(compare::Verdict::Slower) << " row(s) SLOWER beyond their bar\n";
    return kExitFailed;
  }
  return kExitOk;
}

}  // namespace zl::ab
