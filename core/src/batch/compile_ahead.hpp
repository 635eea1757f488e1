// The compile-ahead pass (docs/batch.md, "Compiling ahead"): before a batch
// times anything, each op still to run runs once as `zlcore run
// --compile-only`, several at a time ("lanes") on the host's spare cores, so
// that the timed pass finds its kernels compiled. Nothing is timed while it
// runs, so ops sharing the device then cost no number anything.
//
// An op compiled ahead leaves a marker in the Triton cache it filled, so the
// next batch on that cache skips it: a marker names the op, what selects its
// tests and the suite's files as they were. A marker that outlives what it
// vouches for (a cache partly cleared) costs the timed run its compiling,
// never a number: the timed run compiles what it does not find.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "zlcore/batch.hpp"

namespace zl::batch {

// Why this batch compiles nothing ahead, whatever the lanes: its runs use a
// tuner cache of their own (isolated, record, replay), which no earlier
// process can fill. Empty when it may.
std::string compile_ahead_refusal(const BatchOptions& o);

// The suite's files as they are now (names, sizes, modification times under
// `root`), as one hash. Left out: hidden folders, __pycache__, the folders
// in `outputs` (the caches and the batch directory, which a run inside a
// checkout writes under it) and any folder holding a zlcore identity (an
// earlier run or batch), so that a batch changes no later one's key.
std::string suite_fingerprint(const std::string& root, const std::vector<std::string>& outputs = {});

// What a marker vouches for: the op and every setting that picks which
// kernels its tests compile.
std::string ready_key(const OpSpec& op, const OpRunFlags& run, const std::string& fingerprint);

// Markers in a Triton cache directory (<triton>/zlcore-compiled/<key>).
// markers_refusal: why none can be left in `triton_dir` (zlcore-compiled/
// cannot be made a directory: a file, a loop, no permission), or "".
std::string markers_refusal(const std::string& triton_dir);
bool is_compiled(const std::string& triton_dir, const std::string& key);
// Written atomically; a failure is only said (the next batch compiles again).
void mark_compiled(const std::string& triton_dir, const std::string& key, const std::string& op,
                   const std::string& batch_dir, std::string* error);

// Runs each op on a free one of `lanes` executors whose device index (in
// `devices`, one per lane) is the op's, so a lane's worker stays on one
// device: the work queue gives one slot per lane, and a lane is free again
// once its execution is destroyed.
std::unique_ptr<Executor> make_lane_executor(std::vector<std::unique_ptr<Executor>> lanes, std::vector<int> devices);

}  // namespace zl::batch
