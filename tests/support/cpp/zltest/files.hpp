// Whole files as strings: what a test reads back and what it plants.
#pragma once

#include <filesystem>
#include <string>

namespace zltest {

namespace fs = std::filesystem;

// The file's bytes; empty when it cannot be read (a missing file reads as
// empty, which is what a test polling for a file wants).
std::string slurp(const fs::path& p);

// Writes `text` as the whole file, making its parent directories first.
void spit(const fs::path& p, const std::string& text);

// Whether the file exists and holds `text` somewhere.
bool file_has(const fs::path& p, const std::string& text);

size_t count_lines(const std::string& s);

// Copies the directory `from` into `to` (made first), recursively: a
// recorded run planted where a test wants it.
void copy_tree(const fs::path& from, const fs::path& to);

}  // namespace zltest
