// The suite index (zlcore/suite_index.hpp). A text scan, not a pytest
// collection: collecting FlagGems imports torch and flag_gems (~11 s and a
// device), while reading 700 files takes milliseconds and needs neither.
#include "zlcore/suite_index.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "../util/json.hpp"
#include "../util/json_read.hpp"
#include "../util/text.hpp"
#include "zlcore/atomic_file.hpp"
#include "zlcore/sha256.hpp"

namespace zl {
namespace {

namespace fs = std::filesystem;

constexpr int kCacheSchema = 1;

bool is_ident_start(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
bool is_ident(char c) { return is_ident_start(c) || (c >= '0' && c <= '9'); }

// The line without its comment: a '#' outside a string literal ends it.
std::string strip_comment(const std::string& line) {
  char quote = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quote != 0) {
      if (c == '\\') {
        ++i;
      } else if (c == quote) {
        quote = 0;
      }
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '#') {
      return line.substr(0, i);
    }
  }
  return line;
}

bool is_test_file(const fs::path& p) {
  const std::string name = p.filename().string();
  if (p.extension() != ".py") return false;
  return name.rfind("test_", 0) == 0 || (name.size() > 8 && name.compare(name.size() - 8, 8, "_test.py") == 0);
}

struct Scanned {
  std::string rel;
  std::string stamp;  // size and mtime: what the cache key is made of
};

std::vector<Scanned> list_files(const fs::path& root, const std::string& bench_dir) {
  std::vector<Scanned> out;
  std::error_code ec;
  const fs::path dir = root / bench_dir;
  if (!fs::is_directory(dir, ec)) return out;
  for (fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (it->is_directory(ec) && (name == "__pycache__" || name.rfind('.', 0) == 0)) {
      it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file(ec) || !is_test_file(it->path())) continue;
    struct stat st {};
    if (::stat(it->path().c_str(), &st) != 0) continue;
    out.push_back({fs::relative(it->path(), root).generic_string(), std::to_string(st.st_size) + ":" +
                                                                        std::to_string(st.st_mtim.tv_sec) + "." +
                                                                        std::to_string(st.st_mtim.tv_nsec)});
  }
  std::sort(out.begin(), out.end(), [](const Scanned& a, const Scanned& b) { return a.rel < b.rel; });
  return out;
}

const std::vector<std::string>& empty_list() {
  static const std::vector<std::string> none;
  return none;
}

}  // namespace

bool SuiteIndex::is_builtin_mark(const std::string& name) {
  static const std::set<std::string> builtin{"parametrize",    "skip",    "skipif",   "xfail",  "usefixtures",
                                             "filterwarnings", "timeout", "tryfirst", "trylast"};
  return builtin.count(name) > 0;
}

std::vector<std::string> SuiteIndex::scan(const std::string& text) {
  static const std::string kPrefix = "pytest.mark.";
  std::set<std::string> found;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = strip_comment(text.substr(start, end - start));
    for (size_t at = line.find(kPrefix); at != std::string::npos; at = line.find(kPrefix, at + 1)) {
      if (at > 0 && is_ident(line[at - 1])) continue;  // my_pytest.mark.x is something else
      size_t p = at + kPrefix.size();
      if (p >= line.size() || !is_ident_start(line[p])) continue;
      size_t q = p;
      while (q < line.size() && is_ident(line[q])) ++q;
      std::string name = line.substr(p, q - p);
      if (!is_builtin_mark(name)) found.insert(std::move(name));
    }
    start = end + 1;
  }
  return {found.begin(), found.end()};
}

void SuiteIndex::add(const std::string& file, const std::vector<std::string>& marks) {
  by_file_[file] = marks;
  for (const std::string& m : marks) by_mark_[m].push_back(file);
}

SuiteIndex SuiteIndex::from_texts(const std::map<std::string, std::string>& files) {
  SuiteIndex index;
  for (const auto& [rel, text] : files) index.add(rel, scan(text));
  for (auto& [mark, list] : index.by_mark_) std::sort(list.begin(), list.end());
  return index;
}

SuiteIndex SuiteIndex::build(const std::string& root, const std::string& bench_dir, const std::string& cache_dir) {
  const std::vector<Scanned> files = list_files(root, bench_dir);
  std::string key_text = fs::absolute(root).lexically_normal().string() + "\n";
  for (const Scanned& f : files) key_text += f.rel + "\t" + f.stamp + "\n";
  const std::string key = sha256_hex(key_text);
  const std::string cache_file =
      cache_dir.empty() ? "" : (fs::path(cache_dir) / "suite-index" / (key.substr(0, 32) + ".json")).string();

  SuiteIndex index;
  if (!cache_file.empty()) {
    rapidjson::Document doc;
    try {
      const std::string text = read_file(cache_file);
      if (!json::parse(doc, text).empty()) doc.SetNull();
    } catch (const std::exception&) {
      doc.SetNull();
    }
    // A cache file is only trusted whole: right schema, right key, every
    // file listed with a list of strings. Anything else is read afresh.
    bool good = doc.IsObject() && doc.HasMember("schema") && doc["schema"].IsInt() &&
                doc["schema"].GetInt() == kCacheSchema && doc.HasMember("key") && doc["key"].IsString() &&
                key == doc["key"].GetString() && doc.HasMember("files") && doc["files"].IsObject();
    if (good) {
      // Exactly the files scanned: a name the scan did not find (another
      // suite's file, a path out of the suite) would be handed to pytest.
      std::set<std::string> scanned;
      for (const Scanned& f : files) scanned.insert(f.rel);
      for (auto it = doc["files"].MemberBegin(); good && it != doc["files"].MemberEnd(); ++it) {
        // Each scanned file once: a name listed twice would carry two lists of marks.
        if (!it->value.IsArray() || scanned.erase(it->name.GetString()) == 0) {
          good = false;
          break;
        }
        std::vector<std::string> marks;
        for (const auto& m : it->value.GetArray()) {
          if (!m.IsString()) {
            good = false;
            break;
          }
          marks.emplace_back(m.GetString());
        }
        index.add(it->name.GetString(), marks);
      }
      good = good && index.by_file_.size() == files.size();
    }
    if (good) {
      for (auto& [mark, list] : index.by_mark_) std::sort(list.begin(), list.end());
      index.from_cache_ = true;
      return index;
    }
    index = SuiteIndex();
  }

  for (const Scanned& f : files) {
    std::string text;
    try {
      text = read_file((fs::path(root) / f.rel).string());
    } catch (const std::exception&) {
      continue;  // unreadable: pytest could not collect it either
    }
    index.add(f.rel, scan(text));
  }
  for (auto& [mark, list] : index.by_mark_) std::sort(list.begin(), list.end());

  if (!cache_file.empty()) {
    rapidjson::Document doc(rapidjson::kObjectType);
    auto& a = doc.GetAllocator();
    doc.AddMember("schema", kCacheSchema, a);
    doc.AddMember("key", json::str(key, a), a);
    doc.AddMember("root", json::str(fs::absolute(root).lexically_normal().string(), a), a);
    json::Value by_file(rapidjson::kObjectType);
    for (const auto& [file, marks] : index.by_file_)
      by_file.AddMember(json::str(file, a), json::str_array(marks, a), a);
    doc.AddMember("files", by_file, a);
    // A cache that cannot be written only costs the next command a rescan.
    try {
      std::error_code ec;
      fs::create_directories(fs::path(cache_file).parent_path(), ec);
      write_file_atomic(cache_file, json::compact(doc) + "\n");
    } catch (const std::exception&) {
    }
  }
  return index;
}

const std::vector<std::string>& SuiteIndex::files_of(const std::string& op) const {
  auto it = by_mark_.find(op);
  return it == by_mark_.end() ? empty_list() : it->second;
}

const std::vector<std::string>& SuiteIndex::marks_of(const std::string& file) const {
  auto it = by_file_.find(file);
  return it == by_file_.end() ? empty_list() : it->second;
}

std::vector<std::string> SuiteIndex::files_to_run(const std::string& op, const std::string& bench_dir) const {
  const std::vector<std::string>& files = files_of(op);
  const std::string home = bench_dir + "/test_" + op + ".py";
  if (std::find(files.begin(), files.end(), home) != files.end()) return {home};
  return files;
}

std::vector<std::string> SuiteIndex::closest(const std::string& name, size_t n) const {
  std::vector<std::pair<size_t, std::string>> scored;
  for (const auto& [mark, files] : by_mark_) {
    size_t d = text::edit_distance(name, mark);
    // A mark that contains the name (bitwise_and -> bitwise_and_tensor) is a
    // better hint than its edit distance says.
    if (!name.empty() && mark.find(name) != std::string::npos) d = std::min(d, size_t{1});
    scored.emplace_back(d, mark);
  }
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> out;
  const size_t limit = std::max<size_t>(3, name.size() / 2);
  for (const auto& [d, mark] : scored) {
    if (out.size() >= n || d > limit) break;
    out.push_back(mark);
  }
  return out;
}

}  // namespace zl
