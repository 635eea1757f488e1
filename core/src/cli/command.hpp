// The command table and what every command gets: the backend directories and
// the registry loaded from them on first use (so `zlcore --help` loads nothing).
#pragma once

#include <boost/program_options.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "zlcore/registry.hpp"

namespace zl::cli {

namespace po = boost::program_options;

class Context {
 public:
  explicit Context(std::vector<std::string> backend_dirs) : backend_dirs_(std::move(backend_dirs)) {}
  const std::vector<std::string>& backend_dirs() const { return backend_dirs_; }
  // The directories as one --backend-dir value (A:B), for the runs a batch starts.
  std::string backend_dir() const;
  const Registry& registry();

 private:
  std::vector<std::string> backend_dirs_;
  std::unique_ptr<Registry> registry_;
};

struct Command {
  const char* name;
  const char* summary;
  const char* synopsis;  // after `zlcore <name>` in the usage line: positional arguments included
  // The environment variables the command reads, one "NAME  meaning" line each.
  std::vector<std::string> env;
  int (*run)(Context& ctx, const std::vector<std::string>& args);
};

const std::vector<Command>& commands();
const Command* find_command(const std::string& name);

// A command's --help: the usage line with its positional arguments, the
// options, and every environment variable it reads.
void print_help(std::ostream& out, const std::string& command, const po::options_description& desc);

// Parses a command's arguments; prints help and returns false on --help.
// Throws UsageError on a bad command line, a positional argument the command
// does not take included (`positional` null: it takes none).
// `positional` names options of `operands`: parsed, never listed in --help
// (the usage line names the operands).
bool parse(const std::string& command, const po::options_description& desc, const std::vector<std::string>& args,
           po::variables_map& vm, const po::positional_options_description* positional = nullptr,
           const po::options_description* operands = nullptr);

// A flag's value when given, else the environment variable's, else fallback.
// A value taken from the variable is logged in env_choices().
std::string flag_or_env(const po::variables_map& vm, const char* flag, const char* env,
                        const std::string& fallback = "");

// The same for a boolean (bool_text.hpp: 1/0, true/false, yes/no, on/off, any
// case). Throws UsageError naming the flag or the variable for another word.
bool flag_or_env_bool(const po::variables_map& vm, const char* flag, const char* env, bool fallback);

// Every environment variable that decided a choice in this process (the flag
// was absent), with its value: `run` records them in the identity. One
// command runs per process, so one log serves it.
std::map<std::string, std::string>& env_choices();

// The words of --dtypes: separated by commas (and, within a piece, spaces).
// An empty word ("a,,b", a trailing comma, "" itself) or a word given twice
// would silently drop or double a measurement: UsageError naming the flag.
std::vector<std::string> parse_dtypes(const std::string& text);

// Adds --help to a command's options.
void add_help(po::options_description& desc);

}  // namespace zl::cli
