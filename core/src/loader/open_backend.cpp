#include "open_backend.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "table_read.hpp"
#include "zlcore/backend.hpp"

namespace zl::loader {
namespace {

// Boost.DLL wraps dlerror()'s text as "<what> failed (dlerror system message:
// <text>): <errno text>". The errno part is whatever errno held (often "Bad
// file descriptor") and misleads; dlerror's text repeats the path the line
// already names. What is left is the linker's reason, on one line.
std::string short_dl_error(std::string msg, const std::string& path) {
  const std::string wrapped = "dlerror system message: ";
  const size_t at = msg.find(wrapped);
  if (at != std::string::npos) {
    msg = msg.substr(at + wrapped.size());
    const size_t close = msg.rfind("): ");
    if (close != std::string::npos) {
      msg = msg.substr(0, close);
    } else if (!msg.empty() && msg.back() == ')') {
      msg.pop_back();
    }
  }
  const std::string prefix = path + ": ";
  if (const size_t p = msg.find(prefix); p != std::string::npos) msg = msg.substr(0, p) + msg.substr(p + prefix.size());
  for (char& c : msg) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  while (!msg.empty() && msg.back() == ' ') msg.pop_back();
  while (!msg.empty() && msg.front() == ' ') msg.erase(0, 1);
  return msg.empty() ? "the dynamic linker gave no reason" : msg;
}

}  // namespace

std::string stage_words(const std::string& stage) {
  if (stage == stage::kLoad) return "during load";
  if (stage == stage::kEntry) return "in the entry point";
  if (stage == stage::kTable) return "while its table was read";
  if (stage == stage::kInitialize) return "in initialize";
  if (stage == stage::kEnumerate) return "in enumerate_devices";
  if (stage == stage::kShutdown) return "in shutdown";
  if (stage == stage::kRelease) return "while its device list was released";
  if (stage == stage::kState) return "in query_device_state";
  if (stage == stage::kExit) return "at exit";
  return "before loading";
}

std::string seconds_words(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", seconds);
  return buf;
}

bool looks_like_elf(const std::filesystem::path& file) {
  // Without blocking, and only a regular file: a FIFO named like a backend
  // must not stop every command that lists backends.
  const int fd = ::open(file.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st {};
  char magic[4] = {};
  const bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ::read(fd, magic, 4) == 4;
  ::close(fd);
  return ok && magic[0] == 0x7f && magic[1] == 'E' && magic[2] == 'L' && magic[3] == 'F';
}

OpenedBackend open_backend(const std::filesystem::path& file, const std::function<void(const char*)>& before) {
  auto at = [&](const char* s) {
    if (before) before(s);
  };
  OpenedBackend o;
  const std::string path = file.string();
  if (!looks_like_elf(file)) {
    o.reason = "not an ELF shared object";
    return o;
  }
  at(stage::kLoad);
  try {
    // rtld_now: an unresolved symbol fails here, with the linker's text,
    // rather than killing the process at the first call.
    o.lib.load(file, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
  } catch (const std::exception& e) {
    o.reason = "cannot load: " + short_dl_error(e.what(), path);
    return o;
  }
  if (!o.lib.has(ZL_BACKEND_ENTRY_SYMBOL)) {
    o.reason = std::string("no entry symbol ") + ZL_BACKEND_ENTRY_SYMBOL;
    return o;
  }
  auto entry = o.lib.get<const zl_backend_api*(uint32_t, uint32_t)>(ZL_BACKEND_ENTRY_SYMBOL);
  at(stage::kEntry);
  const zl_backend_api* api = entry(ZL_BACKEND_ABI_MAJOR, ZL_BACKEND_ABI_MINOR);
  at(stage::kTable);
  o.reason = negotiate_abi(api);
  if (o.reason.empty()) {
    o.api = api;
    o.name = read_table(api).name;
  }
  return o;
}

}  // namespace zl::loader
