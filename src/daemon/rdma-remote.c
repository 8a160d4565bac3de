/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The port at the other end of an InfiniBand cable, and the CAs only libibumad knows. rdma-mad.c asks
 * (off the loop); here the answers are decoded (ib-smp.c), checked and recorded on the RdmaPort. A
 * port is asked when it is read again, which follows an event (udev, a verbs port event, Refresh()):
 * nothing is polled. rdma.c raises flags for it and never calls in here (rdma-remote.h). */
#include <math.h>

#include "rdma-mad.h"
#include "rdma-remote.h"
#include "rdma-port-state.h"
#include "rdma.h"
#include "shared/log.h"
#include "shared/string-util.h"
#include "shared/time-util.h"
#include "switch.h"

/* A port that changed while it was asked is asked again, that many times in a row at most: a port
 * that flaps for good is said so, and its next event asks again. */
#define RDMA_REMOTE_FLAP_RETRIES 3

static void rdma_port_remote_problem(RdmaPort *p, int level, const char *problem) {
        if (streq_ptr(p->remote.problem, problem))
                return;
        if (problem)
                log_rdma_full_errno(p, level, 0, "%s", problem);
        else if (p->remote.problem)
                log_rdma_full_errno(p, LOG_INFO, 0, "Its neighbour answers again.");
        free(p->remote.problem);
        p->remote.problem = problem ? strdup(problem) : NULL;
}

static void rdma_port_forget_switch(RdmaPort *p) {
        Switches *switches = p->owner->switches;

        if (!p->remote.switch_key)
                return;
        if (switches)
                switches_remove_local(switches, SWITCH_SOURCE_INFINIBAND, p->bus.path);
        p->remote.switch_key = mfree(p->remote.switch_key);
}

/* The neighbour is a switch: this port is one of its ports (Switch objects; the pass sets Switch). Its
 * key is the node GUID; an NVIDIA/Mellanox switch's NodeDescription "MF0;NAME:MODEL/U1" gives the name
 * its owners use. */
static void record_switch(RdmaPort *p, const IbNodeInfo *ni, const char *description) {
        char guid[RDMA_GUID_STRING_MAX], port_id[16];
        _cleanup_(freep) char *name = NULL;
        int r;

        if (!p->owner->switches || !p->bus.path)
                return;
        rdma_format_guid(ni->node_guid, guid);
        if (p->remote.switch_key && !streq(p->remote.switch_key, guid))
                rdma_port_forget_switch(p);
        snprintf(port_id, sizeof(port_id), "%u", ni->local_port);
        name = ib_node_description_name(description);
        SwitchInfo info = { .node_guid = guid, .name = name ?: description, .description = description };
        SwitchPort port = { .source = SWITCH_SOURCE_INFINIBAND, .local_path = p->bus.path, .port_id = port_id };
        /* A port of ours moved to another port of the same switch: the old one goes. */
        switches_remove_local(p->owner->switches, SWITCH_SOURCE_INFINIBAND, p->bus.path);
        r = switch_port_set(p->owner->switches, SWITCH_SOURCE_INFINIBAND, guid, &info, &port, now_usec(CLOCK_REALTIME));
        if (r < 0 && r != -E2BIG) {
                log_rdma_full_errno(p, LOG_WARNING, r, "Cannot record the switch at its far end: %m");
                return;
        }
        if (r >= 0 && free_and_strdup(&p->remote.switch_key, guid) < 0)
                log_oom();
}

static void rdma_port_remote_clear(RdmaPort *p) {
        rdma_port_forget_switch(p);
        p->remote.known = false;
        if (p->remote.node_guid != 0 || p->remote.node_type != RDMA_NODE_TYPE_UNKNOWN) {
                p->remote.node_guid = 0;
                p->remote.node_type = RDMA_NODE_TYPE_UNKNOWN;
                bus_object_changed(&p->bus, "RemoteNodeGuid");
                bus_object_changed(&p->bus, "RemoteNodeType");
        }
        (void) bus_object_set_string(&p->bus, &p->remote.description, NULL, "RemoteNodeDescription");
        bus_object_set(&p->bus, p->remote.port, 0u, "RemotePort");
        bus_object_set(&p->bus, p->remote.best_width, RDMA_WIDTH_UNKNOWN, "BestWidth");
        bus_object_set(&p->bus, p->remote.best_speed, RDMA_SPEED_UNKNOWN, "BestSpeed");
        bus_object_set(&p->bus, p->remote.best_gbps, 0.0, "BestRateGbps");
        bus_object_set(&p->bus, p->remote.degraded, false, "Degraded");
        (void) bus_object_set_string(&p->bus, &p->remote.degraded_reason, NULL, "DegradedReason");
}

static void query(RdmaRemote *remote, RdmaPort *p, bool retry) {
        int r;

        if (!retry)
                p->remote.retries = 0;
        if (p->remote.seq != 0) {
                p->remote.again = true;
                return;
        }
        p->remote.again = false;
        p->remote.seq = ++remote->seq;
        r = rdma_mad_query_port(remote->mad, p->device, p->number, p->remote.seq);
        if (r < 0) {
                p->remote.seq = 0;
                log_rdma_full_errno(p, LOG_WARNING, r, "Cannot ask for its neighbour: %m");
        }
}

/* A port only libibumad knows: its PortInfo is its state. */
static void apply_local(RdmaPort *p, const IbPortInfo *pi) {
        bool up = pi->phys_state == RDMA_PHYS_STATE_LINK_UP;
        RdmaPortStatus s = {
                .known = RDMA_PORT_FIELD_STATE | RDMA_PORT_FIELD_PHYS_STATE | RDMA_PORT_FIELD_LINK_LAYER |
                         RDMA_PORT_FIELD_LID | RDMA_PORT_FIELD_SM_LID | RDMA_PORT_FIELD_LMC | RDMA_PORT_FIELD_CAP_MASK,
                .state = pi->state,
                .phys_state = pi->phys_state,
                .link_layer = RDMA_LINK_LAYER_INFINIBAND,
                .lid = pi->lid,
                .sm_lid = pi->sm_lid,
                .lmc = pi->lmc,
                .cap_mask = pi->cap_mask,
        };

        if (up) {
                s.rate.width = ib_port_active_width(pi);
                s.rate.speed = ib_port_active_speed(pi);
                s.rate.mgbps = rdma_rate_mgbps(s.rate.speed, s.rate.width);
                s.known |= RDMA_PORT_FIELD_RATE | RDMA_PORT_FIELD_WIDTH | RDMA_PORT_FIELD_SPEED;
        }
        rdma_port_set_status(p, &s);
}

static int apply_remote(RdmaPort *p, const RdmaMadAnswer *a, const IbPortInfo *local, const char **ret_problem) {
        _cleanup_(freep) char *description = NULL;
        IbPortInfo remote, remote_port0;
        IbLinkJudgement j;
        IbNodeInfo ni;
        int r;

        if (ib_smp_parse_node_info(a->node_info, &ni, ret_problem) < 0 ||
            ib_smp_parse_port_info(a->remote_port_info, &remote, ret_problem) < 0)
                return -EBADMSG;
        if (a->has_remote_port0 && ib_smp_parse_port_info(a->remote_port0_info, &remote_port0, ret_problem) < 0)
                return -EBADMSG;
        r = ib_smp_parse_node_description(a->node_description, &description);
        if (r < 0)
                return r;

        ib_link_judge(local, local, &remote, a->has_remote_port0 ? &remote_port0 : &remote, &j);
        p->remote.known = true;
        if (bus_object_set(&p->bus, p->remote.node_guid, ni.node_guid, "RemoteNodeGuid"))
                log_rdma_debug(p, "Neighbour: node 0x%016" PRIx64 " port %u.", ni.node_guid, ni.local_port);
        bus_object_set(&p->bus, p->remote.node_type, ni.node_type, "RemoteNodeType");
        bus_object_set(&p->bus, p->remote.port, ni.local_port, "RemotePort");
        if (bus_object_set_string(&p->bus, &p->remote.description, description, "RemoteNodeDescription") < 0)
                return -ENOMEM;
        bus_object_set(&p->bus, p->remote.best_width, j.best_width, "BestWidth");
        bus_object_set(&p->bus, p->remote.best_speed, j.best_speed, "BestSpeed");
        bus_object_set(&p->bus, p->remote.best_gbps, (double) j.best_mgbps / 1000.0, "BestRateGbps");
        bus_object_set(&p->bus, p->remote.degraded, j.degraded, "Degraded");
        if (bus_object_set_string(&p->bus, &p->remote.degraded_reason, j.degraded ? j.reason : NULL, "DegradedReason") < 0)
                return -ENOMEM;
        if (ni.node_type == RDMA_NODE_TYPE_SWITCH)
                record_switch(p, &ni, p->remote.description);
        else
                rdma_port_forget_switch(p);
        return 0;
}

static void on_port(void *userdata, const RdmaMadAnswer *a) {
        RdmaRemote *remote = userdata;
        Rdma *rdma = remote->rdma;
        RdmaPort *p = rdma_port_get(rdma, a->ca, a->port);
        RdmaDevice *dev = rdma_device_get(rdma, a->ca);
        _cleanup_(freep) char *problem = NULL;
        const char *garbage = NULL;
        IbPortInfo local = {};
        int r;

        if (!p || p->remote.seq != a->seq)
                return; /* gone, or removed and added again since */
        p->remote.seq = 0;

        if (a->error == -ENODEV)
                (void) asprintf(&problem, "Cannot open the port for subnet management queries (no umad device, "
                                          "or no access to it): its neighbour is not known.");
        else if (a->has_local && ib_smp_parse_port_info(a->local_port_info, &local, &garbage) < 0)
                (void) asprintf(&problem, "Its own PortInfo makes no sense (%s): its neighbour is not known.", garbage);
        else if (a->error == -ETIMEDOUT)
                (void) asprintf(&problem, "No answer to %s within %u ms and %u more tries: its neighbour is not known.",
                                a->failed, RDMA_MAD_TIMEOUT_MS, RDMA_MAD_RETRIES);
        else if (a->error == -EREMOTEIO)
                (void) asprintf(&problem, "%s was answered with status 0x%04x: its neighbour is not known.", a->failed,
                                a->status);
        else if (a->error < 0)
                (void) asprintf(&problem, "Asking for its neighbour failed: %s.", strerror(-a->error));

        if (!problem && a->has_local && dev && dev->from_umad)
                apply_local(p, &local);
        if (!problem && a->changed) {
                if (p->remote.retries++ < RDMA_REMOTE_FLAP_RETRIES) {
                        log_rdma_debug(p, "The port changed while its neighbour was asked: asking again.");
                        query(remote, p, true);
                        return;
                }
                (void) asprintf(&problem, "The port changed each of the %u times its neighbour was asked: it is "
                                          "flapping, its neighbour is not known.", RDMA_REMOTE_FLAP_RETRIES + 1);
        }
        if (!problem && a->has_remote) {
                r = apply_remote(p, a, &local, &garbage);
                if (r == -EBADMSG)
                        (void) asprintf(&problem, "Its neighbour answered %s: ignoring the neighbour.", garbage);
                else if (r < 0)
                        log_oom();
        } else if (!problem)
                /* The link is not up: no neighbour. */
                rdma_port_remote_clear(p);

        if (problem)
                rdma_port_remote_clear(p);
        rdma_port_remote_problem(p, LOG_WARNING, problem);
        if (p->remote.again)
                query(remote, p, false);
}

/* ---- CAs that only libibumad knows ---- */

static RdmaNodeType node_type_from(int t) {
        return t >= RDMA_NODE_TYPE_CA && t <= RDMA_NODE_TYPE_ROUTER ? (RdmaNodeType) t : RDMA_NODE_TYPE_UNKNOWN;
}

static RdmaLinkLayer link_layer_from(const char *s) {
        /* libibumad says "IB" where sysfs has no link_layer attribute (ibsim's umad2sim has none). */
        if (streq(s, "IB") || streq(s, "InfiniBand"))
                return RDMA_LINK_LAYER_INFINIBAND;
        if (streq(s, "Ethernet"))
                return RDMA_LINK_LAYER_ETHERNET;
        return RDMA_LINK_LAYER_UNKNOWN;
}

static int device_from_umad(const RdmaMadCa *ca, InfinibandDevice **ret) {
        _cleanup_(infiniband_device_freep) InfinibandDevice *d = new0(InfinibandDevice, 1);

        if (!d)
                return -ENOMEM;
        d->name = strdup(ca->name);
        d->node_type = node_type_from(ca->node_type);
        d->node_guid = ca->node_guid;
        d->sys_image_guid = ca->sys_image_guid;
        d->fw_ver = isempty(ca->fw_ver) ? NULL : strdup(ca->fw_ver);
        d->hca_type = isempty(ca->ca_type) ? NULL : strdup(ca->ca_type);
        d->hw_rev = isempty(ca->hw_ver) ? NULL : strdup(ca->hw_ver);
        d->ports = new0(InfinibandPort *, ca->n_ports);
        if (!d->name || (!isempty(ca->fw_ver) && !d->fw_ver) || (!isempty(ca->ca_type) && !d->hca_type) ||
            (!isempty(ca->hw_ver) && !d->hw_rev) || (ca->n_ports > 0 && !d->ports))
                return -ENOMEM;
        for (size_t i = 0; i < ca->n_ports; i++) {
                const RdmaMadCaPort *up = &ca->ports[i];
                InfinibandPort *ip = new0(InfinibandPort, 1);

                if (!ip)
                        return -ENOMEM;
                d->ports[d->n_ports++] = ip;
                ip->number = up->number;
                ip->status = (RdmaPortStatus) {
                        .known = RDMA_PORT_FIELD_STATE | RDMA_PORT_FIELD_PHYS_STATE | RDMA_PORT_FIELD_LINK_LAYER |
                                 RDMA_PORT_FIELD_LID | RDMA_PORT_FIELD_SM_LID | RDMA_PORT_FIELD_CAP_MASK,
                        .state = up->state >= 0 && up->state <= 5 ? (RdmaPortState) (up->state + 1) : RDMA_PORT_STATE_UNKNOWN,
                        .phys_state = up->phys_state >= 1 && up->phys_state <= 7 ? (RdmaPhysState) up->phys_state
                                                                                 : RDMA_PHYS_STATE_UNKNOWN,
                        .link_layer = link_layer_from(up->link_layer),
                        .lid = up->lid,
                        .sm_lid = up->sm_lid,
                        .cap_mask = up->cap_mask,
                };
        }
        *ret = TAKE_PTR(d);
        return 0;
}

static void on_cas(void *userdata, const RdmaMadCa *cas, size_t n, int error) {
        RdmaRemote *remote = userdata;
        Rdma *rdma = remote->rdma;
        RdmaDevice *dev;
        RdmaPort *p;

        if (error < 0)
                log_debug_errno(error, "libibumad cannot list its CAs: %m");
        TABLE_FOREACH(dev, &rdma->devices)
                if (dev->from_umad)
                        dev->seen = false;
        for (size_t i = 0; i < n; i++) {
                _cleanup_(infiniband_device_freep) InfinibandDevice *d = NULL;

                dev = rdma_device_get(rdma, cas[i].name);
                if (dev && !dev->from_umad)
                        continue; /* sysfs has it: the ordinary way */
                if (dev) {
                        /* Known: its ports' state is their PortInfo's, asked again now. */
                        dev->seen = true;
                        TABLE_FOREACH(p, &rdma->ports)
                                if (streq(p->device, dev->name))
                                        query(remote, p, false);
                        continue;
                }
                if (device_from_umad(&cas[i], &d) < 0) {
                        log_oom();
                        continue;
                }
                log_info("RDMA device %s: not in sysfs, published from libibumad (%zu ports).", cas[i].name, d->n_ports);
                rdma_device_apply(rdma, d, false);
                dev = rdma_device_get(rdma, cas[i].name);
                if (dev)
                        dev->from_umad = true;
        }
        TABLE_FOREACH_SAFE(dev, &rdma->devices)
                if (dev->from_umad && !dev->seen) {
                        log_info("RDMA device %s: libibumad no longer lists it.", dev->name);
                        rdma_device_remove(rdma, dev->name);
                }
}

static void list_cas(RdmaRemote *remote) {
        int r = rdma_mad_list_cas(remote->mad);

        if (r < 0)
                log_warning_errno(r, "Cannot ask libibumad for its CAs: %m");
}

unsigned rdma_remote_sync(RdmaRemote *remote) {
        Rdma *rdma;
        RdmaPort *p;
        unsigned asked = 0;

        if (!remote)
                return 0;
        rdma = remote->rdma;
        if (rdma->umad_list_wanted && remote->mad)
                list_cas(remote);
        rdma->umad_list_wanted = false;
        if (!rdma->remote_wanted)
                return 0;
        rdma->remote_wanted = false;
        TABLE_FOREACH(p, &rdma->ports) {
                if (!p->remote.wanted)
                        continue;
                p->remote.wanted = false;
                if (!remote->mad)
                        continue;
                if (p->status.link_layer != RDMA_LINK_LAYER_INFINIBAND) {
                        rdma_port_remote_clear(p);
                        continue;
                }
                query(remote, p, false);
                asked++;
        }
        return asked;
}

int rdma_remote_new(Rdma *rdma, RdmaRemote **ret) {
        _cleanup_(rdma_remote_freep) RdmaRemote *remote = new0(RdmaRemote, 1);
        int r;

        if (!remote)
                return -ENOMEM;
        remote->rdma = rdma;
        /* Only the machine's own devices can be asked (a test's sysfs tree has no umad devices). */
        if (rdma->verbs_allowed) {
                r = rdma_mad_new(rdma->event, on_cas, on_port, remote, &remote->mad);
                if (r < 0)
                        log_warning_errno(r, "Cannot start the InfiniBand subnet management worker, neighbours "
                                             "will not be known: %m");
        }
        *ret = TAKE_PTR(remote);
        return 0;
}

RdmaRemote *rdma_remote_free(RdmaRemote *remote) {
        if (!remote)
                return NULL;
        rdma_mad_free(remote->mad);
        return mfree(remote);
}
