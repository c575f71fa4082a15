// Typed wrappers for the parts of jansson that Swift cannot import
// (function-like macros and variadic functions).
#ifndef AUTH_SIDECAR_CJANSSON_SHIM_H
#define AUTH_SIDECAR_CJANSSON_SHIM_H
#include <jansson.h>

/// `json_typeof` is a macro.
static inline json_type cjansson_typeof(const json_t *json) {
    return json_typeof(json);
}

/// Flags for `json_loadb`: strict parsing (duplicate keys rejected,
/// NUL bytes inside strings allowed so they can be represented, any value at the top).
static inline size_t cjansson_strict_decode_flags(void) {
    return JSON_REJECT_DUPLICATES | JSON_DECODE_ANY | JSON_ALLOW_NUL;
}

/// Flags for `json_dumpb`: compact, any value at the top, insertion order kept.
static inline size_t cjansson_compact_encode_flags(void) {
    return JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(17);
}

/// Flags for `json_dumps` laid out as Python's `json.dumps(indent=n, sort_keys=True)`:
/// `spaces` of indentation per level, keys sorted, any value at the top.
static inline size_t cjansson_indented_encode_flags(int spaces) {
    return JSON_INDENT(spaces) | JSON_SORT_KEYS | JSON_ENCODE_ANY | JSON_REAL_PRECISION(17);
}

/// The error text of a `json_error_t`, which Swift imports as a tuple.
static inline const char *cjansson_error_text(const json_error_t *error) {
    return error->text;
}
#endif
