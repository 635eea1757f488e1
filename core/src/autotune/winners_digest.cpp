#include "winners_digest.hpp"

#include <algorithm>

#include "../util/json.hpp"
#include "zlcore/sha256.hpp"

namespace zl::autotune_internal {
namespace {

void add(WinnersDigest& d, const std::string& name, KernelWinners k) {
  std::string key = name;
  // A LibTuner kernel and a plain-autotune one may share a name.
  if (d.kernels.count(key)) key += " (" + k.kind + ")";
  d.kernels[key] = std::move(k);
}

}  // namespace

WinnersDigest winners_digest(const std::vector<UsedTable>& libtuner, const rapidjson::Value& plugin) {
  WinnersDigest d;
  // A kernel's winners may sit in several tables (one per key arity).
  std::map<std::string, std::vector<std::string>> lines;
  for (const UsedTable& t : libtuner) {
    for (const UsedRow& r : t.rows)
      lines[t.kernel].push_back(t.table + "\t" + r.key_string + "\t" + json::compact(r.config));
  }
  for (auto& [kernel, ls] : lines) {
    std::sort(ls.begin(), ls.end());
    std::string text;
    for (const std::string& l : ls) text += l + "\n";
    add(d, kernel, {"libtuner", static_cast<int>(ls.size()), sha256_hex(text)});
  }
  if (plugin.IsObject()) {
    auto tw = plugin.FindMember("triton_winners");
    if (tw != plugin.MemberEnd() && tw->value.IsObject()) {
      for (auto it = tw->value.MemberBegin(); it != tw->value.MemberEnd(); ++it) {
        const rapidjson::Value& k = it->value;
        if (!k.IsObject()) continue;
        auto name = k.FindMember("kernel"), entries = k.FindMember("entries"), sha = k.FindMember("sha256");
        if (sha == k.MemberEnd() || !sha->value.IsString()) continue;
        const std::string kid = it->name.GetString();
        add(d, name != k.MemberEnd() && name->value.IsString() ? name->value.GetString() : kid,
            {"triton", entries != k.MemberEnd() && entries->value.IsInt() ? entries->value.GetInt() : 0,
             sha256_hex(kid + "\n" + sha->value.GetString())});
      }
    }
  }
  std::string all;
  for (const auto& [name, k] : d.kernels) all += name + "\t" + k.kind + "\t" + k.sha256 + "\n";
  d.hash = sha256_hex(all);
  return d;
}

}  // namespace zl::autotune_internal
