/* A fake CUDA driver (libcuda): the entry points the CUDA backend binds for
 * the L2 size. Its GPUs have the fake NVML's UUIDs
 * (GPU-00000000-0000-0000-0000-00000000000N). FAKE_CUDA_COUNT sets how many
 * it sees (default 2, as if CUDA_VISIBLE_DEVICES hid the others);
 * FAKE_CUDA_L2 the L2 bytes each reports (default 62914560, an H200's 60 MiB);
 * FAKE_CUDA_INIT_RC makes cuInit fail with that code. */
#include <stdlib.h>
#include <string.h>

typedef struct {
  unsigned char bytes[16];
} CUuuid;

static int env_int(const char* name, int fallback) {
  const char* v = getenv(name);
  return (v != NULL && *v != '\0') ? atoi(v) : fallback;
}

int cuInit(unsigned flags) {
  (void)flags;
  return env_int("FAKE_CUDA_INIT_RC", 0);
}
int cuDeviceGetCount(int* count) {
  *count = env_int("FAKE_CUDA_COUNT", 2);
  return 0;
}
int cuDeviceGet(int* device, int ordinal) {
  if (ordinal < 0 || ordinal >= env_int("FAKE_CUDA_COUNT", 2)) return 101; /* CUDA_ERROR_INVALID_DEVICE */
  *device = ordinal;
  return 0;
}
int cuDeviceGetUuid_v2(CUuuid* uuid, int device) {
  memset(uuid->bytes, 0, sizeof uuid->bytes);
  uuid->bytes[15] = (unsigned char)device;
  return 0;
}
int cuDeviceGetAttribute(int* value, int attribute, int device) {
  (void)device;
  if (attribute != 38) return 1; /* CUDA_ERROR_INVALID_VALUE: only the L2 size is faked */
  *value = env_int("FAKE_CUDA_L2", 62914560);
  return 0;
}
