#include "option_parser.hpp"

#include "../util/text.hpp"

namespace zl::cli {

po::parsed_options parse_options(const std::vector<std::string>& args, const po::options_description& desc,
                                 const po::positional_options_description& positional) {
  return po::command_line_parser(args).options(desc).positional(positional).style(kOptionStyle).run();
}

std::string did_you_mean(const po::options_description& desc, const std::string& given) {
  std::string name = given;
  name.erase(0, name.find_first_not_of('-'));
  name = name.substr(0, name.find('='));
  std::vector<std::string> longs;
  for (const auto& option : desc.options()) {
    const std::string& l = option->long_name();
    // Options named "zl-..." are zlcore's own plumbing, never offered.
    if (!l.empty() && l.rfind("zl-", 0) != 0) longs.push_back(l);
  }
  std::vector<std::string> near = text::nearest(name, longs);
  if (near.empty()) return "";
  if (near.size() > 3) near.resize(3);
  for (std::string& n : near) n = "--" + n;
  return "; did you mean " + text::join(near, " or ") + "?";
}

std::string option_error(const std::string& command, const po::error& e, const po::options_description& desc) {
  std::string line = command + ": " + e.what();
  if (const auto* unknown = dynamic_cast<const po::unknown_option*>(&e)) {
    line += did_you_mean(desc, unknown->get_option_name());
  }
  return line + " (see 'zlcore " + command + " --help')";
}

std::string needs_cluster_launcher(const std::string& command, const std::string& flag, const std::string& launcher) {
  if (flag != "time") return command + ": --" + flag + " needs " + launcher;
  return command + ": --time is the time limit per Slurm shard and needs " + launcher + "; did you mean --timeout, " +
         "the seconds each " + (command == "ab" ? "run" : "op") + " may take?";
}

}  // namespace zl::cli
