# libFuzzer targets (clang). FUZZ_REGRESSION_PROGRAMS replay the corpus without libFuzzer in make check.
FUZZ_REGRESSION_PROGRAMS :=
