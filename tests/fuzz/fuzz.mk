# libFuzzer targets (clang). FUZZ_REGRESSION_PROGRAMS replay the corpus without libFuzzer in make check.
FUZZ_REGRESSION_PROGRAMS :=

# Each fuzz-NAME.c defines LLVMFuzzerTestOneInput(); fuzz-regress.c replays tests/fuzz/corpus/NAME/*
# through it without libFuzzer. For a real fuzzing run (clang, libclang-rt):
#   clang -g -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -I. -Isrc tests/fuzz/fuzz-NAME.c \
#         build-sanitize/lib{daemon,sysfs,shared}.a -o fuzz-NAME && ./fuzz-NAME tests/fuzz/corpus/NAME
FUZZ_REGRESSION_PROGRAMS += fuzz-tbt-parse-regress fuzz-tbt-topology-regress
fuzz-tbt-parse-regress_SOURCES := tests/fuzz/fuzz-tbt-parse.c tests/fuzz/fuzz-regress.c
fuzz-tbt-parse-regress_LIBS := sysfs shared
fuzz-tbt-topology-regress_SOURCES := tests/fuzz/fuzz-tbt-topology.c tests/fuzz/fuzz-regress.c
fuzz-tbt-topology-regress_LIBS := daemon sysfs shared
FUZZ_REGRESSION_PROGRAMS += fuzz-gpu-json-regress
fuzz-gpu-json-regress_SOURCES := tests/fuzz/fuzz-gpu-json.c tests/fuzz/fuzz-regress.c
fuzz-gpu-json-regress_LIBS := daemon sysfs shared
fuzz-gpu-json-regress_PKGS := $(PKG_MODULES)
