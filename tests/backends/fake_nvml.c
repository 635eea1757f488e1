/* A fake NVML: enough of the library's entry points for the CUDA backend.
 * FAKE_NVML_COUNT sets the number of GPUs (default 2); FAKE_NVML_INIT_RC makes
 * nvmlInit_v2 fail with that code; FAKE_NVML_NO_UTIL=1 answers "not
 * supported" for utilization, as some boards do. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct fake_device* nvmlDevice_t;
struct fake_device {
  unsigned index;
};
typedef struct {
  unsigned long long total, free, used;
} nvmlMemory_t;
typedef struct {
  unsigned gpu, memory;
} nvmlUtilization_t;

static struct fake_device devices[8] = {{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}};
static int inits = 0;

static int env_int(const char* name, int fallback) {
  const char* v = getenv(name);
  return (v != NULL && *v != '\0') ? atoi(v) : fallback;
}

int nvmlInit_v2(void) {
  int rc = env_int("FAKE_NVML_INIT_RC", 0);
  if (rc == 0) ++inits;
  return rc;
}
int nvmlShutdown(void) {
  if (inits == 0) return 1; /* NVML_ERROR_UNINITIALIZED */
  --inits;
  return 0;
}
const char* nvmlErrorString(int rc) { return rc == 9 ? "Driver Not Loaded" : "Unknown Error"; }
int nvmlDeviceGetCount_v2(unsigned* count) {
  int n = env_int("FAKE_NVML_COUNT", 2);
  *count = (unsigned)(n > 8 ? 8 : n);
  return inits > 0 ? 0 : 1;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned index, nvmlDevice_t* device) {
  if (index >= 8) return 2; /* NVML_ERROR_INVALID_ARGUMENT */
  *device = &devices[index];
  return 0;
}
int nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned length) {
  (void)device;
  snprintf(name, length, "NVIDIA H200");
  return 0;
}
int nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned length) {
  snprintf(uuid, length, "GPU-00000000-0000-0000-0000-00000000000%u", device->index);
  return 0;
}
int nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) {
  memory->total = 143771ull << 20;
  memory->used = (unsigned long long)device->index << 20;
  memory->free = memory->total - memory->used;
  return 0;
}
int nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t* util) {
  if (env_int("FAKE_NVML_NO_UTIL", 0) == 1) return 3; /* NVML_ERROR_NOT_SUPPORTED */
  util->gpu = 10u * device->index;
  util->memory = 0;
  return 0;
}

/* ABI 1.2 attributes and state, as an H200 answers (FAKE_NVML_BASIC=1 hides
 * them, like an old driver: the backend must leave them out, not fail). */
static int basic(void) { return env_int("FAKE_NVML_BASIC", 0) == 1; }
int nvmlSystemGetDriverVersion(char* version, unsigned length) {
  snprintf(version, length, "580.159.04");
  return 0;
}
int nvmlSystemGetCudaDriverVersion_v2(int* version) {
  *version = 13000;
  return 0;
}
int nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int* major, int* minor) {
  (void)device;
  if (basic()) return 3;
  *major = 9;
  *minor = 0;
  return 0;
}
int nvmlDeviceGetNumGpuCores(nvmlDevice_t device, unsigned* cores) {
  (void)device;
  *cores = 16896; /* 132 SMs x 128 */
  return 0;
}
int nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, unsigned type, unsigned* mhz) {
  (void)device;
  *mhz = type == 1 ? 1980 : 3201;
  return 0;
}
int nvmlDeviceGetClockInfo(nvmlDevice_t device, unsigned type, unsigned* mhz) {
  (void)device;
  *mhz = type == 1 ? 1755 : 3201;
  return 0;
}
int nvmlDeviceGetMemoryBusWidth(nvmlDevice_t device, unsigned* bits) {
  (void)device;
  *bits = 6016;  // what a real H200 (driver 580.159.04) answered
  return 0;
}
int nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned* mw) {
  (void)device;
  *mw = 700000;
  return 0;
}
int nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned* mw) {
  (void)device;
  *mw = 650250;
  return 0;
}
int nvmlDeviceGetEccMode(nvmlDevice_t device, int* current, int* pending) {
  (void)device;
  *current = *pending = 1;
  return 0;
}
int nvmlDeviceGetTemperature(nvmlDevice_t device, unsigned sensor, unsigned* c) {
  (void)device;
  (void)sensor;
  *c = 61;
  return 0;
}
int nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device, unsigned long long* reasons) {
  (void)device;
  *reasons = 0x4ull; /* SW power cap */
  return 0;
}
