// Room kept aside on a file system for the bookkeeping that must happen even
// when it fills up: a run's final identity, a batch's rows and identity. A
// file of real blocks is made when the work starts and removed the moment a
// write finds the disk full (or when the work ends), so the last words can
// still be written (docs/batch.md, "Full disk").
#pragma once

#include <string>

namespace zl {

class SpaceReserve {
 public:
  // Best effort: on a file system already too full for it, holds nothing.
  SpaceReserve(std::string path, long bytes);
  ~SpaceReserve() { release(); }
  SpaceReserve(const SpaceReserve&) = delete;
  SpaceReserve& operator=(const SpaceReserve&) = delete;
  // Gives the room back; true when there was some to give.
  bool release();
  bool held() const { return held_; }

 private:
  std::string path_;
  bool held_ = false;
};

// Under 64 KiB free on the file system of `dir` (what root may use, as root):
// too little for another run's files. False when it cannot be asked.
bool little_room_left(const std::string& dir);

}  // namespace zl
