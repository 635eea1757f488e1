// The command table and what every command gets: the backend directory and
// the registry loaded from it on first use (so `zlcore --help` loads nothing).
#pragma once

#include <boost/program_options.hpp>

#include <memory>
#include <string>
#include <vector>

#include "zlcore/registry.hpp"

namespace zl::cli {

namespace po = boost::program_options;

class Context {
 public:
  explicit Context(std::string backend_dir) : backend_dir_(std::move(backend_dir)) {}
  const std::string& backend_dir() const { return backend_dir_; }
  const Registry& registry();

 private:
  std::string backend_dir_;
  std::unique_ptr<Registry> registry_;
};

struct Command {
  const char* name;
  const char* summary;
  int (*run)(Context& ctx, const std::vector<std::string>& args);
};

const std::vector<Command>& commands();

// Parses a command's arguments; prints help and returns false on --help.
// Throws UsageError on a bad command line.
bool parse(const std::string& command, const po::options_description& desc, const std::vector<std::string>& args,
           po::variables_map& vm, const po::positional_options_description* positional = nullptr);

// A flag's value when given, else the environment variable's, else fallback.
std::string flag_or_env(const po::variables_map& vm, const char* flag, const char* env, const std::string& fallback = "");

// Adds --help to a command's options.
void add_help(po::options_description& desc);

}  // namespace zl::cli
