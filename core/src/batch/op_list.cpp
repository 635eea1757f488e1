// The operators of a batch: a comma list, a text file (one per line) or a
// YAML file with per-op node, dtypes and shape file.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>
#include <sstream>

#include "../util/printable.hpp"
#include "../util/text.hpp"
#include "zlcore/atomic_file.hpp"
#include "zlcore/batch.hpp"
#include "zlcore/errors.hpp"
#include "zlcore/provider.hpp"
#include "zlcore/sha256.hpp"

namespace fs = std::filesystem;

namespace zl::batch {
namespace {

bool names_file(const std::string& word) {
  return word.find("::") == std::string::npos && word.size() > 3 && word.compare(word.size() - 3, 3, ".py") == 0;
}

// A pytest node id (file::test) runs as --test-node; a test file expands to
// its marks once the suite is known; a bare word is an op (a mark). `all` is
// a mark too (FlagGems has an `all` op): only the whole --ops value `all`
// means every op (parse_ops_flag).
OpSpec from_word(const std::string& word) {
  OpSpec spec;
  spec.name = word;
  if (names_file(word)) {
    spec.op_file = word;
    spec.expand = OpSpec::Expand::file;
  } else if (word.find("::") != std::string::npos) {
    spec.test_node = word;
  } else {
    spec.op = word;
  }
  return spec;
}

std::vector<std::string> yaml_strings(const YAML::Node& n, const std::string& where) {
  if (n.IsScalar()) return text::split(n.as<std::string>(), ",", text::kSpace);
  if (!n.IsSequence()) throw UsageError(where + ": dtypes must be a list or a comma string");
  std::vector<std::string> out;
  for (const YAML::Node& item : n) out.push_back(item.as<std::string>());
  return out;
}

OpSpec from_yaml_item(const YAML::Node& item, size_t index, const std::string& base_dir) {
  const std::string where = "ops[" + std::to_string(index) + "]";
  if (item.IsScalar()) return from_word(text::trim(item.as<std::string>()));
  if (!item.IsMap()) throw UsageError(where + ": expected an op name or a map");
  OpSpec spec;
  for (const auto& kv : item) {
    const std::string key = kv.first.as<std::string>();
    const YAML::Node& v = kv.second;
    if (key == "name" || key == "op") {
      spec.op = text::trim(v.as<std::string>());
    } else if (key == "file") {
      spec.op_file = text::trim(v.as<std::string>());
    } else if (key == "node" || key == "test_node") {
      spec.test_node = text::trim(v.as<std::string>());
    } else if (key == "dtypes") {
      spec.dtypes = yaml_strings(v, where);
    } else if (key == "shape_file" || key == "shapes") {
      fs::path p = v.as<std::string>();
      spec.shape_file = (p.is_absolute() ? p : fs::path(base_dir) / p).lexically_normal().string();
    } else {
      throw UsageError(where + ": unknown key '" + key + "' (name, file, node, dtypes, shape_file)");
    }
  }
  if (spec.op.empty() && spec.test_node.empty() && spec.op_file.empty()) {
    throw UsageError(where + ": needs a name, a file or a node");
  }
  if (spec.op.empty() && spec.test_node.empty()) spec.expand = OpSpec::Expand::file;
  spec.name = !spec.op.empty() ? spec.op : !spec.test_node.empty() ? spec.test_node : spec.op_file;
  return spec;
}

// Op entries (docs/batch.md, "Op names"): names, files and node ids are
// checked once, before anything is written, so none can fail later as a
// path, a log name or a terminal escape.
constexpr size_t kMaxEntryBytes = 1024;

// An entry as a message quotes it: control bytes escaped (a NUL would cut
// the message short), a long one cut.
std::string shown(const std::string& entry) {
  return entry.size() > 80 ? printable(entry.substr(0, 60)) + "... (" + std::to_string(entry.size()) + " bytes)"
                           : printable(entry);
}

std::string file_problem(const std::string& file) {
  if (file.empty() || file.size() > kMaxEntryBytes) return "a benchmark file path is 1-1024 bytes";
  const bool ok = std::all_of(file.begin(), file.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '/' || c == '-' || c == '+';
  });
  if (!ok) return "a benchmark file path is letters, digits and _ . / - +";
  if (file.size() < 4 || file.compare(file.size() - 3, 3, ".py") != 0) return "a benchmark file ends in .py";
  return "";
}

std::string node_problem(const std::string& node) {
  const size_t sep = node.find("::");
  if (sep == std::string::npos || sep + 2 >= node.size()) return "a node id is FILE::TEST";
  if (node.size() > kMaxEntryBytes) return "a node id is at most 1024 bytes";
  if (const std::string why = file_problem(node.substr(0, sep)); !why.empty()) return why;
  const bool ok =
      std::all_of(node.begin() + static_cast<long>(sep), node.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
  return ok ? "" : "a node id's test part is printable ASCII";
}

std::string entry_problem(const OpSpec& op) {
  if (!op.op.empty() && !FlagGemsProvider::valid_op_name(op.op)) {
    return "an op (a mark of the suite) is letters, digits and '_', 1-200 characters";
  }
  if (!op.op_file.empty()) {
    if (std::string why = file_problem(op.op_file); !why.empty()) return why;
  }
  if (!op.test_node.empty()) return node_problem(op.test_node);
  return "";
}

}  // namespace

std::vector<OpSpec> parse_ops_flag(const std::string& list) {
  std::vector<OpSpec> ops;
  if (text::trim(list) == "all") {
    OpSpec every;
    every.name = "all";
    every.expand = OpSpec::Expand::all;
    return {every};
  }
  for (const std::string& word : text::split(list, ",", text::kSpace)) ops.push_back(from_word(word));
  return ops;
}

std::vector<OpSpec> parse_ops_text(const std::string& text) {
  std::vector<OpSpec> ops;
  std::stringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    line = text::trim(line);
    if (!line.empty()) ops.push_back(from_word(line));
  }
  return ops;
}

std::vector<OpSpec> parse_ops_yaml(const std::string& text, const std::string& base_dir) {
  YAML::Node doc;
  try {
    doc = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw UsageError(std::string("not valid YAML: ") + e.what());
  }
  YAML::Node list = doc.IsMap() ? doc["ops"] : doc;
  if (!list || !list.IsSequence()) throw UsageError("expected a list of ops, or a map with an 'ops' list");
  std::vector<OpSpec> ops;
  try {
    for (size_t i = 0; i < list.size(); ++i) ops.push_back(from_yaml_item(list[i], i, base_dir));
  } catch (const YAML::Exception& e) {
    throw UsageError(std::string("bad op entry: ") + e.what());
  }
  return ops;
}

std::vector<OpSpec> load_ops_file(const std::string& path) {
  std::string text;
  try {
    text = read_file(path);
  } catch (const std::exception& e) {
    // Names what the path is: a directory, a FIFO, a device, missing.
    throw UsageError(std::string("--ops-file: ") + e.what());
  }
  // A NUL would end the message that quotes the entry, so the user would
  // see half of it: said here, by line and byte, before any entry is read.
  if (const size_t nul = text.find('\0'); nul != std::string::npos) {
    const size_t line = 1 + static_cast<size_t>(std::count(text.begin(), text.begin() + static_cast<long>(nul), '\n'));
    throw UsageError("--ops-file " + path + ": line " + std::to_string(line) + " holds a NUL byte (byte " +
                     std::to_string(nul + 1) + "): an ops file is text, one op entry a line, or YAML");
  }
  const std::string ext = fs::path(path).extension().string();
  std::vector<OpSpec> ops;
  try {
    ops = (ext == ".yaml" || ext == ".yml") ? parse_ops_yaml(text, fs::absolute(path).parent_path().string())
                                            : parse_ops_text(text);
  } catch (const UsageError& e) {
    throw UsageError("--ops-file " + path + ": " + e.what());
  }
  check_ops(ops, "--ops-file " + path);
  return ops;
}

bool needs_expansion(const std::vector<OpSpec>& ops) {
  return std::any_of(ops.begin(), ops.end(), [](const OpSpec& o) { return o.expand != OpSpec::Expand::none; });
}

std::vector<OpSpec> expand_ops(const std::vector<OpSpec>& ops, const SuiteIndex& index, const std::string& suite_root) {
  std::set<std::string> listed;
  for (const OpSpec& op : ops) {
    if (op.expand == OpSpec::Expand::none) listed.insert(op.name);
  }
  std::vector<OpSpec> out;
  auto add = [&](const OpSpec& from, const std::string& mark, const std::string& file) {
    if (!listed.insert(mark).second) return;
    OpSpec spec = from;
    spec.expand = OpSpec::Expand::none;
    spec.name = mark;
    spec.op = mark;
    spec.op_file = file;
    out.push_back(spec);
  };
  for (const OpSpec& op : ops) {
    if (op.expand == OpSpec::Expand::none) {
      out.push_back(op);
    } else if (op.expand == OpSpec::Expand::all) {
      if (index.marks().empty()) throw UsageError("'all': the suite at " + suite_root + " marks no op");
      for (const auto& [mark, files] : index.marks()) add(op, mark, "");
    } else {
      // As the index names it: relative to the suite root.
      fs::path f = fs::path(op.op_file).lexically_normal();
      if (f.is_absolute()) f = f.lexically_relative(fs::path(suite_root).lexically_normal());
      const std::vector<std::string>& marks = index.marks_of(f.generic_string());
      if (marks.empty()) {
        throw UsageError("'" + op.op_file + "' is not a benchmark file of the suite at " + suite_root +
                         " that marks an op (give a path relative to the suite root, e.g. benchmark/test_abs.py)");
      }
      for (const std::string& mark : marks) add(op, mark, f.generic_string());
    }
  }
  return out;
}

std::vector<OpSpec> ops_from_flags(const std::string* ops_flag, const std::string* ops_file,
                                   const std::string& command) {
  if (ops_flag != nullptr && ops_file != nullptr) throw UsageError(command + ": give --ops or --ops-file, not both");
  if (ops_flag != nullptr) {
    std::vector<OpSpec> ops = parse_ops_flag(*ops_flag);
    check_ops(ops, "--ops");
    return ops;
  }
  if (ops_file != nullptr) return load_ops_file(*ops_file);
  throw UsageError(command + ": give the ops with --ops a,b,c or --ops-file F");
}

void check_ops(const std::vector<OpSpec>& ops, const std::string& what) {
  if (ops.empty()) throw UsageError(what + ": no operators");
  std::set<std::string> names, dirs;
  for (const OpSpec& op : ops) {
    if (const std::string why = entry_problem(op); !why.empty()) {
      throw UsageError(what + ": '" + shown(op.name) + "' is not an op entry: " + why +
                       " (docs/batch.md, \"Op names\")");
    }
    if (op.expand != OpSpec::Expand::none) continue;  // checked once expanded
    if (!names.insert(op.name).second) throw UsageError(what + ": '" + shown(op.name) + "' is listed twice");
    // Two names that map to one run directory would overwrite each other.
    if (!dirs.insert(op_dir_name(op.name)).second) {
      throw UsageError(what + ": '" + shown(op.name) + "' collides with another op's directory " +
                       op_dir_name(op.name));
    }
  }
}

std::string op_dir_name(const std::string& name) {
  std::string out;
  for (char c : name) {
    bool safe = std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
    out += safe ? c : '_';
  }
  if (out.empty() || out[0] == '.') out = "_" + out;
  // File names stop at 255 bytes; a longer name keeps its start and a hash
  // of the whole, so two long names still get two directories.
  if (out.size() > 160) out = out.substr(0, 140) + "-" + sha256_hex(name).substr(0, 16);
  return out;
}

std::string replay_source_for(const std::string& from, const std::string& op_name) {
  namespace fs = std::filesystem;
  const std::string dir = op_dir_name(op_name);
  std::error_code ec;
  fs::path local = fs::path(from) / "runs" / dir;
  if (fs::is_directory(local, ec)) return local.string();
  // A Slurm batch: each op ran in exactly one shard (a rerun moves the old
  // run aside as runs/<op>.attemptN, so runs/<op> is the latest).
  std::vector<fs::path> found;
  for (fs::directory_iterator it(fs::path(from) / "shards", ec), end; !ec && it != end; it.increment(ec)) {
    fs::path candidate = it->path() / "runs" / dir;
    if (fs::is_directory(candidate)) found.push_back(candidate);
  }
  std::sort(found.begin(), found.end());
  return found.empty() ? from : found.back().string();
}

}  // namespace zl::batch
