#include "zlcore/loader.hpp"
#include "zlcore/paths.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <system_error>

#include "../util/printable.hpp"
#include "crash_report.hpp"
#include "lifecycle.hpp"
#include "open_backend.hpp"
#include "probe.hpp"
#include "probe_cache.hpp"
#include "stdout_guard.hpp"
#include "zlcore/bool_text.hpp"
#include "zlcore/shared_dir.hpp"

namespace zl {
namespace {

namespace fs = std::filesystem;

constexpr double kDefaultTimeoutS = 10;

bool tracing() {
  static const bool on = [] {
    const char* v = std::getenv("ZL_DEBUG_LOADER");
    // Empty is unset, as for every variable zlcore reads.
    if (v == nullptr || *v == '\0') return false;
    const std::optional<bool> on = parse_bool(v);
    // A debug switch: a word outside the set is said once and read as off,
    // never a reason to stop the command.
    if (!on) {
      std::fprintf(stderr,
                   "zlcore: ZL_DEBUG_LOADER='%s' is not a boolean (1/0, true/false, yes/no, on/off); loader "
                   "tracing is off\n",
                   printable(v).c_str());
    }
    return on.value_or(false);
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

std::string ms(double seconds) { return std::to_string(static_cast<int>(seconds * 1000 + 0.5)) + " ms"; }

// Every file's verdict: the ELF check in process (no child for a text file),
// then the cache, then a probe child for the rest, all at once.
std::vector<loader::ProbeVerdict> verdicts_for(const std::string& dir, const std::vector<fs::path>& files,
                                               const LoadOptions& opts) {
  const double timeout_s = opts.timeout_s > 0 ? opts.timeout_s : backend_timeout_s();
  loader::ProbeCache cache(opts.cache_dir.empty() ? user_cache_dir() : opts.cache_dir, dir);
  std::vector<loader::ProbeVerdict> verdicts(files.size());
  std::vector<std::optional<loader::FileId>> ids(files.size());
  std::vector<std::string> paths, to_probe;
  std::vector<size_t> probed_at;
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string path = files[i].string();
    paths.push_back(path);
    if (!loader::looks_like_elf(files[i])) {
      verdicts[i].reason = "not an ELF shared object";
      continue;
    }
    ids[i] = loader::file_id(path);
    if (ids[i]) {
      if (const loader::ProbeVerdict* v = cache.find(path, *ids[i], timeout_s)) {
        trace("cached verdict for " + path + ": " + (v->ok ? "ok" : v->reason));
        verdicts[i] = *v;
        continue;
      }
    }
    to_probe.push_back(path);
    probed_at.push_back(i);
  }
  if (!to_probe.empty()) {
    std::vector<loader::ProbeVerdict> fresh = loader::probe_files(to_probe, opts.probe_program, timeout_s);
    for (size_t k = 0; k < fresh.size(); ++k) {
      const size_t i = probed_at[k];
      trace("probe " + paths[i] + ": " + (fresh[k].ok ? "ok" : fresh[k].reason) + " (" + ms(fresh[k].seconds) + ")");
      verdicts[i] = fresh[k];
      if (ids[i]) cache.put(paths[i], *ids[i], fresh[k], timeout_s);
    }
  }
  const std::string saved = cache.save(paths);
  if (!to_probe.empty()) trace(saved.empty() ? "no probe cache written" : "probe cache " + saved);
  return verdicts;
}

}  // namespace

double backend_timeout_s() {
  const char* v = std::getenv("ZL_BACKEND_TIMEOUT");
  if (v == nullptr || *v == '\0') return kDefaultTimeoutS;
  char* end = nullptr;
  const double s = std::strtod(v, &end);
  if (end == v || *end != '\0' || !(s > 0) || s > 86400) {
    static bool warned = false;
    if (!warned) {
      std::fprintf(stderr, "zlcore: ZL_BACKEND_TIMEOUT='%s' is not a number of seconds in (0, 86400]; using %g\n", v,
                   kDefaultTimeoutS);
      warned = true;
    }
    return kDefaultTimeoutS;
  }
  return s;
}

LoadOptions probing_load_options() {
  LoadOptions o;
  o.probe_program = "/proc/self/exe";
  return o;
}

LoadReport load_backends(const std::string& dir, const LoadOptions& opts) {
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

  std::vector<loader::ProbeVerdict> verdicts;
  if (!opts.probe_program.empty()) verdicts = verdicts_for(dir, files, opts);
  // From here a backend's code runs in this process: a crash in it is named.
  if (!files.empty()) loader::install_backend_crash_report();

  for (size_t i = 0; i < files.size(); ++i) {
    const std::string path = files[i].string();
    auto reject = [&](const std::string& reason) {
      trace("reject " + path + ": " + reason);
      report.rejected.push_back({path, reason});
    };
    if (!verdicts.empty() && !verdicts[i].ok) {
      reject(verdicts[i].reason);
      continue;
    }
    trace("load " + path);
    loader::OpenedBackend o;
    {
      const loader::StdoutGuard quiet("backend file " + path, "loading");
      const loader::InBackendCall in("backend file " + path, "loading");
      o = loader::open_backend(files[i], {});
    }
    if (!o.reason.empty()) {
      reject(o.reason);
      continue;
    }
    // initialize runs in process too: what it opens (a driver library)
    // lives here, not in the probe child that has exited.
    if (const std::string why = loader::initialize_backend(o.api, loader::backend_words(o.name, path)); !why.empty()) {
      reject(why);
      continue;
    }
    trace("accept " + path + " as '" + o.name + "' (ABI " + std::to_string(o.api->abi_major) + "." +
          std::to_string(o.api->abi_minor) + ", struct_size " + std::to_string(o.api->struct_size) + ")");
    // Read once more, as the core keeps it: a table that changed since it
    // was accepted (a name, a visibility variable) is not run with.
    Backend kept(o.api, path);
    keep_alive().push_back(std::move(o.lib));  // it ran its initialize: never unloaded
    if (!kept.table_problem().empty() || kept.name() != o.name) {
      reject(
          "its table changed after it was read (" +
          (kept.table_problem().empty() ? "name '" + o.name + "', then '" + kept.name() + "'" : kept.table_problem()) +
          ")");
      loader::shutdown_backend(o.api);
      continue;
    }
    report.backends.push_back(std::move(kept));
  }
  return report;
}

LoadReport load_backends(const std::vector<std::string>& dirs, const LoadOptions& opts) {
  LoadReport all;
  for (const std::string& dir : dirs) {
    LoadReport one = load_backends(dir, opts);
    for (Backend& b : one.backends) all.backends.push_back(std::move(b));
    for (Rejected& r : one.rejected) all.rejected.push_back(std::move(r));
  }
  return all;
}

}  // namespace zl
