/*
 * zl/backend.h -- the whole contract between zlcore and an accelerator backend.
 *
 * A backend is a shared object that exports exactly one symbol,
 * ZL_BACKEND_ENTRY_SYMBOL, returning a pointer to a zl_backend_api table.
 * This header is pure C (C99 and C++ both compile it); it is the only header
 * a vendor needs. docs/backend-abi.md states the rules normatively; the short
 * version:
 *
 *   - ABI major must equal the core's exactly; a backend whose major differs is
 *     skipped with a reason.
 *   - Every struct begins with `struct_size`, set by whoever allocates it to
 *     sizeof the struct it was compiled against. A reader touches a field only
 *     when the field lies entirely within struct_size (ZL_STRUCT_HAS_FIELD), so
 *     either side may be older or newer within one major.
 *   - Entries added in a later minor are optional: the core checks the minor
 *     and a NULL pointer before calling one.
 *   - Errors are values (zl_error), allocated by the backend and released
 *     through the same backend's error_destroy. No C++ types, no exceptions,
 *     no longjmp cross this boundary.
 *   - The core never unloads a backend: pointers marked "static lifetime"
 *     below must stay valid until the process exits.
 */
#ifndef ZL_BACKEND_H_
#define ZL_BACKEND_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version of this header. The core accepts a backend whose major is equal. */
#define ZL_BACKEND_ABI_MAJOR 1
#define ZL_BACKEND_ABI_MINOR 1

/* The one symbol a backend exports. */
#define ZL_BACKEND_ENTRY_SYMBOL "zl_backend_get_api"

/* Visibility for the entry point; build everything else with
 * -fvisibility=hidden so two backends' helpers never shadow each other. */
#if defined(_WIN32)
#define ZL_BACKEND_EXPORT __declspec(dllexport)
#else
#define ZL_BACKEND_EXPORT __attribute__((visibility("default")))
#endif

/* True when a struct whose first member is struct_size, as reported by its
 * allocator, is large enough to contain `field`. */
#define ZL_STRUCT_HAS_FIELD(ptr, type, field) \
  ((ptr)->struct_size >= offsetof(type, field) + sizeof(((type*)0)->field))

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */

typedef enum zl_error_code {
  ZL_OK = 0,
  ZL_ERROR_UNAVAILABLE = 1,  /* the driver or tool is absent or failed */
  ZL_ERROR_INVALID_ARGUMENT = 2,
  ZL_ERROR_PARSE = 3,        /* a tool answered, but not in a known form */
  ZL_ERROR_INTERNAL = 4
} zl_error_code;

typedef struct zl_error {
  size_t struct_size;
  zl_error_code code;
  /* Owned by the error; valid until error_destroy(error). UTF-8, one line. */
  const char* message;
} zl_error;

/* ------------------------------------------------------------------------ */
/* Static description                                                        */

/* A capability is an open-ended key/value pair. Keys the core's plan rules
 * know today: "graph_capture" (value: the Python graph API, for example
 * "torch.cuda.CUDAGraph"), "cluster_fix" (value: "1"), "device_events"
 * (value: "1"). A backend may declare keys no rule uses yet. */
typedef struct zl_capability {
  const char* key;   /* static lifetime */
  const char* value; /* static lifetime; "1" for a plain flag */
} zl_capability;

/* ------------------------------------------------------------------------ */
/* Devices                                                                   */

typedef struct zl_device_info {
  size_t struct_size;
  /* Index as the vendor tool numbers devices, ignoring any visibility
   * variable. */
  int32_t index;
  /* Stable identity (UUID, PCI bus id, chip logic id). Never NULL. */
  const char* id;
  /* Marketing name, e.g. "NVIDIA H200". Never NULL. */
  const char* name;
  /* Total memory in bytes; 0 when unknown. */
  uint64_t memory_total_bytes;
  /* Memory in use in bytes; -1 when the tool does not say. */
  int64_t memory_used_bytes;
  /* Busy percentage 0..100; -1 when the tool does not say. */
  int32_t utilization_percent;
  /* The value to put into every visibility variable so that a child sees
   * this device alone (an index, a UUID, ...). NULL when the backend has no
   * visibility variable. */
  const char* visibility_value;
} zl_device_info;

/* All strings inside a list, and the devices array itself, are owned by the
 * list and valid until device_list_destroy(list). */
typedef struct zl_device_list {
  size_t struct_size;
  size_t count;
  /* count entries; NULL when count == 0. The array's stride is
   * devices[0].struct_size (equal for every entry), so a list built against a
   * newer or older zl_device_info still indexes correctly. */
  const zl_device_info* devices;
  /* Why there are no devices ("libnvidia-ml.so.1 not found and nvidia-smi not
   * on PATH"), or NULL when count > 0. */
  const char* reason;
  /* Which source answered: "library", "tool", "host", ... Never NULL. */
  const char* source;
} zl_device_list;

/* ------------------------------------------------------------------------ */
/* The table                                                                 */

typedef struct zl_backend_api {
  size_t struct_size;
  uint32_t abi_major; /* ZL_BACKEND_ABI_MAJOR the backend was built with */
  uint32_t abi_minor; /* ZL_BACKEND_ABI_MINOR the backend was built with */

  /* Lower-case canonical name, e.g. "cuda". Static lifetime. */
  const char* name;
  /* NULL-terminated array of extra names matched case-insensitively, e.g.
   * {"nvidia", "gpu", NULL}. May be NULL for none. Static lifetime. */
  const char* const* aliases;
  /* NULL-terminated array of environment variables that pin devices, in the
   * order the core should set them. NULL or empty when the backend has no such
   * variable. Static lifetime. */
  const char* const* visibility_env;
  /* capability_count entries; static lifetime. */
  const zl_capability* capabilities;
  size_t capability_count;
  /* torch device type the Python side uses: "cuda", "musa", "npu", "cpu".
   * Static lifetime. */
  const char* torch_device;
  /* The vendor name FlagGems expects in GEMS_VENDOR: "nvidia", "amd",
   * "mthreads", "ascend", "arm", ... NULL when the framework should detect it
   * itself. Static lifetime. */
  const char* framework_vendor;

  /* Enumerates devices now (tools are asked anew on every call). On success
   * returns NULL and stores a list in *out, which the caller releases with
   * device_list_destroy; a backend whose driver is missing still succeeds with
   * count == 0 and a reason. Returns an error only for a fault that a reason
   * cannot describe. Thread-safe. */
  zl_error* (*enumerate_devices)(zl_device_list** out);
  void (*device_list_destroy)(zl_device_list* list);
  void (*error_destroy)(zl_error* error);

  /* ---- minor 1 ---- read only when abi_minor >= 1 and the field lies within
   * struct_size (ZL_STRUCT_HAS_FIELD). */

  /* The backend's own version, recorded in every run identity. NULL when the
   * backend does not say. Static lifetime. */
  const char* backend_version;
} zl_backend_api;

/* Signature of the entry point. The core passes the ABI it speaks; a backend
 * may return NULL to decline (the core reports "entry returned NULL"). The
 * returned table has static lifetime. */
typedef const zl_backend_api* (*zl_backend_get_api_fn)(uint32_t core_abi_major,
                                                         uint32_t core_abi_minor);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ZL_BACKEND_H_ */
