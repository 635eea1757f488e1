// `zlcore backends`: what loaded, with everything the planner uses, and what
// was rejected and why.
#include <iostream>

#include "../util/json.hpp"
#include "../util/text.hpp"
#include "command.hpp"

namespace zl::cli {
namespace {

std::string caps_text(const std::map<std::string, std::string>& caps) {
  std::vector<std::string> parts;
  for (const auto& [k, v] : caps) parts.push_back(k + "=" + v);
  return parts.empty() ? "(none)" : text::join(parts);
}

}  // namespace

int cmd_backends(Context& ctx, const std::vector<std::string>& args) {
  po::options_description desc("backends: list loaded backends and rejected files");
  desc.add_options()("json", "print one JSON object");
  add_help(desc);
  po::variables_map vm;
  if (!parse("backends", desc, args, vm)) return 0;
  const Registry& reg = ctx.registry();

  if (vm.count("json")) {
    rapidjson::Document doc(rapidjson::kObjectType);
    auto& a = doc.GetAllocator();
    json::Value list(rapidjson::kArrayType);
    for (const Backend& b : reg.backends()) {
      json::Value o(rapidjson::kObjectType);
      o.AddMember("name", json::str(b.name(), a), a);
      o.AddMember("aliases", json::str_array(b.aliases(), a), a);
      o.AddMember("visibility_env", json::str_array(b.visibility_env(), a), a);
      o.AddMember("capabilities", json::str_map(b.capabilities(), a), a);
      o.AddMember("torch_device", json::str(b.torch_device(), a), a);
      o.AddMember("framework_vendor", json::str(b.framework_vendor(), a), a);
      o.AddMember("version", json::str(b.backend_version(), a), a);
      o.AddMember("abi", json::str(b.abi(), a), a);
      o.AddMember("path", json::str(b.path(), a), a);
      list.PushBack(o, a);
    }
    json::Value rejected(rapidjson::kArrayType);
    for (const Rejected& r : reg.rejected()) {
      json::Value o(rapidjson::kObjectType);
      o.AddMember("path", json::str(r.path, a), a);
      o.AddMember("reason", json::str(r.reason, a), a);
      rejected.PushBack(o, a);
    }
    doc.AddMember("backend_dir", json::str(ctx.backend_dir(), a), a);
    doc.AddMember("backend_dirs", json::str_array(ctx.backend_dirs(), a), a);
    doc.AddMember("backends", list, a);
    doc.AddMember("rejected", rejected, a);
    std::cout << json::pretty(doc);
    return 0;
  }

  // In search order: a name taken in an earlier directory wins.
  std::cout << (ctx.backend_dirs().size() == 1 ? "backend dir: " : "backend dirs, in order: ")
            << text::join(ctx.backend_dirs()) << "\n";
  if (reg.backends().empty()) std::cout << "no backends loaded\n";
  for (const Backend& b : reg.backends()) {
    std::cout << "\n"
              << b.name() << "  (ABI " << b.abi() << ", " << b.path() << ")\n"
              << "  aliases:       " << (b.aliases().empty() ? "(none)" : text::join(b.aliases())) << "\n"
              << "  visibility:    " << (b.visibility_env().empty() ? "(none)" : text::join(b.visibility_env())) << "\n"
              << "  capabilities:  " << caps_text(b.capabilities()) << "\n"
              << "  torch device:  " << b.torch_device() << "\n"
              << "  vendor:        "
              << (b.framework_vendor().empty() ? "(detected by the framework)" : b.framework_vendor()) << "\n";
    if (!b.backend_version().empty()) std::cout << "  version:       " << b.backend_version() << "\n";
  }
  if (!reg.rejected().empty()) {
    std::cout << "\nrejected:\n";
    for (const Rejected& r : reg.rejected()) std::cout << "  " << r.path << ": " << r.reason << "\n";
  }
  return 0;
}

}  // namespace zl::cli
