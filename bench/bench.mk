# Benchmarks: `make bench` runs bench/run-all, which prints a table of ratios against the anchor tools.
