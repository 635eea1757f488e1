// A digest of the autotune winners a run used, per kernel and over all.
// compare matches it instead of the autotune mode: two runs that used the
// same winners (an A/A that tuned alike, a replay of a record, an op that
// tunes nothing) ran the same kernel configurations whatever chose them, and
// two that did not can be told apart kernel by kernel.
#pragma once

#include <rapidjson/document.h>

#include <map>
#include <string>
#include <vector>

#include "used_winners.hpp"

namespace zl::autotune_internal {

struct KernelWinners {
  std::string kind;    // "libtuner" (the core read its DB rows) or "triton" (the plugin saw them)
  int entries = 0;     // keys with a winner
  std::string sha256;  // over its sorted "key <TAB> config" lines (and its table or kernel id)
};

struct WinnersDigest {
  std::map<std::string, KernelWinners> kernels;  // by kernel name
  // sha256 over "<name> <TAB> <kind> <TAB> <sha256>" lines sorted by name;
  // the hash of no winners at all is the sha256 of the empty string.
  std::string hash;
};

// `plugin` is the plugin's report (.child/autotune.json), whose
// `triton_winners` holds the plain-autotune kernels' digests.
WinnersDigest winners_digest(const std::vector<UsedTable>& libtuner, const rapidjson::Value& plugin);

}  // namespace zl::autotune_internal
