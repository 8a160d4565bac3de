/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for bounded reads and atomic replacement. */
#include <fcntl.h>
#include <sys/stat.h>

#include "unit-test.h"
#include "shared/fileio.h"

static char dir[] = "/tmp/linkprobe-test-fileio-XXXXXX";
static int dir_fd = -EBADF;

static int setup(void **state) {
        if (!mkdtemp(dir))
                return -1;
        dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        return dir_fd < 0 ? -1 : 0;
}

static int teardown(void **state) {
        char cmd[128];
        safe_close(dir_fd);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        return system(cmd) == 0 ? 0 : -1;
}

static void test_atomic_write_and_read(void **state) {
        _cleanup_(freep) char *text = NULL;
        size_t size;
        struct stat st;

        assert_int_equal(write_file_atomic_at(dir_fd, "state.json", "{\"a\":1}\n", 8, 0640), 0);
        assert_int_equal(read_file_at(dir_fd, "state.json", 1024, &text, &size), 0);
        assert_string_equal(text, "{\"a\":1}\n");
        assert_int_equal(size, 8);
        assert_int_equal(fstatat(dir_fd, "state.json", &st, 0), 0);
        assert_int_equal(st.st_mode & 07777, 0640);

        /* Replacing leaves no temporary file behind. */
        assert_int_equal(write_file_atomic_at(dir_fd, "state.json", "{}", 2, 0644), 0);
        _cleanup_(closedirp) DIR *d = fdopendir(dup(dir_fd));
        struct dirent *de;
        int entries = 0;
        while ((de = readdir(d)))
                entries += de->d_name[0] != '.';
        assert_int_equal(entries, 1);
        rewinddir(d);
        while ((de = readdir(d)))
                assert_false(strneq(de->d_name, ".#", 2));
}

static void test_limits_and_errors(void **state) {
        _cleanup_(freep) char *text = NULL;
        char big[5000];
        memset(big, 'x', sizeof(big));

        assert_int_equal(write_file_atomic_at(dir_fd, "big", big, sizeof(big), 0644), 0);
        assert_int_equal(read_file_at(dir_fd, "big", 4096, &text, NULL), -EFBIG);
        assert_int_equal(read_file_at(dir_fd, "big", 5000, &text, NULL), 0);
        free(TAKE_PTR(text));
        assert_int_equal(read_file_at(dir_fd, "missing", 100, &text, NULL), -ENOENT);
        assert_int_equal(read_file_at(dir_fd, ".", 100, &text, NULL), -EISDIR);
        assert_int_equal(write_file_atomic_at(dir_fd, "a/b", "x", 1, 0644), -EINVAL);
        assert_int_equal(write_file_atomic_at(dir_fd, "", "x", 1, 0644), -EINVAL);

        /* An unwritable directory fails and leaves the old file as it was. */
        int ro = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(write_file_atomic_at(ro, "linkprobe-test", "x", 1, 0644) < 0);
        close(ro);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_atomic_write_and_read),
                cmocka_unit_test(test_limits_and_errors),
        };
        return cmocka_run_group_tests_name("fileio", tests, setup, teardown);
}
