/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "build-paths.h"
#include "probe-runner.h"
#include "shared/json-util.h"
#include "shared/log.h"
#include "shared/parse-util.h"
#include "shared/string-table.h"
#include "shared/string-util.h"
#include "shared/time-util.h"

struct ProbeRun {
        sd_event *event;
        char *program;
        pid_t pid;
        int stdout_fd;
        sd_event_source *io_source;
        sd_event_source *child_source;
        sd_event_source *timer_source;
        ProbeOutputParser parser; /* fed as the output arrives: the document is parsed when it ends */
        size_t output_size;
        size_t output_max;
        bool overflow;
        bool timed_out;
        uint64_t started;
        probe_done_t done;
        probe_document_t document_ready; /* optional: the document is complete, the child not yet gone */
        bool document_told;
        probe_service_exit_t exited; /* set for services (probe_service_start) instead of done */
        void *userdata;
};

/* How long a service has to exit on SIGTERM when it is freed before it is killed. */
#define PROBE_SERVICE_STOP_USEC (2 * USEC_PER_SEC)

static const char *const probe_outcome_table[_PROBE_OUTCOME_MAX] = {
        [PROBE_OUTCOME_OK] = "ok",
        [PROBE_OUTCOME_UNSUPPORTED] = "unsupported",
        [PROBE_OUTCOME_ERROR] = "error",
        [PROBE_OUTCOME_TIMEOUT] = "timeout",
        [PROBE_OUTCOME_CRASHED] = "crashed",
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING(probe_outcome, ProbeOutcome, probe_outcome_table)

/* The directory of the running program when the probes were built beside it: a daemon started from
 * its build tree (build/linkprobed) runs build/linkprobe-probe-*, as systemd's programs find their
 * helpers in theirs. An installed daemon (LIBEXECDIR) has no probes beside it. */
static char *probes_beside_program(void) {
        char exe[PATH_MAX], *slash;
        _cleanup_(freep) char *probe = NULL;
        ssize_t n;

        n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        if (n <= 0)
                return NULL;
        exe[n] = '\0';
        slash = strrchr(exe, '/');
        if (!slash || slash == exe)
                return NULL;
        *slash = '\0';
        if (asprintf(&probe, "%s/linkprobe-probe-tcp", exe) < 0 || access(probe, X_OK) < 0)
                return NULL;
        return strdup(exe);
}

const char *probe_directory(void) {
        static char *beside = NULL;
        static bool looked = false;
        const char *e = getenv("LINKPROBE_PROBE_DIR");

        if (!isempty(e))
                return e;
        if (!looked) {
                looked = true;
                beside = probes_beside_program();
                if (beside)
                        log_debug("Running the probes built beside this program, in %s.", beside);
        }
        return beside ?: PROBEDIR;
}

void probe_result_done(ProbeResult *result) {
        if (result->document)
                json_object_put(result->document);
        free(result->error_name);
        free(result->error_message);
        *result = (ProbeResult) {};
}

/* What a probe prints reaches the bus (LastError, LastErrorMessage), and sd-bus refuses a string that
 * is not UTF-8: escape what is not, including a sequence cut by a length limit. */
static void make_utf8(char **s) {
        if (*s && !utf8_is_valid(*s)) {
                char *escaped = utf8_escape_invalid(*s);
                free(*s);
                *s = escaped;
        }
}

static void result_fail(ProbeResult *r, ProbeOutcome outcome, const char *name, const char *format, ...)
        _printf_(4, 5);
static void result_fail(ProbeResult *r, ProbeOutcome outcome, const char *name, const char *format, ...) {
        va_list ap;

        r->outcome = outcome;
        free(r->error_name);
        free(r->error_message);
        r->error_name = strdup(name);
        va_start(ap, format);
        if (vasprintf(&r->error_message, format, ap) < 0)
                r->error_message = NULL;
        va_end(ap);
        make_utf8(&r->error_message);
}

/* Takes the parser's document into the result, judged with how the probe exited. */
static void probe_result_judge(ProbeResult *r, ProbeOutputParser *p, bool exited, int status) {
        json_object *doc;

        probe_output_finish(p);
        doc = p->bad ? NULL : TAKE_PTR(p->document);

        if (!exited) {
                if (doc)
                        json_object_put(doc);
                result_fail(r, PROBE_OUTCOME_CRASHED, "crashed", "killed by signal SIG%s",
                            strna(sigabbrev_np(status)));
                return;
        }
        if (!doc || !json_object_is_type(doc, json_type_object)) {
                if (doc)
                        json_object_put(doc);
                result_fail(r, PROBE_OUTCOME_CRASHED, "bad-output", "exit status %d without a JSON document", status);
                return;
        }
        r->document = doc;

        const char *s = json_string_or(doc, "status", NULL);
        if (s && streq(s, "ok") && status == 0) {
                r->outcome = PROBE_OUTCOME_OK;
                return;
        }
        if (s && streq(s, "unsupported") && status == 0) {
                r->outcome = PROBE_OUTCOME_UNSUPPORTED;
                const char *reason = json_string_or(doc, "reason", NULL);
                r->error_message = strdup(reason ?: "not supported here");
                make_utf8(&r->error_message);
                return;
        }
        if (s && streq(s, "error")) {
                json_object *e = NULL;
                const char *name = NULL, *message = NULL;
                if (json_object_object_get_ex(doc, "error", &e)) {
                        name = json_string_or(e, "name", NULL);
                        message = json_string_or(e, "message", NULL);
                }
                /* The name is an identifier for machines; refuse anything that is not one. */
                bool name_ok = name && strlen(name) <= 64 && strspn(name, "abcdefghijklmnopqrstuvwxyz"
                                                                          "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") ==
                                                                       strlen(name);
                result_fail(r, PROBE_OUTCOME_ERROR, name_ok ? name : "error", "%.*s", 512,
                            message ?: "the probe reported an error without a message");
                return;
        }
        result_fail(r, PROBE_OUTCOME_CRASHED, "bad-output", "exit status %d with status \"%.32s\"", status, strna(s));
}

void probe_result_from_output(ProbeResult *r, const char *output, size_t size, bool exited, int status) {
        ProbeOutputParser p = {};

        probe_output_feed(&p, output, size);
        probe_result_judge(r, &p, exited, status);
        probe_output_parser_done(&p);
}

static void probe_run_disarm(ProbeRun *run) {
        run->io_source = sd_event_source_disable_unref(run->io_source);
        run->child_source = sd_event_source_disable_unref(run->child_source);
        run->timer_source = sd_event_source_disable_unref(run->timer_source);
        run->stdout_fd = safe_close(run->stdout_fd);
}

/* A service gets the chance to shut down cleanly (the responder finishes its log line); bounded, as
 * this runs when the daemon exits. */
static void service_stop(ProbeRun *run) {
        uint64_t end = now_usec(CLOCK_MONOTONIC) + PROBE_SERVICE_STOP_USEC;

        (void) kill(-run->pid, SIGTERM);
        (void) kill(run->pid, SIGTERM);
        while (now_usec(CLOCK_MONOTONIC) < end) {
                pid_t p = waitpid(run->pid, NULL, WNOHANG);
                if (p == run->pid || (p < 0 && errno == ECHILD)) {
                        (void) kill(-run->pid, SIGKILL); /* whatever it left behind */
                        run->pid = 0;
                        return;
                }
                (void) usleep(10000);
        }
        log_warning("%s (pid %d) did not exit on SIGTERM, killing it.", run->program, (int) run->pid);
}

ProbeRun *probe_run_free(ProbeRun *run) {
        if (!run)
                return NULL;
        if (run->pid > 0 && run->exited)
                service_stop(run);
        if (run->pid > 0) {
                /* Still running: kill the group and reap it so it does not linger as a zombie. */
                (void) kill(-run->pid, SIGKILL);
                (void) waitpid(run->pid, NULL, 0);
        }
        probe_run_disarm(run);
        probe_output_parser_done(&run->parser);
        free(run->program);
        sd_event_unref(run->event);
        return mfree(run);
}

/* Pipes hold 64 KiB unless asked: a probe whose document is larger would wait on our reads before it
 * can exit. Asked for what the document may hold, up to what the kernel gives an unprivileged pipe
 * (/proc/sys/fs/pipe-max-size, 1 MiB by default), it writes and exits at once. */
#define PROBE_PIPE_MAX (1U << 20)

void probe_run_set_output_max(ProbeRun *run, size_t max) {
        run->output_max = max;
        if (run->stdout_fd >= 0 && max > (64U << 10))
                (void) fcntl(run->stdout_fd, F_SETPIPE_SZ, (int) MIN(max, (size_t) PROBE_PIPE_MAX));
}

void probe_run_set_document_ready(ProbeRun *run, probe_document_t ready) {
        run->document_ready = ready;
}

pid_t probe_run_pid(const ProbeRun *run) {
        return run ? run->pid : 0;
}

static void probe_run_read(ProbeRun *run) {
        char buf[16384];

        while (run->stdout_fd >= 0) {
                ssize_t k = read(run->stdout_fd, buf, sizeof(buf));
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        break; /* EAGAIN: more later */
                }
                if (k == 0) {
                        run->io_source = sd_event_source_disable_unref(run->io_source);
                        run->stdout_fd = safe_close(run->stdout_fd);
                        break;
                }
                if (run->output_size + (size_t) k > run->output_max) {
                        run->overflow = true;
                        (void) kill(-run->pid, SIGKILL);
                        run->io_source = sd_event_source_disable_unref(run->io_source);
                        run->stdout_fd = safe_close(run->stdout_fd);
                        break;
                }
                run->output_size += (size_t) k;
                probe_output_feed(&run->parser, buf, (size_t) k);
                if (run->document_ready && !run->document_told && run->parser.document && !run->parser.bad) {
                        run->document_told = true;
                        run->document_ready(run, run->parser.document, run->userdata);
                }
        }
}

static int on_output(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        probe_run_read(userdata);
        return 0;
}

static int on_deadline(sd_event_source *s, uint64_t usec, void *userdata) {
        ProbeRun *run = userdata;

        log_warning("Probe %s (pid %d) overran its deadline, killing it.", run->program, (int) run->pid);
        run->timed_out = true;
        (void) kill(-run->pid, SIGKILL);
        return 0;
}

int probe_run_kill(ProbeRun *run, int sig) {
        if (!run || run->pid <= 0)
                return -ESRCH;
        return RET_NERRNO(kill(-run->pid, sig));
}

static int on_service_exit(sd_event_source *s, const siginfo_t *si, void *userdata) {
        ProbeRun *run = userdata;

        (void) kill(-run->pid, SIGKILL); /* helpers it started go with it */
        run->pid = 0;
        probe_run_disarm(run);
        run->exited(run, si, run->userdata);
        probe_run_free(run);
        return 0;
}

static int on_child_exit(sd_event_source *s, const siginfo_t *si, void *userdata) {
        ProbeRun *run = userdata;
        ProbeResult result = {};

        /* What the child wrote before it died is all in the pipe now; anything a leftover
         * grandchild still holds open is not waited for. */
        probe_run_read(run);
        (void) kill(-run->pid, SIGKILL);
        run->pid = 0;
        probe_run_disarm(run);

        result.duration_usec = now_usec(CLOCK_MONOTONIC) - run->started;
        if (run->timed_out)
                result_fail(&result, PROBE_OUTCOME_TIMEOUT, "deadline", "killed after %.1f s",
                            (double) result.duration_usec / USEC_PER_SEC);
        else if (run->overflow)
                result_fail(&result, PROBE_OUTCOME_CRASHED, "bad-output", "more than %zu bytes of output",
                            run->output_max);
        else
                probe_result_judge(&result, &run->parser, si->si_code == CLD_EXITED, si->si_status);

        log_debug("Probe %s finished after %" PRIu64 " ms: %s%s%s.", run->program, result.duration_usec / 1000,
                  probe_outcome_to_string(result.outcome), result.error_name ? " " : "", strempty(result.error_name));

        run->done(run, &result, run->userdata);
        probe_result_done(&result);
        probe_run_free(run);
        return 0;
}

/* Moves fds to 3, 4, ... (they may already sit anywhere, including on each other's targets): first
 * out of the way above the targets, then into place; dup2() clears O_CLOEXEC on the copies. */
static int move_fds_into_place(const int *fds, size_t n_fds) {
        int moved[PROBE_SERVICE_FDS_MAX];

        for (size_t i = 0; i < n_fds; i++) {
                moved[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, (int) (3 + n_fds));
                if (moved[i] < 0)
                        return -errno;
        }
        for (size_t i = 0; i < n_fds; i++)
                if (dup2(moved[i], (int) (3 + i)) < 0)
                        return -errno;
        return 0;
}

/* What systemd addressed to the daemon is not for its children. */
static const char *const daemon_variables[] = { "NOTIFY_SOCKET", "LISTEN_FDS",    "LISTEN_PID",
                                                "LISTEN_FDNAMES", "WATCHDOG_USEC", "WATCHDOG_PID" };

static bool daemon_variable(const char *assignment) {
        for (size_t i = 0; i < ELEMENTSOF(daemon_variables); i++) {
                size_t n = strlen(daemon_variables[i]);
                if (strncmp(assignment, daemon_variables[i], n) == 0 && assignment[n] == '=')
                        return true;
        }
        return false;
}

/* path, then args: the argv of a child (the array only; the strings are the caller's). */
static char **child_argv(const char *path, char *const *args) {
        size_t n = 0;
        char **argv;

        while (args && args[n])
                n++;
        argv = new0(char *, n + 2);
        if (!argv)
                return NULL;
        argv[0] = (char *) path;
        for (size_t i = 0; i < n; i++)
                argv[i + 1] = args[i];
        return argv;
}

/* A service runs in a forked child: it needs what posix_spawn() cannot do (the parent-death signal,
 * its listening sockets moved into place). */
static _noreturn_ void exec_service(const char *path, char *const *args, const int *fds, size_t n_fds, pid_t parent) {
        sigset_t none;

        /* The daemon blocks the signals sd-event handles; a child must start with none blocked. */
        sigemptyset(&none);
        (void) sigprocmask(SIG_SETMASK, &none, NULL);
        (void) setpgid(0, 0);
        /* A service must not outlive the daemon, even one killed with SIGKILL. */
        if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != parent)
                _exit(127);

        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(null, STDOUT_FILENO) < 0)
                _exit(127);
        if (move_fds_into_place(fds, n_fds) < 0)
                _exit(127);
        (void) close_range((unsigned) (3 + n_fds), ~0U, 0);

        for (size_t i = 0; i < ELEMENTSOF(daemon_variables); i++)
                unsetenv(daemon_variables[i]);
        if (n_fds > 0) {
                /* systemd's socket-passing protocol, which the responder speaks. */
                char buf[32];
                snprintf(buf, sizeof(buf), "%zu", n_fds);
                (void) setenv("LISTEN_FDS", buf, 1);
                snprintf(buf, sizeof(buf), "%d", (int) getpid());
                (void) setenv("LISTEN_PID", buf, 1);
        }

        char **argv = child_argv(path, args);
        if (!argv)
                _exit(127);
        execv(path, argv);
        fprintf(stderr, "Cannot run %s: %s\n", path, strerror(errno));
        _exit(127);
}

/* A probe (not a service) is started with posix_spawn(), which glibc does with CLONE_VM|CLONE_VFORK:
 * fork() would write-protect every page of the daemon, and the daemon would then take one page fault
 * for each page it writes afterwards — the sweep's parse of its document writes ~900 of them, 10-20
 * ms on a virtual machine (bench/bench-sweep). The child gets what a service gets but the parent-death
 * signal: no signal blocked, its own process group, /dev/null on stdin, the pipe on stdout, nothing
 * else open, none of the daemon's systemd variables. */
static int spawn_probe(const char *path, char *const *args, int stdout_fd, pid_t *ret) {
        _cleanup_(freep) char **argv = NULL, **envp = NULL;
        posix_spawn_file_actions_t actions;
        posix_spawnattr_t attr;
        size_t k = 0;
        sigset_t none;
        int r;

        for (char **e = environ; e && *e; e++)
                k++;
        argv = child_argv(path, args);
        envp = new0(char *, k + 1);
        if (!argv || !envp)
                return -ENOMEM;
        k = 0;
        for (char **e = environ; e && *e; e++)
                if (!daemon_variable(*e))
                        envp[k++] = *e;

        sigemptyset(&none);
        r = posix_spawnattr_init(&attr);
        if (r != 0)
                return -r;
        r = posix_spawn_file_actions_init(&actions);
        if (r != 0) {
                posix_spawnattr_destroy(&attr);
                return -r;
        }
        r = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP);
        if (r == 0)
                r = posix_spawnattr_setsigmask(&attr, &none);
        if (r == 0)
                r = posix_spawnattr_setpgroup(&attr, 0);
        if (r == 0)
                r = posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDWR, 0);
        if (r == 0)
                r = posix_spawn_file_actions_adddup2(&actions, stdout_fd, STDOUT_FILENO);
        if (r == 0)
                r = posix_spawn_file_actions_addclosefrom_np(&actions, 3);
        if (r == 0)
                r = posix_spawn(ret, path, &actions, &attr, argv, envp);
        posix_spawn_file_actions_destroy(&actions);
        posix_spawnattr_destroy(&attr);
        return -r;
}

static int spawn(sd_event *event, const char *probe_dir, const char *program, char *const *args, const int *fds,
                 size_t n_fds, bool service, ProbeRun **ret) {
        _cleanup_(probe_run_freep) ProbeRun *run = NULL;
        _cleanup_(freep) char *path = NULL;
        pid_t parent = getpid();
        int r;

        if (isempty(program) || (!strchr(program, '/') && isempty(probe_dir)))
                return -EINVAL;
        if (program[0] == '/')
                path = strdup(program);
        else if (asprintf(&path, "%s/%s", probe_dir, program) < 0)
                path = NULL;
        if (!path)
                return -ENOMEM;
        if (access(path, X_OK) < 0)
                return log_warning_errno(errno, "Cannot run probe %s: %m (LINKPROBE_PROBE_DIR= names the directory "
                                                "that holds the probe programs)", path);

        run = new0(ProbeRun, 1);
        if (run)
                run->output_max = PROBE_OUTPUT_MAX;
        if (!run)
                return -ENOMEM;
        run->event = sd_event_ref(event);
        run->stdout_fd = -EBADF;
        run->program = strdup(program);
        if (!run->program)
                return -ENOMEM;

        if (!service) {
                int pipefd[2];

                /* Our end does not block; the probe's does: it is an ordinary program. */
                if (pipe2(pipefd, O_CLOEXEC) < 0)
                        return -errno;
                run->stdout_fd = pipefd[0];
                if (fcntl(run->stdout_fd, F_SETFL, O_NONBLOCK) < 0) {
                        r = -errno;
                        safe_close(pipefd[1]);
                        return r;
                }
                run->started = now_usec(CLOCK_MONOTONIC);
                r = spawn_probe(path, args, pipefd[1], &run->pid);
                safe_close(pipefd[1]);
                if (r < 0) {
                        run->pid = 0;
                        return log_warning_errno(r, "Cannot run probe %s: %m", path);
                }
                *ret = TAKE_PTR(run);
                return 0;
        }

        run->started = now_usec(CLOCK_MONOTONIC);
        run->pid = fork();
        if (run->pid < 0) {
                r = -errno;
                run->pid = 0;
                return r;
        }
        if (run->pid == 0)
                exec_service(path, args, fds, n_fds, parent);
        /* Set it here too, so there is no window in which a kill(-pid) misses the group. */
        (void) setpgid(run->pid, run->pid);

        *ret = TAKE_PTR(run);
        return 0;
}

int probe_run_start(sd_event *event, const char *probe_dir, const char *program, char *const *args,
                    uint64_t deadline_usec, probe_done_t done, void *userdata, ProbeRun **ret) {
        _cleanup_(probe_run_freep) ProbeRun *run = NULL;
        int r;

        r = spawn(event, probe_dir, program, args, NULL, 0, false, &run);
        if (r < 0)
                return r;
        run->done = done;
        run->userdata = userdata;

        r = sd_event_add_io(event, &run->io_source, run->stdout_fd, EPOLLIN, on_output, run);
        if (r >= 0)
                r = sd_event_add_child(event, &run->child_source, run->pid, WEXITED, on_child_exit, run);
        if (r >= 0)
                r = sd_event_add_time_relative(event, &run->timer_source, CLOCK_MONOTONIC,
                                               deadline_usec + PROBE_KILL_GRACE_USEC, 0, on_deadline, run);
        if (r < 0)
                return r;

        log_debug("Started probe %s (pid %d), deadline %" PRIu64 " ms.", program, (int) run->pid,
                  deadline_usec / 1000);
        if (ret)
                *ret = run;
        TAKE_PTR(run);
        return 0;
}

int probe_service_start(sd_event *event, const char *probe_dir, const char *program, char *const *args,
                        const int *fds, size_t n_fds, probe_service_exit_t exited, void *userdata, ProbeRun **ret) {
        _cleanup_(probe_run_freep) ProbeRun *run = NULL;
        int r;

        if (!exited || n_fds > PROBE_SERVICE_FDS_MAX)
                return -EINVAL;
        r = spawn(event, probe_dir, program, args, fds, n_fds, true, &run);
        if (r < 0)
                return r;
        run->exited = exited;
        run->userdata = userdata;

        r = sd_event_add_child(event, &run->child_source, run->pid, WEXITED, on_service_exit, run);
        if (r < 0)
                return r;

        log_debug("Started %s (pid %d) with %zu socket(s).", program, (int) run->pid, n_fds);
        if (ret)
                *ret = run;
        TAKE_PTR(run);
        return 0;
}
