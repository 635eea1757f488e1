#include "proc_stat.hpp"

#include <dirent.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace zl {

std::optional<ProcStat> proc_stat(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat", std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  const std::string text = s.str();
  // The command name (field 2) may hold spaces and parentheses, so fields
  // are counted from the last ')'.
  const size_t close = text.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(text.substr(close + 1));
  std::vector<std::string> f;  // f[0] is field 3 (state)
  std::string word;
  while (rest >> word && f.size() < 20) f.push_back(word);
  if (f.size() < 20) return std::nullopt;
  ProcStat st;
  st.zombie = f[0] == "Z" || f[0] == "X";
  try {
    st.ppid = static_cast<pid_t>(std::stol(f[1]));
    st.pgid = static_cast<pid_t>(std::stol(f[2]));
    st.start_ticks = std::stoull(f[19]);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  return st;
}

std::vector<pid_t> proc_pids() {
  std::vector<pid_t> pids;
  DIR* dir = ::opendir("/proc");
  if (dir == nullptr) return pids;
  while (const dirent* e = ::readdir(dir)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (end != e->d_name && *end == '\0' && pid > 0) pids.push_back(static_cast<pid_t>(pid));
  }
  ::closedir(dir);
  return pids;
}

}  // namespace zl
