#ifndef AUTH_SIDECAR_BUILD_STAMP_H
#define AUTH_SIDECAR_BUILD_STAMP_H

/// The commit this binary was built from: what scripts/build.sh wrote to
/// .build/build-stamp.h, else "unknown" (a plain `swift build`, or a tree without git).
const char *_Nonnull auth_sidecar_build_commit(void);

#endif
