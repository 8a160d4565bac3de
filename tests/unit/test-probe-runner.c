/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for the probe runner: judging output, and real children that succeed, fail, crash,
 * hang past their deadline, flood stdout, or leave a grandchild behind. */
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>

#include "unit-test.h"
#include "daemon/probe-runner.h"
#include "shared/json-util.h"
#include "shared/parse-util.h"
#include "shared/time-util.h"

static void judge(const char *out, bool exited, int status, ProbeOutcome expect, const char *name) {
        ProbeResult r = {};
        probe_result_from_output(&r, out, strlen(out), exited, status);
        if (r.outcome != expect)
                fail_msg("\"%s\": outcome %s, expected %s", out, probe_outcome_to_string(r.outcome),
                         probe_outcome_to_string(expect));
        if (name)
                assert_string_equal(r.error_name, name);
        probe_result_done(&r);

        /* Fed as a pipe may deliver it, a byte at a time: the same verdict, the same document. */
        ProbeOutputParser whole = {}, bytes = {};
        probe_output_feed(&whole, out, strlen(out));
        probe_output_finish(&whole);
        for (size_t i = 0; out[i]; i++)
                probe_output_feed(&bytes, out + i, 1);
        probe_output_finish(&bytes);
        json_object *a = whole.bad ? NULL : whole.document, *b = bytes.bad ? NULL : bytes.document;
        assert_int_equal(!!a, !!b);
        if (a)
                assert_true(json_object_equal(a, b));
        probe_output_parser_done(&whole);
        probe_output_parser_done(&bytes);
}

static void test_judging(void **state) {
        judge("{\"probe\":\"x\",\"version\":1,\"status\":\"ok\",\"v\":1}\n", true, 0, PROBE_OUTCOME_OK, NULL);
        judge("  {\"status\":\"ok\"}  \n\n", true, 0, PROBE_OUTCOME_OK, NULL);
        judge("{\"status\":\"unsupported\",\"reason\":\"no RDMA device\"}", true, 0, PROBE_OUTCOME_UNSUPPORTED, NULL);
        judge("{\"status\":\"error\",\"error\":{\"name\":\"ECONNREFUSED\",\"message\":\"x\"}}", true, 1,
              PROBE_OUTCOME_ERROR, "ECONNREFUSED");
        judge("{\"status\":\"error\",\"error\":{\"name\":\"bad name!\",\"message\":\"x\"}}", true, 1,
              PROBE_OUTCOME_ERROR, "error");
        judge("{\"status\":\"error\"}", true, 1, PROBE_OUTCOME_ERROR, "error");
        /* "ok" with a failing exit status is not believed. */
        judge("{\"status\":\"ok\"}", true, 3, PROBE_OUTCOME_CRASHED, "bad-output");
        judge("{\"status\":\"ok\"} trailing", true, 0, PROBE_OUTCOME_CRASHED, "bad-output");
        judge("{\"status\":\"ok\"}{\"status\":\"ok\"}", true, 0, PROBE_OUTCOME_CRASHED, "bad-output");
        judge("[1,2]", true, 0, PROBE_OUTCOME_CRASHED, "bad-output");
        judge("{\"status\":", true, 0, PROBE_OUTCOME_CRASHED, "bad-output");
        judge("", true, 0, PROBE_OUTCOME_CRASHED, "bad-output");
        judge("{\"status\":42}", true, 0, PROBE_OUTCOME_CRASHED, "bad-output");
        /* json-c 0.16 takes "1--" for 1 when the number is cut between two reads: never cut there. */
        judge("{\"status\":\"ok\",\"v\":1--}", true, 0, PROBE_OUTCOME_CRASHED, "bad-output");
        judge("{\"status\":\"ok\",\"v\":1--,\"w\":2}", true, 0, PROBE_OUTCOME_CRASHED, "bad-output");
        /* Comments, which json-c takes after a document only when they come in the same read. */
        judge("{\"status\":\"ok\"} // more\n", true, 0, PROBE_OUTCOME_CRASHED, "bad-output");
        judge("{\"status\":\"ok\",\"v\":-12.5e3,\"w\":true,\"x\":null,\"y\":\"a,\\\"b\\u0041\"}", true, 0,
              PROBE_OUTCOME_OK, NULL);
        judge("{\"status\":\"ok\"}", false, SIGSEGV, PROBE_OUTCOME_CRASHED, "crashed");
}

typedef struct Outcome {
        bool done;
        ProbeOutcome outcome;
        char name[64];
        uint64_t duration;
        json_object *doc;
} Outcome;

/* An event loop that may watch children: SIGCHLD blocked, as sd-event's child sources need. */
static sd_event *new_event(void) {
        sd_event *e = NULL;
        sigset_t mask;

        sigemptyset(&mask);
        sigaddset(&mask, SIGCHLD);
        assert_int_equal(sigprocmask(SIG_BLOCK, &mask, NULL), 0);
        assert_int_equal(sd_event_new(&e), 0);
        return e;
}

static void on_done(ProbeRun *run, const ProbeResult *r, void *userdata) {
        Outcome *o = userdata;
        o->done = true;
        o->outcome = r->outcome;
        snprintf(o->name, sizeof(o->name), "%s", r->error_name ?: "");
        o->duration = r->duration_usec;
        o->doc = r->document ? json_object_get(r->document) : NULL;
}

static Outcome run_shell(const char *script, uint64_t deadline) {
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        Outcome o = {};
        char *args[] = { (char *) "-c", (char *) script, NULL };

        e = new_event();
        assert_int_equal(probe_run_start(e, NULL, "/bin/sh", args, deadline, on_done, &o, NULL), 0);
        while (!o.done)
                assert_true(sd_event_run(e, 30 * USEC_PER_SEC) >= 0);
        return o;
}

static void test_children(void **state) {
        Outcome o = run_shell("echo '{\"probe\":\"t\",\"version\":1,\"status\":\"ok\",\"value\":7}'", USEC_PER_SEC);
        assert_int_equal(o.outcome, PROBE_OUTCOME_OK);
        json_object *v;
        assert_true(json_object_object_get_ex(o.doc, "value", &v));
        assert_int_equal(json_object_get_int(v), 7);
        json_object_put(o.doc);

        o = run_shell("echo '{\"status\":\"error\",\"error\":{\"name\":\"deadline\",\"message\":\"m\"}}'; exit 1",
                      USEC_PER_SEC);
        assert_int_equal(o.outcome, PROBE_OUTCOME_ERROR);
        assert_string_equal(o.name, "deadline");
        json_object_put(o.doc);

        /* What the daemon was given by systemd stays with it; so do its descriptors, even one that
         * would survive exec; stdin is /dev/null; nothing is blocked. */
        char script[512];
        int extra = dup(STDERR_FILENO);
        assert_true(extra > STDERR_FILENO);
        assert_int_equal(setenv("NOTIFY_SOCKET", "/run/notify", 1), 0);
        snprintf(script, sizeof(script),
                 "if [ -e /proc/$$/fd/%d ]; then fd=open; else fd=closed; fi; "
                 "stdin=$(readlink /proc/$$/fd/0); blocked=$(grep SigBlk /proc/$$/status | cut -f2); "
                 "echo \"{\\\"status\\\":\\\"ok\\\",\\\"notify\\\":\\\"${NOTIFY_SOCKET-unset}\\\","
                 "\\\"fd\\\":\\\"$fd\\\",\\\"stdin\\\":\\\"$stdin\\\",\\\"blocked\\\":\\\"$blocked\\\"}\"",
                 extra);
        o = run_shell(script, 10 * USEC_PER_SEC);
        assert_int_equal(o.outcome, PROBE_OUTCOME_OK);
        assert_string_equal(json_string_or(o.doc, "notify", ""), "unset");
        assert_string_equal(json_string_or(o.doc, "fd", ""), "closed");
        assert_string_equal(json_string_or(o.doc, "stdin", ""), "/dev/null");
        assert_string_equal(json_string_or(o.doc, "blocked", ""), "0000000000000000");
        json_object_put(o.doc);
        assert_int_equal(unsetenv("NOTIFY_SOCKET"), 0);
        close(extra);

        o = run_shell("kill -SEGV $$", USEC_PER_SEC);
        assert_int_equal(o.outcome, PROBE_OUTCOME_CRASHED);
        assert_string_equal(o.name, "crashed");

        o = run_shell("exit 5", USEC_PER_SEC);
        assert_int_equal(o.outcome, PROBE_OUTCOME_CRASHED);
        assert_string_equal(o.name, "bad-output");
}

static void test_deadline_and_flood(void **state) {
        /* Hangs, ignoring SIGTERM: killed at deadline + grace. */
        Outcome o = run_shell("trap '' TERM; sleep 60", 100 * USEC_PER_MSEC);
        assert_int_equal(o.outcome, PROBE_OUTCOME_TIMEOUT);
        assert_string_equal(o.name, "deadline");
        assert_true(o.duration >= 100 * USEC_PER_MSEC + PROBE_KILL_GRACE_USEC);
        assert_true(o.duration < 100 * USEC_PER_MSEC + PROBE_KILL_GRACE_USEC + 3 * USEC_PER_SEC);

        /* Floods stdout: cut off at the limit. */
        o = run_shell("yes '{\"status\":\"ok\"}'", 10 * USEC_PER_SEC);
        assert_int_equal(o.outcome, PROBE_OUTCOME_CRASHED);
        assert_string_equal(o.name, "bad-output");

        /* A grandchild holding stdout open does not keep us waiting past the child's exit. */
        o = run_shell("sleep 30 & echo '{\"status\":\"ok\"}'", 10 * USEC_PER_SEC);
        assert_int_equal(o.outcome, PROBE_OUTCOME_OK);
        assert_true(o.duration < 5 * USEC_PER_SEC);
        json_object_put(o.doc);
}

typedef struct Early {
        Outcome outcome;
        json_object *ready;     /* what document_ready was given */
        bool ready_before_done;
} Early;

static void on_early_document(ProbeRun *run, json_object *document, void *userdata) {
        Early *e = userdata;
        e->ready = json_object_get(document);
        e->ready_before_done = !e->outcome.done;
}

static void on_early_done(ProbeRun *run, const ProbeResult *r, void *userdata) {
        on_done(run, r, &((Early *) userdata)->outcome);
}

static Early run_early(const char *script) {
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        Early early = {};
        ProbeRun *run = NULL;
        char *args[] = { (char *) "-c", (char *) script, NULL };

        e = new_event();
        assert_int_equal(probe_run_start(e, NULL, "/bin/sh", args, 10 * USEC_PER_SEC, on_early_done, &early, &run), 0);
        probe_run_set_document_ready(run, on_early_document);
        while (!early.outcome.done)
                assert_true(sd_event_run(e, 30 * USEC_PER_SEC) >= 0);
        return early;
}

/* The document is handed over as soon as it is complete, before the probe exits; the verdict still
 * waits for the exit, and may refuse it. */
static void test_document_ready(void **state) {
        Early e = run_early("echo '{\"status\":\"ok\",\"v\":1}'; sleep 0.3");
        assert_non_null(e.ready);
        assert_true(e.ready_before_done);
        assert_int_equal(e.outcome.outcome, PROBE_OUTCOME_OK);
        assert_ptr_equal(e.ready, e.outcome.doc);
        assert_true(e.outcome.duration >= 300 * USEC_PER_MSEC);
        json_object_put(e.ready);
        json_object_put(e.outcome.doc);

        /* Complete, then a failing exit status: told early, refused at the end. */
        e = run_early("echo '{\"status\":\"ok\"}'; exit 3");
        assert_non_null(e.ready);
        assert_int_equal(e.outcome.outcome, PROBE_OUTCOME_CRASHED);
        assert_string_equal(e.outcome.name, "bad-output");
        json_object_put(e.ready);
        json_object_put(e.outcome.doc);

        /* Never complete: never told. */
        e = run_early("printf '{\"status\":'");
        assert_null(e.ready);
        assert_int_equal(e.outcome.outcome, PROBE_OUTCOME_CRASHED);
}

static void test_bad_program(void **state) {
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        Outcome o = {};
        assert_int_equal(sd_event_new(&e), 0);
        assert_true(probe_run_start(e, "/nonexistent", "probe", NULL, USEC_PER_SEC, on_done, &o, NULL) < 0);
        assert_int_equal(probe_run_start(e, NULL, "relative", NULL, USEC_PER_SEC, on_done, &o, NULL), -EINVAL);
        assert_int_equal(probe_run_start(e, NULL, "", NULL, USEC_PER_SEC, on_done, &o, NULL), -EINVAL);
        assert_false(o.done);
}

typedef struct ServiceOutcome {
        bool exited;
        int code;
        int status;
} ServiceOutcome;

static void on_service_exit(ProbeRun *run, const siginfo_t *si, void *userdata) {
        ServiceOutcome *o = userdata;
        o->exited = true;
        o->code = si->si_code;
        o->status = si->si_status;
}

static void test_service(void **state) {
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        ServiceOutcome o = {};
        ProbeRun *run = NULL;
        int a[2], b[2];
        char buf[64] = "";
        /* The sockets (here: pipes) arrive as 3 and 4 with systemd's variables, in the given order. */
        char *args[] = { (char *) "-c",
                         (char *) "[ \"$LISTEN_FDS\" = 2 ] && [ \"$LISTEN_PID\" = $$ ] && echo first >&3 && "
                                  "echo second >&4; exit 7",
                         NULL };

        e = new_event();
        assert_int_equal(pipe2(a, O_CLOEXEC), 0);
        assert_int_equal(pipe2(b, O_CLOEXEC), 0);
        int fds[] = { a[1], b[1] };
        assert_int_equal(probe_service_start(e, NULL, "/bin/sh", args, fds, 2, on_service_exit, &o, &run), 0);
        assert_true(probe_run_pid(run) > 0);
        close(a[1]);
        close(b[1]);
        while (!o.exited)
                assert_true(sd_event_run(e, 10 * USEC_PER_SEC) >= 0);
        assert_int_equal(o.code, CLD_EXITED);
        assert_int_equal(o.status, 7);
        assert_true(read(a[0], buf, sizeof(buf) - 1) == 6);
        assert_true(strneq(buf, "first\n", 6));
        assert_true(read(b[0], buf, sizeof(buf) - 1) == 7);
        assert_true(strneq(buf, "second\n", 7));
        close(a[0]);
        close(b[0]);

        /* Freeing a running service stops it with SIGTERM; no exit callback. */
        char *sleeper[] = { (char *) "-c", (char *) "exec sleep 60", NULL };
        o = (ServiceOutcome) {};
        assert_int_equal(probe_service_start(e, NULL, "/bin/sh", sleeper, NULL, 0, on_service_exit, &o, &run), 0);
        pid_t pid = probe_run_pid(run);
        assert_int_equal(probe_run_kill(run, 0), 0);
        uint64_t start = now_usec(CLOCK_MONOTONIC);
        run = probe_run_free(run);
        assert_true(now_usec(CLOCK_MONOTONIC) - start < USEC_PER_SEC);
        assert_int_equal(kill(pid, 0), -1);
        assert_int_equal(errno, ESRCH);
        assert_false(o.exited);

        /* A service needs an exit callback, and the fd count is bounded. */
        assert_int_equal(probe_service_start(e, NULL, "/bin/sh", sleeper, NULL, 0, NULL, &o, &run), -EINVAL);
        assert_int_equal(probe_service_start(e, NULL, "/bin/sh", sleeper, fds, PROBE_SERVICE_FDS_MAX + 1, on_service_exit,
                                             &o, &run),
                         -EINVAL);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_service),
                cmocka_unit_test(test_judging),
                cmocka_unit_test(test_children),
                cmocka_unit_test(test_deadline_and_flood),
                cmocka_unit_test(test_document_ready),
                cmocka_unit_test(test_bad_program),
        };
        return cmocka_run_group_tests_name("probe-runner", tests, NULL, NULL);
}
