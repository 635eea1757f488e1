/*
 * zl/backend_kit.h -- builders for what a backend hands across the ABI.
 *
 * Header-only, pure C (C99 and C++ both compile it), every function static inline:
 * it compiles into the backend that includes it, so it adds no symbol to the
 * backend's exports and no library to ship. A backend fills zl_device_info /
 * zl_named_value arrays with pointers to its own (borrowed, temporary)
 * strings, and the kit deep-copies them into ONE heap block owned by the
 * result, so that destroying it is one free() and no string outlives or
 * predates the list (docs/backend-abi.md, rule 5). The C++ side
 * (zl/backend_kit.hpp) builds on these and adds the exception barrier and the
 * entry template.
 */
#ifndef ZL_BACKEND_KIT_H_
#define ZL_BACKEND_KIT_H_

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zl/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- sizes (first pass) ---- */

static inline size_t zl_kit_str_bytes(const char* s) { return s != NULL ? strlen(s) + 1 : 1; }

static inline size_t zl_kit_values_bytes(const zl_named_value* values, size_t count) {
  size_t n = count * sizeof(zl_named_value);
  size_t i;
  for (i = 0; i < count; ++i) {
    n += zl_kit_str_bytes(values[i].name);
    if (values[i].type == ZL_VALUE_STRING) n += zl_kit_str_bytes(values[i].string_value);
  }
  return n;
}

/* ---- copies (second pass): cursor walks the block ---- */

static inline const char* zl_kit_put_str(char** cursor, const char* s) {
  char* at = *cursor;
  size_t n = zl_kit_str_bytes(s);
  if (s != NULL) {
    memcpy(at, s, n);
  } else {
    at[0] = '\0';
  }
  *cursor += n;
  return at;
}

/* Values go first in their region (so the array is aligned), strings after. */
static inline const zl_named_value* zl_kit_put_values(char** cursor, const zl_named_value* values, size_t count) {
  zl_named_value* out = (zl_named_value*)*cursor;
  size_t i;
  if (count == 0) return NULL;
  *cursor += count * sizeof(zl_named_value);
  for (i = 0; i < count; ++i) {
    out[i] = values[i];
    out[i].struct_size = ZL_NAMED_VALUE_STRUCT_SIZE;
    out[i].name = zl_kit_put_str(cursor, values[i].name);
    out[i].string_value = values[i].type == ZL_VALUE_STRING ? zl_kit_put_str(cursor, values[i].string_value) : NULL;
  }
  return out;
}

static inline size_t zl_kit_align8(size_t n) { return (n + 7u) & ~(size_t)7u; }

/* ---- errors ---- */

/* An error with a printf-formatted one-line message; NULL only when memory
 * ran out (the core then reports an error without a message). Release with
 * zl_kit_error_free (the backend's error_destroy). */
static inline zl_error* zl_kit_error(zl_error_code code, const char* format, ...) {
  va_list ap;
  char small[1];
  int n;
  zl_error* e;
  va_start(ap, format);
  n = vsnprintf(small, sizeof small, format, ap);
  va_end(ap);
  if (n < 0) n = 0;
  e = (zl_error*)calloc(1, sizeof(zl_error) + (size_t)n + 1);
  if (e == NULL) return NULL;
  va_start(ap, format);
  vsnprintf((char*)(e + 1), (size_t)n + 1, format, ap);
  va_end(ap);
  e->struct_size = ZL_ERROR_STRUCT_SIZE;
  e->code = code;
  e->message = (const char*)(e + 1);
  return e;
}

static inline void zl_kit_error_free(zl_error* error) { free(error); }

/* ---- device lists ---- */

/* Deep-copies `count` devices (only their fields up to attributes are read;
 * struct_size of the input is ignored) into one block. `reason` is kept only
 * when count is 0 ("no devices found" when NULL). */
static inline zl_error* zl_kit_device_list(const zl_device_info* devices, size_t count, const char* source,
                                           const char* reason, zl_device_list** out) {
  size_t bytes = zl_kit_align8(sizeof(zl_device_list)) + count * sizeof(zl_device_info);
  size_t i;
  char* block;
  char* cursor;
  zl_device_list* list;
  zl_device_info* infos;
  if (out == NULL) return zl_kit_error(ZL_ERROR_INVALID_ARGUMENT, "out is NULL");
  *out = NULL;
  if (count == 0 && reason == NULL) reason = "no devices found";
  for (i = 0; i < count; ++i) {
    /* + 8: the padding that aligns this device's attribute array. */
    bytes += zl_kit_values_bytes(devices[i].attributes, devices[i].attribute_count) + 8;
    bytes += zl_kit_str_bytes(devices[i].id) + zl_kit_str_bytes(devices[i].name) +
             zl_kit_str_bytes(devices[i].visibility_value);
  }
  bytes += zl_kit_str_bytes(source) + zl_kit_str_bytes(reason);
  block = (char*)calloc(1, bytes);
  if (block == NULL) return zl_kit_error(ZL_ERROR_INTERNAL, "out of memory building the device list");
  list = (zl_device_list*)block;
  infos = (zl_device_info*)(block + zl_kit_align8(sizeof(zl_device_list)));
  cursor = (char*)(infos + count);
  /* Each device's attribute array starts 8-aligned, then the strings. */
  for (i = 0; i < count; ++i) {
    size_t pad = zl_kit_align8((size_t)(cursor - block)) - (size_t)(cursor - block);
    cursor += pad;
    infos[i].struct_size = ZL_DEVICE_INFO_STRUCT_SIZE;
    infos[i].index = devices[i].index;
    infos[i].memory_total_bytes = devices[i].memory_total_bytes;
    infos[i].memory_used_bytes = devices[i].memory_used_bytes;
    infos[i].utilization_percent = devices[i].utilization_percent;
    infos[i].attribute_count = devices[i].attribute_count;
    infos[i].attributes = zl_kit_put_values(&cursor, devices[i].attributes, devices[i].attribute_count);
    infos[i].id = zl_kit_put_str(&cursor, devices[i].id);
    infos[i].name = zl_kit_put_str(&cursor, devices[i].name);
    /* NULL stays NULL: it means "no visibility variable". */
    infos[i].visibility_value =
        devices[i].visibility_value != NULL ? zl_kit_put_str(&cursor, devices[i].visibility_value) : NULL;
    if (devices[i].visibility_value == NULL) cursor += 1;
  }
  list->struct_size = ZL_DEVICE_LIST_STRUCT_SIZE;
  list->count = count;
  list->devices = count > 0 ? infos : NULL;
  list->source = zl_kit_put_str(&cursor, source != NULL ? source : "unknown");
  list->reason = count == 0 ? zl_kit_put_str(&cursor, reason) : NULL;
  *out = list;
  return NULL;
}

static inline void zl_kit_device_list_free(zl_device_list* list) { free(list); }

/* ---- device state ---- */

static inline zl_error* zl_kit_device_state(const zl_named_value* values, size_t count, zl_device_state** out) {
  size_t head = zl_kit_align8(sizeof(zl_device_state));
  char* block;
  char* cursor;
  zl_device_state* state;
  if (out == NULL) return zl_kit_error(ZL_ERROR_INVALID_ARGUMENT, "out is NULL");
  *out = NULL;
  block = (char*)calloc(1, head + zl_kit_values_bytes(values, count));
  if (block == NULL) return zl_kit_error(ZL_ERROR_INTERNAL, "out of memory building the device state");
  state = (zl_device_state*)block;
  cursor = block + head;
  state->struct_size = ZL_DEVICE_STATE_STRUCT_SIZE;
  state->value_count = count;
  state->values = zl_kit_put_values(&cursor, values, count);
  *out = state;
  return NULL;
}

static inline void zl_kit_device_state_free(zl_device_state* state) { free(state); }

/* ---- extensions ---- */

/* The first extension of `type` in a chain, or NULL. Types it does not ask
 * for are skipped, as the ABI requires; a chain longer than 256 links (a
 * cycle) ends the walk. */
static inline const zl_extension_base* zl_kit_find_extension(const zl_extension_base* chain, uint32_t type) {
  int hops = 0;
  for (; chain != NULL && hops < 256; chain = chain->next, ++hops) {
    if (chain->struct_size < ZL_EXTENSION_BASE_STRUCT_SIZE) return NULL;
    if (chain->type == type) return chain;
  }
  return NULL;
}

/* ---- named values, for filling arrays in C ---- */

static inline zl_named_value zl_kit_string_value(const char* name, const char* value) {
  zl_named_value v;
  memset(&v, 0, sizeof v);
  v.struct_size = ZL_NAMED_VALUE_STRUCT_SIZE;
  v.name = name;
  v.type = ZL_VALUE_STRING;
  v.string_value = value;
  return v;
}

static inline zl_named_value zl_kit_int_value(const char* name, int64_t value) {
  zl_named_value v;
  memset(&v, 0, sizeof v);
  v.struct_size = ZL_NAMED_VALUE_STRUCT_SIZE;
  v.name = name;
  v.type = ZL_VALUE_INT64;
  v.int64_value = value;
  return v;
}

static inline zl_named_value zl_kit_double_value(const char* name, double value) {
  zl_named_value v = zl_kit_int_value(name, 0);
  v.type = ZL_VALUE_DOUBLE;
  v.double_value = value;
  return v;
}

static inline zl_named_value zl_kit_bool_value(const char* name, int value) {
  zl_named_value v = zl_kit_int_value(name, value ? 1 : 0);
  v.type = ZL_VALUE_BOOL;
  return v;
}

/* ---- switches ---- */

/* zlcore's one spelling of a boolean, in its own flags and variables and in
 * a backend's switches alike: 1 for 1/true/yes/on, 0 for 0/false/no/off, in
 * any case; -1 for anything else, the empty string and NULL included (the
 * caller decides what unset means). */
static inline int zl_kit_bool_word(const char* text) {
  static const char* const kWords[][2] = {{"1", "0"}, {"true", "false"}, {"yes", "no"}, {"on", "off"}};
  char w[8];
  size_t n = 0;
  size_t i;
  if (text == NULL) return -1;
  for (; text[n] != '\0'; ++n) {
    if (n + 1 >= sizeof w) return -1; /* longer than any word */
    w[n] = (char)((text[n] >= 'A' && text[n] <= 'Z') ? text[n] - 'A' + 'a' : text[n]);
  }
  w[n] = '\0';
  for (i = 0; i < sizeof kWords / sizeof kWords[0]; ++i) {
    if (strcmp(w, kWords[i][0]) == 0) return 1;
    if (strcmp(w, kWords[i][1]) == 0) return 0;
  }
  return -1;
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ZL_BACKEND_KIT_H_ */
