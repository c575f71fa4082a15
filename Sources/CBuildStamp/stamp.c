#include "CBuildStamp.h"

// scripts/build.sh writes the commit to .build/build-stamp.h (only when it changed, so only
// this file is recompiled and the binary relinked); a build without it says "unknown".
#if __has_include("../../.build/build-stamp.h")
#include "../../.build/build-stamp.h"
#endif
#ifndef AUTH_SIDECAR_COMMIT
#define AUTH_SIDECAR_COMMIT "unknown"
#endif

const char *_Nonnull auth_sidecar_build_commit(void) { return AUTH_SIDECAR_COMMIT; }
