// `zlcore backends --json` as the plugin tests read it: which backends
// loaded, and why each rejected one was (by its file name).
#pragma once

#include <rapidjson/document.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace zltest {

inline std::map<std::string, std::string> rejected(const std::string& json, std::vector<std::string>* loaded) {
  std::map<std::string, std::string> out;
  rapidjson::Document d;
  d.Parse(json.c_str());
  if (d.HasParseError() || !d.IsObject()) return out;
  for (const auto& b : d["backends"].GetArray()) loaded->push_back(b["name"].GetString());
  for (const auto& r : d["rejected"].GetArray()) {
    out[std::filesystem::path(r["path"].GetString()).filename().string()] = r["reason"].GetString();
  }
  return out;
}

}  // namespace zltest
