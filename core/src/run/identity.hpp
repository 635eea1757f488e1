// The run identity document: built up during a run, written atomically at the
// start (status running) and at the end. Everything that changes a number.
#pragma once

#include <rapidjson/document.h>

#include <map>
#include <string>
#include <vector>

#include "../util/clock.hpp"
#include "zlcore/identity_schema.hpp"

namespace zl {

class Identity {
 public:
  Identity();
  rapidjson::Document& doc() { return doc_; }
  rapidjson::Document::AllocatorType& alloc() { return doc_.GetAllocator(); }

  // Sets a value at a dotted path ("tuner_cache.kind"), creating objects.
  // Throws std::logic_error for a path identity_schema.hpp does not list:
  // a key spelled anywhere else would be one compare and the docs miss.
  void set(const std::string& path, rapidjson::Value value);
  void set(const std::string& path, const std::string& value);
  void set(const std::string& path, const char* value) { set(path, std::string(value)); }
  void set(const std::string& path, int64_t value);
  void set(const std::string& path, double value);
  void set(const std::string& path, bool value);
  void set_null(const std::string& path);
  void set(const std::string& path, const std::vector<std::string>& values);
  void set(const std::string& path, const std::map<std::string, std::string>& values);
  // Nullptr when absent.
  const rapidjson::Value* get(const std::string& path) const;

  void write(const std::string& path) const;

 private:
  rapidjson::Document doc_;
};

// The environment knobs that change numbers: ZL_*, the provider's
// knob_prefixes() (TRITON_*, GEMS_*, FLAGGEMS_*, ...) and every variable
// ZL_CALIBER_ENV names, from our environment overlaid with the child's.
std::map<std::string, std::string> number_knobs(const std::map<std::string, std::string>& child_env);

}  // namespace zl
