// The one way every command reads its command line: options matched whole,
// never guessed from a prefix, and a mistyped one answered with the option
// it most likely meant.
#pragma once

#include <boost/program_options.hpp>

#include <string>
#include <vector>

namespace zl::cli {

namespace po = boost::program_options;

// Boost's default style takes any unambiguous prefix for the whole option
// (--dtype is read as --dtypes, --time as --timeout where only one of them
// exists): a typo then changes what is measured without a word. Every
// option is matched whole; everything else of the default style stays.
constexpr int kOptionStyle = po::command_line_style::default_style & ~po::command_line_style::allow_guessing;

// Parses `args` against `desc` with kOptionStyle.
po::parsed_options parse_options(const std::vector<std::string>& args, const po::options_description& desc,
                                 const po::positional_options_description& positional);

// "; did you mean --X?" or "; did you mean --X or --Y?" for an option
// `desc` does not have, naming its nearest options; "" when none is near.
std::string did_you_mean(const po::options_description& desc, const std::string& given);

// Boost's parse error as zlcore's one line: the command, what was wrong and,
// for an option the command does not take, the one it most likely meant.
std::string option_error(const std::string& command, const po::error& e, const po::options_description& desc);

// A cluster launcher's flag given without that launcher: its line, which
// for --time also names --timeout (seconds per op), the likelier intent.
std::string needs_cluster_launcher(const std::string& command, const std::string& flag, const std::string& launcher);

}  // namespace zl::cli
