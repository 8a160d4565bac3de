/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The subnet sweep ([Fabric] Sweep=yes, meant for one node per subnet). linkprobe-probe-fabric walks
 * the subnet with libibnetdisc as a child with a deadline, so the loop never waits on the fabric and
 * the walk's memory goes with the child; here its document is checked and applied to the Switch
 * objects: every switch (keyed by node GUID, the key the neighbour queries of rdma-remote.c use, so
 * both name one object) and every switch-to-switch link. A sweep that fails, times out or comes back
 * incomplete changes nothing: the last complete result stays, and the log says why.
 */
#include <inttypes.h>

#include "fabric-sweep.h"
#include "ib-smp.h"
#include "shared/json-util.h"
#include "shared/log.h"
#include "shared/parse-util.h"
#include "shared/string-util.h"
#include "shared/time-util.h"
#include "switch.h"

static int parse_guid(json_object *o, const char *key, char buf[static RDMA_GUID_STRING_MAX]) {
        const char *s = json_string_or(o, key, NULL);
        uint64_t v;

        if (!s || !startswith(s, "0x") || parse_hex_u64(s + 2, &v) < 0 || v == 0)
                return -EBADMSG;
        rdma_format_guid(v, buf);
        return 0;
}

static int parse_port_info(const char *hex, IbPortInfo *ret) {
        uint8_t data[IB_SMP_DATA_SIZE];
        const char *problem;

        if (!hex || strlen(hex) != 2 * IB_SMP_DATA_SIZE)
                return -EBADMSG;
        for (size_t i = 0; i < IB_SMP_DATA_SIZE; i++) {
                int hi = unhexchar(hex[2 * i]), lo = unhexchar(hex[2 * i + 1]);
                if (hi < 0 || lo < 0)
                        return -EBADMSG;
                data[i] = (uint8_t) (hi << 4 | lo);
        }
        return ib_smp_parse_port_info(data, ret, &problem);
}

static int parse_link(json_object *o, SwitchLink *ret, IbPortInfo *ret_info, const char **ret_problem) {
        int64_t port = json_int_or(o, "port", -1), remote_port = json_int_or(o, "remote_port", -1);
        SwitchLink l = {};
        IbPortInfo pi;

        if (port < 1 || port > 254 || remote_port < 1 || remote_port > 254) {
                *ret_problem = "a port number outside 1..254";
                return -EBADMSG;
        }
        if (parse_guid(o, "remote_guid", l.remote_guid) < 0) {
                *ret_problem = "a remote GUID that is not one";
                return -EBADMSG;
        }
        if (parse_port_info(json_string_or(o, "port_info", NULL), &pi) < 0) {
                *ret_problem = "a PortInfo that makes no sense";
                return -EBADMSG;
        }
        l.port = (unsigned) port;
        l.remote_port = (unsigned) remote_port;
        if (pi.phys_state == RDMA_PHYS_STATE_LINK_UP) {
                RdmaWidth w = ib_port_active_width(&pi);
                RdmaSpeed s = ib_port_active_speed(&pi);

                if (w != RDMA_WIDTH_UNKNOWN)
                        snprintf(l.width, sizeof(l.width), "%s", rdma_width_to_string(w));
                if (s != RDMA_SPEED_UNKNOWN)
                        snprintf(l.speed, sizeof(l.speed), "%s", rdma_speed_to_string(s));
                l.rate_gbps = (double) rdma_rate_mgbps(s, w) / 1000.0;
        }
        *ret = l;
        *ret_info = pi;
        return 0;
}

struct FabricSweepParsed {
        SweptSwitch *switches;
        size_t n;
        char (*guids)[RDMA_GUID_STRING_MAX];
        char **names;
        SwitchLink **links;
        IbPortInfo **infos; /* each link's PortInfo, as links */
        IbPortInfo *caps;   /* each switch's port 0 (its capability masks) */
        bool *has_cap;
        Table by_guid;      /* each switch's entry of guids, by GUID: the far end of a link is looked up */
        json_object *document; /* a reference: the descriptions point into it */
        bool truncated;        /* more switches than max_switches: only that many are in it */
};
typedef struct FabricSweepParsed Parsed;

static void parsed_done(Parsed *p) {
        for (size_t i = 0; i < p->n; i++) {
                free(p->names[i]);
                free(p->links[i]);
                free(p->infos[i]);
        }
        free(p->switches);
        free(p->guids);
        free(p->names);
        free(p->links);
        free(p->infos);
        free(p->caps);
        free(p->has_cap);
        table_done(&p->by_guid);
        if (p->document)
                json_object_put(p->document);
        *p = (Parsed) {};
}

static Parsed *parsed_free(Parsed *p) {
        if (p)
                parsed_done(p);
        return mfree(p);
}

static int parse_switch(json_object *o, Parsed *p, size_t i, const char **ret_problem) {
        json_object *links = NULL;
        const char *description = json_string_or(o, "description", NULL);
        size_t n;

        if (parse_guid(o, "guid", p->guids[i]) < 0) {
                *ret_problem = "a switch GUID that is not one";
                return -EBADMSG;
        }
        if (!description || strlen(description) > IB_NODE_DESCRIPTION_MAX) {
                *ret_problem = "a switch description missing or longer than 64 bytes";
                return -EBADMSG;
        }
        (void) json_object_object_get_ex(o, "links", &links);
        n = json_array_len(links);
        if (n > 254) {
                *ret_problem = "a switch with more than 254 links";
                return -EBADMSG;
        }
        p->links[i] = new0(SwitchLink, MAX(n, 1u));
        p->infos[i] = new0(IbPortInfo, MAX(n, 1u));
        if (!p->links[i] || !p->infos[i])
                return -ENOMEM;
        for (size_t k = 0; k < n; k++)
                if (parse_link(json_object_array_get_idx(links, k), &p->links[i][k], &p->infos[i][k],
                               ret_problem) < 0)
                        return -EBADMSG;
        /* Port 0 may be missing (an older probe, a walk that lost it): the port's own masks then count,
         * as for a CA's port. */
        if (json_object_object_get_ex(o, "cap_info", NULL)) {
                if (parse_port_info(json_string_or(o, "cap_info", NULL), &p->caps[i]) < 0) {
                        *ret_problem = "a port 0 PortInfo that makes no sense";
                        return -EBADMSG;
                }
                p->has_cap[i] = true;
        }
        p->names[i] = ib_node_description_name(description);
        p->switches[i] = (SweptSwitch) {
                .node_guid = p->guids[i],
                .name = p->names[i],
                .description = description,
                .links = p->links[i],
                .n_links = n,
        };
        return 0;
}

static int compare_guid(const void *key, const void *object) {
        return strcmp(key, *(const char (*)[RDMA_GUID_STRING_MAX]) object);
}

/* Each switch-to-switch link judged from both ends' PortInfo, by the rule the neighbour queries use
 * for a host's port (ib_link_judge()): the far end is the other switch's own entry for that cable. A
 * link whose far end is not in the document (MaxSwitches=) is left unjudged. */
static int judge_links(Parsed *p) {
        p->by_guid = TABLE_INIT(compare_guid);
        for (size_t i = 0; i < p->n; i++) {
                int r = table_put(&p->by_guid, p->guids[i], &p->guids[i]);
                if (r == -ENOMEM)
                        return r;
                /* -EEXIST: the probe prints a switch reached twice once; the first entry stands. */
        }

        for (size_t i = 0; i < p->n; i++)
                for (size_t k = 0; k < p->switches[i].n_links; k++) {
                        SwitchLink *l = &p->links[i][k];
                        const IbPortInfo *remote = NULL;
                        const char (*far)[RDMA_GUID_STRING_MAX] = table_get(&p->by_guid, l->remote_guid);
                        IbLinkJudgement judged;

                        if (!far) /* outside the document, or cut off by MaxSwitches= */
                                continue;
                        size_t j = (size_t) (far - p->guids);
                        for (size_t m = 0; m < p->switches[j].n_links; m++)
                                if (p->links[j][m].port == l->remote_port && p->links[j][m].remote_port == l->port &&
                                    streq(p->links[j][m].remote_guid, p->guids[i])) {
                                        remote = &p->infos[j][m];
                                        break;
                                }
                        if (!remote)
                                continue;
                        ib_link_judge(&p->infos[i][k], p->has_cap[i] ? &p->caps[i] : &p->infos[i][k], remote,
                                      p->has_cap[j] ? &p->caps[j] : remote, &judged);
                        if (judged.best_width != RDMA_WIDTH_UNKNOWN)
                                snprintf(l->best_width, sizeof(l->best_width), "%s",
                                         rdma_width_to_string(judged.best_width));
                        if (judged.best_speed != RDMA_SPEED_UNKNOWN)
                                snprintf(l->best_speed, sizeof(l->best_speed), "%s",
                                         rdma_speed_to_string(judged.best_speed));
                        l->best_rate_gbps = (double) judged.best_mgbps / 1000.0;
                        l->degraded = judged.degraded;
                        snprintf(l->degraded_reason, sizeof(l->degraded_reason), "%s", judged.reason);
                }
        return 0;
}

/* Everything short of changing the switches: checked, decoded and judged. */
static int parse_document(json_object *doc, unsigned max_switches, Parsed *ret, char **ret_error) {
        _cleanup_(parsed_done) Parsed p = {};
        json_object *list = NULL, *unanswered = NULL;
        const char *problem = NULL;
        size_t n;
        int r;

        *ret_error = NULL;
        if (!json_object_object_get_ex(doc, "switches", &list) || !json_object_is_type(list, json_type_array))
                return asprintf(ret_error, "the sweep's document has no switch list") < 0 ? -ENOMEM : -EBADMSG;
        (void) json_object_object_get_ex(doc, "unanswered", &unanswered);
        if (json_array_len(unanswered) > 0) {
                json_object *u = json_object_array_get_idx(unanswered, 0);
                return asprintf(ret_error,
                                "the walk is incomplete: %zu switch port(s) whose link is up got no answer from "
                                "their far end (the first: switch %s port %" PRIi64 "; a MAD timeout?)",
                                json_array_len(unanswered), json_string_or(u, "guid", "?"),
                                json_int_or(u, "port", 0)) < 0
                               ? -ENOMEM
                               : -EBADMSG;
        }
        n = json_array_len(list);
        p.truncated = json_bool_or(doc, "truncated", false) || n > max_switches;
        n = MIN(n, (size_t) max_switches);
        p.switches = new0(SweptSwitch, MAX(n, 1u));
        p.guids = calloc(MAX(n, 1u), sizeof(*p.guids));
        p.names = new0(char *, MAX(n, 1u));
        p.links = new0(SwitchLink *, MAX(n, 1u));
        p.infos = new0(IbPortInfo *, MAX(n, 1u));
        p.caps = new0(IbPortInfo, MAX(n, 1u));
        p.has_cap = new0(bool, MAX(n, 1u));
        if (!p.switches || !p.guids || !p.names || !p.links || !p.infos || !p.caps || !p.has_cap)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                r = parse_switch(json_object_array_get_idx(list, i), &p, i, &problem);
                p.n = i + 1;
                if (r == -EBADMSG)
                        return asprintf(ret_error, "the sweep's document has %s", problem) < 0 ? -ENOMEM : -EBADMSG;
                if (r < 0)
                        return r;
        }
        r = judge_links(&p);
        if (r < 0)
                return r;
        p.document = json_object_get(doc);
        *ret = p;
        p = (Parsed) {};
        return 0;
}

int fabric_sweep_apply_document(Switches *switches, json_object *doc, unsigned max_switches, uint64_t now,
                                char **ret_error, bool *ret_truncated) {
        _cleanup_(parsed_done) Parsed p = {};
        int r;

        *ret_truncated = false;
        r = parse_document(doc, max_switches, &p, ret_error);
        if (r < 0)
                return r;
        *ret_truncated = p.truncated;
        return switches_sweep_apply(switches, p.switches, p.n, now);
}

static void schedule(FabricSweep *s);

static void sweep_failed(FabricSweep *s, const char *error) {
        s->failures++;
        /* Said once per cause: an interval of failures is one warning, the recovery one more line. */
        if (!streq_ptr(s->last_error, error))
                log_warning("Fabric sweep failed, keeping the last complete result (%zu switches): %s.",
                            table_size(&s->switches->table), error);
        (void) free_and_strdup(&s->last_error, error);
}

static void prepared_drop(FabricSweep *s) {
        s->prepared = parsed_free(s->prepared);
}

/* The document is complete while the probe still tears down (the walk's memory, libibumad): it is
 * checked and judged now, so that only the switches' update waits for the exit status. */
static void on_document(ProbeRun *run, json_object *document, void *userdata) {
        FabricSweep *s = userdata;
        _cleanup_(freep) char *error = NULL;
        Parsed *p = new0(Parsed, 1);

        prepared_drop(s);
        if (!p)
                return;
        if (parse_document(document, s->config.max_switches, p, &error) < 0) {
                /* Refused (or no memory): on_done() does it again, and says why. */
                free(p);
                return;
        }
        s->prepared = p;
}

/* What on_document() found for this document, or the same work now. */
static int apply_result(FabricSweep *s, json_object *document, char **ret_error, bool *ret_truncated) {
        int r;

        if (!s->prepared || s->prepared->document != document) {
                prepared_drop(s);
                return fabric_sweep_apply_document(s->switches, document, s->config.max_switches,
                                                   now_usec(CLOCK_REALTIME), ret_error, ret_truncated);
        }
        *ret_error = NULL;
        *ret_truncated = s->prepared->truncated;
        r = switches_sweep_apply(s->switches, s->prepared->switches, s->prepared->n, now_usec(CLOCK_REALTIME));
        prepared_drop(s);
        return r;
}

static void on_done(ProbeRun *run, const ProbeResult *result, void *userdata) {
        FabricSweep *s = userdata;
        _cleanup_(freep) char *error = NULL;
        bool truncated = false;
        int r;

        s->run = NULL;
        if (result->outcome != PROBE_OUTCOME_OK) {
                prepared_drop(s);
                if (asprintf(&error, "%s: %s (%s)", probe_outcome_to_string(result->outcome),
                             result->error_message ?: "?", result->error_name ?: "?") < 0)
                        error = NULL;
                sweep_failed(s, error ?: "the probe failed");
        } else {
                r = apply_result(s, result->document, &error, &truncated);
                if (r < 0)
                        sweep_failed(s, error ?: strerror(-r));
                else {
                        s->sweeps++;
                        if (s->last_error)
                                log_info("Fabric sweep works again.");
                        s->last_error = mfree(s->last_error);
                        if (truncated && !s->warned_truncated)
                                log_warning("The fabric has %" PRIi64 " switches: publishing the first %u "
                                            "([Fabric] MaxSwitches=).",
                                            json_int_or(result->document, "total_switches", 0),
                                            s->config.max_switches);
                        s->warned_truncated = truncated;
                        /* From the start to published: the figure bench/bench-sweep holds against
                         * ibnetdiscover. */
                        log_debug("Fabric sweep: %zu switches, %zu switch-to-switch links, %.3f s (the walk "
                                  "%.3f s).",
                                  table_size(&s->switches->table), switches_sweep_links(s->switches),
                                  (double) (now_usec(CLOCK_MONOTONIC) - s->last_start) / USEC_PER_SEC,
                                  (double) result->duration_usec / USEC_PER_SEC);
                        if (s->applied)
                                s->applied(s->userdata);
                }
        }
        schedule(s);
}

static void start(FabricSweep *s) {
        char max[32], deadline[32], smps[32];
        const char *args[] = { "--max-switches", max, "--deadline", deadline, "--outstanding-smps", smps, NULL };
        int r;

        snprintf(max, sizeof(max), "%u", s->config.max_switches);
        snprintf(smps, sizeof(smps), "%u", s->config.outstanding_smps);
        snprintf(deadline, sizeof(deadline), "%" PRIu64, MAX(s->config.timeout_usec / USEC_PER_SEC, (uint64_t) 1));
        s->again = false;
        s->last_start = now_usec(CLOCK_MONOTONIC);
        r = probe_run_start(s->event, probe_directory(), FABRIC_SWEEP_PROGRAM, (char *const *) args,
                            s->config.timeout_usec, on_done, s, &s->run);
        if (r < 0) {
                s->run = NULL;
                sweep_failed(s, "cannot run " FABRIC_SWEEP_PROGRAM);
                return;
        }
        probe_run_set_output_max(s->run, FABRIC_SWEEP_OUTPUT_BASE +
                                                 (size_t) s->config.max_switches * FABRIC_SWEEP_OUTPUT_PER_SWITCH);
        probe_run_set_document_ready(s->run, on_document);
}

static int on_timer(sd_event_source *source, uint64_t usec, void *userdata) {
        FabricSweep *s = userdata;

        if (s->run)
                s->again = true;
        else
                start(s);
        schedule(s);
        return 0;
}

/* The one timer: the end of the gap when asked for, else the interval after the last start. */
static void schedule(FabricSweep *s) {
        uint64_t next;
        int r;

        if (s->run)
                return; /* on_done() schedules */
        next = s->last_start + (s->again ? FABRIC_SWEEP_MIN_GAP_USEC : s->config.interval_usec);
        r = sd_event_source_set_time(s->timer, next);
        if (r >= 0)
                r = sd_event_source_set_enabled(s->timer, SD_EVENT_ONESHOT);
        if (r < 0)
                log_warning_errno(r, "Cannot schedule the next fabric sweep: %m");
}

void fabric_sweep_request(FabricSweep *s) {
        if (!s)
                return;
        s->again = true;
        if (!s->run && now_usec(CLOCK_MONOTONIC) >= s->last_start + FABRIC_SWEEP_MIN_GAP_USEC) {
                start(s);
                return;
        }
        schedule(s);
}

int fabric_sweep_new(sd_event *event, Switches *switches, const FabricSweepConfig *config, FabricSweep **ret) {
        _cleanup_(fabric_sweep_freep) FabricSweep *s = new0(FabricSweep, 1);
        int r;

        if (!s)
                return -ENOMEM;
        s->event = sd_event_ref(event);
        s->switches = switches;
        s->config = *config;
        r = sd_event_add_time(event, &s->timer, CLOCK_MONOTONIC, UINT64_MAX, USEC_PER_SEC, on_timer, s);
        if (r < 0)
                return r;
        (void) sd_event_source_set_enabled(s->timer, SD_EVENT_OFF);
        *ret = TAKE_PTR(s);
        return 0;
}

FabricSweep *fabric_sweep_free(FabricSweep *s) {
        if (!s)
                return NULL;
        s->run = probe_run_free(s->run);
        prepared_drop(s);
        sd_event_source_disable_unref(s->timer);
        sd_event_unref(s->event);
        free(s->last_error);
        return mfree(s);
}
