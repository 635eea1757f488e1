// `zlcore compare A B`: the A/B table with its caliber check; `zlcore compare
// --calibrate A1 A2 ...`: the false-verdict rate and noise floor of runs of
// the same code (docs/compare.md).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include "command.hpp"
#include "zlcore/atomic_file.hpp"
#include "zlcore/compare.hpp"
#include "zlcore/compare_calibrate.hpp"
#include "zlcore/errors.hpp"

namespace zl::cli {
namespace {

void write_format(std::ostream& out, const std::string& format, const compare::Report& r) {
  if (format == "table") return compare::write_table(out, r);
  if (format == "md") return compare::write_markdown(out, r);
  if (format == "csv") return compare::write_csv(out, r);
  compare::write_json(out, r);
}

void write_calibration(std::ostream& out, const std::string& format, const compare::Calibration& c) {
  if (format == "table") return compare::write_calibration_table(out, c);
  if (format == "md") return compare::write_calibration_markdown(out, c);
  if (format == "csv") return compare::write_calibration_csv(out, c);
  compare::write_calibration_json(out, c);
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

// Checked before any run is read, so a typo costs nothing and leaves nothing.
// `flag` names the option as the user gave it ("compare --calibrate: --out").
void check_out_path(const std::string& path, const std::string& flag) {
  namespace fs = std::filesystem;
  const fs::path p(path);
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  // A path the system cannot resolve (a link loop): one line, not an
  // exception from the first question asked of it.
  std::error_code bad;
  (void)fs::status(p, bad);
  if (bad && bad != std::errc::no_such_file_or_directory) {
    throw UsageError(flag + " " + path + " cannot be used: " + bad.message());
  }
  if (fs::is_directory(p)) throw UsageError(flag + " " + path + " is a directory; name a file");
  if (!fs::is_directory(dir)) throw UsageError(flag + " " + path + ": directory " + dir.string() + " does not exist");
}

int run_calibrate(const po::variables_map& vm, const std::vector<std::string>& inputs, const compare::Options& opt,
                  const std::string& format) {
  if (inputs.size() < 2) {
    throw UsageError("compare --calibrate: needs at least two runs or batch directories of the same code, got " +
                     std::to_string(inputs.size()));
  }
  if (vm.count("html")) throw UsageError("compare --calibrate: --html is for an A/B report; use --format md or json");
  if (vm.count("fail-on-regression")) {
    throw UsageError("compare --calibrate: --fail-on-regression has no regression to fail on in runs of the same code");
  }
  std::set<std::string> seen;
  for (std::string in : inputs) {
    while (in.size() > 1 && in.back() == '/') in.pop_back();
    if (!seen.insert(std::filesystem::weakly_canonical(in).string()).second) {
      throw UsageError("compare --calibrate: " + in + " is given twice; each input must be a separate run");
    }
  }
  const std::string out_path = vm.count("out") ? vm["out"].as<std::string>() : "";
  if (!out_path.empty()) check_out_path(out_path, "compare --calibrate: --out");

  std::vector<compare::Side> sides;
  for (size_t i = 0; i < inputs.size(); ++i)
    sides.push_back(compare::load_side("A" + std::to_string(i + 1), inputs[i]));
  const compare::Calibration cal = compare::calibrate(std::move(sides), opt);
  // The file first: if it cannot be written the command fails before
  // printing a report that would suggest it was.
  if (!out_path.empty()) {
    std::ostringstream text;
    compare::write_calibration_json(text, cal);
    try {
      write_file_atomic(out_path, text.str());
    } catch (const std::exception& e) {
      throw UsageError(std::string("compare --calibrate: --out: ") + e.what());
    }
  }
  write_calibration(std::cout, format, cal);
  std::cout.flush();
  if (vm.count("strict") && cal.caliber_unexpected() > 0) {
    std::cerr << "CALIBER_MISMATCH: " << cal.caliber_unexpected()
              << " caliber difference(s) between calibration runs not named by --expect-diff (--strict)\n";
    return kExitCaliber;
  }
  return kExitOk;
}

}  // namespace

int cmd_compare(Context&, const std::vector<std::string>& args) {
  po::options_description desc(
      "compare A B: A and B are run directories or batch directories; speedup = A ms / B ms (FlagGems side), "
      "FASTER means B is faster\n"
      "compare --calibrate A1 A2 [A3 ...]: runs of the same code; false-verdict rate and noise floor per row");
  desc.add_options()("threshold", po::value<double>()->default_value(2.0), "verdict threshold in percent")(
      "strict", "exit 3 when the caliber differs anywhere not named by --expect-diff")(
      "expect-diff", po::value<std::vector<std::string>>()->composing(),
      "a caliber key the A/B is about (e.g. env.MY_SWITCH, MY_SWITCH, versions.*); repeatable")(
      "fail-on-regression", "exit 1 when any row is SLOWER (confirmed by the test, past the bar)")(
      "format", po::value<std::string>()->default_value("table"), "table, md, csv or json")(
      "html", po::value<std::string>(), "also write a self-contained HTML page to this file")(
      "noise-floor", po::value<std::string>(),
      "a file from --calibrate --out: widen each known row's bar to its noise floor")(
      "calibrate", "the inputs are runs of the same code: report false verdicts and noise floors")(
      "out", po::value<std::string>(), "with --calibrate: write the noise-floor file (JSON) here");
  add_help(desc);
  po::options_description operands;
  operands.add_options()("sides", po::value<std::vector<std::string>>(), "");
  po::positional_options_description pos;
  pos.add("sides", -1);
  po::variables_map vm;
  if (!parse("compare", desc, args, vm, &pos, &operands)) return kExitOk;

  const std::vector<std::string> sides =
      vm.count("sides") ? vm["sides"].as<std::vector<std::string>>() : std::vector<std::string>{};
  const bool calibrating = vm.count("calibrate") > 0;
  if (!calibrating && sides.size() != 2) {
    throw UsageError("compare: needs two directories, A and B (see 'zlcore compare --help')");
  }
  if (!calibrating && vm.count("out")) {
    throw UsageError(
        "compare: --out is for --calibrate (the noise-floor file); an A/B report goes to stdout, a page to --html");
  }
  compare::Options opt;
  const double threshold_pct = vm["threshold"].as<double>();
  if (!(threshold_pct >= 0 && threshold_pct < 100))
    throw UsageError("compare: --threshold is a percentage in [0, 100)");
  opt.threshold = threshold_pct / 100.0;
  if (vm.count("expect-diff")) opt.expect_diff = vm["expect-diff"].as<std::vector<std::string>>();
  const std::string format = vm["format"].as<std::string>();
  if (format != "table" && format != "md" && format != "csv" && format != "json") {
    throw UsageError("compare: --format must be table, md, csv or json, not '" + format + "'");
  }
  if (vm.count("noise-floor")) {
    opt.noise_floor =
        std::make_shared<const compare::NoiseFloor>(compare::load_noise_floor(vm["noise-floor"].as<std::string>()));
  }
  if (calibrating) return run_calibrate(vm, sides, opt, format);
  // Before the report goes to stdout: a page that cannot be written fails
  // the command with nothing printed.
  if (vm.count("html")) check_out_path(vm["html"].as<std::string>(), "compare: --html");

  const compare::Report report =
      compare::compare(compare::load_side("A", sides[0]), compare::load_side("B", sides[1]), opt);
  // An empty table would pass a CI gate (--fail-on-regression) silently.
  const std::string nothing = compare::nothing_in_common(report);
  if (!nothing.empty()) {
    std::cerr << "NOTHING_COMPARED: " << nothing << "\n";
    return kExitNothingCompared;
  }
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
    std::cerr << "REGRESSION: " << report.counts.at(compare::Verdict::Slower)
              << " row(s) SLOWER beyond their bar (threshold " << threshold_pct << " %)\n";
    return kExitFailed;
  }
  return kExitOk;
}

}  // namespace zl::cli
