/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* linkprobe-responder — answers the TCP and RDMA probes of other nodes (see linkprobe-responder(8)). */
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/socket.h>
#include <systemd/sd-daemon.h>

#include "net-client.h"
#include "proto-auth.h"
#include "responder-rdma.h"
#include "responder.h"
#include "shared/log.h"
#include "shared/peer-address.h"
#include "shared/parse-util.h"

#define MAX_LISTEN 16

static ResponderLimits arg_limits;
static const char *arg_listen[MAX_LISTEN];
static size_t arg_n_listen;
static const char *arg_psk_file;
static const char *arg_identity_file;
static const char *arg_lock_file;
static bool arg_rdma = true;
static ResponderRdma arg_rdma_cfg = { .port = 1, .gid_index = -1 };

static void help(void) {
        printf("Usage: linkprobe-responder [OPTIONS]\n"
               "Answers linkprobe TCP and RDMA probes.\n\n"
               "  -l --listen=ADDR[:PORT]          listen here (repeatable; default [::]:%u)\n"
               "     --psk-file=FILE               require the pre-shared key in FILE\n"
               "     --identity-file=FILE          tell clients who this node is (JSON, kept up to date by linkprobed)\n"
               "     --lock-file=FILE              the node's measure lock, shared with its probes: tests wait for\n"
               "                                   each other (answered busy while this node's probe measures)\n"
               "     --max-frame-size=SIZE         largest frame accepted (default 1M)\n"
               "     --handshake-timeout=TIME      time to complete hello/auth (default 5s)\n"
               "     --idle-timeout=TIME           time between requests (default 30s)\n"
               "     --max-test-bytes=SIZE         bytes per upload or download (default 16G)\n"
               "     --max-test-duration=TIME      duration per upload or download (default 10s)\n"
               "     --rate=N                      requests per second per source address (default 10)\n"
               "     --burst=N                     token bucket size per source address (default 20)\n"
               "     --max-connections=N           concurrent connections (default 64)\n"
               "     --max-connections-per-source=N  (default 8)\n"
               "     --max-streams=N               parallel streams of one test, 1..8 (default 8)\n"
               "     --rdma=BOOL                   serve RDMA tests when a device exists (default yes)\n"
               "     --rdma-device=NAME --rdma-port=N --rdma-gid-index=N\n"
               "     --log-level=LEVEL             err, warning, notice, info, debug\n"
               "  -h --help  --version\n",
               PEER_DEFAULT_PORT);
}

static _noreturn_ _printf_(1, 2) void usage_error(const char *fmt, ...) {
        va_list ap;

        fprintf(stderr, "linkprobe-responder: ");
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fprintf(stderr, "\n");
        exit(2);
}

static uint64_t parse_arg_duration(const char *opt, const char *v) {
        uint64_t u;
        if (parse_duration_usec(v, &u) < 0 || u == 0)
                usage_error("invalid duration for --%s", opt);
        return u;
}

static uint64_t parse_arg_size(const char *opt, const char *v) {
        uint64_t u;
        if (parse_size(v, &u) < 0 || u == 0)
                usage_error("invalid size for --%s", opt);
        return u;
}

static uint64_t parse_arg_count(const char *opt, const char *v) {
        uint64_t u;
        if (parse_u64(v, &u) < 0 || u > UINT32_MAX)
                usage_error("invalid number for --%s", opt);
        return u;
}

static void parse_argv(int argc, char *argv[]) {
        enum {
                ARG_PSK = 0x100, ARG_MAX_FRAME, ARG_HANDSHAKE, ARG_IDLE, ARG_MAX_BYTES, ARG_MAX_DURATION, ARG_RATE,
                ARG_BURST, ARG_MAX_CONN, ARG_MAX_CONN_SOURCE, ARG_RDMA, ARG_RDMA_DEVICE, ARG_RDMA_PORT, ARG_RDMA_GID,
                ARG_LOG_LEVEL, ARG_VERSION, ARG_IDENTITY, ARG_MAX_STREAMS, ARG_LOCK,
        };
        static const struct option options[] = {
                { "listen", required_argument, NULL, 'l' },
                { "psk-file", required_argument, NULL, ARG_PSK },
                { "identity-file", required_argument, NULL, ARG_IDENTITY },
                { "lock-file", required_argument, NULL, ARG_LOCK },
                { "max-frame-size", required_argument, NULL, ARG_MAX_FRAME },
                { "handshake-timeout", required_argument, NULL, ARG_HANDSHAKE },
                { "idle-timeout", required_argument, NULL, ARG_IDLE },
                { "max-test-bytes", required_argument, NULL, ARG_MAX_BYTES },
                { "max-test-duration", required_argument, NULL, ARG_MAX_DURATION },
                { "rate", required_argument, NULL, ARG_RATE },
                { "burst", required_argument, NULL, ARG_BURST },
                { "max-connections", required_argument, NULL, ARG_MAX_CONN },
                { "max-connections-per-source", required_argument, NULL, ARG_MAX_CONN_SOURCE },
                { "max-streams", required_argument, NULL, ARG_MAX_STREAMS },
                { "rdma", required_argument, NULL, ARG_RDMA },
                { "rdma-device", required_argument, NULL, ARG_RDMA_DEVICE },
                { "rdma-port", required_argument, NULL, ARG_RDMA_PORT },
                { "rdma-gid-index", required_argument, NULL, ARG_RDMA_GID },
                { "log-level", required_argument, NULL, ARG_LOG_LEVEL },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },
                {}
        };
        int c, k;
        uint64_t u;

        arg_limits = RESPONDER_LIMITS_DEFAULT;
        while ((c = getopt_long(argc, argv, "hl:", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help();
                        exit(0);
                case ARG_VERSION:
                        printf("linkprobe-responder %s (protocol %u)\n", VERSION, PROTO_VERSION);
                        exit(0);
                case 'l':
                        if (arg_n_listen >= MAX_LISTEN)
                                usage_error("too many --listen addresses");
                        arg_listen[arg_n_listen++] = optarg;
                        break;
                case ARG_PSK:
                        arg_psk_file = optarg;
                        break;
                case ARG_IDENTITY:
                        arg_identity_file = optarg;
                        break;
                case ARG_LOCK:
                        arg_lock_file = optarg;
                        break;
                case ARG_MAX_FRAME:
                        u = parse_arg_size("max-frame-size", optarg);
                        if (u < PROTO_FRAME_MAX_MIN || u > PROTO_FRAME_MAX_MAX)
                                usage_error("--max-frame-size must be between 4K and 16M, not %s", optarg);
                        arg_limits.max_frame = (uint32_t) u;
                        break;
                case ARG_HANDSHAKE:
                        arg_limits.handshake_timeout_usec = parse_arg_duration("handshake-timeout", optarg);
                        break;
                case ARG_IDLE:
                        arg_limits.idle_timeout_usec = parse_arg_duration("idle-timeout", optarg);
                        break;
                case ARG_MAX_BYTES:
                        arg_limits.max_test_bytes = parse_arg_size("max-test-bytes", optarg);
                        break;
                case ARG_MAX_DURATION:
                        arg_limits.max_test_usec = parse_arg_duration("max-test-duration", optarg);
                        break;
                case ARG_RATE:
                        arg_limits.rate = parse_arg_count("rate", optarg);
                        break;
                case ARG_BURST:
                        arg_limits.burst = parse_arg_count("burst", optarg);
                        break;
                case ARG_MAX_CONN:
                        arg_limits.max_connections = (unsigned) parse_arg_count("max-connections", optarg);
                        break;
                case ARG_MAX_CONN_SOURCE:
                        arg_limits.max_connections_per_source =
                                (unsigned) parse_arg_count("max-connections-per-source", optarg);
                        break;
                case ARG_MAX_STREAMS:
                        arg_limits.max_streams = (unsigned) parse_arg_count("max-streams", optarg);
                        break;
                case ARG_RDMA:
                        k = parse_boolean(optarg);
                        if (k < 0)
                                usage_error("invalid boolean for --rdma: %s", optarg);
                        arg_rdma = k;
                        break;
                case ARG_RDMA_DEVICE:
                        if (strlen(optarg) >= sizeof(arg_rdma_cfg.device))
                                usage_error("device name too long: %s", optarg);
                        snprintf(arg_rdma_cfg.device, sizeof(arg_rdma_cfg.device), "%s", optarg);
                        break;
                case ARG_RDMA_PORT:
                        u = parse_arg_count("rdma-port", optarg);
                        if (u == 0 || u > 255)
                                usage_error("invalid port for --rdma-port: %s", optarg);
                        arg_rdma_cfg.port = (uint8_t) u;
                        break;
                case ARG_RDMA_GID:
                        u = parse_arg_count("rdma-gid-index", optarg);
                        if (u > 255)
                                usage_error("invalid GID index: %s", optarg);
                        arg_rdma_cfg.gid_index = (int) u;
                        break;
                case ARG_LOG_LEVEL:
                        k = log_level_from_string(optarg);
                        if (k < 0)
                                usage_error("invalid log level: %s", optarg);
                        log_set_max_level(k);
                        break;
                case '?':
                        exit(2);
                }
        if (optind < argc)
                usage_error("unexpected argument: %s", argv[optind]);

        const char *problem;
        if (responder_limits_validate(&arg_limits, &problem) < 0)
                usage_error("%s", problem);
}

static int listen_on(const char *spec, int *ret) {
        _cleanup_(closep) int fd = -EBADF;
        struct sockaddr_storage sa;
        socklen_t sa_len;
        const char *why = NULL;
        PeerAddress a;
        int one = 1, zero = 0, r;

        r = peer_address_parse(spec, PEER_ADDRESS_ALLOW_ANY, &a, &why);
        if (r < 0)
                return log_error_errno(r, "Invalid listen address \"%s\": %s.", spec, why);
        r = peer_address_to_sockaddr(&a, &sa, &sa_len);
        if (r < 0)
                return log_error_errno(r, "Invalid listen address \"%s\": %m", spec);

        fd = socket(sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, IPPROTO_TCP);
        if (fd < 0)
                return log_error_errno(errno, "socket(): %m");
        (void) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (sa.ss_family == AF_INET6) {
                /* The wildcard "[::]" serves IPv4 too; a specific IPv6 address only itself. */
                int v6only = peer_address_is_any(&a) ? 0 : 1;
                (void) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, v6only ? &one : &zero, sizeof(int));
        }
        if (bind(fd, (const struct sockaddr *) &sa, sa_len) < 0)
                return log_error_errno(errno, "Cannot bind to %s: %m", spec);
        if (listen(fd, 128) < 0)
                return log_error_errno(errno, "listen() on %s: %m", spec);
        log_info("Listening on %s.", spec);
        *ret = TAKE_FD(fd);
        return 0;
}

static int on_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        return sd_event_exit(sd_event_source_get_event(s), 0);
}

int main(int argc, char *argv[]) {
        _cleanup_(responder_freep) Responder *responder = NULL;
        sd_event *event = NULL;
        ProtoKey key;
        bool have_key = false;
        int r, n_fds, n_listeners = 0;

        parse_argv(argc, argv);
        signal(SIGPIPE, SIG_IGN);

        if (arg_psk_file) {
                r = proto_key_load(AT_FDCWD, arg_psk_file, &key);
                if (r == -EPERM)
                        return log_error_errno(r, "%s must not be readable or writable by others.", arg_psk_file), 1;
                if (r == -EINVAL)
                        return log_error_errno(r, "%s must hold a key of %d to %d bytes.", arg_psk_file, PROTO_KEY_MIN,
                                               PROTO_KEY_MAX), 1;
                if (r < 0)
                        return log_error_errno(r, "Cannot read %s: %m", arg_psk_file), 1;
                have_key = true;
        }

        if (arg_rdma)
                (void) responder_rdma_detect(&arg_rdma_cfg);
        else
                snprintf(arg_rdma_cfg.reason, sizeof(arg_rdma_cfg.reason), "RDMA is disabled on this responder");
        log_info("RDMA: %s%s", arg_rdma_cfg.available ? "serving " : "unsupported: ",
                 arg_rdma_cfg.available ? arg_rdma_cfg.device : arg_rdma_cfg.reason);

        /* Not sd_event_default(): the default loop checks its thread with a gettid() system call on
         * every iteration, a tenth of an echo's cost here. */
        r = sd_event_new(&event);
        if (r < 0)
                return log_error_errno(r, "Cannot allocate event loop: %m"), 1;
        r = responder_new(event, &arg_limits, have_key ? &key : NULL, &arg_rdma_cfg, &responder);
        explicit_bzero(&key, sizeof(key));
        if (r < 0)
                return log_error_errno(r, "Cannot set up the responder: %m"), 1;
        if (arg_identity_file) {
                r = responder_set_identity_file(responder, arg_identity_file);
                if (r < 0)
                        return log_error_errno(r, "Cannot use the identity file %s: %m", arg_identity_file), 1;
        }

        if (arg_lock_file) {
                /* Serving without it beats not serving: the node's probes may then meet our tests. */
                r = responder_set_lock_file(responder, arg_lock_file);
                if (r < 0)
                        log_warning_errno(r, "Cannot open the lock file %s, serving tests whenever asked: %m",
                                          arg_lock_file);
        }

        /* Sockets from systemd socket activation or from linkprobed (the same LISTEN_FDS protocol). */
        n_fds = sd_listen_fds(true);
        if (n_fds < 0)
                return log_error_errno(n_fds, "Invalid LISTEN_FDS: %m"), 1;
        for (int i = 0; i < n_fds; i++) {
                int fd = SD_LISTEN_FDS_START + i;
                if (sd_is_socket(fd, AF_UNSPEC, SOCK_STREAM, 1) <= 0)
                        return log_error("Passed file descriptor %d is not a listening stream socket.", fd), 1;
                r = responder_add_listener(responder, fd);
                if (r < 0)
                        return log_error_errno(r, "Cannot serve passed socket %d: %m", fd), 1;
                n_listeners++;
        }
        bool fallback = n_fds == 0 && arg_n_listen == 0;
        if (fallback)
                arg_listen[arg_n_listen++] = "[::]";
        for (size_t i = 0; i < arg_n_listen; i++) {
                int fd = -EBADF;
                r = listen_on(arg_listen[i], &fd);
                /* A kernel without IPv6 still gets the default responder, on IPv4. */
                if (r == -EAFNOSUPPORT && fallback)
                        r = listen_on("0.0.0.0", &fd);
                if (r < 0)
                        return 1;
                r = responder_add_listener(responder, fd);
                if (r < 0)
                        return log_error_errno(r, "Cannot serve %s: %m", arg_listen[i]), 1;
                n_listeners++;
        }

        sigset_t mask;
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigprocmask(SIG_BLOCK, &mask, NULL);
        (void) sd_event_add_signal(event, NULL, SIGTERM, on_signal, NULL);
        (void) sd_event_add_signal(event, NULL, SIGINT, on_signal, NULL);

        (void) sd_notify(false, "READY=1\nSTATUS=Serving linkprobe tests.");
        log_info("Ready on %d socket(s)%s.", n_listeners, have_key ? ", pre-shared key required" : "");

        r = sd_event_loop(event);

        ResponderStats st;
        responder_get_stats(responder, &st);
        log_info("Exiting: %" PRIu64 " connections (%" PRIu64 " joined as streams, %" PRIu64 " echoed on the echo "
                 "thread), %" PRIu64 " tests, %" PRIu64 " rate-limited, %" PRIu64 " busy, %" PRIu64
                 " refused at the connection cap, %" PRIu64 " evicted, %" PRIu64 " timeouts, %" PRIu64
                 " protocol errors, %" PRIu64 " wrong keys.",
                 st.accepted, st.joined, st.echo_sessions, st.tests, st.rejected_rate, st.busy,
                 st.rejected_connections, st.evicted, st.closed_timeout, st.closed_protocol, st.auth_failed);
        responder = responder_free(responder);
        sd_event_unref(event);
        return r < 0 ? 1 : 0;
}
