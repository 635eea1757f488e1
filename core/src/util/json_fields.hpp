// Checked reads of a JSON object that zlcore wrote but a person may have
// edited (a Slurm batch's plan.json): each read names the member by its path
// from the document's root ("batch.idle.check is missing", "batch.ops[2].name
// is not a string"), so the one line a wrong file costs says where to look.
// Every failure is a std::runtime_error; the caller adds the file's name.
#pragma once

#include <rapidjson/document.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace zl::json {

class Fields {
 public:
  // `path` names `obj` in messages ("" for the root); throws unless `obj` is an object.
  Fields(const rapidjson::Value& obj, std::string path);

  bool has(const char* key) const;
  std::string str(const char* key) const;
  double number(const char* key) const;
  int integer(const char* key) const;
  int64_t int64(const char* key) const;
  bool boolean(const char* key) const;
  std::vector<std::string> strings(const char* key) const;
  std::vector<int> integers(const char* key) const;
  // An object whose every value is a string.
  std::map<std::string, std::string> string_map(const char* key) const;
  // An array of [string, string] pairs.
  std::vector<std::pair<std::string, std::string>> string_pairs(const char* key) const;
  Fields object(const char* key) const;
  // An array of objects, each named path.key[i].
  std::vector<Fields> objects(const char* key) const;
  // An array of arrays of strings.
  std::vector<std::vector<std::string>> string_lists(const char* key) const;

 private:
  std::string name(const std::string& key) const;
  const rapidjson::Value& get(const char* key) const;
  [[noreturn]] void wrong(const std::string& what, const std::string& should_be) const;

  const rapidjson::Value* obj_;
  std::string path_;
};

}  // namespace zl::json
