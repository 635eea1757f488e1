#include "zlcore/shared_dir.hpp"

#include <sys/stat.h>

#include <cstdio>
#include <iostream>
#include <mutex>
#include <set>

namespace zl {

std::string writable_by_others(const std::string& dir) {
  struct stat st {};
  if (dir.empty() || ::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return {};
  if ((st.st_mode & S_ISVTX) != 0) return {};
  const bool group = (st.st_mode & S_IWGRP) != 0, others = (st.st_mode & S_IWOTH) != 0;
  if (!group && !others) return {};
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
  return std::string("writable by ") +
         (group && others ? "its group and by everyone"
          : group         ? "its group"
                          : "everyone") +
         " (mode " + mode + ") without the sticky bit";
}

void warn_if_writable_by_others(const std::string& dir, const std::string& what) {
  static std::mutex m;
  static std::set<std::string>* warned = new std::set<std::string>();  // leaked: used until exit
  const std::string why = writable_by_others(dir);
  if (why.empty()) return;
  std::lock_guard<std::mutex> lock(m);
  if (!warned->insert(dir).second) return;
  std::cerr << "zlcore: warning: the " << what << " " << dir << " is " << why
            << "; other users can change what zlcore reads and writes there\n";
}

}  // namespace zl
