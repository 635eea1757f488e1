#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "zlcore/errors.hpp"
#include "zlcore/plan.hpp"

namespace zl {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void bad(const std::string& source, const std::string& what) {
  throw UsageError("rules file " + source + ": " + what);
}

std::vector<std::string> string_list(const YAML::Node& n, const std::string& source, const std::string& field) {
  std::vector<std::string> out;
  if (!n) return out;
  if (!n.IsSequence()) bad(source, field + " must be a list of capability names");
  for (const YAML::Node& item : n) out.push_back(item.as<std::string>());
  return out;
}

std::optional<DisabledBy> disabled_by(const YAML::Node& n, const std::string& source) {
  if (!n) return std::nullopt;
  if (!n.IsMap() || !n["env"] || !n["value"]) bad(source, "disabled_by must be {env: NAME, value: V}");
  return DisabledBy{n["env"].as<std::string>(), n["value"].as<std::string>()};
}

std::string required(const YAML::Node& n, const char* key, const std::string& source, const std::string& where) {
  if (!n[key] || !n[key].IsScalar()) bad(source, where + " needs a '" + key + "'");
  return n[key].as<std::string>();
}

template <typename Rule>
void upsert(std::vector<Rule>& rules, Rule rule) {
  auto it = std::find_if(rules.begin(), rules.end(), [&](const Rule& r) { return r.name == rule.name; });
  if (it != rules.end()) {
    *it = std::move(rule);
  } else {
    rules.push_back(std::move(rule));
  }
}

std::map<std::string, std::string> env_from(const YAML::Node& env, const std::string& source,
                                            const std::string& owner) {
  std::map<std::string, std::string> out;
  if (!env) return out;
  if (!env.IsMap()) bad(source, owner + " env must map variables to capability keys");
  for (const auto& kv : env) out[kv.first.as<std::string>()] = kv.second.as<std::string>();
  return out;
}

void parse_profilers(const YAML::Node& profilers, const std::string& source, Rules& into) {
  if (!profilers.IsSequence()) bad(source, "profilers must be a list");
  for (const YAML::Node& p : profilers) {
    ProfilerRule r;
    r.name = required(p, "name", source, "a profiler");
    r.module = required(p, "module", source, "profiler '" + r.name + "'");
    r.priority = p["priority"] ? p["priority"].as<int>() : 0;
    r.requires_caps = string_list(p["requires"], source, "requires");
    r.env_from = env_from(p["env"], source, "profiler '" + r.name + "'");
    r.summary = p["summary"] ? p["summary"].as<std::string>() : "";
    r.source = source;
    upsert(into.profilers, std::move(r));
  }
}

}  // namespace

void parse_rules(const std::string& yaml_text, const std::string& source, Rules& into) {
  YAML::Node doc;
  try {
    doc = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    bad(source, e.what());
  }
  if (!doc.IsMap()) bad(source, "expected a mapping with pytest_plugins and timers");
  try {
    if (const YAML::Node plugins = doc["pytest_plugins"]) {
      if (!plugins.IsSequence()) bad(source, "pytest_plugins must be a list");
      for (const YAML::Node& p : plugins) {
        PluginRule r;
        r.name = required(p, "name", source, "a pytest plugin");
        r.module = required(p, "module", source, "pytest plugin '" + r.name + "'");
        r.requires_caps = string_list(p["requires"], source, "requires");
        r.disabled_by = disabled_by(p["disabled_by"], source);
        r.source = source;
        upsert(into.plugins, std::move(r));
      }
    }
    if (const YAML::Node timers = doc["timers"]) {
      if (!timers.IsSequence()) bad(source, "timers must be a list");
      for (const YAML::Node& t : timers) {
        TimerRule r;
        r.name = required(t, "name", source, "a timer");
        r.module = t["module"] ? t["module"].as<std::string>() : "";
        r.priority = t["priority"] ? t["priority"].as<int>() : 0;
        r.requires_caps = string_list(t["requires"], source, "requires");
        r.fallback = t["fallback"] ? t["fallback"].as<std::string>() : "";
        r.env_from = env_from(t["env"], source, "timer '" + r.name + "'");
        r.disabled_by = disabled_by(t["disabled_by"], source);
        r.summary = t["summary"] ? t["summary"].as<std::string>() : "";
        r.clock = t["clock"] ? t["clock"].as<std::string>() : "device";
        if (r.clock != "device" && r.clock != "host")
          bad(source, "timer '" + r.name + "' clock must be device or host, not '" + r.clock + "'");
        if (t["l2"]) {
          r.l2 = string_list(t["l2"], source, "timer '" + r.name + "' l2");
          for (const std::string& m : r.l2) {
            if (m != "warm" && m != "cold") bad(source, "timer '" + r.name + "' l2 lists '" + m + "'; use warm, cold");
          }
        }
        r.l2_why = t["l2_why"] ? t["l2_why"].as<std::string>() : "";
        r.source = source;
        upsert(into.timers, std::move(r));
      }
    }
    if (const YAML::Node profilers = doc["profilers"]) parse_profilers(profilers, source, into);
  } catch (const YAML::Exception& e) {
    bad(source, e.what());
  }
  into.files.push_back(source);
}

Rules load_rules(const std::string& data_dir) {
  Rules rules;
  auto read = [&](const fs::path& p) {
    std::ifstream in(p);
    if (!in) throw UsageError("cannot read rules file " + p.string() + " (set ZL_DATA_DIR to zlcore's share/zlcore)");
    std::stringstream ss;
    ss << in.rdbuf();
    parse_rules(ss.str(), p.string(), rules);
  };
  read(fs::path(data_dir) / "rules.yaml");
  std::error_code ec;
  std::vector<fs::path> extra;
  for (fs::directory_iterator it(fs::path(data_dir) / "rules.d", ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() == ".yaml") extra.push_back(it->path());
  }
  std::sort(extra.begin(), extra.end());
  for (const fs::path& p : extra) read(p);
  return rules;
}

}  // namespace zl
