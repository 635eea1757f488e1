#include "zlcore/loader.hpp"

#include <boost/dll/shared_library.hpp>

#include "zlcore/shared_dir.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <system_error>

namespace zl {
namespace {

namespace fs = std::filesystem;

bool tracing() {
  static const bool on = [] {
    const char* v = std::getenv("ZL_DEBUG_LOADER");
    return v != nullptr && *v != '\0' && std::string(v) != "0";
  }();
  return on;
}

void trace(const std::string& line) {
  if (tracing()) std::fprintf(stderr, "zlcore loader: %s\n", line.c_str());
}

// Libraries are never unloaded: their tables and strings have static
// lifetime by contract, and unloading a vendor runtime at exit is a classic
// source of crashes. The holder is leaked on purpose.
std::vector<boost::dll::shared_library>& keep_alive() {
  static auto* libs = new std::vector<boost::dll::shared_library>();
  return *libs;
}

// dlopen's message for a file that is not ELF is long and names the path
// again; keep the part after the last ": " when it is the useful one.
std::string short_dl_error(std::string msg, const std::string& path) {
  const std::string prefix = path + ": ";
  size_t at = msg.find(prefix);
  if (at != std::string::npos) msg = msg.substr(at + prefix.size());
  while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
  return msg;
}

bool looks_like_elf(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  char magic[4] = {};
  in.read(magic, 4);
  return in.gcount() == 4 && magic[0] == 0x7f && magic[1] == 'E' && magic[2] == 'L' && magic[3] == 'F';
}

}  // namespace

LoadReport load_backends(const std::string& dir) {
  LoadReport report;
  std::error_code ec;
  std::vector<fs::path> files;
  trace("scanning " + dir);
  warn_if_writable_by_others(dir, "backend directory");
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    if (p.extension() != ".so") continue;
    std::error_code type_ec;
    if (!it->is_regular_file(type_ec)) {
      trace("skip " + p.string() + ": not a regular file");
      continue;
    }
    files.push_back(p);
  }
  if (ec) {
    trace("cannot scan " + dir + ": " + ec.message());
    return report;
  }
  std::sort(files.begin(), files.end());

  for (const fs::path& p : files) {
    const std::string path = p.string();
    auto reject = [&](const std::string& reason) {
      trace("reject " + path + ": " + reason);
      report.rejected.push_back({path, reason});
    };
    // A short, stable reason instead of the dynamic linker's wording.
    if (!looks_like_elf(p)) {
      reject("not an ELF shared object");
      continue;
    }
    trace("load " + path);
    boost::dll::shared_library lib;
    try {
      // rtld_now: an unresolved symbol fails here, with the linker's text,
      // rather than killing the process at the first call.
      lib.load(p, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
    } catch (const std::exception& e) {
      reject("cannot load: " + short_dl_error(e.what(), path));
      continue;
    }
    if (!lib.has(ZL_BACKEND_ENTRY_SYMBOL)) {
      reject(std::string("no entry symbol ") + ZL_BACKEND_ENTRY_SYMBOL);
      continue;
    }
    auto entry = lib.get<const zl_backend_api*(uint32_t, uint32_t)>(ZL_BACKEND_ENTRY_SYMBOL);
    const zl_backend_api* api = entry(ZL_BACKEND_ABI_MAJOR, ZL_BACKEND_ABI_MINOR);
    std::string why = negotiate_abi(api);
    if (!why.empty()) {
      reject(why);
      continue;
    }
    trace("accept " + path + " as '" + api->name + "' (ABI " + std::to_string(api->abi_major) + "." +
          std::to_string(api->abi_minor) + ", struct_size " + std::to_string(api->struct_size) + ")");
    keep_alive().push_back(std::move(lib));
    report.backends.emplace_back(api, path);
  }
  return report;
}

}  // namespace zl
