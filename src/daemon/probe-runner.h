/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* probe-runner.h — runs a probe program as a child with a deadline and hands back its JSON document */
#pragma once

#include <json-c/json.h>
#include <systemd/sd-event.h>

#include "probe-output.h"
#include "shared/macros.h"

typedef enum ProbeOutcome {
        PROBE_OUTCOME_OK,          /* exit 0, status "ok" */
        PROBE_OUTCOME_UNSUPPORTED, /* exit 0, status "unsupported": no such hardware, not a failure */
        PROBE_OUTCOME_ERROR,       /* the probe's own error document */
        PROBE_OUTCOME_TIMEOUT,     /* killed at the deadline */
        PROBE_OUTCOME_CRASHED,     /* killed by a signal, or no valid document */
        _PROBE_OUTCOME_MAX,
        _PROBE_OUTCOME_INVALID = -EINVAL,
} ProbeOutcome;

typedef struct ProbeResult {
        ProbeOutcome outcome;
        json_object *document; /* the parsed document when there is one (owned by the runner) */
        char *error_name;      /* stable: the document's error.name, "deadline", "crashed", "bad-output" */
        char *error_message;   /* for people */
        uint64_t duration_usec;
} ProbeResult;

typedef struct ProbeRun ProbeRun;

/* Called once when the run ends, however it ends; the run is freed after it returns. */
typedef void (*probe_done_t)(ProbeRun *run, const ProbeResult *result, void *userdata);

/* The largest document a probe may print; more is "bad-output" and the child is killed. */
#define PROBE_OUTPUT_MAX (1U << 20)
/* Grace beyond the deadline a probe was given before it is killed: its own --deadline handling
 * should answer first, with a proper "deadline" error document. */
#define PROBE_KILL_GRACE_USEC (2 * USEC_PER_SEC)

/*
 * Starts program (a name looked up in the probe directory, or an absolute path) with args
 * (NULL-terminated, without argv[0]) in its own process group, stdin from /dev/null, stdout read by
 * us, stderr shared with the daemon (the journal). After deadline_usec plus PROBE_KILL_GRACE_USEC
 * the whole group is killed. Environment: the daemon's, minus what systemd addressed to the daemon
 * (NOTIFY_SOCKET, LISTEN_*, WATCHDOG_*). The caller's event loop must have SIGCHLD blocked.
 * *ret (may be NULL) stays valid until done has returned; clear your copy there.
 */
int probe_run_start(sd_event *event, const char *probe_dir, const char *program, char *const *args,
                    uint64_t deadline_usec, probe_done_t done, void *userdata, ProbeRun **ret);
/* Called once when a service started with probe_service_start() exits; si says how. The run is
 * freed after it returns. */
typedef void (*probe_service_exit_t)(ProbeRun *run, const siginfo_t *si, void *userdata);

/*
 * Starts a long-running helper (the responder) the way systemd starts a socket-activated service:
 * the n_fds descriptors in fds become 3, 4, ... in the child with LISTEN_FDS and LISTEN_PID set (the
 * caller keeps its own copies). No deadline, no output read (stdout is /dev/null, stderr shared), its
 * own process group, and it gets SIGTERM should the daemon die. exited is called when it ends. Free
 * the run to stop it: SIGTERM, then SIGKILL after 2 s.
 */
#define PROBE_SERVICE_FDS_MAX 64
int probe_service_start(sd_event *event, const char *probe_dir, const char *program, char *const *args,
                        const int *fds, size_t n_fds, probe_service_exit_t exited, void *userdata, ProbeRun **ret);
/* Sends sig to the child's process group. -ESRCH when it is not running. */
int probe_run_kill(ProbeRun *run, int sig);

/* Cancels a running probe (the group is killed) without calling done. */
ProbeRun *probe_run_free(ProbeRun *run);
DEFINE_TRIVIAL_CLEANUP_FUNC(ProbeRun *, probe_run_free);

/* A probe whose document grows with what it finds (the subnet sweep) may print more than
 * PROBE_OUTPUT_MAX; set right after the start, before the loop reads anything. */
void probe_run_set_output_max(ProbeRun *run, size_t max);

/* Called (optionally) as soon as the output holds a complete document, which may be before the probe
 * has exited: work on it can overlap the probe's exit. The verdict still comes with done, which may
 * yet refuse it (more output, a failing exit status); the document is the one done then gets, owned by
 * the runner (take a reference to keep it). It must not free the run. */
typedef void (*probe_document_t)(ProbeRun *run, json_object *document, void *userdata);
void probe_run_set_document_ready(ProbeRun *run, probe_document_t ready);

pid_t probe_run_pid(const ProbeRun *run);

/* Judges a finished probe from its output and how it exited; exported for tests and fuzzing. */
void probe_result_from_output(ProbeResult *result, const char *output, size_t size, bool exited, int status);

void probe_result_done(ProbeResult *result);

const char *probe_outcome_to_string(ProbeOutcome o) _const_;

/* The directory probes are run from: $LINKPROBE_PROBE_DIR if set (tests); else the running
 * program's own directory when the probes were built beside it (a daemon started from its build
 * tree); else the directory they were installed to. */
const char *probe_directory(void);
