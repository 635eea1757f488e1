// Record mode's last step: the LibTuner winners the run used, one JSON file
// per table, the plugin's plain-autotune files summarized, and the manifest
// that hashes them all (docs/autotune.md, "Records").
#include <rapidjson/document.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>

#include "../util/json.hpp"
#include "libtuner_schema.hpp"
#include "record_fields.hpp"
#include "records.hpp"
#include "zlcore/atomic_file.hpp"

namespace zl::autotune_internal {
namespace {

namespace fs = std::filesystem;
using json::Alloc;
using json::Value;

constexpr int kSchema = kRecordSchema;

std::string safe_file_name(const std::string& name) {
  std::string out;
  for (char c : name)
    out += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-') ? c : '_';
  return out.substr(0, 200);
}

struct Harvest {
  int files = 0;
  int rows = 0;
  Value kernels{rapidjson::kArrayType};
};

// Writes libtuner/<db stem>/<table>.json for every winners table with rows
// the run used (used_winners.hpp says which).
void harvest_libtuner(const std::vector<UsedTable>& tables, const fs::path& out_dir, Alloc& ma, Harvest* h) {
  for (const UsedTable& t : tables) {
    rapidjson::Document doc;
    doc.SetObject();
    Alloc& a = doc.GetAllocator();
    doc.AddMember("schema", kSchema, a);
    doc.AddMember("kind", "libtuner", a);
    doc.AddMember("db_file", json::str(t.db_file, a), a);
    doc.AddMember("table", json::str(t.table, a), a);
    doc.AddMember("kernel", json::str(t.kernel, a), a);
    doc.AddMember("kernel_hash", json::str(t.kernel_hash, a), a);
    Value columns(rapidjson::kArrayType), key_cols(rapidjson::kArrayType), fields(rapidjson::kArrayType);
    for (const LibTunerColumn& c : t.columns) {
      Value col(rapidjson::kObjectType);
      col.AddMember("name", json::str(c.name, a), a);
      col.AddMember("type", json::str(c.type, a), a);
      col.AddMember("pk", c.pk, a);
      columns.PushBack(col, a);
      (c.name.rfind("key_", 0) == 0 ? key_cols : fields).PushBack(json::str(c.name, a), a);
    }
    doc.AddMember("columns", columns, a);
    doc.AddMember("key_columns", key_cols, a);
    doc.AddMember("config_fields", fields, a);
    Value list_v(rapidjson::kArrayType);
    for (const UsedRow& r : t.rows) {
      Value e(rapidjson::kObjectType);
      e.AddMember("key_string", json::str(r.key_string, a), a);
      e.AddMember("key", Value(r.key, a), a);
      e.AddMember("config", Value(r.config, a), a);
      list_v.PushBack(e, a);
    }
    doc.AddMember("entries", list_v, a);

    fs::path file = out_dir / "libtuner" / safe_file_name(t.db_stem) / (safe_file_name(t.table) + ".json");
    fs::create_directories(file.parent_path());
    write_file_atomic(file.string(), json::pretty(doc));
    h->files++;
    h->rows += static_cast<int>(t.rows.size());
    Value k(rapidjson::kObjectType);
    k.AddMember("kind", "libtuner", ma);
    k.AddMember("kernel", json::str(t.kernel, ma), ma);
    k.AddMember("table", json::str(t.table, ma), ma);
    k.AddMember("db_file", json::str(t.db_file, ma), ma);
    k.AddMember("kernel_hash", json::str(t.kernel_hash, ma), ma);
    k.AddMember("entries", static_cast<int>(t.rows.size()), ma);
    h->kernels.PushBack(k, ma);
  }
}

// Summaries of the plugin's plain-autotune files, for the manifest.
void summarize_triton_records(const fs::path& out_dir, Alloc& ma, Harvest* h) {
  std::error_code ec;
  std::vector<fs::path> files;
  for (fs::directory_iterator it(out_dir / "triton_autotune", ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() == ".json") files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    rapidjson::Document d = load_json(f);
    const Value* entries = member(d, "entries");
    int n = entries != nullptr && entries->IsArray() ? static_cast<int>(entries->Size()) : 0;
    Value k(rapidjson::kObjectType);
    k.AddMember("kind", "triton_autotune", ma);
    k.AddMember("id", json::str(str_member(d, "id"), ma), ma);
    k.AddMember("kernel", json::str(str_member(d, "kernel"), ma), ma);
    k.AddMember("source_hash", json::str(str_member(d, "source_hash"), ma), ma);
    k.AddMember("entries", n, ma);
    h->kernels.PushBack(k, ma);
    h->files++;
    h->rows += n;
  }
}

}  // namespace

void write_records(const AutotuneSetup& setup, const CacheDirs& dirs, const rapidjson::Value& plugin,
                   const std::vector<UsedTable>& tables, const fs::path& out, AutotuneResult& r) {
  fs::create_directories(out);
  rapidjson::Document manifest;
  manifest.SetObject();
  Alloc& a = manifest.GetAllocator();
  Harvest h;
  harvest_libtuner(tables, out, a, &h);
  summarize_triton_records(out, a, &h);
  r.records_written = h.rows;
  r.record_files = h.files;

  std::map<std::string, std::string> files;
  r.records_hash = records_hash(out.string(), &files);
  manifest.AddMember("schema", kSchema, a);
  manifest.AddMember("run_id", json::str(setup.run_id, a), a);
  const Value* tv = member(plugin, "triton_version");
  if (tv != nullptr && tv->IsString()) {
    manifest.AddMember("triton_version", json::str(tv->GetString(), a), a);
  } else {
    manifest.AddMember("triton_version", Value(rapidjson::kNullType), a);
  }
  manifest.AddMember("cache_kind", json::str(dirs.isolated ? "isolated" : "shared", a), a);
  manifest.AddMember("records_hash", json::str(r.records_hash, a), a);
  manifest.AddMember("records_hash_rule",
                     "sha256 of the lines '<sha256>  <path>' of every file but manifest.json, sorted by path", a);
  Value counts(rapidjson::kObjectType);
  counts.AddMember("files", h.files, a);
  counts.AddMember("entries", h.rows, a);
  counts.AddMember("tuning_benchmarks", r.tuning_benchmarks, a);
  manifest.AddMember("counts", counts, a);
  manifest.AddMember("kernels", h.kernels, a);
  manifest.AddMember("files", json::str_map(files, a), a);
  write_file_atomic((out / "manifest.json").string(), json::pretty(manifest));
}

}  // namespace zl::autotune_internal
