/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Regression test for sysfs_open() under concurrent mounts: openat2(RESOLVE_IN_ROOT) fails a lookup
 * that crossed ".." with EAGAIN when any mount or rename happened meanwhile, anywhere on the system.
 * A child mounts and unmounts a tmpfs in its own mount namespace as fast as it can while this
 * process reads an attribute through a "../.." class link; without the retry in sysfs.c about one
 * read in 1400 failed here (223 of 300000, under load). Needs CAP_SYS_ADMIN for the namespace, else
 * it is skipped. */
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "unit-test.h"
#include "sysfs/sysfs.h"

static char root[] = "/tmp/linkprobe-test-sysfs-eagain-XXXXXX";
static char skip_name[128] = "test_reads_survive_mount_churn";

static void make(const char *rel, bool dir, const char *link_target) {
        char path[256];
        snprintf(path, sizeof(path), "%s/%s", root, rel);
        if (link_target)
                assert_int_equal(symlink(link_target, path), 0);
        else if (dir)
                assert_int_equal(mkdir(path, 0755), 0);
        else {
                int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
                assert_true(fd >= 0);
                assert_int_equal(write(fd, "1\n", 2), 2);
                close(fd);
        }
}

/* The child: a private mount namespace and a tmpfs mounted over the test root's "mnt" forever. */
static _noreturn_ void churn_mounts(int ready_fd) {
        char target[256];

        snprintf(target, sizeof(target), "%s/mnt", root);
        if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
                (void) write(ready_fd, "n", 1);
                _exit(1);
        }
        (void) write(ready_fd, "y", 1);
        close(ready_fd);
        for (;;)
                if (mount("linkprobe-test", target, "tmpfs", 0, NULL) == 0)
                        (void) umount2(target, MNT_DETACH);
}

static uint64_t now_usec(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

static void test_reads_survive_mount_churn(void **state) {
        _cleanup_(closep) int root_fd = -EBADF;
        int pipe_fds[2], status, failures = 0, first_error = 0;
        unsigned reads = 0;
        uint64_t deadline;
        char ready = 'n', cmd[128];
        pid_t child;

        assert_non_null(mkdtemp(root));
        make("devices", true, NULL);
        make("devices/d", true, NULL);
        make("devices/d/attr", false, NULL);
        make("class", true, NULL);
        make("class/c", true, NULL);
        make("class/c/d", false, "../../devices/d");
        make("mnt", true, NULL);
        root_fd = sysfs_root_open(root);
        assert_true(root_fd >= 0);

        assert_int_equal(pipe2(pipe_fds, O_CLOEXEC), 0);
        child = fork();
        assert_true(child >= 0);
        if (child == 0) {
                close(pipe_fds[0]);
                churn_mounts(pipe_fds[1]);
        }
        close(pipe_fds[1]);
        (void) read(pipe_fds[0], &ready, 1);
        close(pipe_fds[0]);

        if (ready == 'y') {
                /* At most 0.5 s or 100000 reads: enough to see the race (hundreds of failures without the
                 * retry), short enough not to disturb other tests on the machine for long. */
                deadline = now_usec() + 500000;
                while (reads < 100000 && now_usec() < deadline) {
                        char buf[8];
                        for (unsigned i = 0; i < 1000; i++, reads++) {
                                int r = sysfs_read_buffer(root_fd, "class/c/d", "attr", buf, sizeof(buf));
                                if (r < 0) {
                                        failures++;
                                        if (!first_error)
                                                first_error = r;
                                }
                        }
                }
        }
        kill(child, SIGKILL);
        assert_int_equal(waitpid(child, &status, 0), child);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
        assert_int_equal(system(cmd), 0);

        if (ready != 'y')
                skip(); /* the reason is in the test's name, set in main() */
        print_message("# %u reads, %d failures%s%s\n", reads, failures, first_error ? ": " : "",
                      first_error ? strerror(-first_error) : "");
        assert_int_equal(failures, 0);
}

int main(void) {
        /* cmocka names a skipped test and nothing else: put the reason there. */
        if (geteuid() != 0)
                snprintf(skip_name, sizeof(skip_name),
                         "test_reads_survive_mount_churn: needs CAP_SYS_ADMIN for a private mount namespace");
        const struct CMUnitTest tests[] = {
                { skip_name, test_reads_survive_mount_churn, NULL, NULL, NULL },
        };
        return cmocka_run_group_tests_name("sysfs-eagain", tests, NULL, NULL);
}
