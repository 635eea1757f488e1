// Files written whole or not at all: a temporary in the same directory,
// fsync, rename. A crash leaves the old file or the new one, never half.
#pragma once

#include <string>

namespace zl {

// Throws std::runtime_error naming the path on failure.
void write_file_atomic(const std::string& path, const std::string& contents);
// Appends one record (which must end in '\n') with a single write(2) and
// fsyncs, so a reader sees whole lines only (for CSV/JSONL logs).
void append_record(const std::string& path, const std::string& record);
// The same single O_APPEND write, without the fsync: for logs, where losing
// the last lines to a power cut costs nothing that a record of truth holds.
// ops_status.csv must use append_record (--resume trusts it).
void append_log_line(const std::string& path, const std::string& line);
std::string read_file(const std::string& path);

}  // namespace zl
