// The A/B directory (--out): created empty or resumed (its rounds.csv read
// and repaired), one ab at a time (.ab.lock), ab_identity.json at each change
// of status, and what a full disk stops.
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "../util/dir_links.hpp"
#include "../util/printable.hpp"
#include "runner.hpp"
#include "runner_parts.hpp"
#include "zlcore/ab.hpp"
#include "zlcore/atomic_file.hpp"
#include "zlcore/errors.hpp"

namespace fs = std::filesystem;

namespace zl::ab {

void Runner::prepare() {
  std::error_code ec;
  const fs::path csv = dir_ / "rounds.csv";
  if (o_.resume) {
    const fs::file_status id = fs::symlink_status(dir_ / "ab_identity.json", ec);
    if (!fs::exists(id)) {
      throw UsageError("ab --resume: " + dir_.string() + " is not an A/B directory (no ab_identity.json)");
    }
    if (!fs::is_regular_file(id)) {
      throw UsageError("ab --resume: " + (dir_ / "ab_identity.json").string() +
                       " is not a regular file (a directory, a link or a device); move it away");
    }
    lock();
    // Before anything is written under it: a directory of ours replaced by
    // a link would take new rounds, leases and logs elsewhere.
    refuse_directory_links(dir_.string(), "ab: ");
    check_resume_settings(o_, (dir_ / "ab_identity.json").string());
    // Appends refuse a link; found only then, a round would have been
    // measured and lost. Said before anything runs, as batch does.
    if (fs::is_symlink(fs::symlink_status(csv, ec))) {
      throw UsageError("ab --resume: " + csv.string() +
                       " is a symbolic link, and zlcore does not follow links for files it writes; replace it with "
                       "the file itself");
    }
    if (!fs::exists(csv)) write_file_atomic(csv.string(), rounds_csv_header());
    std::string note;
    try {
      lines_ = read_rounds_csv(csv.string());
      note = repair_rounds_csv(csv.string());
    } catch (const UsageError&) {
      throw;
    } catch (const std::exception& e) {
      // Not a file to read (a FIFO, a directory) or not readable: one line.
      throw UsageError("ab --resume: " + std::string(e.what()));
    }
    if (!note.empty()) std::cout << printable(note) << "\n";
  } else {
    if (fs::exists(dir_) && !fs::is_empty(dir_, ec)) {
      throw UsageError("ab: --out " + dir_.string() +
                       " exists and is not empty; give a new directory, or --resume to continue it");
    }
    fs::create_directories(dir_, ec);
    if (ec) throw UsageError("ab: cannot create --out " + dir_.string() + ": " + ec.message());
    lock();
    write_file_atomic(csv.string(), rounds_csv_header());
  }
}

// One ab per directory at a time: two would run the same rounds, on the
// same devices, into the same rounds.csv.
void Runner::lock() {
  bool locked = false;
  try {
    locked = lock_.acquire((dir_ / ".ab.lock").string());
  } catch (const WriteError& e) {
    throw UsageError("ab: cannot write in --out " + dir_.string() + ": " + std::strerror(e.error_number()));
  }
  if (!locked) {
    throw UsageError("ab: --out " + dir_.string() +
                     " is in use by another zlcore ab; wait for it to end, or stop it and --resume");
  }
}

void Runner::write_identity(const std::string& status) {
  write_ab_identity(o_, (dir_ / "ab_identity.json").string(), status, started_, caliber_note_,
                    disk_full_ ? disk_full_what_ : "");
}

// The file system of --out has room for nothing more. Called at the first
// sign: the room kept aside is given back so the round lines and the
// identity can still be written, and no round starts after this.
void Runner::out_of_space(const std::string& what) {
  if (disk_full_) return;
  disk_full_ = true;
  disk_full_what_ = "No space left on device (" + what + ")";
  if (reserve_) reserve_->release();
  std::cout << printable(disk_full_what_ + ": no more rounds start") << "\n" << std::flush;
}

// Prints "zlcore ab: No space left on device (...); <state>; free space
// ..., then --resume <resume_does>" and returns the exit code.
int Runner::stop_on_full_disk(const std::string& state, const std::string& resume_does) {
  try {
    write_identity("failed");
  } catch (const std::exception&) {
    // Not even the reserve's room: the line below says it all.
  }
  std::cerr << "zlcore ab: " << printable(disk_full_what_) << "; " << state
            << "; free space on the file system of --out, then --resume " << resume_does << "\n";
  return kExitFailed;
}

}  // namespace zl::ab
