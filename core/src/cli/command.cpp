#include "command.hpp"

#include <algorithm>
#include <cstdlib>
#include <iostream>

#include "../util/printable.hpp"
#include "../util/text.hpp"
#include "option_parser.hpp"
#include "zlcore/bool_text.hpp"
#include "zlcore/errors.hpp"
#include "zlcore/loader.hpp"

namespace zl::cli {

namespace {

// Holds whatever a command does not take as a positional argument, so that a
// stray word is named instead of silently dropped (Boost ignores it).
constexpr const char* kStray = "zl-stray-argument";

}  // namespace

std::string Context::backend_dir() const {
  std::string out;
  for (const std::string& d : backend_dirs_) out += (out.empty() ? "" : ":") + d;
  return out;
}

const Registry& Context::registry() {
  if (!registry_) registry_ = std::make_unique<Registry>(load_backends(backend_dirs_, probing_load_options()));
  return *registry_;
}

const Command* find_command(const std::string& name) {
  for (const Command& c : commands()) {
    if (name == c.name) return &c;
  }
  return nullptr;
}

void add_help(po::options_description& desc) { desc.add_options()("help,h", "show this help"); }

void print_help(std::ostream& out, const std::string& command, const po::options_description& desc) {
  const Command* c = find_command(command);
  out << "usage: zlcore [--backend-dir DIR[:DIR...]] " << command << " " << (c ? c->synopsis : "[options]") << "\n\n"
      << desc << "\n";
  if (c == nullptr || c->env.empty()) return;
  out << "environment (a flag wins over its variable):\n";
  for (const std::string& line : c->env) out << "  " << line << "\n";
  out << "\n";
}

bool parse(const std::string& command, const po::options_description& desc, const std::vector<std::string>& args,
           po::variables_map& vm, const po::positional_options_description* positional,
           const po::options_description* operands) {
  po::options_description all;
  all.add(desc);
  if (operands != nullptr) all.add(*operands);
  po::options_description stray;
  stray.add_options()(kStray, po::value<std::vector<std::string>>(), "");
  po::positional_options_description none;
  none.add(kStray, -1);
  if (positional == nullptr) all.add(stray);
  try {
    po::store(parse_options(args, all, positional != nullptr ? *positional : none), vm);
    if (vm.count("help")) {
      print_help(std::cout, command, desc);
      return false;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError(option_error(command, e, desc));
  }
  if (vm.count(kStray)) {
    throw UsageError(command + ": unexpected argument '" + vm[kStray].as<std::vector<std::string>>().front() +
                     "': this command takes no positional arguments (see 'zlcore " + command + " --help')");
  }
  return true;
}

std::map<std::string, std::string>& env_choices() {
  static std::map<std::string, std::string> log;
  return log;
}

std::vector<std::string> parse_dtypes(const std::string& given) {
  const std::string shown = "--dtypes '" + printable(given) + "'";
  std::vector<std::string> out;
  for (const std::string& piece : text::split_keep_empty(given, ",")) {
    const std::vector<std::string> words = text::split(piece, text::kSpace);
    if (words.empty()) {
      throw UsageError(shown + " holds an empty word; name one or more dtypes separated by commas");
    }
    for (const std::string& w : words) {
      if (std::find(out.begin(), out.end(), w) != out.end()) {
        throw UsageError(shown + " names " + printable(w) + " twice; name each dtype once");
      }
      out.push_back(w);
    }
  }
  return out;
}

std::string flag_or_env(const po::variables_map& vm, const char* flag, const char* env, const std::string& fallback) {
  if (vm.count(flag) && !vm[flag].defaulted()) return vm[flag].as<std::string>();
  const char* v = std::getenv(env);
  if (v != nullptr && *v != '\0') {
    env_choices()[env] = v;
    return v;
  }
  return fallback;
}

bool flag_or_env_bool(const po::variables_map& vm, const char* flag, const char* env, bool fallback) {
  const bool from_flag = vm.count(flag) && !vm[flag].defaulted();
  const std::string text = flag_or_env(vm, flag, env, "");
  // An empty variable is an unset one; an empty flag value is a typo.
  if (text.empty() && !from_flag) return fallback;
  if (std::optional<bool> b = parse_bool(text)) return *b;
  throw UsageError((from_flag ? "--" + std::string(flag) : std::string(env)) + "='" + text +
                   "' is not a boolean; use one of " + bool_words() + " (any case)");
}

}  // namespace zl::cli
