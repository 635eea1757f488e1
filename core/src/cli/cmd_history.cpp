// `zlcore history add DIR...` and `zlcore history report`: the performance
// record across runs (docs/history.md).
#include <cmath>
#include <filesystem>
#include <iostream>
#include <regex>
#include <sstream>

#include "command.hpp"
#include "zlcore/atomic_file.hpp"
#include "zlcore/compare.hpp"
#include "zlcore/errors.hpp"
#include "zlcore/history.hpp"

namespace zl::cli {
namespace {

constexpr const char* kDefaultDb = "runs/history.db";

std::string db_path(const po::variables_map& vm) { return flag_or_env(vm, "db", "ZL_HISTORY_DB", kDefaultDb); }

void add_db_option(po::options_description& desc) {
  desc.add_options()("db", po::value<std::string>(), "the history file (default runs/history.db)");
}

void add_report_options(po::options_description& desc) {
  desc.add_options()("since", po::value<std::string>()->default_value(""),
                     "only entries started on or after this ISO date")(
      "op", po::value<std::string>()->default_value(""), "only this op")(
      "format", po::value<std::string>()->default_value("md"), "md, json, csv or html")(
      "out", po::value<std::string>(), "write the report to this file (atomically) instead of stdout")(
      "threshold", po::value<double>()->default_value(3.0), "the smallest step reported, in percent")(
      "min-runs", po::value<int>()->default_value(3), "runs each side of a step must hold (at least 1)")(
      "noise-floor", po::value<std::string>(), "a file from compare --calibrate --out: the least noise per row")(
      "fail-on-new-regression", "exit 1 when a regression became visible with the latest run");
}

// `zlcore history --help`: both subcommands' options, as every command's help.
int print_history_help() {
  po::options_description both("history add DIR... and history report");
  add_db_option(both);
  po::options_description report("history report");
  add_report_options(report);
  both.add(report);
  add_help(both);
  print_help(std::cout, "history", both);
  return kExitOk;
}

int run_add(const std::vector<std::string>& args) {
  po::options_description desc("history add DIR...: import run, batch and ab directories into the history");
  add_db_option(desc);
  add_help(desc);
  po::options_description operands;
  operands.add_options()("dirs", po::value<std::vector<std::string>>(), "");
  po::positional_options_description pos;
  pos.add("dirs", -1);
  po::variables_map vm;
  if (!parse("history add", desc, args, vm, &pos, &operands)) return kExitOk;
  if (!vm.count("dirs")) throw UsageError("history add: needs at least one run, batch or ab directory");
  history::Store store(db_path(vm));
  int rc = kExitOk;
  for (const std::string& dir : vm["dirs"].as<std::vector<std::string>>()) {
    // A directory that cannot be read costs only itself: the others are added.
    try {
      const history::Entry e = history::read_entry(dir);
      for (const std::string& w : e.warnings) std::cerr << "history add: warning: " << w << "\n";
      const history::AddOutcome o = store.add(e);
      size_t rows = 0;
      for (const history::Run& r : e.runs) rows += r.rows.size();
      std::cout << history::outcome_name(o) << " " << e.kind << " " << e.path << " (" << e.runs.size() << " run(s), "
                << rows << " row(s), started " << e.started << ")\n";
    } catch (const UsageError& err) {
      std::cerr << "zlcore: " << err.what() << "\n";
      rc = kExitUsage;
    }
  }
  return rc;
}

std::map<std::string, double> noise_floor(const std::string& path) {
  std::map<std::string, double> out;
  for (const auto& [k, row] : compare::load_noise_floor(path).rows) {
    // The largest log ratio between two runs of the same code: two draws
    // apart, so one draw's noise is that over sqrt(2).
    out[std::get<0>(k) + "\t" + std::get<1>(k) + "\t" + std::get<2>(k)] = row.max_log_ratio / std::sqrt(2.0);
  }
  return out;
}

void write_report(std::ostream& out, const std::string& format, const history::Report& r) {
  if (format == "md") return history::write_markdown(out, r);
  if (format == "json") return history::write_json(out, r);
  if (format == "csv") return history::write_csv(out, r);
  history::write_html(out, r);
}

// YYYY-MM-DD, optionally THH:MM[:SS[.fff]][Z]: what entries' `started`
// holds, so that the string comparison that --since is means a time. A
// word ("yesterday") or a day that no month has would filter nothing or
// everything without a word.
bool iso_date(const std::string& t) {
  static const std::regex form(R"(^(\d{4})-(\d{2})-(\d{2})(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?Z?)?$)");
  std::smatch m;
  if (!std::regex_match(t, m, form)) return false;
  const int year = std::stoi(m[1]), month = std::stoi(m[2]), day = std::stoi(m[3]);
  if (month < 1 || month > 12 || day < 1) return false;
  static const int days[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return day <= (month == 2 && !leap ? 28 : days[month - 1]);
}

int run_report(const std::vector<std::string>& args) {
  po::options_description desc("history report: steps per (op, dtype, shape, side) series, and what changed");
  add_db_option(desc);
  add_report_options(desc);
  add_help(desc);
  po::variables_map vm;
  if (!parse("history report", desc, args, vm)) return kExitOk;
  const std::string format = vm["format"].as<std::string>();
  if (format != "md" && format != "json" && format != "csv" && format != "html")
    throw UsageError("history report: --format must be md, json, csv or html, not '" + format + "'");
  const double threshold = vm["threshold"].as<double>();
  if (!(threshold >= 0 && threshold < 100)) throw UsageError("history report: --threshold is a percentage in [0, 100)");
  const std::string db = db_path(vm);
  // Anything else that is not a history file the store itself refuses, for add as well.
  std::error_code ec;
  if (!std::filesystem::exists(db, ec))
    throw UsageError("history report: --db " + db + " does not exist; fill it with zlcore history add");
  history::DetectOptions opt;
  opt.threshold = threshold / 100;
  const int min_runs = vm["min-runs"].as<int>();
  if (min_runs < 1) throw UsageError("history report: --min-runs is a number of runs, at least 1");
  opt.min_runs = static_cast<size_t>(min_runs);
  if (vm.count("noise-floor")) opt.floor = noise_floor(vm["noise-floor"].as<std::string>());
  const std::string since = vm["since"].as<std::string>();
  if (!since.empty() && !iso_date(since)) {
    throw UsageError("history report: --since '" + since +
                     "' is not a date; give an ISO 8601 date, 2026-12-07 or 2026-12-07T14:00:00Z");
  }
  history::Store store(db);
  const history::Report r = history::build_report(store, since, vm["op"].as<std::string>(), opt);
  if (r.series.empty()) {
    std::cerr << "NOTHING_COMPARED: history report: no row in " << db << " matches --since/--op\n";
    return kExitNothingCompared;
  }
  if (vm.count("out")) {
    std::ostringstream text;
    write_report(text, format, r);
    try {
      write_file_atomic(vm["out"].as<std::string>(), text.str());
    } catch (const std::exception& e) {
      throw UsageError("history report: cannot write --out " + vm["out"].as<std::string>() + " (" + e.what() + ")");
    }
  } else {
    write_report(std::cout, format, r);
    std::cout.flush();
  }
  if (vm.count("fail-on-new-regression") && r.new_regressions() > 0) {
    std::cerr << "NEW_REGRESSION: " << r.new_regressions() << " series slower from the latest run on ("
              << r.runs.back().path << ")\n";
    return kExitFailed;
  }
  return kExitOk;
}

}  // namespace

int cmd_history(Context&, const std::vector<std::string>& args) {
  const std::string sub = args.empty() ? "" : args[0];
  const std::vector<std::string> rest(args.begin() + (args.empty() ? 0 : 1), args.end());
  if (sub == "add") return run_add(rest);
  if (sub == "report") return run_report(rest);
  if (sub == "--help" || sub == "-h") return print_history_help();
  throw UsageError("history: needs a subcommand, add or report, not '" + sub + "' (see 'zlcore history --help')");
}

}  // namespace zl::cli
