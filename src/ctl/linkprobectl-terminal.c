/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the terminal decides: whether it is one, its width, colour, and a pager in front of it — as
 * systemd's tools do it, so that users of networkctl and busctl find what they expect. */
#include <fcntl.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linkprobectl-options.h"
#include "linkprobectl-terminal.h"
#include "shared/parse-util.h"

static int stdout_tty = -1;
static size_t terminal_width;
static pid_t pager_pid;
static int saved_stderr = -EBADF; /* the terminal, while errors go through the pager */

/* Asked once, before a pager takes stdout over: what stdout was is what the user sees. */
static void terminal_probe(void) {
        struct winsize ws = {};

        if (stdout_tty >= 0)
                return;
        stdout_tty = isatty(STDOUT_FILENO);
        if (stdout_tty && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0)
                terminal_width = ws.ws_col;
}

bool ctl_stdout_is_tty(void) {
        terminal_probe();
        return stdout_tty > 0;
}

size_t ctl_table_width(void) {
        const char *e = getenv("COLUMNS");
        unsigned long v;
        char *end;

        if (arg_full)
                return 0;
        /* COLUMNS wins even when stdout is a pipe (systemd's rule), which is what makes widths testable. */
        if (!isempty(e)) {
                errno = 0;
                v = strtoul(e, &end, 10);
                if (errno == 0 && *end == '\0' && v > 0 && v < 100000)
                        return v;
        }
        terminal_probe();
        return stdout_tty > 0 ? terminal_width : 0;
}

bool ctl_colour(void) {
        const char *term = getenv("TERM");

        switch (arg_colour) {
        case COLOUR_ALWAYS:
                return true;
        case COLOUR_NEVER:
                return false;
        case COLOUR_AUTO:
                break;
        }
        /* https://no-color.org: present and not empty means no colour unless asked for. */
        if (!isempty(getenv("NO_COLOR")))
                return false;
        if (term && streq(term, "dumb"))
                return false;
        return ctl_stdout_is_tty();
}

/* Copies stdin to stdout: the pager of last resort, when neither the one asked for nor less nor more
 * can be run. */
static _noreturn_ void copy_through(void) {
        char buf[4096];
        ssize_t n;

        while ((n = read(STDIN_FILENO, buf, sizeof(buf))) > 0)
                if (write(STDOUT_FILENO, buf, (size_t) n) != n)
                        _exit(EXIT_FAILURE);
        _exit(n < 0 ? EXIT_FAILURE : EXIT_SUCCESS);
}

static _noreturn_ void run_pager(const char *pager) {
        /* less: quit at once if it fits (F), colours raw (R), chop long lines (S), no init (X),
         * long prompt (M), Ctrl-C quits (K): systemd's choice. Ours only when the user set none. */
        (void) setenv("LESS", "FRSXMK", 0);
        (void) setenv("LESSCHARSET", "utf-8", 0);
        if (pager)
                execl("/bin/sh", "sh", "-c", pager, (char *) NULL);
        else {
                execlp("less", "less", (char *) NULL);
                execlp("more", "more", (char *) NULL);
        }
        copy_through();
}

int ctl_pager_open(void) {
        const char *pager = getenv("SYSTEMD_PAGER");
        int fd[2];

        if (arg_no_pager || !ctl_stdout_is_tty() || pager_pid > 0)
                return 0;
        if (!pager)
                pager = getenv("PAGER");
        /* An empty pager or "cat" means none, as for systemd and git. */
        if (pager && (isempty(pager) || streq(pager, "cat")))
                return 0;

        if (pipe2(fd, O_CLOEXEC) < 0)
                return -errno;
        fflush(stdout);
        pager_pid = fork();
        if (pager_pid < 0) {
                int r = -errno;
                safe_close(fd[0]);
                safe_close(fd[1]);
                pager_pid = 0;
                return r;
        }
        if (pager_pid == 0) {
                if (dup2(fd[0], STDIN_FILENO) < 0)
                        _exit(EXIT_FAILURE);
                safe_close(fd[0]);
                safe_close(fd[1]);
                run_pager(pager);
        }

        /* Errors go through the pager too when they would land on the same terminal, or less would draw
         * over them. */
        if (dup2(fd[1], STDOUT_FILENO) < 0)
                return -errno;
        if (isatty(STDERR_FILENO)) {
                saved_stderr = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
                if (saved_stderr >= 0)
                        (void) dup2(fd[1], STDERR_FILENO);
        }
        safe_close(fd[0]);
        safe_close(fd[1]);
        return 1;
}

void ctl_pager_close(void) {
        if (pager_pid <= 0)
                return;
        /* The pager ends when it reads the end of its input: close our ends, then wait for it. */
        fflush(stdout);
        fflush(stderr);
        (void) close(STDOUT_FILENO);
        if (saved_stderr >= 0) {
                (void) dup2(saved_stderr, STDERR_FILENO);
                saved_stderr = safe_close(saved_stderr);
        }
        while (waitpid(pager_pid, NULL, 0) < 0 && errno == EINTR)
                ;
        pager_pid = 0;
}
