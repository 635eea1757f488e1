// `zlcore compare A B`: the A/B table with its caliber check (docs/compare.md).
#include <iostream>
#include <sstream>

#include "command.hpp"
#include "zlcore/atomic_file.hpp"
#include "zlcore/compare.hpp"
#include "zlcore/errors.hpp"

namespace zl::cli {
namespace {

void write_format(std::ostream& out, const std::string& format, const compare::Report& r) {
  if (format == "table") return compare::write_table(out, r);
  if (format == "md") return compare::write_markdown(out, r);
  if (format == "csv") return compare::write_csv(out, r);
  compare::write_json(out, r);
}

// Through a temporary file and a rename, like every file zlcore writes: a
// reader never sees half a page, and a link planted at the temporary's name
// is never followed.
void write_html_file(const std::string& path, const compare::Report& r) {
  std::ostringstream page;
  compare::write_html(page, r);
  try {
    write_file_atomic(path, page.str());
  } catch (const std::exception& e) {
    throw UsageError("compare: cannot write --html " + path + " (" + e.what() + ")");
  }
}

}  // namespace

int cmd_compare(Context&, const std::vector<std::string>& args) {
  po::options_description desc(
      "compare A B: A and B are run directories or batch directories; speedup = A ms / B ms (FlagGems side), "
      "FASTER means B is faster");
  desc.add_options()("threshold", po::value<double>()->default_value(2.0), "verdict threshold in percent")(
      "strict", "exit 3 when the caliber differs anywhere not named by --expect-diff")(
      "expect-diff", po::value<std::vector<std::string>>()->composing(),
      "a caliber key the A/B is about (e.g. env.MY_SWITCH, MY_SWITCH, versions.*); repeatable")(
      "fail-on-regression", "exit 1 when any row is SLOWER (confirmed by repeats, past the threshold)")(
      "format", po::value<std::string>()->default_value("table"), "table, md, csv or json")(
      "html", po::value<std::string>(), "also write a self-contained HTML page to this file")(
      "sides", po::value<std::vector<std::string>>(), "A and B (positional)");
  add_help(desc);
  po::positional_options_description pos;
  pos.add("sides", 2);
  po::variables_map vm;
  if (!parse("compare", desc, args, vm, &pos)) return kExitOk;

  const std::vector<std::string> sides = vm.count("sides") ? vm["sides"].as<std::vector<std::string>>() : std::vector<std::string>{};
  if (sides.size() != 2) throw UsageError("compare: needs two directories, A and B (see 'zlcore compare --help')");
  compare::Options opt;
  const double threshold_pct = vm["threshold"].as<double>();
  if (!(threshold_pct >= 0 && threshold_pct < 100)) throw UsageError("compare: --threshold is a percentage in [0, 100)");
  opt.threshold = threshold_pct / 100.0;
  if (vm.count("expect-diff")) opt.expect_diff = vm["expect-diff"].as<std::vector<std::string>>();
  const std::string format = vm["format"].as<std::string>();
  if (format != "table" && format != "md" && format != "csv" && format != "json") {
    throw UsageError("compare: --format must be table, md, csv or json, not '" + format + "'");
  }

  const compare::Report report = compare::compare(compare::load_side("A", sides[0]), compare::load_side("B", sides[1]), opt);
  write_format(std::cout, format, report);
  if (vm.count("html")) write_html_file(vm["html"].as<std::string>(), report);
  std::cout.flush();

  // A caliber mismatch makes every speedup suspect, so it outranks a regression.
  if (vm.count("strict") && (report.caliber.unexpected() > 0 || report.caliber.pairs == 0)) {
    std::cerr << "CALIBER_MISMATCH: " << report.caliber.unexpected()
              << " caliber difference(s) not named by --expect-diff (--strict)\n";
    return kExitCaliber;
  }
  if (vm.count("fail-on-regression") && report.regression()) {
    std::cerr << "REGRESSION: " << report.counts.at(compare::Verdict::Slower) << " row(s) SLOWER beyond "
              << threshold_pct << " %\n";
    return kExitFailed;
  }
  return kExitOk;
}

}  // namespace zl::cli
