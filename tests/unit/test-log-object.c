/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for object-scoped logging without a journal: the object's name leads the line, %m is the
 * error given, the error comes back negative, and a level above the maximum prints nothing. */
#include <fcntl.h>
#include <syslog.h>

#include "unit-test.h"
#include "daemon/link.h"
#include "daemon/peer.h"
#include "shared/fileio.h"

/* Runs fn with stderr going to a file and returns what it wrote. */
static char *capture_stderr(void (*fn)(void)) {
        char path[] = "/tmp/linkprobe-test-log-XXXXXX";
        int fd = mkstemp(path), saved = dup(STDERR_FILENO);
        char *text = NULL;

        assert_true(fd >= 0 && saved >= 0);
        fflush(stderr);
        assert_true(dup2(fd, STDERR_FILENO) >= 0);
        fn();
        fflush(stderr);
        assert_true(dup2(saved, STDERR_FILENO) >= 0);
        close(saved);
        close(fd);
        assert_int_equal(read_file_at(AT_FDCWD, path, 4096, &text, NULL), 0);
        unlink(path);
        return text;
}

static void log_about_a_link(void) {
        Link l = { .name_utf8 = (char *) "eth0" };

        assert_int_equal(log_link_warning_errno(&l, -ENOENT, "Cannot read %s: %m", "speed"), -ENOENT);
        assert_int_equal(log_link_warning_errno(&l, ENOENT, "positive errors come back negative"), -ENOENT);
        log_link_debug(&l, "not shown above the maximum level");
}

static void log_about_a_path(void) {
        Peer p = { .key = (char *) "tcp:10.0.0.2" };

        log_peer_info(&p, "Up %.1f Gbit/s.", 9.5);
}

static void test_object_first(void **state) {
        _cleanup_(freep) char *link_text = NULL, *peer_text = NULL;

        /* A value the test environment may set must not pretend stderr is the journal. */
        setenv("JOURNAL_STREAM", "0:0", 1);
        log_set_max_level(LOG_INFO);
        link_text = capture_stderr(log_about_a_link);
        peer_text = capture_stderr(log_about_a_path);

        assert_string_equal(link_text, "<4>eth0: Cannot read speed: No such file or directory\n"
                                       "<4>eth0: positive errors come back negative\n");
        assert_string_equal(peer_text, "<6>tcp:10.0.0.2: Up 9.5 Gbit/s.\n");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_object_first),
        };
        return cmocka_run_group_tests_name("log-object", tests, NULL, NULL);
}
