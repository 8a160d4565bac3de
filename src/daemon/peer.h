/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* peer.h — measured paths to peer nodes (peer/<key> objects) and the addresses they are wanted for */
#pragma once

#include <json-c/json.h>

#include "bus-object.h"
#include "log-object.h"
#include "probe-runner.h"
#include "shared/node-identity.h"
#include "shared/peer-address.h"
#include "shared/table.h"

typedef struct PeersConfig PeersConfig;

typedef enum PeerTransport {
        PEER_TRANSPORT_TCP,
        PEER_TRANSPORT_RDMA,
        _PEER_TRANSPORT_MAX,
        _PEER_TRANSPORT_INVALID = -EINVAL,
} PeerTransport;

typedef enum PeerProbeState {
        PEER_PROBE_PENDING,     /* wanted, never measured: waiting for its turn */
        PEER_PROBE_QUEUED,      /* ProbePeer() asked; waiting for the transport's probe slot */
        PEER_PROBE_PROBING,
        PEER_PROBE_OK,          /* the last probe measured */
        PEER_PROBE_FAILED,      /* the last probe failed: see LastError */
        PEER_PROBE_UNSUPPORTED, /* no RDMA on one of the two ends: not a failure */
        PEER_PROBE_SKIPPED_INHIBITED, /* an inhibitor stopped its probe: measured once it goes */
        _PEER_PROBE_STATE_MAX,
        _PEER_PROBE_STATE_INVALID = -EINVAL,
} PeerProbeState;

/* Why an address (a target) or a path is there; a path is wanted while a target wants it. */
typedef enum PeerOrigin {
        PEER_ORIGIN_CONFIG = 1 << 0,     /* [Peers] Address= */
        PEER_ORIGIN_ADDED = 1 << 1,      /* AddPeer(), persisted */
        PEER_ORIGIN_DISCOVERED = 1 << 2, /* an IPv6 link-local neighbour on a link of a Discover= kind */
        PEER_ORIGIN_PROBED = 1 << 3,     /* ProbePeer() of an address nobody wants: measured once, kept */
} PeerOrigin;

#define PEER_ORIGINS_WANTED (PEER_ORIGIN_CONFIG | PEER_ORIGIN_ADDED | PEER_ORIGIN_DISCOVERED)
/* Bounds on what callers can make us keep. */
#define PEER_TARGETS_MAX 256
#define PEER_PATHS_MAX 1024

/* A peer address somebody wants measured: the derivation pass expands it into paths. */
typedef struct PeerTarget {
        char *address; /* first: the table's key; canonical (peer_address_format) */
        PeerAddress parsed;
        unsigned origins;
        bool seen; /* mark and sweep of a discovery update */
} PeerTarget;

/* Every measured path and every address somebody wants measured. */
typedef struct Peers {
        Table paths;   /* Peer* by key: one per measured path */
        Table targets; /* PeerTarget* by address: what is wanted measured, and why */
        BusPublisher *publisher;
        const PeersConfig *config;
        /* Targets came, went or changed origins: the derivation pass expands them into paths again. */
        bool targets_changed;
} Peers;

/* What one probe measured, as published. */
typedef struct PeerMeasurement {
        double upload_gbps;
        double download_gbps;
        double rtt_usec;
        double jitter_usec;
        double jitter_rfc3550_usec;
        uint64_t measured_at; /* CLOCK_REALTIME µs when the probe started; 0 = never */
        uint64_t probe_duration_usec;
        char *source_address;
        char *source_interface; /* the interface name at measurement time */
        char *connection_type;  /* of that interface, at measurement time */
        unsigned upload_streams;   /* parallel TCP streams of the measurement each way; 0 unknown */
        unsigned download_streams;
        char **warnings;        /* what the probe said about the figures, such as fewer streams than asked */
        /* Other traffic either end's interface carried during the measurement (0: none notable): the
         * figures may be low (the probe warns), and the path is measured again (reconcile.c). */
        double cross_traffic_gbps;
} PeerMeasurement;

/* At most this many warnings of a probe are kept, each cut to PEER_WARNING_MAX bytes. */
#define PEER_WARNINGS_MAX 8
#define PEER_WARNING_MAX 256

/* What a path runs over, as far as it decides the path's capacity: recorded with each measurement
 * and held against the present, so a result measured over something else is stale at once. */
typedef struct PathCapacity {
        bool known;         /* the path's source link was known when recorded */
        int ifindex;        /* the link it leaves through */
        bool carrier;
        uint32_t speed_mbps;
        uint32_t mtu;
        bool has_source_address; /* the address it was measured from is still on that link */
        uint64_t thunderbolt_hops; /* see Link.derived.thunderbolt_hops */
} PathCapacity;

/* One measured path: (tcp, sink address) or (rdma, source device/port, sink address). */
typedef struct Peer {
        char *key; /* first: the table's key, "tcp:10.0.0.2" or "rdma:mlx5_0/1:10.0.0.2" */
        Peers *owner;
        BusObject bus;

        PeerTransport transport;
        PeerAddress sink;
        char *address;       /* canonical sink */
        char *peer_address;  /* the target this path belongs to (BestPeerPaths groups by it) */
        char *source_device; /* RDMA */
        unsigned source_port;

        unsigned wanted;   /* PeerOrigin bits of the targets that want it (the derivation pass) */
        bool adhoc;        /* ProbePeer() measured it: kept though nobody wants it */
        unsigned origins;  /* as published: wanted, plus PEER_ORIGIN_PROBED when adhoc */
        bool seen;         /* mark and sweep during an expansion */

        PeerMeasurement m;
        /* A new result, or a new path: the pass records which interface it left through, and that
         * interface's name and type as they are now (SourceInterfaceName, ConnectionType). */
        bool source_pending;
        /* The path moved under a probe that was running: its result is stale when it comes. */
        bool probe_disturbed;

        /* Which node the sink reached at the last measurement, as its responder said (NULL: it said
         * nothing); remote_authenticated: proved with our pre-shared key. */
        NodeIdentity *remote;
        bool remote_authenticated;

        PeerProbeState state;
        char *last_error;         /* stable name, NULL when the last probe succeeded */
        char *last_error_message;
        uint64_t last_attempt_at; /* CLOCK_REALTIME µs */
        unsigned n_failures;      /* in a row, for the back-off */

        /* Scheduling, owned by reconcile.c. */
        uint64_t next_probe_at; /* CLOCK_REALTIME µs; 0 = not scheduled (nobody wants it) */
        bool requested;         /* ProbePeer(): next in line for its transport */
        uint64_t request_duration_usec;
        unsigned request_samples;
        int request_streams;        /* -1: [Reconciler] TcpStreams=; 0: as many as raise goodput */
        ProbeRun *run;              /* freed (the probe killed) with the path */
        bool remeasure_pending;     /* next_probe_at is a re-measurement after a change under the path */
        uint64_t last_remeasure_at; /* CLOCK_REALTIME µs when such a re-measurement last started */
        uint64_t probe_started_at;  /* CLOCK_REALTIME µs, of the run */
        unsigned n_cross_remeasures; /* re-measurements in a row because of cross traffic */
        struct Reconciler *scheduler; /* who started the run, and hears how it ended */

        /* Derived (derive-peer.c writes these). */
        struct {
                char *neighbor_path; /* Neighbor: the neighbour this path reaches (derive-neighbor.c); NULL none */
                int source_ifindex; /* SourceInterface; 0 unknown */
                bool stale;
                char *stale_reason;         /* StaleReason; NULL when fresh */
                PathCapacity measured_over; /* what the last result was measured over */
                PathCapacity seen_over;     /* what the path ran over at the last pass */
                char *disturbed;            /* what changed under the path since it was measured */
                /* PathLimitGbps: the narrowest known hop on this side (the source's link, its
                 * Thunderbolt path, its PCIe path); 0 unknown. derive-pci.c writes these. */
                double path_limit_gbps;
                char *path_limited_by;
        } derived;
} Peer;

const char *peer_transport_to_string(PeerTransport t) _const_;
PeerTransport peer_transport_from_string(const char *s) _pure_;
const char *peer_probe_state_to_string(PeerProbeState s) _const_;
PeerProbeState peer_probe_state_from_string(const char *s) _pure_;

/* The key of a path. device is NULL for TCP. */
char *peer_make_key(PeerTransport t, const char *device, unsigned port, const PeerAddress *sink);

/* Tells path objects apart from others in the publisher's queue (the derivation pass). */
extern const BusObjectType peer_bus_type;

void peers_init(Peers *peers, BusPublisher *p, const PeersConfig *config);
void peers_done(Peers *peers);

Peer *peer_get(Peers *peers, const char *key);
/* Creates a path object (published at the next flush) or returns the one there. 1 when created. */
int peer_ensure(Peers *peers, PeerTransport t, const char *device, unsigned port, const PeerAddress *sink,
                const char *peer_address, Peer **ret);
/* Unpublishes and frees (a running probe is cancelled). */
void peer_remove(Peer *p);

/* The TTL of the path's transport. */
uint64_t peer_ttl_usec(const Peer *p);
/* When the last measurement goes stale by age (CLOCK_REALTIME µs); 0 when there is none. */
uint64_t peer_expires_at(const Peer *p);
/* When the path is due again after an attempt (CLOCK_REALTIME µs): a fresh result lives for its TTL,
 * minus the time the last probe took and a random tenth (random_below(n): below n), so that a cluster
 * does not probe in lockstep, but never less than half of it; a failure backs off from one tick,
 * doubling up to the TTL. */
uint64_t peer_renew_at(const Peer *p, uint64_t now, uint64_t tick_usec, uint64_t (*random_below)(uint64_t n));
void peer_set_state(Peer *p, PeerProbeState s);
/* Publishes Origins from wanted and adhoc when they changed. */
void peer_update_origins(Peer *p);
/* ProbePeer() measured a path nobody wants (it is kept for its result), or RemovePeer() let it go. */
void peer_set_adhoc(Peer *p, bool adhoc);

/* Targets. */
PeerTarget *peer_target_get(Peers *peers, const char *address);
int peer_target_add(Peers *peers, const PeerAddress *a, PeerOrigin origin, PeerTarget **ret);
/* Clears origin; the target goes when nothing wants it any more. Returns true if it went. */
bool peer_target_drop(Peers *peers, PeerTarget *t, PeerOrigin origin);

void peer_measurement_done(PeerMeasurement *m);

/**
 * peer_best_paths() - the best measured path to each peer, for Summary.BestPeerPaths
 * @peers: the paths
 * @ret: an array of the best path per peer address (PeerAddress property), sorted by that address;
 *       free the array (not the paths) with free()
 * @ret_n: its length
 *
 * A path qualifies once a probe measured it. Fresh results beat stale ones; among those the higher
 * bottleneck bandwidth (the lesser of upload and download) wins, then the lower RTT, then the key.
 * The pointers are valid until the next change to the peer table (the current event-loop iteration).
 *
 * Return: 0 or -ENOMEM.
 */
int peer_best_paths(Peers *peers, Peer ***ret, size_t *ret_n);

#define log_peer_full_errno(p, level, error, ...) log_object_full_errno(level, error, "PEER_PATH", (p)->key, __VA_ARGS__)
#define log_peer_debug(p, ...) (void) log_peer_full_errno(p, LOG_DEBUG, 0, __VA_ARGS__)
#define log_peer_info(p, ...) (void) log_peer_full_errno(p, LOG_INFO, 0, __VA_ARGS__)
