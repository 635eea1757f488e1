/* One fake backend, compiled many ways (see CMakeLists.txt): the loader
 * matrix and the plan/batch tests build every variant from this file, the way
 * the OpenCL ICD loader's tests build their fake drivers. Plain C99, so it
 * also proves the SDK header compiles as C. */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <zl/backend.h>

#ifndef FAKE_NAME
#define FAKE_NAME "fake"
#endif
#ifndef FAKE_MAJOR
#define FAKE_MAJOR ZL_BACKEND_ABI_MAJOR
#endif
#ifndef FAKE_MINOR
#define FAKE_MINOR ZL_BACKEND_ABI_MINOR
#endif
#ifndef FAKE_VISIBILITY_ENV
#define FAKE_VISIBILITY_ENV "FAKE_VISIBLE_DEVICES"
#endif

/* The no-entry variant compiles everything and uses none of it. */
#define FAKE_UNUSED __attribute__((unused))

#ifdef FAKE_UNRESOLVED
/* Defined nowhere: with rtld_now the load itself must fail. */
extern int zl_fake_symbol_that_does_not_exist(void);
#endif

/* Faults (tests/bad_plugins): FAKE_FAULT is what goes wrong, FAKE_FAULT_AT where:
 * in a constructor (while the library loads), in the entry point, in
 * enumerate_devices, or in query_device_state. */
#define FAKE_EXIT 1
#define FAKE_ABORT 2
#define FAKE_SEGV 3
#define FAKE_HANG 4
#define FAKE_AT_CTOR 1
#define FAKE_AT_ENTRY 2
#define FAKE_AT_ENUMERATE 3
#define FAKE_AT_STATE 4
#if defined(FAKE_FAULT) || defined(FAKE_CRASH_WHILE_FILE)
static void fake_fault(void) {
#if !defined(FAKE_FAULT) || FAKE_FAULT == FAKE_SEGV
  volatile int* volatile nowhere = (volatile int*)(uintptr_t)8;
  *nowhere = 1;
#elif FAKE_FAULT == FAKE_EXIT
  exit(0);
#elif FAKE_FAULT == FAKE_ABORT
  abort();
#elif FAKE_FAULT == FAKE_HANG
  for (;;) pause();
#endif
}
#if defined(FAKE_FAULT) && FAKE_FAULT_AT == FAKE_AT_CTOR
__attribute__((constructor)) static void fake_constructor(void) { fake_fault(); }
#endif
#endif

/* A backend that passes its probe and crashes later: SIGSEGV in the call the
 * file named by ZL_FAKE_CRASH_FILE names ("enumerate" or "state"), while
 * that file exists. */
#ifdef FAKE_CRASH_WHILE_FILE
static void fake_maybe_crash(const char* call) {
  const char* f = getenv("ZL_FAKE_CRASH_FILE");
  char said[32] = {0};
  FILE* in = f != NULL && *f != '\0' ? fopen(f, "r") : NULL;
  if (in == NULL) return;
  if (fgets(said, sizeof said, in) == NULL) said[0] = '\0';
  fclose(in);
  if (strncmp(said, call, strlen(call)) == 0) fake_fault();
}
#endif

/* Lies (tests/bad_plugins): memory that ends where a lying count or pointer
 * says it goes on. `bytes` are placed at the very end of a readable page
 * followed by one that is not, so reading one element past them faults. */
#if defined(FAKE_LIE_CAPABILITY_COUNT) || defined(FAKE_LIE_DEVICE_COUNT) || defined(FAKE_LIE_ATTRIBUTE_COUNT)
static void* fake_at_page_end(const void* bytes, size_t n) {
  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  char* two = (char*)mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (two == (char*)MAP_FAILED) abort();
  mprotect(two + page, page, PROT_NONE);
  memcpy(two + page - n, bytes, n);
  return two + page - n;
}
#endif
/* A pointer into memory no one mapped. */
#define FAKE_NOWHERE ((const void*)(uintptr_t)0x10)

/* Enumeration that hangs while the file named by ZL_FAKE_HANG_FILE exists:
 * a backend that passes its probe and stops answering later. */
#ifdef FAKE_HANG_WHILE_FILE
static void fake_maybe_hang(void) {
  const char* f = getenv("ZL_FAKE_HANG_FILE");
  while (f != NULL && *f != '\0' && access(f, F_OK) == 0) sleep(1);
}
#endif

#ifndef FAKE_ALIAS
#define FAKE_ALIAS FAKE_NAME "-alias"
#endif
FAKE_UNUSED static const char* const kAliases[] = {FAKE_ALIAS, NULL};
FAKE_UNUSED static const char* const kVisibility[] = {FAKE_VISIBILITY_ENV, NULL};
FAKE_UNUSED static const zl_capability kCaps[] = {
#ifdef FAKE_GRAPH_API
    {"graph_capture", FAKE_GRAPH_API},
#endif
    {"device_events", "1"},
    {"fake_feature", "42"},
};

/* How the device array is laid out: as a 1.1 backend writes it (everything
 * up to visibility_value), as this header's, or as a future minor's (this
 * header's plus a field the core does not know). The core must step by the
 * first entry's struct_size, so each layout indexes correctly. */
#if defined(FAKE_DEVICE_1_1)
#define FAKE_DEVICE_SIZE ZL_DEVICE_INFO_STRUCT_SIZE_1_1
#elif defined(FAKE_DEVICE_NEWER)
#define FAKE_DEVICE_SIZE (sizeof(zl_device_info) + 16)
#else
#define FAKE_DEVICE_SIZE sizeof(zl_device_info)
#endif
#define FAKE_STRIDE ((FAKE_DEVICE_SIZE + 7) / 8 * 8)

/* Minor-2 attributes every device reports (a 1.1 layout cannot carry them). */
FAKE_UNUSED static const zl_named_value kHostileAttributes[] = {
    {ZL_NAMED_VALUE_STRUCT_SIZE, "arch\x1b[2J\nitecture", ZL_VALUE_STRING,
     "fake\xc3"
     "arch\r",
     0, 0},
};
FAKE_UNUSED static const zl_named_value kAttributes[] = {
    {ZL_NAMED_VALUE_STRUCT_SIZE, "architecture", ZL_VALUE_STRING, "fakearch", 0, 0},
    {ZL_NAMED_VALUE_STRUCT_SIZE, "driver_version", ZL_VALUE_STRING, "fake-driver-1", 0, 0},
    {ZL_NAMED_VALUE_STRUCT_SIZE, "memory_bandwidth_peak_gbps", ZL_VALUE_DOUBLE, NULL, 0, 1000.0},
    {ZL_NAMED_VALUE_STRUCT_SIZE, "compute_peak_tflops.float32", ZL_VALUE_DOUBLE, NULL, 0, 10.0},
    {ZL_NAMED_VALUE_STRUCT_SIZE, "ecc_enabled", ZL_VALUE_BOOL, NULL, 1, 0},
};

typedef struct {
  zl_device_list list;
  /* 16 devices at FAKE_STRIDE, 8-aligned */
  double devices[16 * FAKE_STRIDE / sizeof(double)];
  char ids[16][32];
  char vis[16][12];             /* "%d" of an int: up to 11 characters and the NUL */
  zl_named_value attributes[8]; /* kAttributes and l2_cache_bytes, when asked for */
  char l2_text[32];
} fake_list;

/* kAttributes plus, when ZL_FAKE_L2_BYTES is set, l2_cache_bytes: an int64
 * when the value is a number, else (a backend breaking the rule) a string. */
FAKE_UNUSED static size_t fake_attributes(fake_list* l) {
  const size_t n = sizeof kAttributes / sizeof kAttributes[0];
  memcpy(l->attributes, kAttributes, sizeof kAttributes);
  const char* l2 = getenv("ZL_FAKE_L2_BYTES");
  if (l2 == NULL || *l2 == '\0') return n;
  char* end = NULL;
  const long long bytes = strtoll(l2, &end, 10);
  snprintf(l->l2_text, sizeof l->l2_text, "%s", l2);
  l->attributes[n] =
      *end == '\0' ? (zl_named_value){ZL_NAMED_VALUE_STRUCT_SIZE, "l2_cache_bytes", ZL_VALUE_INT64, NULL, bytes, 0}
                   : (zl_named_value){ZL_NAMED_VALUE_STRUCT_SIZE, "l2_cache_bytes", ZL_VALUE_STRING, l->l2_text, 0, 0};
  return n + 1;
}

/* ZL_FAKE_DEVICE_COUNT sets how many devices it reports (default 2), so the
 * batch tests get real concurrency; ZL_FAKE_BUSY lists indices reported busy;
 * while the file ZL_FAKE_HOLD_FILE exists every device reports 4 GiB in use
 * and no activity, like a framework context a warm worker keeps resident. */
FAKE_UNUSED static zl_error* enumerate(zl_device_list** out) {
#ifdef FAKE_UNRESOLVED
  if (zl_fake_symbol_that_does_not_exist()) return NULL;
#endif
#if defined(FAKE_FAULT) && FAKE_FAULT_AT == FAKE_AT_ENUMERATE
  fake_fault();
#endif
#ifdef FAKE_HANG_WHILE_FILE
  fake_maybe_hang();
#endif
#ifdef FAKE_CRASH_WHILE_FILE
  fake_maybe_crash("enumerate");
#endif
#ifdef FAKE_PRINTS_ON_STDOUT
  /* Both ways a library writes: through stdio's buffer, and the fd itself. */
  printf("fake backend banner: hello from printf\n");
  if (write(1, "fake backend: raw write\n", 24) != 24) return NULL;
#endif
  fake_list* l = (fake_list*)calloc(1, sizeof(fake_list));
  if (l == NULL) return NULL;
  int count = 2;
  const char* env = getenv("ZL_FAKE_DEVICE_COUNT");
  if (env != NULL && *env != '\0') count = atoi(env);
  if (count < 0) count = 0;
  if (count > 16) count = 16;
#ifdef FAKE_ZERO_DEVICES
  count = 0;
#endif
#ifdef FAKE_GROWS
  /* One more device on every call: a backend that caches nothing right. */
  static int calls = 0;
  count = 1 + calls++ % 8;
#endif
#ifdef FAKE_HONORS_VISIBILITY
  /* Reports only what its own visibility variable shows, as a runtime
   * does: the core then cannot see the devices it means to pin. */
  const char* shown = getenv(FAKE_VISIBILITY_ENV);
  if (shown != NULL && *shown != '\0' && (shown[0] < '0' || shown[0] > '9')) count = 0;
#endif
  const char* busy = getenv("ZL_FAKE_BUSY");
  const char* hold = getenv("ZL_FAKE_HOLD_FILE");
  const int held = hold != NULL && *hold != '\0' && access(hold, F_OK) == 0;
  for (int i = 0; i < count; ++i) {
    zl_device_info full;
    zl_device_info* d = &full;
    memset(d, 0, sizeof full);
    d->struct_size = FAKE_DEVICE_SIZE;
    d->index = i;
    snprintf(l->ids[i], sizeof l->ids[i], "FAKE-%04d", i);
    snprintf(l->vis[i], sizeof l->vis[i], "%d", i);
    d->id = l->ids[i];
    d->name = "Fake Accelerator";
    d->memory_total_bytes = (uint64_t)16 << 30;
    d->memory_used_bytes = 0;
    d->utilization_percent = 0;
    d->visibility_value = l->vis[i];
    if (held) d->memory_used_bytes = (int64_t)4 << 30;
    if (busy != NULL && strchr(busy, '0' + i) != NULL) {
      d->utilization_percent = 97;
      d->memory_used_bytes = (int64_t)8 << 30;
    }
#ifdef FAKE_NO_VIS_VALUE
    if (i == 1) d->visibility_value = NULL; /* breaks the pin rule: the core must reject it */
#endif
#ifdef FAKE_ODD_TEXT
    /* What a terminal would act on, and bytes that are not UTF-8: shown
     * escaped. An id like that cannot travel, so device 1 is rejected. */
    d->name = "Fake\n\x1b[31mRed\x1b[0m \xff\xfe";
    if (i == 1) d->id = "FAKE-\x1b]0;owned\x07";
#endif
#ifdef FAKE_DEVICE_SIZE_ZERO
    if (i == 1) d->struct_size = 0; /* the core must say it left this one out */
#endif
#ifdef FAKE_LIE_DEVICE_STRING
    if (i == 1) d->name = (const char*)FAKE_NOWHERE;
#endif
#if !defined(FAKE_DEVICE_1_1) && !defined(FAKE_OLD_MINOR)
    d->attribute_count = fake_attributes(l);
    d->attributes = l->attributes;
#endif
#ifdef FAKE_ODD_TEXT
    d->attribute_count = sizeof kHostileAttributes / sizeof kHostileAttributes[0];
    d->attributes = kHostileAttributes;
#endif
#ifdef FAKE_LIE_ATTRIBUTE_COUNT
    d->attributes = (const zl_named_value*)fake_at_page_end(kAttributes, sizeof kAttributes);
    d->attribute_count = 1000;
#endif
    {
      char* slot = (char*)l->devices + (size_t)i * FAKE_STRIDE;
      size_t n = FAKE_DEVICE_SIZE < sizeof full ? FAKE_DEVICE_SIZE : sizeof full;
      memcpy(slot, &full, n);
      /* A future minor's field: bytes the core must step over, not read. */
      if (FAKE_DEVICE_SIZE > sizeof full) memset(slot + sizeof full, 0xAB, FAKE_DEVICE_SIZE - sizeof full);
    }
  }
  l->list.struct_size = sizeof(zl_device_list);
  l->list.count = (size_t)count;
  l->list.devices = count > 0 ? (const zl_device_info*)l->devices : NULL;
#ifdef FAKE_LIE_DEVICE_COUNT
  l->list.devices = (const zl_device_info*)fake_at_page_end(l->devices, (size_t)count * FAKE_STRIDE);
  l->list.count = 64;
#endif
  l->list.reason = count > 0 ? NULL : "fake driver reports no devices";
  l->list.source = "fake";
  *out = &l->list;
  return NULL;
}

FAKE_UNUSED static void destroy_list(zl_device_list* list) { free(list); }
FAKE_UNUSED static void destroy_error(zl_error* error) { free(error); }

/* Minor 2: the args form of enumerate, a device state, and an extension
 * chain of types no core knows (the core must skip them). ZL_FAKE_THROTTLE
 * sets the throttle reasons reported (default "none"). */
FAKE_UNUSED static zl_error* enumerate_args(zl_enumerate_args* args) {
  if (args == NULL || args->struct_size < ZL_ENUMERATE_ARGS_STRUCT_SIZE) return NULL;
  return enumerate(&args->devices);
}

typedef struct {
  zl_device_state state;
  zl_named_value values[4];
  char throttle[64];
} fake_state;

FAKE_UNUSED static zl_error* query_state(zl_device_state_args* args) {
  fake_state* s;
  const char* throttle = getenv("ZL_FAKE_THROTTLE");
  if (args == NULL || args->struct_size < ZL_DEVICE_STATE_ARGS_STRUCT_SIZE) return NULL;
#if defined(FAKE_FAULT) && FAKE_FAULT_AT == FAKE_AT_STATE
  fake_fault();
#endif
#ifdef FAKE_CRASH_WHILE_FILE
  fake_maybe_crash("state");
#endif
  {
    /* The device must still be the one enumerate listed at that index. */
    char id[32];
    snprintf(id, sizeof id, "FAKE-%04d", args->index);
    if (args->id == NULL || strcmp(args->id, id) != 0) {
#ifdef FAKE_CRASH_ON_UNKNOWN_ID
      raise(SIGSEGV);
#endif
      zl_error* e = (zl_error*)calloc(1, sizeof *e);
      if (e == NULL) return NULL;
      e->struct_size = ZL_ERROR_STRUCT_SIZE;
      e->code = ZL_ERROR_INVALID_ARGUMENT;
      e->message = "no such device at that index";
      return e;
    }
  }
  s = (fake_state*)calloc(1, sizeof *s);
  if (s == NULL) return NULL;
  snprintf(s->throttle, sizeof s->throttle, "%s", throttle != NULL && *throttle != '\0' ? throttle : "none");
  s->values[0] =
      (zl_named_value){ZL_NAMED_VALUE_STRUCT_SIZE, "clock_sm_mhz", ZL_VALUE_INT64, NULL, 1500 + args->index, 0};
  s->values[1] = (zl_named_value){ZL_NAMED_VALUE_STRUCT_SIZE, "power_draw_w", ZL_VALUE_DOUBLE, NULL, 0, 99.5};
  s->values[2] = (zl_named_value){ZL_NAMED_VALUE_STRUCT_SIZE, "throttle_reasons", ZL_VALUE_STRING, s->throttle, 0, 0};
  s->values[3] = (zl_named_value){ZL_NAMED_VALUE_STRUCT_SIZE, "temperature_c", ZL_VALUE_INT64, NULL, 40, 0};
  s->state.struct_size = ZL_DEVICE_STATE_STRUCT_SIZE;
  s->state.value_count = 4;
  s->state.values = s->values;
  args->state = &s->state;
  return NULL;
}

FAKE_UNUSED static void destroy_state(zl_device_state* state) { free(state); }

FAKE_UNUSED static const zl_extension_base kExtensionTail = {ZL_EXTENSION_BASE_STRUCT_SIZE, 0x7fff0002u, NULL};
FAKE_UNUSED static const zl_extension_base kExtensionHead = {ZL_EXTENSION_BASE_STRUCT_SIZE, 0x7fff0001u,
                                                             &kExtensionTail};

#ifdef FAKE_NEW_MINOR
/* A table from a future minor: our fields, then more the core must ignore. */
typedef struct {
  zl_backend_api api;
  void* future_entry[4];
} fake_table;
#define FAKE_STRUCT_SIZE sizeof(fake_table)
#elif defined(FAKE_OLD_MINOR)
/* A table from minor 0: it ends before backend_version. */
typedef zl_backend_api fake_table;
#define FAKE_STRUCT_SIZE offsetof(zl_backend_api, backend_version)
#elif defined(FAKE_TABLE_1_1)
/* A table as a 1.1 header made it: it ends with backend_version. */
typedef zl_backend_api fake_table;
#define FAKE_STRUCT_SIZE ZL_BACKEND_API_STRUCT_SIZE_1_1
#else
typedef zl_backend_api fake_table;
#define FAKE_STRUCT_SIZE sizeof(zl_backend_api)
#endif

FAKE_UNUSED static fake_table kTable;

#ifdef FAKE_THREAD_ON_LOAD
/* A thread started by the entry point: it would outlive a rejection. */
static void* fake_idle_thread(void* arg) {
  for (;;) pause();
  return arg;
}
#endif
#ifdef FAKE_EXTRA_EXPORT
/* A helper left visible: it could shadow another backend's. */
ZL_BACKEND_EXPORT int zl_fake_visible_helper(void) { return 42; }
#endif

#ifdef FAKE_TABLE_CHANGES
/* Its visibility variable turns into control bytes once initialized: the
   table the core accepted is not the one it would run with. */
static char kChangingVariable[] = FAKE_VISIBILITY_ENV;
static const char* kChangingVisibility[] = {kChangingVariable, NULL};
static zl_error* change_on_initialize(zl_initialize_args* args) {
  (void)args;
  kChangingVariable[0] = '\n';
  return NULL;
}
#endif

#ifndef FAKE_NO_ENTRY
ZL_BACKEND_EXPORT const zl_backend_api* zl_backend_get_api(uint32_t major, uint32_t minor) {
  (void)major;
  (void)minor;
#if defined(FAKE_FAULT) && FAKE_FAULT_AT == FAKE_AT_ENTRY
  fake_fault();
#endif
#ifdef FAKE_RETURN_NULL
  return NULL;
#else
  zl_backend_api* api = (zl_backend_api*)&kTable;
#ifdef FAKE_THREAD_ON_LOAD
  {
    pthread_t t;
    if (pthread_create(&t, NULL, fake_idle_thread, NULL) == 0) pthread_detach(t);
  }
#endif
  api->struct_size = FAKE_STRUCT_SIZE;
  api->abi_major = FAKE_MAJOR;
  api->abi_minor = FAKE_MINOR;
  api->name = FAKE_NAME;
  api->aliases = kAliases;
#ifdef FAKE_NO_VISIBILITY
  api->visibility_env = NULL;
#else
  api->visibility_env = kVisibility;
#endif
#ifdef FAKE_TABLE_CHANGES
  api->visibility_env = kChangingVisibility;
  api->initialize = change_on_initialize;
#endif
  api->capabilities = kCaps;
  api->capability_count = sizeof kCaps / sizeof kCaps[0];
#ifdef FAKE_LIE_CAPABILITY_COUNT
  api->capabilities = (const zl_capability*)fake_at_page_end(kCaps, sizeof kCaps);
  api->capability_count = 100;
#endif
  /* A torch device other than the host's, for runs on the stub torch of
     tests/support/stubs/gpu (its device memory counts). */
  const char* torch_device = getenv("ZL_FAKE_TORCH_DEVICE");
  api->torch_device = torch_device != NULL && *torch_device ? torch_device : "cpu";
  api->framework_vendor = NULL;
  api->enumerate_devices = enumerate;
  api->device_list_destroy = destroy_list;
  api->error_destroy = destroy_error;
#ifndef FAKE_OLD_MINOR
  api->backend_version = "fake " FAKE_NAME;
#endif
#if !defined(FAKE_OLD_MINOR) && !defined(FAKE_TABLE_1_1)
  api->extension_start = &kExtensionHead;
#ifdef FAKE_LIE_EXTENSION
  api->extension_start = (const zl_extension_base*)FAKE_NOWHERE;
#endif
  api->enumerate = enumerate_args;
#ifndef FAKE_NO_STATE
  api->query_device_state = query_state;
  api->device_state_destroy = destroy_state;
#endif
#endif
  return api;
#endif
}
#else
/* Exports something, just not the entry point. */
ZL_BACKEND_EXPORT int zl_backend_get_api_typo(void) { return 0; }
#endif
