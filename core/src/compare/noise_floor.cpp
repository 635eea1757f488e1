// Reading a noise-floor file (written by `compare --calibrate ... --out F`)
// and the bar it sets for a row. The file is checked whole before any of it
// is used: a floor silently dropped would make a noisy row look confirmed.
#include <rapidjson/document.h>

#include <cmath>
#include <filesystem>

#include "../util/file_kind.hpp"
#include "../util/json_read.hpp"
#include "zlcore/compare.hpp"
#include "zlcore/compare_calibrate.hpp"
#include "zlcore/compare_stats.hpp"
#include "zlcore/errors.hpp"
#include "zlcore/sha256.hpp"

namespace zl::compare {
namespace {

std::string string_member(const rapidjson::Value& o, const char* key, bool& ok) {
  auto it = o.FindMember(key);
  if (it == o.MemberEnd() || !it->value.IsString()) {
    ok = false;
    return "";
  }
  return std::string(it->value.GetString(), it->value.GetStringLength());
}

}  // namespace

NoiseFloor load_noise_floor(const std::string& path) {
  const std::string where = "compare: --noise-floor " + path + ": ";
  const std::string expected = "expected a regular file written by 'zlcore compare --calibrate A1 A2 ... --out FILE'";
  if (const std::string kind = not_a_regular_file(path); !kind.empty())
    throw UsageError(where + kind + "; " + expected);
  std::string text;
  try {
    text = read_regular_file(path);
  } catch (const std::exception& e) {
    throw UsageError("compare: --noise-floor: " + std::string(e.what()) + "; " + expected);
  }
  rapidjson::Document d;
  if (const std::string why = json::parse(d, text); !why.empty() || !d.IsObject()) {
    throw UsageError(where + "not JSON (" + (why.empty() ? "not an object" : why) + "); " + expected);
  }
  auto kind = d.FindMember("kind");
  if (kind == d.MemberEnd() || !kind->value.IsString() || std::string(kind->value.GetString()) != kNoiseFloorKind) {
    throw UsageError(where + "not a noise-floor file (its \"kind\" is not \"" + kNoiseFloorKind + "\")");
  }
  auto version = d.FindMember("version");
  if (version == d.MemberEnd() || !version->value.IsInt() || version->value.GetInt() != kNoiseFloorVersion) {
    throw UsageError(where + "a noise-floor file of another version; this zlcore reads version " +
                     std::to_string(kNoiseFloorVersion));
  }
  NoiseFloor nf;
  nf.path = path;
  nf.sha256 = sha256_hex(text);
  if (auto runs = d.FindMember("runs"); runs != d.MemberEnd() && runs->value.IsArray()) {
    nf.calibration_runs = runs->value.Size();
  }
  auto rows = d.FindMember("rows");
  if (rows == d.MemberEnd() || !rows->value.IsArray()) throw UsageError(where + "has no \"rows\" list");
  size_t index = 0;
  for (const auto& r : rows->value.GetArray()) {
    bool ok = r.IsObject();
    NoiseFloorRow row;
    if (ok) {
      row.op = string_member(r, "op", ok);
      row.dtype = string_member(r, "dtype", ok);
      row.shape = string_member(r, "shape", ok);
      auto runs = r.FindMember("runs");
      auto floor = r.FindMember("max_log_ratio");
      ok = ok && runs != r.MemberEnd() && runs->value.IsInt() && runs->value.GetInt() >= 2 && floor != r.MemberEnd() &&
           floor->value.IsNumber() && std::isfinite(floor->value.GetDouble()) && floor->value.GetDouble() >= 0;
      if (ok) {
        row.runs = runs->value.GetInt();
        row.max_log_ratio = floor->value.GetDouble();
        // A floor whose bar overflows would print as no number at all.
        ok = std::isfinite(std::expm1(row.max_log_ratio)) && std::isfinite(noise_bar(row, 0));
      }
    }
    if (!ok) {
      throw UsageError(where + "rows[" + std::to_string(index) +
                       "] needs op, dtype and shape (strings), runs (an integer >= 2) and max_log_ratio (a number >= 0 "
                       "whose bar is a finite number)");
    }
    nf.rows[{row.op, row.dtype, row.shape}] = row;
    ++index;
  }
  return nf;
}

double noise_bar(const NoiseFloorRow& row, double threshold) {
  const double widened = std::expm1(stats::floor_factor(row.runs, kAlpha) * row.max_log_ratio);
  return std::max(threshold, widened);
}

}  // namespace zl::compare
