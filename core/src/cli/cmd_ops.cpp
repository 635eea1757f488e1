// `zlcore ops`: the suite's operators (pytest marks) and the files that mark
// them, from the suite index every other command resolves through.
#include <filesystem>
#include <iostream>

#include "../util/json.hpp"
#include "command.hpp"
#include "zlcore/errors.hpp"
#include "zlcore/paths.hpp"
#include "zlcore/provider.hpp"

namespace zl::cli {

int cmd_ops(Context&, const std::vector<std::string>& args) {
  po::options_description desc("ops: list the suite's operators (its pytest marks) and the files that mark them");
  desc.add_options()("flaggems-dir", po::value<std::string>(),
                     "FlagGems checkout root (env FLAGGEMS_DIR; default: the embedded example suite)")(
      "json", "print one JSON object: {root, files (how many), ops: {name: {files, runs}}}");
  add_help(desc);
  po::variables_map vm;
  if (!parse("ops", desc, args, vm)) return 0;
  // No suite given: the one `run` would use, the embedded example suite.
  const std::string dir = flag_or_env(vm, "flaggems-dir", "FLAGGEMS_DIR", embedded_suite_dir());
  FlagGemsProvider provider(std::filesystem::absolute(dir).lexically_normal().string());
  const std::string bench = (std::filesystem::path(provider.root()) / FlagGemsProvider::bench_dir()).string();
  if (!std::filesystem::is_directory(bench)) {
    throw PreflightError("flaggems_dir", bench + " does not exist: --flaggems-dir must be the suite's root");
  }
  const SuiteIndex& index = provider.index();

  if (vm.count("json")) {
    rapidjson::Document doc(rapidjson::kObjectType);
    auto& a = doc.GetAllocator();
    doc.AddMember("root", json::str(provider.root(), a), a);
    doc.AddMember("files", static_cast<uint64_t>(index.file_count()), a);
    json::Value ops(rapidjson::kObjectType);
    for (const auto& [mark, files] : index.marks()) {
      json::Value o(rapidjson::kObjectType);
      o.AddMember("files", json::str_array(files, a), a);
      o.AddMember("runs", json::str_array(index.files_to_run(mark, FlagGemsProvider::bench_dir()), a), a);
      ops.AddMember(json::str(mark, a), o, a);
    }
    doc.AddMember("ops", ops, a);
    std::cout << json::pretty(doc);
    return 0;
  }
  size_t width = 2;
  for (const auto& [mark, files] : index.marks()) width = std::max(width, mark.size());
  for (const auto& [mark, files] : index.marks()) {
    const std::vector<std::string> runs = index.files_to_run(mark, FlagGemsProvider::bench_dir());
    std::cout << mark << std::string(width + 2 - mark.size(), ' ');
    for (size_t i = 0; i < files.size(); ++i) {
      const bool runs_it = std::find(runs.begin(), runs.end(), files[i]) != runs.end();
      std::cout << (i ? " " : "") << files[i] << (runs_it ? "" : " (not run)");
    }
    std::cout << "\n";
  }
  std::cout << index.marks().size() << " ops in " << index.file_count() << " files under " << bench << "\n";
  return 0;
}

}  // namespace zl::cli
