// Files written whole or not at all: a temporary in the same directory,
// fsync, rename, fsync of the directory. A crash leaves the old file or the
// new one, never half.
//
// The directories zlcore writes into may be writable by someone else (a
// shared --out), so no write here follows a symbolic link: temporaries are
// created exclusively under a random name, and files opened for appending
// must be regular files, not links (docs/cli.md, "Files zlcore writes").
#pragma once

#include <stdexcept>
#include <string>

namespace zl {

// What the writers below throw when the system refuses a write: the message
// names the file and says why; error_number() is the errno.
class WriteError : public std::runtime_error {
 public:
  WriteError(const std::string& what, int error_number);
  int error_number() const { return error_number_; }

 private:
  int error_number_;
};
// A full file system (ENOSPC) or quota (EDQUOT), from a WriteError or a
// std::filesystem error.
bool is_out_of_space(const std::exception& e);

// Throws WriteError (a std::runtime_error) naming the path on failure.
void write_file_atomic(const std::string& path, const std::string& contents);
// Creates `path` with `contents` (O_EXCL, O_NOFOLLOW), synced with its
// directory; false when something already has that name. Throws on any other
// failure, with nothing left behind.
bool create_file_exclusive(const std::string& path, const std::string& contents);
// Appends one record (which must end in '\n') with a single write(2) and
// fsyncs, so a reader sees whole lines only (for CSV/JSONL logs).
void append_record(const std::string& path, const std::string& record);
// The same single O_APPEND write, without the fsync: for logs, where losing
// the last lines to a power cut costs nothing that a record of truth holds.
// ops_status.csv must use append_record (--resume trusts it).
void append_log_line(const std::string& path, const std::string& line);
// append_log_line for a log that nothing else depends on: a failure (a link
// planted at the path, a full disk) is said on stderr as "<who>: <error>",
// once per distinct error per process rather than at every line.
void append_log_line_or_warn(const std::string& path, const std::string& line, const std::string& who);
// Opens `path` for appending (created 0644 when missing) and returns the
// descriptor (close-on-exec). Refuses a symbolic link and anything but a
// regular file: throws std::runtime_error with one line naming the file.
int open_for_append(const std::string& path);
// The whole of a regular file, read without blocking and with a bound: a
// FIFO, a device, a directory or a file past the bound is refused with one
// line naming the path and what it is (std::runtime_error).
std::string read_file(const std::string& path);
// Before a repair rewrites a file: its old `text` kept beside it as
// <path>.bak-<UTC time> (-2, -3 ... when that name is taken; an older copy is
// never overwritten). Returns the copy's path; throws when none can be made.
std::string keep_copy_aside(const std::string& path, const std::string& text);

}  // namespace zl
