// Typed wrappers for libcurl's variadic functions, which Swift cannot call.
// libcurl is not linked: it is loaded with dlopen on the first HTTP call (start-up
// cost, see ARCHITECTURE.md), so each wrapper takes the resolved function pointer.
#ifndef AUTH_SIDECAR_CCURL_SHIM_H
#define AUTH_SIDECAR_CCURL_SHIM_H
#include <curl/curl.h>

typedef CURLcode (*ccurl_setopt_fn)(CURL *, CURLoption, ...);
typedef CURLcode (*ccurl_getinfo_fn)(CURL *, CURLINFO, ...);

static inline CURLcode ccurl_setopt_long(void *fn, CURL *h, CURLoption o, long v) {
    return ((ccurl_setopt_fn)fn)(h, o, v);
}
static inline CURLcode ccurl_setopt_str(void *fn, CURL *h, CURLoption o, const char *v) {
    return ((ccurl_setopt_fn)fn)(h, o, v);
}
static inline CURLcode ccurl_setopt_ptr(void *fn, CURL *h, CURLoption o, void *v) {
    return ((ccurl_setopt_fn)fn)(h, o, v);
}
static inline CURLcode ccurl_setopt_off(void *fn, CURL *h, CURLoption o, curl_off_t v) {
    return ((ccurl_setopt_fn)fn)(h, o, v);
}
static inline CURLcode ccurl_getinfo_long(void *fn, CURL *h, CURLINFO i, long *v) {
    return ((ccurl_getinfo_fn)fn)(h, i, v);
}
static inline CURLcode ccurl_getinfo_str(void *fn, CURL *h, CURLINFO i, char **v) {
    return ((ccurl_getinfo_fn)fn)(h, i, v);
}
#endif
