/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* linkprobectl inhibit -- CMD: hold off GPU/RDMA probes while CMD runs (like systemd-inhibit); inhibitors. */
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>

#include "linkprobectl.h"
#include "shared/string-util.h"

/* What the daemon accepts for who and why (INHIBIT_WHO_MAX, INHIBIT_WHY_MAX in src/daemon/inhibit.h). */
#define WHO_MAX 128
#define WHY_MAX 256

static pid_t child_pid = 0;

static void forward_signal(int sig) {
        if (child_pid > 0)
                (void) kill(child_pid, sig);
}

/* The command line, as the default "who": valid UTF-8 without control characters, cut to WHO_MAX
 * bytes at a character boundary. */
static char *default_who(char **argv) {
        _cleanup_(freep) char *joined = NULL, *escaped = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&joined, &len);

        if (!f)
                return NULL;
        for (size_t i = 0; argv[i]; i++)
                fprintf(f, "%s%s", i > 0 ? " " : "", argv[i]);
        if (fclose(f) != 0)
                return NULL;
        escaped = utf8_escape_invalid(joined);
        if (!escaped)
                return NULL;
        for (char *p = escaped; *p; p++)
                if ((unsigned char) *p < 0x20 || *p == 0x7f)
                        *p = ' ';
        size_t n = strlen(escaped);
        if (n > WHO_MAX) {
                n = WHO_MAX;
                while (n > 0 && ((unsigned char) escaped[n] & 0xc0) == 0x80)
                        n--;
                escaped[n] = '\0';
        }
        return TAKE_PTR(escaped);
}

/* "gpu", "rdma", "gpu:rdma": kinds separated by colons, as the daemon reads them. */
static bool what_is_valid(const char *what) {
        if (isempty(what))
                return false;
        for (const char *p = what;;) {
                size_t n = strcspn(p, ":");
                if (!((n == 3 && strneq(p, "gpu", 3)) || (n == 4 && strneq(p, "rdma", 4))))
                        return false;
                if (p[n] == '\0')
                        return true;
                p += n + 1;
        }
}

static bool text_is_valid(const char *s, size_t max, bool empty_ok) {
        if (!s)
                return true;
        if ((!empty_ok && isempty(s)) || strlen(s) > max || !utf8_is_valid(s))
                return false;
        for (const char *p = s; *p; p++)
                if ((unsigned char) *p < 0x20 || *p == 0x7f)
                        return false;
        return true;
}

int check_inhibit_args(int argc, char **argv) {
        if (!what_is_valid(arg_what)) {
                _cleanup_(freep) char *escaped = escape_for_terminal(arg_what);
                fprintf(stderr, "--what=%s: takes gpu, rdma or gpu:rdma.\n", strna(escaped));
                return CTL_EXIT_USAGE;
        }
        if (!text_is_valid(arg_who, WHO_MAX, false)) {
                fprintf(stderr, "--who= takes 1 to %d bytes of text without control characters.\n", WHO_MAX);
                return CTL_EXIT_USAGE;
        }
        if (!text_is_valid(arg_why, WHY_MAX, true)) {
                fprintf(stderr, "--why= takes at most %d bytes of text without control characters.\n", WHY_MAX);
                return CTL_EXIT_USAGE;
        }
        return 0;
}

static int take_inhibitor(sd_bus *bus, const char *who, int *ret_fd) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        sd_bus_error error = SD_BUS_ERROR_NULL;
        int fd, r;

        r = sd_bus_call_method(bus, BUS_NAME, BUS_PATH, MANAGER_INTERFACE, "Inhibit", &error, &reply, "sss",
                               arg_what, who, strempty(arg_why));
        if (r < 0) {
                r = ctl_log_bus_error(r, &error, "Cannot take an inhibitor");
                sd_bus_error_free(&error);
                return -r;
        }
        r = sd_bus_message_read(reply, "h", &fd);
        if (r < 0) {
                fprintf(stderr, "Unexpected answer to Inhibit(): %s\n", strerror(-r));
                return -CTL_EXIT_FAILURE;
        }
        /* The message owns fd; keep a copy of our own, which CMD does not inherit. */
        *ret_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        if (*ret_fd < 0) {
                fprintf(stderr, "Cannot keep the inhibitor: %s\n", strerror(errno));
                return -CTL_EXIT_FAILURE;
        }
        return 0;
}

int verb_inhibit(sd_bus *bus, int argc, char **argv) {
        _cleanup_(closep) int fd = -EBADF;
        _cleanup_(freep) char *who = NULL;
        struct sigaction ignore = { .sa_handler = SIG_IGN }, forward = { .sa_handler = forward_signal };
        struct sigaction old_int, old_quit, old_term, old_hup;
        int status, r;

        who = arg_who ? strdup(arg_who) : default_who(argv + 1);
        if (!who)
                return CTL_EXIT_FAILURE;
        r = take_inhibitor(bus, who, &fd);
        if (r < 0)
                return -r;

        /* Like system(3): Ctrl-C and Ctrl-\ reach CMD through the terminal, and we must outlive it so the
         * inhibitor is held until CMD is done. A SIGTERM or SIGHUP meant for us is passed on. */
        sigaction(SIGINT, &ignore, &old_int);
        sigaction(SIGQUIT, &ignore, &old_quit);
        sigaction(SIGTERM, &forward, &old_term);
        sigaction(SIGHUP, &forward, &old_hup);

        child_pid = fork();
        if (child_pid < 0) {
                fprintf(stderr, "Cannot fork: %s\n", strerror(errno));
                return CTL_EXIT_FAILURE;
        }
        if (child_pid == 0) {
                sigset_t none;
                sigaction(SIGINT, &old_int, NULL);
                sigaction(SIGQUIT, &old_quit, NULL);
                sigaction(SIGTERM, &old_term, NULL);
                sigaction(SIGHUP, &old_hup, NULL);
                sigemptyset(&none);
                sigprocmask(SIG_SETMASK, &none, NULL);
                execvp(argv[1], argv + 1);
                int e = errno;
                _cleanup_(freep) char *escaped = escape_for_terminal(argv[1]);
                fprintf(stderr, "Cannot run %s: %s\n", strna(escaped), strerror(e));
                _exit(e == ENOENT ? 127 : 126);
        }

        while (waitpid(child_pid, &status, 0) < 0)
                if (errno != EINTR) {
                        fprintf(stderr, "Cannot wait for %s: %s\n", argv[1], strerror(errno));
                        return CTL_EXIT_FAILURE;
                }
        child_pid = 0;
        /* The inhibitor goes with fd (and our bus connection) when we return. */
        if (WIFEXITED(status))
                return WEXITSTATUS(status);
        return 128 + WTERMSIG(status);
}

static const CtlColumn inhibitor_columns[] = {
        { "WHAT", "What", NULL, NULL, { .min_width = TEXT_WIDTH_WHOLE } },
        { "WHO", "Who", NULL, NULL, { .min_width = 10 } },
        { "WHY", "Why", NULL, NULL, { .weight = 300, .min_width = 10 } },
        { ">UID", "Uid", NULL, NULL, { .optional = 2 } },
        { ">PID", "Pid", NULL, NULL, { .optional = 1 } },
};

static const CtlTableView inhibitor_table = {
        .columns = inhibitor_columns,
        .n_columns = ELEMENTSOF(inhibitor_columns),
        .noun = "inhibitor",
        .nouns = "inhibitors",
        .empty = "No inhibitors.",
};

int verb_inhibitors(sd_bus *bus, int argc, char **argv) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(json_object_putp) json_object *list = json_object_new_array();
        sd_bus_error error = SD_BUS_ERROR_NULL;
        const char *what, *who, *why;
        uint32_t uid, pid;
        int r;

        r = sd_bus_call_method(bus, BUS_NAME, BUS_PATH, MANAGER_INTERFACE, "ListInhibitors", &error, &reply, NULL);
        if (r < 0) {
                r = ctl_log_bus_error(r, &error, "Cannot list the inhibitors");
                sd_bus_error_free(&error);
                return r;
        }
        if (!list)
                return log_oom_ctl();
        r = sd_bus_message_enter_container(reply, 'a', "(sssuu)");
        while (r >= 0 && (r = sd_bus_message_read(reply, "(sssuu)", &what, &who, &why, &uid, &pid)) > 0) {
                json_object *o = json_object_new_object();

                if (!o)
                        return log_oom_ctl();
                json_object_object_add(o, "What", json_object_new_string(what));
                json_object_object_add(o, "Who", json_object_new_string(who));
                json_object_object_add(o, "Why", json_object_new_string(why));
                /* Unknown is null, not a number that looks like one (the daemon says UINT32_MAX, 0). */
                json_object_object_add(o, "Uid", uid == UINT32_MAX ? NULL : json_object_new_int64(uid));
                json_object_object_add(o, "Pid", pid == 0 ? NULL : json_object_new_int64(pid));
                json_object_array_add(list, o);
        }
        if (r < 0) {
                fprintf(stderr, "Unexpected answer to ListInhibitors(): %s\n", strerror(-r));
                return CTL_EXIT_FAILURE;
        }
        return ctl_output_table(list, &inhibitor_table);
}
