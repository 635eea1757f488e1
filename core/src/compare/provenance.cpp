#include "provenance.hpp"

#include "../util/json_read.hpp"
#include "../util/printable.hpp"

#include <algorithm>
#include <functional>
#include <sstream>

#include "zlcore/identity_schema.hpp"

namespace zl::compare::provenance {
namespace {

namespace key = identity::key;

// Escaped here, as load.cpp's text_at escapes a record's text: a host name
// or a command word holding ESC or a newline reached the terminal raw and
// broke a Markdown table's row.
std::string scalar(const rapidjson::Value* v) {
  if (v == nullptr) return "";
  if (v->IsString()) return printable(std::string(v->GetString(), v->GetStringLength()));
  if (v->IsBool()) return v->GetBool() ? "true" : "false";
  if (v->IsInt64()) return std::to_string(v->GetInt64());
  if (v->IsUint64()) return std::to_string(v->GetUint64());
  if (v->IsNumber()) {
    std::ostringstream s;
    s << v->GetDouble();
    return s.str();
  }
  return "";
}

// An argv as one line to read (and retype): words with spaces or quotes quoted.
std::string argv_text(const rapidjson::Value* v) {
  if (v == nullptr || !v->IsArray()) return scalar(v);
  std::string out;
  for (const auto& e : v->GetArray()) {
    std::string w = scalar(&e);
    const bool plain = !w.empty() && w.find_first_of(" \t'\"\\$`") == std::string::npos;
    if (!plain) {
      std::string q = "'";
      for (char c : w) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
      w = q + "'";
    }
    out += (out.empty() ? "" : " ") + w;
  }
  return out;
}

// The identity keys read, each under its own name; older spellings as fallbacks.
const std::vector<std::vector<const char*>> kKeys = {
    {key::backend_name},
    {key::backend_version},
    {key::device_name},
    {key::device_index},
    {key::device_id},
    {"device.attributes.driver_version"},
    {key::versions_zlcore, key::zlcore_version},
    {key::versions_zlcore_commit},
    {key::versions_flaggems_version, "versions.flag_gems"},
    {key::versions_flaggems_git_sha, key::versions_flaggems_git_sha_core},
    {key::versions_flaggems_dirty, key::versions_flaggems_git_dirty},
    {key::versions_triton},
    {key::versions_torch},
    {key::versions_python},
    {key::host_name},
    {key::flaggems_dir},  // not shown in the block; what history names when it changed
    {key::started},
    {key::ended},
};

using Fact = std::function<std::string(const std::map<std::string, std::string>&)>;

std::string get(const std::map<std::string, std::string>& p, const std::string& k) {
  auto it = p.find(k);
  return it == p.end() ? "" : it->second;
}

std::string or_unknown(const std::string& s) { return s.empty() ? "unknown" : s; }

// A version and the commit it was built from; "" when neither is recorded.
std::string version_and_commit(const std::string& version, const std::string& commit, const std::string& dirty) {
  if (version.empty() && commit.empty()) return "";
  return or_unknown(version) + ", commit " + or_unknown(commit) + (dirty == "true" ? " with uncommitted changes" : "");
}

struct Item {
  const char* what;
  Fact fact;
};

const std::vector<Item>& items() {
  static const std::vector<Item> list = {
      {"backend",
       [](const auto& p) {
         const std::string n = get(p, key::backend_name), v = get(p, key::backend_version);
         // A backend's version may already begin with its name ("host 0.1.0").
         if (n.empty() || v.empty()) return n;
         return v.rfind(n + " ", 0) == 0 ? v : n + " " + v;
       }},
      {"device", [](const auto& p) { return get(p, key::device_name); }},
      {"device index (id)",
       [](const auto& p) {
         const std::string i = get(p, key::device_index), id = get(p, key::device_id);
         if (i.empty() && id.empty()) return std::string();
         return or_unknown(i) + " (" + or_unknown(id) + ")";
       }},
      {"driver", [](const auto& p) { return get(p, "device.attributes.driver_version"); }},
      {"FlagGems",
       [](const auto& p) {
         return version_and_commit(get(p, key::versions_flaggems_version), get(p, key::versions_flaggems_git_sha),
                                   get(p, key::versions_flaggems_dirty));
       }},
      {"zlcore",
       [](const auto& p) {
         return version_and_commit(get(p, key::versions_zlcore), get(p, key::versions_zlcore_commit), "");
       }},
      {"Triton", [](const auto& p) { return get(p, key::versions_triton); }},
      {"torch", [](const auto& p) { return get(p, key::versions_torch); }},
      {"Python", [](const auto& p) { return get(p, key::versions_python); }},
      {"host", [](const auto& p) { return get(p, key::host_name); }},
      {"command", [](const auto& p) { return get(p, key::zlcore_command); }},
  };
  return list;
}

std::string runs_word(size_t n) { return std::to_string(n) + (n == 1 ? " run" : " runs"); }

// One fact over a side's runs: the value all recorded, or each value with
// how many runs had it (the first three), and how many recorded nothing.
std::string over_runs(const Side& s, const Fact& fact) {
  std::vector<std::pair<std::string, size_t>> seen;
  size_t missing = 0;
  for (const RunInfo& run : s.runs) {
    const std::string v = fact(run.provenance);
    if (v.empty()) {
      ++missing;
      continue;
    }
    auto it = std::find_if(seen.begin(), seen.end(), [&](const auto& e) { return e.first == v; });
    if (it == seen.end()) {
      seen.emplace_back(v, 1);
    } else {
      ++it->second;
    }
  }
  if (seen.empty()) return "unknown";
  std::string out;
  if (seen.size() == 1) {
    out = seen.front().first;
  } else {
    for (size_t i = 0; i < seen.size() && i < 3; ++i)
      out += (i ? "; " : "") + seen[i].first + " (" + runs_word(seen[i].second) + ")";
    if (seen.size() > 3) out += "; " + std::to_string(seen.size() - 3) + " other values";
  }
  if (missing > 0) out += " (unknown in " + std::to_string(missing) + " of " + runs_word(s.runs.size()) + ")";
  return out;
}

// From the earliest start to the latest end over a side's runs (ISO 8601
// UTC stamps sort as text).
std::string dates(const Side& s) {
  std::string first, last;
  for (const RunInfo& run : s.runs) {
    const std::string st = get(run.provenance, key::started), en = get(run.provenance, key::ended);
    if (!st.empty() && (first.empty() || st < first)) first = st;
    if (!en.empty() && en > last) last = en;
  }
  if (first.empty() && last.empty()) return "unknown";
  return or_unknown(first) + " to " + or_unknown(last);
}

}  // namespace

std::map<std::string, std::string> read(const rapidjson::Value& identity) {
  std::map<std::string, std::string> out;
  for (const auto& names : kKeys) {
    for (const char* name : names) {
      const std::string v = scalar(json::at_path(identity, name));
      if (v.empty()) continue;
      out[names.front()] = v;
      break;
    }
  }
  if (std::string cmd = argv_text(json::at_path(identity, key::zlcore_command)); !cmd.empty())
    out[key::zlcore_command] = cmd;
  return out;
}

std::vector<Line> lines(const Report& r) {
  std::vector<Line> out;
  for (const Item& item : items()) {
    out.push_back({item.what, over_runs(r.a, item.fact), over_runs(r.b, item.fact)});
    if (std::string(item.what) == "host") out.push_back({"measured (UTC)", dates(r.a), dates(r.b)});
  }
  return out;
}

}  // namespace zl::compare::provenance
