#include "command.hpp"

#include <cstdlib>
#include <iostream>

#include "zlcore/errors.hpp"
#include "zlcore/loader.hpp"

namespace zl::cli {

const Registry& Context::registry() {
  if (!registry_) registry_ = std::make_unique<Registry>(load_backends(backend_dir_, probing_load_options()));
  return *registry_;
}

void add_help(po::options_description& desc) { desc.add_options()("help,h", "show this help"); }

bool parse(const std::string& command, const po::options_description& desc, const std::vector<std::string>& args,
           po::variables_map& vm, const po::positional_options_description* positional) {
  try {
    po::command_line_parser parser(args);
    parser.options(desc);
    if (positional != nullptr) parser.positional(*positional);
    po::store(parser.run(), vm);
    if (vm.count("help")) {
      std::cout << "usage: zlcore " << command << " [options]\n\n" << desc << "\n";
      return false;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError(command + ": " + e.what() + " (see 'zlcore " + command + " --help')");
  }
  return true;
}

std::string flag_or_env(const po::variables_map& vm, const char* flag, const char* env, const std::string& fallback) {
  if (vm.count(flag) && !vm[flag].defaulted()) return vm[flag].as<std::string>();
  const char* v = std::getenv(env);
  if (v != nullptr && *v != '\0') return v;
  return fallback;
}

}  // namespace zl::cli
