/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * LLDP's receive side, without lldpd and beside one: a single AF_PACKET socket bound to EtherType
 * 0x88cc on every interface (a packet socket is one more tap, so an lldpd that runs sees the same
 * frames), the nearest-bridge group joined on each Ethernet-like link that is up (as
 * systemd-networkd does: not on bridges and bonds, whose ports face the wire). Each neighbour is a port
 * of a switch (switch.h) until its TTL runs out (one timer for all of them), a shutdown LLDPDU comes,
 * or the link loses its carrier or goes down. Whoever is on the segment chooses these frames: the
 * parser is bounded (shared/lldp-parse.c), frames are rate-limited per link, and neighbours per link
 * and switches are bounded, each excess dropped, counted and warned of once.
 */
#include <arpa/inet.h>
#include <linux/ethtool.h>
#include <linux/filter.h>
#include <linux/if.h>
#include <linux/if_arp.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "link.h"
#include "lldp.h"
#include "shared/log.h"
#include "shared/ratelimit.h"
#include "shared/string-util.h"
#include "shared/time-util.h"
#include "switch.h"

#define LLDP_FRAME_MAX 9216 /* a jumbo frame: an LLDPDU is at most 1500 octets, padding aside */
#define LLDP_READS_PER_WAKEUP 64

static const uint8_t LLDP_NEAREST_BRIDGE[ETH_ALEN] = { 0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e };

typedef struct LldpNeighbor {
        LldpId chassis, port;
        char *switch_key;
        char *port_id; /* as the Switch's Ports list it */
        uint64_t expires; /* CLOCK_MONOTONIC µs */
} LldpNeighbor;

/* A link we listen on: Ethernet-like and up. */
typedef struct LldpLink {
        int ifindex; /* first: the table's key */
        char *path;  /* its Link object */
        bool member; /* joined the nearest-bridge group */
        bool veth;   /* never joins: it has no multicast filter (link_is_veth()) */
        bool bucket_started; /* at the first frame, on the frames' clock */
        TokenBucket bucket;
        bool warned_rate, warned_malformed, warned_full;
        /* Grown at the first frame, up to LLDP_NEIGHBORS_PER_LINK_MAX: most links never see one, and a
         * fixed array (8.6 KiB a link) made zeroing 17 MiB a third of the first dump at 2001 links. */
        LldpNeighbor *neighbors;
        size_t n_neighbors, n_allocated;
} LldpLink;

struct LldpReceiver {
        sd_event *event;
        Links *links;
        Switches *switches;
        int fd;
        int open_error; /* why there is no socket */
        sd_event_source *io, *timer;
        Table table; /* LldpLink* by ifindex */
        LldpCounters counters;
        LldpFrame frame; /* the one being applied: 3 KiB kept off the stack */
        uint8_t buf[LLDP_FRAME_MAX];
};

const char *lldp_firmware_agent_flag(const char (*names)[32], size_t n, uint32_t flags) {
        for (size_t i = 0; i < n && i < 32; i++) {
                bool on = flags & (UINT32_C(1) << i);
                /* i40e: the firmware agent runs unless this flag is on. */
                if (strneq(names[i], "disable-fw-lldp", 32) && !on)
                        return "disable-fw-lldp";
                /* ice ("fw-lldp-agent") and others that name the agent itself. */
                if (strneq(names[i], "fw-lldp", 7) && on)
                        return names[i];
        }
        return NULL;
}

/* The private flags' names and values through the ETHTOOL ioctl (what `ethtool --show-priv-flags`
 * reads); needs no privilege. */
static int read_private_flags(int fd, const char *ifname, char (*names)[32], size_t *ret_n, uint32_t *ret_flags) {
        _cleanup_(freep) struct ethtool_sset_info *sset = calloc(1, sizeof(*sset) + sizeof(uint32_t));
        struct ethtool_value value = { .cmd = ETHTOOL_GPFLAGS };
        _cleanup_(freep) struct ethtool_gstrings *strings = NULL;
        struct ifreq ifr = {};

        if (!sset)
                return -ENOMEM;
        if (strlen(ifname) >= sizeof(ifr.ifr_name))
                return -EINVAL;
        *sset = (struct ethtool_sset_info) { .cmd = ETHTOOL_GSSET_INFO, .sset_mask = UINT64_C(1) << ETH_SS_PRIV_FLAGS };
        strncpy(ifr.ifr_name, ifname, sizeof(ifr.ifr_name) - 1);
        ifr.ifr_data = (void *) sset;
        if (ioctl(fd, SIOCETHTOOL, &ifr) < 0)
                return -errno;
        /* The kernel writes the count of each set asked for, and clears the bits of those it lacks. */
        if (!(sset->sset_mask & (UINT64_C(1) << ETH_SS_PRIV_FLAGS)) || sset->data[0] == 0) {
                *ret_n = 0;
                return 0;
        }
        size_t n = MIN(sset->data[0], 32u);
        strings = calloc(1, sizeof(*strings) + n * ETH_GSTRING_LEN);
        if (!strings)
                return -ENOMEM;
        *strings = (struct ethtool_gstrings) { .cmd = ETHTOOL_GSTRINGS, .string_set = ETH_SS_PRIV_FLAGS, .len = (uint32_t) n };
        ifr.ifr_data = (void *) strings;
        if (ioctl(fd, SIOCETHTOOL, &ifr) < 0)
                return -errno;
        ifr.ifr_data = (void *) &value;
        if (ioctl(fd, SIOCETHTOOL, &ifr) < 0)
                return -errno;
        n = MIN(n, (size_t) strings->len);
        for (size_t i = 0; i < n; i++) {
                memcpy(names[i], strings->data + i * ETH_GSTRING_LEN, 32);
                names[i][31] = 0;
        }
        *ret_n = n;
        *ret_flags = value.data;
        return 0;
}

/* What networkd listens on: Ethernet framing, not loopback, not a bridge or a bond (their ports face
 * the wire and hear the LLDPDUs), administratively up. */
static bool link_wants_lldp(const Link *l) {
        return l->arphrd == ARPHRD_ETHER && !(l->flags & IFF_LOOPBACK) && (l->flags & IFF_UP) &&
               !streq_ptr(l->info_kind, "bridge") && !streq_ptr(l->info_kind, "bond");
}

/* A veth pair is two ends of a kernel function: no firmware that could take the LLDPDUs (no private flags
 * to read), and no multicast filter (every frame reaches the far end), so no group to join. At start-up
 * that is two ioctls under the RTNL lock fewer per link (2000 veths on a container host). */
static bool link_is_veth(const Link *l) {
        return streq_ptr(l->info_kind, "veth");
}

static int lldp_link_compare(const void *key, const void *object) {
        return compare_int_key(key, ((const LldpLink *) object)->ifindex);
}

static void neighbor_done(LldpNeighbor *n) {
        free(n->switch_key);
        free(n->port_id);
}

static void lldp_rearm(LldpReceiver *r) {
        uint64_t next = UINT64_MAX;
        LldpLink *lk;

        TABLE_FOREACH(lk, &r->table)
                for (size_t i = 0; i < lk->n_neighbors; i++)
                        next = MIN(next, lk->neighbors[i].expires);
        if (!r->timer)
                return;
        if (next == UINT64_MAX) {
                (void) sd_event_source_set_enabled(r->timer, SD_EVENT_OFF);
                return;
        }
        (void) sd_event_source_set_time(r->timer, next);
        (void) sd_event_source_set_enabled(r->timer, SD_EVENT_ONESHOT);
}

static void lldp_link_drop_neighbor(LldpReceiver *r, LldpLink *lk, size_t i) {
        LldpNeighbor *n = &lk->neighbors[i];

        (void) switch_port_remove(r->switches, SWITCH_SOURCE_LLDP, n->switch_key, lk->path, n->port_id);
        neighbor_done(n);
        memmove(n, n + 1, (lk->n_neighbors - i - 1) * sizeof(*n));
        lk->n_neighbors--;
}

static void lldp_link_flush(LldpReceiver *r, LldpLink *lk) {
        for (size_t i = 0; i < lk->n_neighbors; i++)
                neighbor_done(&lk->neighbors[i]);
        lk->n_neighbors = 0;
        switches_remove_local(r->switches, SWITCH_SOURCE_LLDP, lk->path);
}

static void lldp_membership(LldpReceiver *r, LldpLink *lk, bool add) {
        struct packet_mreq mreq = {
                .mr_ifindex = lk->ifindex,
                .mr_type = PACKET_MR_MULTICAST,
                .mr_alen = ETH_ALEN,
        };

        if (r->fd < 0 || lk->member == add || lk->veth)
                return;
        memcpy(mreq.mr_address, LLDP_NEAREST_BRIDGE, ETH_ALEN);
        if (setsockopt(r->fd, SOL_PACKET, add ? PACKET_ADD_MEMBERSHIP : PACKET_DROP_MEMBERSHIP, &mreq,
                       sizeof(mreq)) < 0) {
                /* The link went away meanwhile; its removal follows. */
                log_debug_errno(errno, "Cannot %s the LLDP group on link %d: %m", add ? "join" : "leave", lk->ifindex);
                return;
        }
        lk->member = add;
}

/* Says in the link's LldpWarning why it will show no switch although one may be there (no packet
 * socket, a NIC whose firmware takes the LLDPDUs), or clears it. */
static void lldp_link_check(LldpReceiver *r, Link *l) {
        char names[32][32];
        uint32_t flags = 0;
        size_t n = 0;
        const char *flag;
        _cleanup_(freep) char *warning = NULL;

        if (r->open_error < 0) {
                (void) asprintf(&warning, "LLDP is not received: no packet socket (%s); the service needs "
                                          "CAP_NET_RAW and AF_PACKET", strerror(-r->open_error));
        } else if (l->name && !link_is_veth(l) && read_private_flags(r->fd, l->name, names, &n, &flags) >= 0 &&
                   (flag = lldp_firmware_agent_flag((const char (*)[32]) names, n, flags))) {
                (void) asprintf(&warning, "the NIC's firmware consumes LLDP (private flag %s is %s): "
                                          "ethtool --set-priv-flags %s %s %s lets it through",
                                flag, streq(flag, "disable-fw-lldp") ? "off" : "on", l->name_utf8, flag,
                                streq(flag, "disable-fw-lldp") ? "on" : "off");
                log_link_warning(l, "The NIC's firmware runs an LLDP agent (private flag %s): no switch will be seen "
                                    "on this link.", flag);
        }
        if (link_set_lldp_warning(l, warning) < 0)
                log_oom();
}

/* forget: take the link's ports out of the switches too (not at the daemon's end, where the switches
 * go as a whole). */
static void lldp_link_free(LldpReceiver *r, LldpLink *lk, bool forget) {
        if (forget)
                lldp_link_flush(r, lk);
        else
                for (size_t i = 0; i < lk->n_neighbors; i++)
                        neighbor_done(&lk->neighbors[i]);
        free(lk->neighbors);
        free(lk->path);
        free(lk);
}

static void on_link(Link *l, bool removed, void *userdata) {
        LldpReceiver *r = userdata;
        LldpLink *lk = table_get(&r->table, &l->ifindex);
        int q;

        if (removed || !link_wants_lldp(l)) {
                if (lk) {
                        if (!removed)
                                lldp_membership(r, lk, false);
                        table_remove(&r->table, &l->ifindex);
                        lldp_link_free(r, lk, true);
                        lldp_rearm(r);
                }
                if (!removed)
                        (void) link_set_lldp_warning(l, NULL);
                return;
        }
        if (lk) {
                /* No carrier, no cable: whatever was at the far end is not now. */
                if (!(l->flags & IFF_LOWER_UP) && lk->n_neighbors > 0) {
                        lldp_link_flush(r, lk);
                        lldp_rearm(r);
                }
                return;
        }

        lk = new0(LldpLink, 1);
        if (!lk) {
                log_oom();
                return;
        }
        lk->ifindex = l->ifindex;
        lk->veth = link_is_veth(l);
        q = link_object_path(l->ifindex, &lk->path);
        if (q >= 0)
                q = table_put(&r->table, &lk->ifindex, lk);
        if (q < 0) {
                free(lk->path);
                free(lk);
                log_link_warning_errno(l, q, "Cannot listen for LLDP: %m");
                return;
        }
        lldp_membership(r, lk, true);
        lldp_link_check(r, l);
}

static ssize_t neighbor_find(LldpLink *lk, const LldpFrame *f) {
        for (size_t i = 0; i < lk->n_neighbors; i++) {
                const LldpNeighbor *n = &lk->neighbors[i];
                if (n->chassis.subtype == f->chassis_id.subtype && n->chassis.size == f->chassis_id.size &&
                    memcmp(n->chassis.data, f->chassis_id.data, n->chassis.size) == 0 &&
                    n->port.subtype == f->port_id.subtype && n->port.size == f->port_id.size &&
                    memcmp(n->port.data, f->port_id.data, n->port.size) == 0)
                        return (ssize_t) i;
        }
        return -1;
}

/* The IEEE 802.3 and 802.1 TLVs, as the switch port's Ethernet facts. */
static SwitchPortEthernet frame_ethernet(const LldpFrame *f) {
        SwitchPortEthernet e = {
                .mac_phy = f->has_mac_phy,
                .autoneg_supported = f->autoneg & LLDP_AUTONEG_SUPPORTED,
                .autoneg_enabled = f->autoneg & LLDP_AUTONEG_ENABLED,
                .mau_type = f->mau_type,
                .max_frame_size = f->has_max_frame_size ? f->max_frame_size : 0,
                .port_vlan_id = f->has_port_vlan_id ? f->port_vlan_id : 0,
        };
        uint32_t advertised[4], operational;
        size_t n = 0;

        if (!f->has_mac_phy)
                return e;
        /* What it advertises when it negotiates (these bits stop at 1000BASE-T), and what it runs at:
         * a 25G port advertises nothing here but says its MAU type. Ascending, each once. */
        if (e.autoneg_enabled)
                n = lldp_advertised_speeds_mbps(f->autoneg_advertised, advertised);
        operational = lldp_mau_type_speed_mbps(f->mau_type);
        for (size_t i = 0; i < n; i++)
                e.speeds_mbps[e.n_speeds++] = advertised[i];
        if (operational > 0 && (e.n_speeds == 0 || e.speeds_mbps[e.n_speeds - 1] < operational) &&
            e.n_speeds < SWITCH_PORT_SPEEDS_MAX)
                e.speeds_mbps[e.n_speeds++] = operational;
        return e;
}

/* Applies one parsed LLDPDU to the link's neighbours and the switch it names. */
static void lldp_apply(LldpReceiver *r, Link *l, LldpLink *lk, const LldpFrame *f, uint64_t now) {
        char chassis[LLDP_ID_TEXT_MAX], port_id[LLDP_ID_TEXT_MAX], port_description[LLDP_ID_TEXT_MAX],
                name[LLDP_ID_TEXT_MAX], description[LLDP_ID_TEXT_MAX], addresses[LLDP_MANAGEMENT_ADDRESSES_MAX][64];
        char *capabilities[_LLDP_CAP_MAX + 1] = {}, *address_list[LLDP_MANAGEMENT_ADDRESSES_MAX + 1] = {};
        _cleanup_(freep) char *key = NULL;
        size_t n_caps = 0;
        ssize_t i = neighbor_find(lk, f);
        int q;

        lldp_id_to_text(&f->chassis_id, true, chassis, sizeof(chassis));
        lldp_id_to_text(&f->port_id, false, port_id, sizeof(port_id));
        if (f->ttl == 0) {
                r->counters.shutdowns++;
                if (i >= 0) {
                        log_link_debug(l, "LLDP neighbour %s port %s shut down.", chassis, port_id);
                        lldp_link_drop_neighbor(r, lk, (size_t) i);
                        lldp_rearm(r);
                }
                return;
        }
        if (asprintf(&key, "%s-%s", lldp_id_subtype_to_string(&f->chassis_id, true), chassis) < 0) {
                log_oom();
                return;
        }

        bool added = false;
        if (i < 0) {
                if (lk->n_neighbors >= LLDP_NEIGHBORS_PER_LINK_MAX) {
                        r->counters.neighbors_refused++;
                        if (!lk->warned_full)
                                log_link_warning(l, "More than %d LLDP neighbours on this link; ignoring %s port %s "
                                                    "and any other new one.", LLDP_NEIGHBORS_PER_LINK_MAX, chassis, port_id);
                        lk->warned_full = true;
                        return;
                }
                if (lk->n_neighbors == lk->n_allocated) {
                        size_t want = MIN(MAX(lk->n_allocated * 2, (size_t) 2), (size_t) LLDP_NEIGHBORS_PER_LINK_MAX);
                        LldpNeighbor *grown = reallocarray(lk->neighbors, want, sizeof(*grown));
                        if (!grown) {
                                log_oom();
                                return;
                        }
                        lk->neighbors = grown;
                        lk->n_allocated = want;
                }
                LldpNeighbor *n = &lk->neighbors[lk->n_neighbors];
                *n = (LldpNeighbor) { .chassis = f->chassis_id, .port = f->port_id, .switch_key = strdup(key),
                                      .port_id = strdup(port_id) };
                if (!n->switch_key || !n->port_id) {
                        neighbor_done(n);
                        log_oom();
                        return;
                }
                i = (ssize_t) lk->n_neighbors++;
                added = true;
        }
        lk->neighbors[i].expires = now + (uint64_t) f->ttl * USEC_PER_SEC; /* at most 65535 s: no overflow */

        if (f->has_capabilities)
                for (unsigned bit = 0; bit < _LLDP_CAP_MAX; bit++)
                        if (f->capabilities_enabled & (1u << bit))
                                capabilities[n_caps++] = (char *) lldp_capability_to_string(bit);
        for (unsigned a = 0; a < f->n_management_addresses; a++)
                address_list[a] = lldp_management_address_to_text(&f->management_addresses[a], addresses[a],
                                                                 sizeof(addresses[a]));

        /* Every LLDPDU describes its sender whole: what it leaves out, it does not have. */
        SwitchInfo info = {
                .chassis_id = chassis,
                .name = f->has_system_name ? lldp_bytes_to_text(&f->system_name, name, sizeof(name)) : "",
                .description = f->has_system_description
                                       ? lldp_bytes_to_text(&f->system_description, description, sizeof(description))
                                       : "",
                .capabilities = capabilities,
                .management_addresses = address_list,
        };
        SwitchPort port = {
                .local_path = lk->path,
                .port_id = port_id,
                .description = f->has_port_description
                                       ? lldp_bytes_to_text(&f->port_description, port_description, sizeof(port_description))
                                       : NULL,
                .ethernet = frame_ethernet(f),
        };
        q = switch_port_set(r->switches, SWITCH_SOURCE_LLDP, key, &info, &port, now_usec(CLOCK_REALTIME));
        if (q < 0) {
                if (q != -E2BIG)
                        log_link_warning_errno(l, q, "Cannot record LLDP neighbour %s port %s: %m", chassis, port_id);
                r->counters.neighbors_refused++;
                if (added) {
                        neighbor_done(&lk->neighbors[i]);
                        lk->n_neighbors--;
                }
                return;
        }
        if (q > 0)
                log_link_info(l, "LLDP: switch %s (%s), port %s.", isempty(info.name) ? chassis : info.name, chassis,
                              port_id);
        r->counters.received++;
        lldp_rearm(r);
}

void lldp_receiver_process_frame(LldpReceiver *r, int ifindex, const void *frame, size_t size, uint64_t now) {
        LldpLink *lk = table_get(&r->table, &ifindex);
        Link *l = link_get(r->links, ifindex);
        const char *reason = NULL;

        /* A link we do not listen on (down, a bridge, gone meanwhile): not ours to read. */
        if (!lk || !l)
                return;
        if (!lk->bucket_started)
                token_bucket_init(&lk->bucket, LLDP_FRAMES_PER_SEC, LLDP_FRAMES_BURST, now);
        lk->bucket_started = true;
        if (!token_bucket_take(&lk->bucket, 1, now)) {
                r->counters.rate_limited++;
                if (!lk->warned_rate)
                        log_link_warning(l, "More than %d LLDP frames a second on this link; dropping the excess.",
                                         LLDP_FRAMES_PER_SEC);
                lk->warned_rate = true;
                return;
        }
        if (lldp_parse_frame(frame, size, &r->frame, &reason) >= 0 && !lldp_is_destination(frame))
                reason = "not sent to an LLDP multicast address";
        else if (reason == NULL) {
                lldp_apply(r, l, lk, &r->frame, now);
                return;
        }
        r->counters.malformed++;
        log_link_full_errno(l, lk->warned_malformed ? LOG_DEBUG : LOG_WARNING, 0,
                            "Ignoring an LLDP frame from %02x:%02x:%02x:%02x:%02x:%02x: %s%s",
                            size >= 12 ? ((const uint8_t *) frame)[6] : 0, size >= 12 ? ((const uint8_t *) frame)[7] : 0,
                            size >= 12 ? ((const uint8_t *) frame)[8] : 0, size >= 12 ? ((const uint8_t *) frame)[9] : 0,
                            size >= 12 ? ((const uint8_t *) frame)[10] : 0, size >= 12 ? ((const uint8_t *) frame)[11] : 0,
                            reason, lk->warned_malformed ? "." : " (further ones are logged at debug level).");
        lk->warned_malformed = true;
}

void lldp_receiver_expire(LldpReceiver *r, uint64_t now) {
        LldpLink *lk;

        TABLE_FOREACH(lk, &r->table)
                for (size_t i = lk->n_neighbors; i > 0; i--)
                        if (lk->neighbors[i - 1].expires <= now) {
                                log_debug("LLDP neighbour %s port %s on link %d expired.", lk->neighbors[i - 1].switch_key,
                                          lk->neighbors[i - 1].port_id, lk->ifindex);
                                r->counters.expired++;
                                lldp_link_drop_neighbor(r, lk, i - 1);
                        }
        lldp_rearm(r);
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        lldp_receiver_expire(userdata, now_usec(CLOCK_MONOTONIC));
        return 0;
}

static int on_readable(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        LldpReceiver *r = userdata;

        /* A bounded batch: a flood must not keep the loop from everything else. */
        for (unsigned i = 0; i < LLDP_READS_PER_WAKEUP; i++) {
                struct sockaddr_ll sll = {};
                socklen_t sl = sizeof(sll);
                ssize_t n = recvfrom(fd, r->buf, sizeof(r->buf), MSG_TRUNC | MSG_DONTWAIT, (struct sockaddr *) &sll, &sl);
                if (n < 0) {
                        if (errno != EAGAIN && errno != EINTR)
                                log_debug_errno(errno, "Reading an LLDP frame failed: %m");
                        break;
                }
                /* Our own and a local lldpd's LLDPDUs going out are no neighbours. */
                if (sll.sll_pkttype == PACKET_OUTGOING)
                        continue;
                if ((size_t) n > sizeof(r->buf)) {
                        r->counters.malformed++;
                        continue;
                }
                lldp_receiver_process_frame(r, sll.sll_ifindex, r->buf, (size_t) n, now_usec(CLOCK_MONOTONIC));
        }
        return 0;
}

/* In the kernel, before a frame wakes us: only what is sent to one of LLDP's three group addresses
 * (01:80:c2:00:00:0e, :03, :00); the socket's protocol already picked EtherType 0x88cc. */
static int attach_filter(int fd) {
        static const struct sock_filter code[] = {
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0),                 /* destination, first 4 bytes */
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x0180c200, 0, 5),
                BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 4),                 /* the last 2 */
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x000e, 2, 0),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x0003, 1, 0),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x0000, 0, 1),
                BPF_STMT(BPF_RET | BPF_K, 0xffffffff),                 /* the whole frame */
                BPF_STMT(BPF_RET | BPF_K, 0),                          /* nothing */
        };
        const struct sock_fprog prog = { .len = ELEMENTSOF(code), .filter = (struct sock_filter *) code };

        return RET_NERRNO(setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)));
}

static int receiver_new(sd_event *event, Links *links, Switches *switches, bool detached, LldpReceiver **ret) {
        LldpReceiver *r;
        int q, one = 1;

        r = new0(LldpReceiver, 1);
        if (!r)
                return -ENOMEM;
        r->event = sd_event_ref(event);
        r->links = links;
        r->switches = switches;
        r->table = TABLE_INIT(lldp_link_compare);
        r->fd = detached ? -EBADF : socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, htons(ETH_P_LLDP));
        if (detached)
                ;
        else if (r->fd < 0) {
                r->open_error = -errno;
                log_warning_errno(r->open_error, "Cannot open a packet socket for LLDP, no switch will be seen "
                                                 "(the service needs CAP_NET_RAW and AF_PACKET): %m");
        } else {
                /* Outgoing frames (a local lldpd's) are dropped by the kernel where it can (Linux 4.20);
                 * the handler drops them too. */
                (void) setsockopt(r->fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one));
                q = attach_filter(r->fd);
                if (q < 0)
                        /* The handler checks the destination as well. */
                        log_debug_errno(q, "Cannot attach the LLDP socket filter: %m");
                q = sd_event_add_io(event, &r->io, r->fd, EPOLLIN, on_readable, r);
                if (q < 0) {
                        lldp_receiver_free(r);
                        return q;
                }
        }
        q = sd_event_add_time(event, &r->timer, CLOCK_MONOTONIC, UINT64_MAX, USEC_PER_SEC / 10, on_timer, r);
        if (q >= 0)
                q = sd_event_source_set_enabled(r->timer, SD_EVENT_OFF);
        if (q < 0) {
                lldp_receiver_free(r);
                return q;
        }
        links->hook = on_link;
        links->hook_userdata = r;
        *ret = r;
        return 0;
}

int lldp_receiver_new(sd_event *event, Links *links, Switches *switches, LldpReceiver **ret) {
        return receiver_new(event, links, switches, false, ret);
}

int lldp_receiver_new_detached(sd_event *event, Links *links, Switches *switches, LldpReceiver **ret) {
        return receiver_new(event, links, switches, true, ret);
}

LldpReceiver *lldp_receiver_free(LldpReceiver *r) {
        LldpLink *lk;

        if (!r)
                return NULL;
        if (r->links && r->links->hook == on_link) {
                r->links->hook = NULL;
                r->links->hook_userdata = NULL;
        }
        TABLE_FOREACH(lk, &r->table)
                lldp_link_free(r, lk, false);
        table_done(&r->table);
        sd_event_source_disable_unref(r->io);
        sd_event_source_disable_unref(r->timer);
        safe_close(r->fd);
        sd_event_unref(r->event);
        return mfree(r);
}

const LldpCounters *lldp_receiver_counters(const LldpReceiver *r) {
        return &r->counters;
}
