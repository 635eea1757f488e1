// The suite index: which benchmark file marks which operator. In FlagGems an
// operator is a pytest mark (`@pytest.mark.bitwise_and_tensor`), and marks
// often differ from file names (test_bitwise_and.py marks four ops; a mark can
// live in a file named for another op, or in several files). Every command
// that takes an op name resolves it through this index.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace zl {

class SuiteIndex {
 public:
  // Scans <root>/<bench_dir>/**/test_*.py (and *_test.py) for op marks: every
  // `pytest.mark.NAME` outside comments, pytest's own marks excepted. The
  // result is cached under cache_dir (when not empty), keyed by the path,
  // size and mtime of every scanned file, so a suite that did not change is
  // not read again. A missing bench_dir gives an empty index.
  static SuiteIndex build(const std::string& root, const std::string& bench_dir, const std::string& cache_dir);
  // The same scan over in-memory files (relative path -> text), for tests.
  static SuiteIndex from_texts(const std::map<std::string, std::string>& files);

  // Files (relative to the root, sorted) that mark `op`; empty when none.
  const std::vector<std::string>& files_of(const std::string& op) const;
  // Marks of one file (relative path), sorted; empty when unknown.
  const std::vector<std::string>& marks_of(const std::string& file) const;
  // The file `op` runs from: benchmark/test_<op>.py when that file marks it
  // (its home; a parallel or variant file may mark it too), else every file
  // that marks it. Empty when no file does.
  std::vector<std::string> files_to_run(const std::string& op, const std::string& bench_dir) const;
  // Up to `n` marks closest to `name` (edit distance, then shared prefix).
  std::vector<std::string> closest(const std::string& name, size_t n) const;

  const std::map<std::string, std::vector<std::string>>& marks() const { return by_mark_; }
  size_t file_count() const { return by_file_.size(); }
  bool from_cache() const { return from_cache_; }

  // Op marks in one Python source (pytest's own marks and comments excluded).
  static std::vector<std::string> scan(const std::string& text);
  // pytest's own marks (and FlagGems' list of them): never operators.
  static bool is_builtin_mark(const std::string& name);

 private:
  void add(const std::string& file, const std::vector<std::string>& marks);
  std::map<std::string, std::vector<std::string>> by_mark_;
  std::map<std::string, std::vector<std::string>> by_file_;
  bool from_cache_ = false;
};

}  // namespace zl
