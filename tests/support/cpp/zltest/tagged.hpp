// Every process a test starts carries a tag in its environment (children
// inherit it), so the test can find and kill what a killed zlcore left
// behind: orphans that no process group or parent leads back to.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

namespace zltest {

// The variable the tag travels in.
constexpr const char* kTagVariable = "ZL_TEST_TAG";

// A tag no other test of this run has.
std::string new_tag();

// The processes whose environment carries kTagVariable=tag.
std::vector<pid_t> tagged(const std::string& tag);

void kill_tagged(const std::string& tag);

// Kills the tagged processes when a test ends, however it ends.
class TagGuard {
 public:
  explicit TagGuard(std::string tag) : tag_(std::move(tag)) {}
  ~TagGuard() { kill_tagged(tag_); }
  TagGuard(const TagGuard&) = delete;
  TagGuard& operator=(const TagGuard&) = delete;
  const std::string& tag() const { return tag_; }

 private:
  std::string tag_;
};

}  // namespace zltest
