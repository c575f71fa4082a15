// libFuzzer's driver entry point. The symbol lives in the fuzzer runtime that
// `-sanitize=fuzzer` links; only the fuzz build (-DFUZZING) calls it, so other builds
// never reference it.
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv,
                        int (*UserCb)(const uint8_t *Data, size_t Size));
