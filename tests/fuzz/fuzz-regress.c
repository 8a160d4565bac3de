/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Replays files through a libFuzzer target's LLVMFuzzerTestOneInput() without libFuzzer, so make check
 * runs every corpus under ASan+UBSan. Link it with one fuzz-*.c. */
#include <fcntl.h>
#include <sys/stat.h>

#include "shared/macros.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Corpus entries are small by construction; anything larger is a mistake in the corpus. */
#define INPUT_MAX (1024 * 1024)

static int replay(const char *path) {
        _cleanup_(closep) int fd = open(path, O_RDONLY | O_CLOEXEC);
        _cleanup_(freep) uint8_t *buf = NULL;
        struct stat st;
        size_t n = 0;

        if (fd < 0 || fstat(fd, &st) < 0) {
                fprintf(stderr, "%s: %m\n", path);
                return -errno;
        }
        if (st.st_size > INPUT_MAX) {
                fprintf(stderr, "%s: larger than %d bytes\n", path, INPUT_MAX);
                return -EFBIG;
        }
        buf = malloc((size_t) st.st_size + 1); /* never malloc(0) */
        if (!buf)
                return -ENOMEM;
        while (n < (size_t) st.st_size) {
                ssize_t k = read(fd, buf + n, (size_t) st.st_size - n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0) {
                        fprintf(stderr, "%s: short read\n", path);
                        return k < 0 ? -errno : -EIO;
                }
                n += (size_t) k;
        }
        LLVMFuzzerTestOneInput(buf, n);
        return 0;
}

int main(int argc, char *argv[]) {
        int failed = 0;

        for (int i = 1; i < argc; i++)
                if (replay(argv[i]) < 0)
                        failed = 1;
        printf("%d inputs replayed\n", argc - 1);
        return failed;
}
