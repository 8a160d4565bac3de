# Readers of the kernel's sysfs ABI: pure C, rooted at a directory fd.
LIBRARIES += sysfs
sysfs_SOURCES := $(wildcard sysfs/*.c)
