#include "identity.hpp"
#include "zlcore/provider.hpp"
#include "zlcore/run.hpp"

#include <sys/time.h>

#include <unistd.h>  // environ (glibc declares it under _GNU_SOURCE)
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <set>
#include <stdexcept>

#include "../util/json.hpp"
#include "../util/text.hpp"
#include "zlcore/atomic_file.hpp"
#include "zlcore/l2_policy.hpp"

namespace zl {

Identity::Identity() { doc_.SetObject(); }

void Identity::set(const std::string& path, rapidjson::Value value) {
  if (!identity::known(path)) throw std::logic_error("identity key not in identity_schema.hpp: " + path);
  rapidjson::Value* node = &doc_;
  size_t start = 0;
  while (true) {
    size_t dot = path.find('.', start);
    std::string key = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    rapidjson::Value name(key.c_str(), static_cast<rapidjson::SizeType>(key.size()), alloc());
    if (dot == std::string::npos) {
      auto it = node->FindMember(key.c_str());
      if (it != node->MemberEnd()) {
        it->value = value;
      } else {
        node->AddMember(name, value, alloc());
      }
      return;
    }
    auto it = node->FindMember(key.c_str());
    if (it == node->MemberEnd() || !it->value.IsObject()) {
      if (it != node->MemberEnd()) node->RemoveMember(it);
      node->AddMember(name, rapidjson::Value(rapidjson::kObjectType), alloc());
      it = node->FindMember(key.c_str());
    }
    node = &it->value;
    start = dot + 1;
  }
}

void Identity::set(const std::string& path, const std::string& value) { set(path, json::str(value, alloc())); }
void Identity::set(const std::string& path, int64_t value) { set(path, rapidjson::Value(value)); }
void Identity::set(const std::string& path, double value) { set(path, rapidjson::Value(value)); }
void Identity::set(const std::string& path, bool value) { set(path, rapidjson::Value(value)); }
void Identity::set_null(const std::string& path) { set(path, rapidjson::Value(rapidjson::kNullType)); }
void Identity::set(const std::string& path, const std::vector<std::string>& values) {
  set(path, json::str_array(values, alloc()));
}
void Identity::set(const std::string& path, const std::map<std::string, std::string>& values) {
  set(path, json::str_map(values, alloc()));
}

const rapidjson::Value* Identity::get(const std::string& path) const {
  const rapidjson::Value* node = &doc_;
  size_t start = 0;
  while (node->IsObject()) {
    size_t dot = path.find('.', start);
    std::string key = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    auto it = node->FindMember(key.c_str());
    if (it == node->MemberEnd()) return nullptr;
    if (dot == std::string::npos) return &it->value;
    node = &it->value;
    start = dot + 1;
  }
  return nullptr;
}

void Identity::write(const std::string& path) const { write_file_atomic(path, json::pretty(doc_)); }

std::map<std::string, std::string> number_knobs(const std::map<std::string, std::string>& child_env) {
  std::set<std::string> named;
  const char* caliber_env = std::getenv(kCaliberEnv);
  for (const std::string& n : text::split(caliber_env != nullptr ? caliber_env : "", ",")) {
    if (!n.empty()) named.insert(n);
  }
  auto wanted = [&](const std::string& k) {
    if (named.count(k) || k.rfind("ZL_", 0) == 0) return true;
    for (const std::string& p : FlagGemsProvider::knob_prefixes()) {
      if (k.rfind(p, 0) == 0) return true;
    }
    return false;
  };
  std::map<std::string, std::string> out;
  for (char** e = environ; *e != nullptr; ++e) {
    const char* eq = std::strchr(*e, '=');
    if (eq == nullptr) continue;
    std::string k(static_cast<const char*>(*e), eq);
    if (wanted(k)) out[k] = eq + 1;
  }
  for (const auto& [k, v] : child_env) {
    if (wanted(k)) out[k] = v;
  }
  // Every child is told; only a compile-only run's identity says so.
  if (out.count("ZL_COMPILE_ONLY") && out["ZL_COMPILE_ONLY"] == "0") out.erase("ZL_COMPILE_ONLY");
  // Paths that differ per run but change no number would make every A/B look
  // mismatched, and the autotune mode is compared as a pairing (record then
  // replay is the fair one), not as a knob; all are recorded elsewhere in the
  // identity.
  for (const char* k : {"ZL_RUN_DIR", "ZL_RESULTS_FILE", "ZL_CHILD_DIR", "ZL_AUTOTUNE_RECORD_DIR", "ZL_REPLAY_RECORDS",
                        "ZL_AUTOTUNE_MODE", "ZL_EXPECT_DEVICE_ID", FlagGemsProvider::tuner_cache_env(),
                        "TRITON_CACHE_DIR", "ZL_BACKEND_PATH", "ZL_BATCH_HEARTBEAT_S", kCaliberEnv,
                        // timer.l2 and timer.l2_bytes: recorded there, so that a warm
                        // run's env matches that of a run older than the policy.
                        kL2Knob, kL2BytesEnv}) {
    out.erase(k);
  }
  // The profile setting is recorded as `profile`; its knob and the plan's
  // ZL_PROFILER* variables change no number, so a profiled run's env matches
  // an unprofiled one's.
  for (auto it = out.begin(); it != out.end();) {
    it = it->first.rfind(kProfileKnob, 0) == 0 ? out.erase(it) : std::next(it);
  }
  return out;
}

}  // namespace zl
