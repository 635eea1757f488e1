// The L2 policy: what the device's last-level cache holds when each timed
// call starts. `warm` leaves it as the calls before left it (a graph replays
// many calls back to back, so inputs that fit stay resident); `cold` clears
// it before every timed call, which needs the cache's size, the ABI 1.2
// attribute `l2_cache_bytes`. docs/graph-timer.md, "The L2 policy".
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "zlcore/backend.hpp"
#include "zlcore/plan.hpp"

namespace zl {

// The bytes a cold timer clears, for the child (the device's L2 size; set
// only when cold). The policy itself travels as the plan knob kL2Knob.
inline constexpr const char* kL2BytesEnv = "ZL_L2_BYTES";

// `warm` or `cold` from the flag's value, or from ZL_L2 when the flag is
// absent (`given` says which, for the error line); empty text means warm
// when it stands for an unset variable (empty_is_warm), and is refused when it
// is a flag's value (`--l2 ''`).
// Throws UsageError naming the flag or the variable for any other word.
std::string parse_l2_policy(const std::string& text, const std::string& given, bool empty_is_warm = true);

// The device's L2 size when the backend reports one that can be used: an
// int64 above 0. nullopt otherwise (absent, mistyped, 0).
std::optional<int64_t> l2_cache_bytes(const Device& device);

// Throws UsageError, one line naming `given` ("--l2" or "ZL_L2"), when
// `policy` is cold and the device has no usable L2 size: cold cannot be
// honoured there.
void check_l2_device(const std::string& policy, const std::string& backend, const Device& device,
                     const std::string& given = "--l2");

// Throws UsageError, one line naming `given`, when `policy` is cold and
// FlagGems' `mode` is one it times itself on the host (operator, wrapper).
void check_l2_mode(const std::string& policy, const std::string& mode, const std::string& given = "--l2");

}  // namespace zl
