// The kernel keyring's system calls (add_key, keyctl) as plain functions: glibc has no
// wrappers (libkeyutils does; we need no library) and Swift cannot call the variadic
// syscall(). Each returns what the kernel returns (-1 with errno set on failure).
#ifndef AUTH_SIDECAR_CKEYCTL_SHIM_H
#define AUTH_SIDECAR_CKEYCTL_SHIM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#define AUTH_SIDECAR_KEY_SPEC_USER_KEYRING (-4)
#define AUTH_SIDECAR_KEYCTL_SETPERM 5
#define AUTH_SIDECAR_KEYCTL_SEARCH 10
#define AUTH_SIDECAR_KEYCTL_READ 11
#define AUTH_SIDECAR_KEYCTL_SET_TIMEOUT 15
#define AUTH_SIDECAR_KEYCTL_INVALIDATE 21
#define AUTH_SIDECAR_KEYCTL_GET_PERSISTENT 22

/// `add_key(type, description, payload, length, keyring)`: the new (or updated) key's id.
static inline long auth_sidecar_add_key(const char *type, const char *description, const void *payload,
                                        size_t length, int32_t keyring) {
    return syscall(SYS_add_key, type, description, payload, length, keyring);
}

/// `keyctl(KEYCTL_GET_PERSISTENT, uid, destination)`: the persistent keyring's id, linked
/// into `destination`. `uid` -1: this user.
static inline long auth_sidecar_keyctl_get_persistent(int32_t uid, int32_t destination) {
    return syscall(SYS_keyctl, AUTH_SIDECAR_KEYCTL_GET_PERSISTENT, uid, destination);
}

/// `keyctl(KEYCTL_SEARCH, keyring, type, description, 0)`: the key's id.
static inline long auth_sidecar_keyctl_search(int32_t keyring, const char *type, const char *description) {
    return syscall(SYS_keyctl, AUTH_SIDECAR_KEYCTL_SEARCH, keyring, type, description, 0);
}

/// `keyctl(KEYCTL_READ, key, buffer, length)`: the payload's length (copied when it fits).
static inline long auth_sidecar_keyctl_read(int32_t key, void *buffer, size_t length) {
    return syscall(SYS_keyctl, AUTH_SIDECAR_KEYCTL_READ, key, buffer, length);
}

/// `keyctl(KEYCTL_SETPERM, key, permissions)`.
static inline long auth_sidecar_keyctl_setperm(int32_t key, uint32_t permissions) {
    return syscall(SYS_keyctl, AUTH_SIDECAR_KEYCTL_SETPERM, key, permissions);
}

/// `keyctl(KEYCTL_SET_TIMEOUT, key, seconds)`: the kernel removes the key `seconds` from now.
static inline long auth_sidecar_keyctl_set_timeout(int32_t key, uint32_t seconds) {
    return syscall(SYS_keyctl, AUTH_SIDECAR_KEYCTL_SET_TIMEOUT, key, seconds);
}

/// `keyctl(KEYCTL_INVALIDATE, key)`: the key is gone at once (unlinked from every keyring).
static inline long auth_sidecar_keyctl_invalidate(int32_t key) {
    return syscall(SYS_keyctl, AUTH_SIDECAR_KEYCTL_INVALIDATE, key);
}

#endif
