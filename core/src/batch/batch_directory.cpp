// The batch directory (--out) before anything runs: a path that resolves, a
// directory (not a file, not a link where zlcore keeps a directory), one
// batch at a time (.batch.lock), room kept for the last rows, and an
// ops_status.csv that appends can trust.
#include <cstring>
#include <system_error>

#include "../util/dir_links.hpp"
#include "batch_run.hpp"
#include "zlcore/atomic_file.hpp"
#include "zlcore/errors.hpp"

namespace fs = std::filesystem;

namespace zl::batch {

void BatchRun::prepare_directory() {
  const fs::path csv = dir_ / kStatusFile;
  // A path the system cannot resolve (a link loop, a component that is a
  // file): one line naming it, before anything asks what is there.
  std::error_code bad;
  (void)fs::status(dir_, bad);
  if (bad && bad != std::errc::no_such_file_or_directory && bad != std::errc::not_a_directory) {
    throw UsageError("--out " + dir_.string() + " cannot be used: " + bad.message());
  }
  if (fs::exists(csv) && !o_.resume) {
    throw UsageError("--out " + dir_.string() +
                     " already holds a batch; pass --resume to continue it, or another --out");
  }
  // A file in the way, or a place we cannot write: one line, exit 2.
  std::error_code ec;
  if (fs::exists(dir_, ec) && !fs::is_directory(dir_, ec)) {
    throw UsageError("--out " + dir_.string() + " is a file, not a directory; choose another --out");
  }
  fs::create_directories(dir_, ec);
  if (ec) throw UsageError("cannot create --out " + dir_.string() + ": " + ec.message());
  // One batch per directory at a time.
  bool locked = false;
  try {
    locked = lock_.acquire((dir_ / ".batch.lock").string());
  } catch (const WriteError& e) {
    throw UsageError("cannot write in --out " + dir_.string() + ": " + std::strerror(e.error_number()));
  }
  if (!locked) throw UsageError("--out " + dir_.string() + " is in use by another zlcore batch");
  // Before anything is written under it: a directory of ours replaced by a
  // link would take new runs and moved-aside attempts elsewhere.
  refuse_directory_links(dir_.string(), "");
  // Before anything of the batch is touched: its history, and whether this
  // invocation may add to it.
  load_history();
  check_caliber();
  reserve_ = std::make_unique<SpaceReserve>((dir_ / ".space_reserve").string(), 256 * 1024);
  // Appends refuse a link; found only then, an op would have run and its
  // row been lost. Said before anything runs.
  if (fs::is_symlink(fs::symlink_status(csv, ec))) {
    throw UsageError("--out " + dir_.string() + ": " + kStatusFile +
                     " is a symbolic link, and zlcore does not follow links for files it writes; replace it "
                     "with the file itself");
  }
  std::string note;
  try {
    prepare_status_csv(csv.string(), &note);
  } catch (const UsageError&) {
    throw;
  } catch (const std::exception& e) {
    throw UsageError(std::string("cannot start on ") + csv.string() + ": " + e.what());
  }
  // A repair is news to whoever edited the file: say it, not only log it.
  if (!note.empty()) say(note);
}

}  // namespace zl::batch
