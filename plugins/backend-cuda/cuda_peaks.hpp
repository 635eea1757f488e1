// What NVML does not say but a roofline needs: the architecture behind a
// compute capability, SMs from CUDA cores, and peak rates per element type.
// Pure functions of published figures, so tests check them without a GPU.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "zl_kit/enumeration.hpp"

namespace zl_cuda {

// "hopper" for 9.0, ...; "" for a capability this table does not know.
std::string architecture_of(int cc_major, int cc_minor);

// CUDA cores per SM for the capability; 0 when unknown.
int cores_per_sm(int cc_major, int cc_minor);

// Peak memory bandwidth in GB/s from NVML's maximum memory clock and bus
// width: NVML reports the memory clock at half the data rate (double data
// rate), so bytes/s = clock * 2 * width / 8. 0 when either is unknown.
double memory_bandwidth_gbps(int64_t memory_clock_max_mhz, int64_t bus_width_bits);

// Dense peak compute per dtype (compute_peak_tflops.<dtype>), from the
// per-SM, per-clock rates NVIDIA publishes for the capability (tensor cores
// for float16/bfloat16/tfloat32/int8, FP32/FP64 units otherwise) times SMs
// times the maximum SM clock: an upper bound, since NVIDIA quotes its
// datasheet figures at a lower boost clock. Empty for an unknown capability.
std::vector<zl_kit::Value> compute_peaks(int cc_major, int cc_minor, int64_t sms, int64_t sm_clock_max_mhz);

// The comma-separated names of NVML's clocks event (throttle) reason bits;
// "none" for 0.
std::string throttle_reason_names(unsigned long long bits);

}  // namespace zl_cuda
