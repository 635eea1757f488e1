#include "probe_cache.hpp"

#include <sys/stat.h>
#include <zl/backend.h>

#include <filesystem>
#include <set>

#include "../util/json.hpp"
#include "../util/json_read.hpp"
#include "zlcore/atomic_file.hpp"
#include "zlcore/sha256.hpp"

namespace zl::loader {
namespace {

namespace fs = std::filesystem;

// 2: load failures are worded as one clean line; verdicts cached with the old
// wording are probed again rather than shown. 3: the probe reads the whole
// table, every device list and state it is given: an "ok" from an earlier
// probe did not, and is probed again.
constexpr int kSchema = 3;

// The cache is only as good as the probe that filled it: another zlcore
// (another ABI, other checks) probes again.
std::string writer() {
  return std::string("zlcore ") + ZL_VERSION + " abi " + std::to_string(ZL_BACKEND_ABI_MAJOR) + "." +
         std::to_string(ZL_BACKEND_ABI_MINOR);
}

uint64_t u64(const json::Value& o, const char* key) {
  auto it = o.FindMember(key);
  return it != o.MemberEnd() && it->value.IsUint64() ? it->value.GetUint64() : 0;
}

}  // namespace

std::optional<FileId> file_id(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  FileId id;
  id.size = static_cast<uint64_t>(st.st_size);
  id.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  id.inode = static_cast<uint64_t>(st.st_ino);
  id.device = static_cast<uint64_t>(st.st_dev);
  return id;
}

ProbeCache::ProbeCache(std::string cache_dir, const std::string& backend_dir) {
  if (cache_dir.empty() || cache_dir == "-") return;
  std::error_code ec;
  const std::string dir = fs::absolute(backend_dir, ec).lexically_normal().string();
  file_ = (fs::path(cache_dir) / ("probes-" + sha256_hex(dir).substr(0, 16) + ".json")).string();
  std::string text;
  try {
    text = read_file(file_);
  } catch (const std::exception&) {
    return;  // none yet
  }
  rapidjson::Document doc;
  if (!json::parse(doc, text).empty() || !doc.IsObject()) return;
  auto schema = doc.FindMember("schema");
  auto by = doc.FindMember("writer");
  auto files = doc.FindMember("files");
  if (schema == doc.MemberEnd() || !schema->value.IsInt() || schema->value.GetInt() != kSchema) return;
  if (by == doc.MemberEnd() || !by->value.IsString() || by->value.GetString() != writer()) return;
  if (files == doc.MemberEnd() || !files->value.IsObject()) return;
  for (const auto& m : files->value.GetObject()) {
    const json::Value& e = m.value;
    if (!e.IsObject()) continue;
    auto ok = e.FindMember("ok");
    auto reason = e.FindMember("reason");
    if (ok == e.MemberEnd() || !ok->value.IsBool() || reason == e.MemberEnd() || !reason->value.IsString()) continue;
    Entry entry;
    entry.id.size = u64(e, "size");
    entry.id.mtime_ns = static_cast<int64_t>(u64(e, "mtime_ns"));
    entry.id.inode = u64(e, "inode");
    entry.id.device = u64(e, "device");
    entry.verdict.ok = ok->value.GetBool();
    entry.verdict.reason = reason->value.GetString();
    auto limit = e.FindMember("timed_out_at_s");
    if (limit != e.MemberEnd() && limit->value.IsNumber()) {
      entry.verdict.timed_out = true;
      entry.timeout_s = limit->value.GetDouble();
    }
    entries_[m.name.GetString()] = entry;
  }
}

const ProbeVerdict* ProbeCache::find(const std::string& path, const FileId& id, double timeout_s) const {
  auto it = entries_.find(path);
  if (it == entries_.end() || !(it->second.id == id)) return nullptr;
  // Given more time than it had, a slow backend deserves another probe.
  if (it->second.verdict.timed_out && timeout_s > it->second.timeout_s) return nullptr;
  return &it->second.verdict;
}

void ProbeCache::put(const std::string& path, const FileId& id, const ProbeVerdict& v, double timeout_s) {
  if (!v.cacheable) return;
  entries_[path] = Entry{id, v, v.timed_out ? timeout_s : 0};
  changed_ = true;
}

std::string ProbeCache::save(const std::vector<std::string>& present) {
  if (file_.empty()) return {};
  const std::set<std::string> keep(present.begin(), present.end());
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (keep.count(it->first)) {
      ++it;
    } else {
      it = entries_.erase(it);
      changed_ = true;
    }
  }
  if (!changed_) return file_;
  rapidjson::Document doc(rapidjson::kObjectType);
  auto& a = doc.GetAllocator();
  doc.AddMember("schema", kSchema, a);
  doc.AddMember("writer", json::str(writer(), a), a);
  json::Value files(rapidjson::kObjectType);
  for (const auto& [path, e] : entries_) {
    json::Value o(rapidjson::kObjectType);
    o.AddMember("size", e.id.size, a);
    o.AddMember("mtime_ns", static_cast<uint64_t>(e.id.mtime_ns), a);
    o.AddMember("inode", e.id.inode, a);
    o.AddMember("device", e.id.device, a);
    o.AddMember("ok", e.verdict.ok, a);
    o.AddMember("reason", json::str(e.verdict.reason, a), a);
    if (e.verdict.timed_out) o.AddMember("timed_out_at_s", e.timeout_s, a);
    files.AddMember(json::str(path, a), o, a);
  }
  doc.AddMember("files", files, a);
  try {
    std::error_code ec;
    fs::create_directories(fs::path(file_).parent_path(), ec);
    write_file_atomic(file_, json::pretty(doc));
    changed_ = false;
  } catch (const std::exception&) {
    return {};
  }
  return file_;
}

}  // namespace zl::loader
