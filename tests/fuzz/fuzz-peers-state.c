/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzzes the persisted peer state (src/daemon/persist.c): the input is written as peers.json into a state
 * directory of our own (on tmpfs when there is one) and loaded as at start-up. Loading never fails
 * the daemon and never publishes what a save would not write; what was restored is saved again,
 * loaded into a second daemon state, and must come back the same: key for key, figure for figure. */
#include <fcntl.h>
#include <math.h>
#include <sys/stat.h>

#include "daemon/manager.h"
#include "daemon/peer.h"
#include "daemon/persist.h"
#include "shared/fileio.h"
#include "shared/log.h"
#include "shared/string-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *state_dir;

static void remove_state_dir(void) {
        char cmd[PATH_MAX + 16];

        if (!state_dir)
                return;
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", state_dir);
        (void) system(cmd);
        state_dir = mfree(state_dir);
}

static const char *get_state_dir(void) {
        static char template[64];

        if (state_dir)
                return state_dir;
        /* fsync() on every save is free on tmpfs and slow anywhere else. */
        snprintf(template, sizeof(template), "%s/fuzz-peers-state-XXXXXX",
                 access("/dev/shm", W_OK) >= 0 ? "/dev/shm" : "/tmp");
        if (!mkdtemp(template))
                abort();
        state_dir = strdup(template);
        if (!state_dir)
                abort();
        atexit(remove_state_dir);
        return state_dir;
}

static Manager *manager_for_state(void) {
        ManagerOptions options = { .state_directory = get_state_dir() };
        Config config;
        Manager *m;

        config_init(&config);
        if (manager_new(&config, &options, &m) < 0)
                abort();
        return m;
}

static void check_text(const char *s) {
        if (s && !utf8_is_valid(s))
                abort();
}

static void check_restored(Manager *m) {
        PeerTarget *t;
        Peer *p;

        if (table_size(&m->peers.paths) > PEER_PATHS_MAX || table_size(&m->peers.targets) > PEER_TARGETS_MAX)
                abort();
        TABLE_FOREACH(t, &m->peers.targets)
                if (!(t->origins & PEER_ORIGIN_ADDED) || !utf8_is_valid(t->address))
                        abort();
        TABLE_FOREACH(p, &m->peers.paths) {
                double figures[] = { p->m.upload_gbps, p->m.download_gbps, p->m.rtt_usec, p->m.jitter_usec,
                                     p->m.jitter_rfc3550_usec };
                for (size_t i = 0; i < ELEMENTSOF(figures); i++)
                        if (!isfinite(figures[i]) || figures[i] < 0 || figures[i] >= 1e12)
                                abort();
                if (p->state < 0 || p->state >= _PEER_PROBE_STATE_MAX || p->state == PEER_PROBE_PROBING ||
                    p->state == PEER_PROBE_QUEUED)
                        abort();
                check_text(p->key);
                check_text(p->address);
                check_text(p->peer_address);
                check_text(p->source_device);
                check_text(p->m.source_address);
                check_text(p->m.source_interface);
                check_text(p->m.connection_type);
                check_text(p->last_error);
                check_text(p->last_error_message);
        }
}

static bool same_text(const char *a, const char *b) {
        return streq(strempty(a), strempty(b));
}

static void check_same(Manager *a, Manager *b) {
        PeerTarget *t;
        Peer *p;

        if (table_size(&a->peers.paths) != table_size(&b->peers.paths) || table_size(&a->peers.targets) != table_size(&b->peers.targets))
                abort();
        TABLE_FOREACH(t, &a->peers.targets)
                if (!peer_target_get(&b->peers, t->address))
                        abort();
        TABLE_FOREACH(p, &a->peers.paths) {
                Peer *q = peer_get(&b->peers, p->key);
                if (!q || q->transport != p->transport || !same_text(q->peer_address, p->peer_address) ||
                    q->source_port != p->source_port || !same_text(q->source_device, p->source_device) ||
                    q->adhoc != p->adhoc || q->state != p->state || q->m.upload_gbps != p->m.upload_gbps ||
                    q->m.download_gbps != p->m.download_gbps || q->m.rtt_usec != p->m.rtt_usec ||
                    q->m.jitter_usec != p->m.jitter_usec || q->m.jitter_rfc3550_usec != p->m.jitter_rfc3550_usec ||
                    q->m.measured_at != p->m.measured_at || q->m.probe_duration_usec != p->m.probe_duration_usec ||
                    q->last_attempt_at != p->last_attempt_at || !same_text(q->m.source_address, p->m.source_address) ||
                    !same_text(q->m.source_interface, p->m.source_interface) ||
                    !same_text(q->m.connection_type, p->m.connection_type) || !same_text(q->last_error, p->last_error) ||
                    !same_text(q->last_error_message, p->last_error_message))
                        abort();
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(manager_freep) Manager *first = NULL, *second = NULL;
        _cleanup_(closep) int dir_fd = -EBADF;

        if (size > 1024 * 1024)
                return 0;
        log_set_max_level(LOG_CRIT);

        first = manager_for_state();
        dir_fd = open(get_state_dir(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir_fd < 0)
                abort();
        (void) unlinkat(dir_fd, PERSIST_FILE ".corrupt", 0);
        if (write_file_atomic_at(dir_fd, PERSIST_FILE, data, size, 0644) < 0)
                abort();

        /* Whatever the file says: 0 or an error that was logged, never a crash. */
        (void) persist_load(&first->persist);
        check_restored(first);

        if (persist_save(&first->persist) < 0)
                abort();
        second = manager_for_state();
        if (persist_load(&second->persist) < 0)
                abort();
        check_restored(second);
        check_same(first, second);
        return 0;
}
