/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* linkprobectl inhibit -- CMD: hold off GPU/RDMA probes while CMD runs (like systemd-inhibit); inhibitors. */
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>

#include "linkprobectl.h"
#include "shared/format-table.h"
#include "shared/string-util.h"

/* What the daemon accepts for who (INHIBIT_WHO_MAX in src/inhibit.h). */
#define WHO_MAX 128

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

static int take_inhibitor(sd_bus *bus, const char *who, int *ret_fd) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        sd_bus_error error = SD_BUS_ERROR_NULL;
        int fd, r;

        r = sd_bus_call_method(bus, BUS_NAME, BUS_PATH, IFACE_PREFIX "Manager", "Inhibit", &error, &reply, "sss",
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

int verb_inhibitors(sd_bus *bus, int argc, char **argv) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(json_object_putp) json_object *list = json_object_new_array();
        _cleanup_(text_table_freep) TextTable *t = NULL;
        sd_bus_error error = SD_BUS_ERROR_NULL;
        const char *what, *who, *why;
        uint32_t uid, pid;
        int r;

        r = sd_bus_call_method(bus, BUS_NAME, BUS_PATH, IFACE_PREFIX "Manager", "ListInhibitors", &error, &reply,
                               NULL);
        if (r < 0) {
                r = ctl_log_bus_error(r, &error, "Cannot list the inhibitors");
                sd_bus_error_free(&error);
                return r;
        }
        t = text_table_new("WHAT", "WHO", "WHY", ">UID", ">PID", NULL);
        if (!t || !list)
                return CTL_EXIT_FAILURE;
        r = sd_bus_message_enter_container(reply, 'a', "(sssuu)");
        while (r >= 0 && (r = sd_bus_message_read(reply, "(sssuu)", &what, &who, &why, &uid, &pid)) > 0) {
                char uid_text[16], pid_text[16];
                json_object *o = json_object_new_object();

                if (!o)
                        return CTL_EXIT_FAILURE;
                json_object_object_add(o, "What", json_object_new_string(what));
                json_object_object_add(o, "Who", json_object_new_string(who));
                json_object_object_add(o, "Why", json_object_new_string(why));
                json_object_object_add(o, "Uid", json_object_new_int64(uid));
                json_object_object_add(o, "Pid", json_object_new_int64(pid));
                json_object_array_add(list, o);
                snprintf(uid_text, sizeof(uid_text), "%" PRIu32, uid);
                snprintf(pid_text, sizeof(pid_text), "%" PRIu32, pid);
                if (text_table_add_row(t, what, who, isempty(why) ? NULL : why,
                                       uid == UINT32_MAX ? "?" : uid_text, pid == 0 ? "?" : pid_text) < 0)
                        return CTL_EXIT_FAILURE;
        }
        if (r < 0) {
                fprintf(stderr, "Unexpected answer to ListInhibitors(): %s\n", strerror(-r));
                return CTL_EXIT_FAILURE;
        }
        if (arg_json)
                return ctl_print_json(list);
        ctl_print_table(t, "inhibitors");
        return 0;
}
