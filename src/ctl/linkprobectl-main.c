/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* linkprobectl — reads what linkprobed publishes: links, topology, ports, GPUs, peers. */
#include <getopt.h>
#include <locale.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "linkprobectl-draw.h"
#include "linkprobectl-fabric.h"
#include "linkprobectl.h"
#include "shared/bus-error.h"
#include "shared/bus-names.h"
#include "shared/parse-util.h"
#include "shared/socket-util.h"
#include "shared/string-util.h"

static bool arg_list = false;

typedef enum BusChoice {
        BUS_AUTO,    /* root: the private socket if linkprobed serves one, else the system bus */
        BUS_PRIVATE, /* --private-socket= */
        BUS_SYSTEM,
        BUS_USER,
        BUS_ADDRESS,
} BusChoice;

static BusChoice arg_bus = BUS_AUTO;
static const char *arg_bus_address = NULL;
static const char *arg_private_socket = BUS_PRIVATE_SOCKET;

/* "probe gpu" measures the GPUs, "probe ADDRESS" a peer. */
static int verb_probe(sd_bus *bus, int argc, char **argv) {
        return streq(argv[1], "gpu") ? verb_probe_gpu(bus, argc, argv) : verb_probe_peer(bus, argc, argv);
}

typedef struct Verb {
        const char *name;
        int min_args; /* counting the verb itself */
        int max_args; /* -1: any */
        int (*run)(sd_bus *bus, int argc, char **argv);
        int (*check)(int argc, char **argv); /* usage errors found without the daemon */
        bool pager;                          /* a listing, which may be long */
        bool (*no_bus)(void);                /* true: this invocation reads no daemon */
        bool bus_only; /* needs the bus itself (its NameOwnerChanged, a caller's name): never direct */
} Verb;

static const Verb verbs[] = {
        { "status", 1, 1, verb_status, NULL, true },
        { "list", 1, -1, verb_list, NULL, true },
        { "show", 1, -1, verb_show, check_show_args, true },
        { "monitor", 1, 1, verb_monitor, NULL, false, NULL, true },
        { "peers", 1, 1, verb_peers, NULL, true },
        { "metrics", 1, 1, verb_metrics, check_metrics_args, true },
        { "snapshot", 1, 1, verb_snapshot, NULL, true },
        { "rdma", 1, 1, verb_rdma, NULL, true },
        { "thunderbolt", 1, 1, verb_thunderbolt, NULL, true },
        { "tree", 1, 1, verb_thunderbolt, NULL, true },
        { "gpu", 1, 1, verb_gpu, NULL, true },
        { "topo", 1, 1, verb_topo, NULL, true },
        { "probe", 2, 2, verb_probe, check_probe_args, false, NULL, true },
        { "inhibit", 2, -1, verb_inhibit, check_inhibit_args, false, NULL, true },
        { "inhibitors", 1, 1, verb_inhibitors, NULL, true },
        { "fabric", 1, -1, verb_fabric, check_fabric_args, true, fabric_needs_no_bus },
        { "health", 1, 1, verb_health, NULL, true },
        { "switches", 1, 1, verb_switches, NULL, true },
        { "lldp", 1, 1, verb_switches, NULL, true },
};

static void help(void) {
        printf("Usage: linkprobectl [OPTIONS] COMMAND\n\n"
               "Shows what linkprobed knows about this machine's interconnects.\n\n"
               "Commands:\n"
               "  status              Daemon state, this node and its memory\n"
               "  list [PATTERN...]   One line per network link (those whose name matches)\n"
               "  show LINK...        Everything about links, by name or index (-a: every link)\n"
               "  monitor             Print changes as they happen, until interrupted\n"
               "  health              Every link, port, PCI function and Thunderbolt device that is\n"
               "                      not ok (degraded, errors, flapping, unknown), and why\n"
               "  switches, lldp      The switches at the far end of the cables (from LLDP)\n"
               "  peers               One line per measured path to a peer\n"
               "  probe ADDRESS       Measure the path to ADDRESS now and print the result\n"
               "  metrics             Everything in the Prometheus text format\n"
               "  snapshot            Everything as one JSON document (for schedulers)\n"
               "  rdma                One line per RDMA port\n"
               "  thunderbolt, tree   The Thunderbolt/USB4 tree: hosts, docks, devices, peers\n"
               "                      (-a: retimers too)\n"
               "  gpu                 One line per GPU: inventory and measured throughput\n"
               "  probe gpu           Measure the GPUs now, wait and print the result\n"
               "  topo                How GPUs, NICs and HCAs reach each other over PCIe (affinity)\n"
               "                      (--svg, --png: a picture of the node and its links)\n"
               "  inhibit [--] CMD... Run CMD while holding off GPU/RDMA probes; its exit status\n"
               "  inhibitors          Who holds off probes now (also: inhibit --list)\n"
               "  fabric              Which node is at the other end of every link, each edge\n"
               "                      (--dot: Graphviz; --svg, --png: a picture;\n"
               "                      --prometheus=URL or --snapshots FILE...: the whole cluster)\n"
               "  fabric ring         The order of the nodes whose slowest hop is fastest, rank 0\n"
               "                      first (--hostfile=mlx: MLX's launcher host file)\n"
               "  fabric coordinator  The node every other node reaches best (rank 0)\n"
               "  fabric topology     The switch tree: Slurm's topology.conf, Kubernetes labels or\n"
               "                      JSON (--format=)\n"
               "  fabric verify       Compare a topology.conf with the fabric (--slurm=FILE)\n"
               "\nOptions:\n"
               "  -h --help              Show this help\n"
               "     --version           Show the version\n"
               "     --json[=pretty|short|off]\n"
               "                         Print JSON (monitor: one object per line)\n"
               "     --no-legend         Omit table headers and the closing count\n"
               "     --no-pager          Do not pipe the output into a pager\n"
               "     --color=auto|always|never\n"
               "                         Colour states (default: on a terminal, unless NO_COLOR)\n"
               "  -l --full              Do not ellipsize or shorten anything\n"
               "  -a --all               Show what is hidden by default\n"
               "     --system            Talk to the system bus (default; as root, see\n"
               "                         --private-socket=)\n"
               "     --user              Talk to the user's session bus\n"
               "     --bus-address=ADDR  Talk to the bus at ADDR\n"
               "     --private-socket=PATH  Talk to linkprobed directly on PATH (root; default as\n"
               "                         root: " BUS_PRIVATE_SOCKET " if served, else the bus)\n"
               "     --transport=tcp|rdma  probe ADDRESS: what to measure (default tcp);\n"
               "                         fabric ring: what the ring runs over (default: the faster)\n"
               "     --timeout=TIME      probe: how long to wait for the result\n"
               "                         (default 60s for a peer, 300s for the GPUs)\n"
               "     --what=gpu|rdma|gpu:rdma  inhibit: what to hold off (default gpu)\n"
               "     --who=TEXT --why=TEXT     inhibit: who holds it and why (shown to others)\n"
               "     --dot               fabric: print the graph for Graphviz\n"
               "     --svg, --png        topo, fabric: draw a picture (SVG on stdout; PNG needs\n"
               "                         --output= or a pipe)\n"
               "     --output=FILE       --svg, --png: write the picture to FILE\n"
               "     --prometheus=URL    fabric: the whole cluster, from a Prometheus server's API\n"
               "                         (http[s]://; a proxy from https_proxy, no_proxy)\n"
               "     --prometheus-ca-file=FILE  its https:// certificate's CA\n"
               "     --prometheus-user=USER --prometheus-password-file=FILE\n"
               "                         basic authentication (or http://USER:PASSWORD@HOST)\n"
               "     --prometheus-token-file=FILE  bearer authentication\n"
               "     --tolerance=PERCENT fabric: how far two ends may differ before it is said\n"
               "                         (default 25)\n"
               "     --snapshots         fabric: the arguments are snapshot files, one per node\n"
               "     --nodes=NAME,...    fabric ring, coordinator: only these nodes (hostnames or\n"
               "                         NodeIds; default all)\n"
               "     --hostfile=mlx      fabric ring: print MLX's launcher host file\n"
               "     --backend=ring|jaccl|jaccl-ring\n"
               "                         fabric ring --hostfile=mlx: the MLX backend (default: JACCL\n"
               "                         over RDMA, else ring)\n"
               "     --format=slurm|slurm-block|k8s-labels|json\n"
               "                         fabric topology: what to write (default slurm)\n"
               "     --slurm=FILE        fabric verify: the topology.conf to compare\n"
               "\nExit status: 0 on success, 1 on failure (daemon not running, no such link, a\n"
               "refused call), 2 on bad usage. See linkprobectl(1).\n");
}

#define SYSTEM_BUS_ADDRESS_DEFAULT "unix:path=/run/dbus/system_bus_socket"

/* One sentence: which bus could not be reached, why, and what to do. Without a system bus (a container,
 * a machine where only `make run` ran the daemon, on a bus of its own) the way out is to start one, or
 * to say where the daemon is. */
static void log_connect_error(int r) {
        _cleanup_(freep) char *address = NULL;

        switch (arg_bus) {
        case BUS_PRIVATE:
                address = escape_for_terminal(arg_private_socket);
                fprintf(stderr,
                        "Cannot connect to linkprobed's private socket %s (%s): it is for root, and "
                        "linkprobed serves it when started by systemd (linkprobed-private.socket) or with "
                        "--private-socket=PATH.\n",
                        strna(address), strerror(-r));
                return;
        case BUS_AUTO:
        case BUS_SYSTEM:
                /* sd-bus's own default when $DBUS_SYSTEM_BUS_ADDRESS is unset. */
                address = escape_for_terminal(getenv("DBUS_SYSTEM_BUS_ADDRESS") ?: SYSTEM_BUS_ADDRESS_DEFAULT);
                fprintf(stderr,
                        "Cannot connect to the system bus at %s (%s): start D-Bus and linkprobed "
                        "(systemctl start linkprobed), or point linkprobectl at the bus linkprobed runs on "
                        "with --bus-address=ADDRESS or --user.\n",
                        strna(address), strerror(-r));
                return;
        case BUS_USER:
                fprintf(stderr,
                        "Cannot connect to your session bus (%s): run linkprobed --user in your session, "
                        "or point linkprobectl at the bus linkprobed runs on with --bus-address=ADDRESS "
                        "or --system.\n",
                        strerror(-r));
                return;
        case BUS_ADDRESS:
                address = escape_for_terminal(arg_bus_address);
                fprintf(stderr,
                        "Cannot connect to the given bus at %s (%s): give the address linkprobed was "
                        "started with (linkprobed --bus-address=), or use --system or --user.\n",
                        strna(address), strerror(-r));
                return;
        }
}

/* A peer-to-peer connection to linkprobed's private socket: no bus, so no Hello and no name. */
static int connect_private(const char *path, sd_bus **ret) {
        _cleanup_(sd_bus_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(closep) int fd = -EBADF;
        struct sockaddr_un sa;
        int r;

        r = socket_unix_address(path, &sa);
        if (r < 0)
                return r;
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                return -errno;
        r = sd_bus_new(&bus);
        if (r < 0)
                return r;
        r = sd_bus_set_fd(bus, fd, fd);
        if (r < 0)
                return r;
        TAKE_FD(fd);
        r = sd_bus_start(bus);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(bus);
        return 0;
}

static int connect_bus(const Verb *verb, sd_bus **ret) {
        sd_bus *bus = NULL;
        int r;

        /* As systemctl does with systemd's: root asks linkprobed straight, without a broker reading
         * and checking every byte of a large answer on the way. Where the socket is not served, the
         * bus answers the same. */
        if (arg_bus == BUS_AUTO && !verb->bus_only && geteuid() == 0 && connect_private(arg_private_socket, &bus) >= 0) {
                *ret = bus;
                return 0;
        }

        switch (arg_bus) {
        case BUS_PRIVATE:
                r = connect_private(arg_private_socket, &bus);
                break;
        case BUS_AUTO:
        case BUS_SYSTEM:
                r = sd_bus_open_system(&bus);
                break;
        case BUS_USER:
                r = sd_bus_open_user(&bus);
                break;
        case BUS_ADDRESS:
                r = sd_bus_new(&bus);
                if (r >= 0)
                        r = sd_bus_set_address(bus, arg_bus_address);
                if (r >= 0)
                        r = sd_bus_set_bus_client(bus, true);
                if (r >= 0)
                        r = sd_bus_start(bus);
                break;
        default:
                r = -EINVAL;
        }
        if (r < 0) {
                log_connect_error(r);
                sd_bus_unref(bus);
                return r;
        }
        *ret = bus;
        return 0;
}

static int parse_json_mode(const char *s) {
        if (!s)
                arg_json = JSON_AUTO;
        else if (streq(s, "pretty"))
                arg_json = JSON_PRETTY;
        else if (streq(s, "short"))
                arg_json = JSON_SHORT;
        else if (streq(s, "off"))
                arg_json = JSON_OFF;
        else {
                fprintf(stderr, "--json= takes pretty, short or off.\n");
                return -CTL_EXIT_USAGE;
        }
        return 0;
}

static int parse_colour_mode(const char *s) {
        if (streq(s, "auto"))
                arg_colour = COLOUR_AUTO;
        else if (streq(s, "always") || streq(s, "yes"))
                arg_colour = COLOUR_ALWAYS;
        else if (streq(s, "never") || streq(s, "no"))
                arg_colour = COLOUR_NEVER;
        else {
                fprintf(stderr, "--color= takes auto, always or never.\n");
                return -CTL_EXIT_USAGE;
        }
        return 0;
}

static int parse_argv(int argc, char *argv[]) {
        enum {
                ARG_VERSION = 0x100,
                ARG_JSON,
                ARG_NO_LEGEND,
                ARG_NO_PAGER,
                ARG_COLOR,
                ARG_SYSTEM,
                ARG_USER,
                ARG_BUS_ADDRESS,
                ARG_PRIVATE_SOCKET,
                ARG_TRANSPORT,
                ARG_TIMEOUT,
                ARG_WHAT,
                ARG_WHO,
                ARG_WHY,
                ARG_DOT,
                ARG_PROMETHEUS,
                ARG_PROMETHEUS_CA_FILE,
                ARG_PROMETHEUS_USER,
                ARG_PROMETHEUS_PASSWORD_FILE,
                ARG_PROMETHEUS_TOKEN_FILE,
                ARG_TOLERANCE,
                ARG_LIST,
                ARG_SNAPSHOTS,
                ARG_NODES,
                ARG_HOSTFILE,
                ARG_BACKEND,
                ARG_SVG,
                ARG_PNG,
                ARG_OUTPUT,
                ARG_FORMAT,
                ARG_SLURM,
        };
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },
                { "json", optional_argument, NULL, ARG_JSON },
                { "no-legend", no_argument, NULL, ARG_NO_LEGEND },
                { "no-pager", no_argument, NULL, ARG_NO_PAGER },
                { "color", required_argument, NULL, ARG_COLOR },
                { "full", no_argument, NULL, 'l' },
                { "all", no_argument, NULL, 'a' },
                { "system", no_argument, NULL, ARG_SYSTEM },
                { "user", no_argument, NULL, ARG_USER },
                { "bus-address", required_argument, NULL, ARG_BUS_ADDRESS },
                { "private-socket", required_argument, NULL, ARG_PRIVATE_SOCKET },
                { "transport", required_argument, NULL, ARG_TRANSPORT },
                { "timeout", required_argument, NULL, ARG_TIMEOUT },
                { "what", required_argument, NULL, ARG_WHAT },
                { "who", required_argument, NULL, ARG_WHO },
                { "why", required_argument, NULL, ARG_WHY },
                { "dot", no_argument, NULL, ARG_DOT },
                { "prometheus", required_argument, NULL, ARG_PROMETHEUS },
                { "prometheus-ca-file", required_argument, NULL, ARG_PROMETHEUS_CA_FILE },
                { "prometheus-user", required_argument, NULL, ARG_PROMETHEUS_USER },
                { "prometheus-password-file", required_argument, NULL, ARG_PROMETHEUS_PASSWORD_FILE },
                { "prometheus-token-file", required_argument, NULL, ARG_PROMETHEUS_TOKEN_FILE },
                { "tolerance", required_argument, NULL, ARG_TOLERANCE },
                { "list", no_argument, NULL, ARG_LIST },
                { "snapshots", no_argument, NULL, ARG_SNAPSHOTS },
                { "nodes", required_argument, NULL, ARG_NODES },
                { "hostfile", required_argument, NULL, ARG_HOSTFILE },
                { "backend", required_argument, NULL, ARG_BACKEND },
                { "svg", no_argument, NULL, ARG_SVG },
                { "png", no_argument, NULL, ARG_PNG },
                { "output", required_argument, NULL, ARG_OUTPUT },
                { "format", required_argument, NULL, ARG_FORMAT },
                { "slurm", required_argument, NULL, ARG_SLURM },
                {},
        };
        int c, r;

        opterr = 0;
        /* "+" stops at the verb; options that followed it were moved before it (hoist_options). */
        while ((c = getopt_long(argc, argv, "+:hla", options, NULL)) >= 0) {
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case ARG_VERSION:
                        printf("linkprobectl %s\n", VERSION);
                        return 0;
                case ARG_JSON:
                        r = parse_json_mode(optarg);
                        if (r < 0)
                                return r;
                        break;
                case ARG_NO_LEGEND:
                        arg_legend = false;
                        break;
                case ARG_NO_PAGER:
                        arg_no_pager = true;
                        break;
                case ARG_COLOR:
                        r = parse_colour_mode(optarg);
                        if (r < 0)
                                return r;
                        break;
                case 'l':
                        arg_full = true;
                        break;
                case 'a':
                        arg_all = true;
                        break;
                case ARG_SYSTEM:
                        arg_bus = BUS_SYSTEM;
                        break;
                case ARG_PRIVATE_SOCKET:
                        if (optarg[0] != '/') {
                                fprintf(stderr, "--private-socket= needs an absolute path.\n");
                                return -CTL_EXIT_USAGE;
                        }
                        arg_bus = BUS_PRIVATE;
                        arg_private_socket = optarg;
                        break;
                case ARG_USER:
                        arg_bus = BUS_USER;
                        break;
                case ARG_BUS_ADDRESS:
                        if (isempty(optarg)) {
                                fprintf(stderr, "--bus-address= needs an address.\n");
                                return -CTL_EXIT_USAGE;
                        }
                        arg_bus = BUS_ADDRESS;
                        arg_bus_address = optarg;
                        break;
                case ARG_TRANSPORT:
                        if (!streq(optarg, "tcp") && !streq(optarg, "rdma")) {
                                fprintf(stderr, "--transport= takes tcp or rdma.\n");
                                return -CTL_EXIT_USAGE;
                        }
                        arg_probe_transport = optarg;
                        break;
                case ARG_TIMEOUT:
                        if (parse_duration_usec(optarg, &arg_timeout_usec) < 0 || arg_timeout_usec == 0) {
                                fprintf(stderr, "--timeout= needs a positive duration, such as 60 or 5min.\n");
                                return -CTL_EXIT_USAGE;
                        }
                        break;
                case ARG_WHAT:
                        arg_what = optarg;
                        break;
                case ARG_WHO:
                        arg_who = optarg;
                        break;
                case ARG_WHY:
                        arg_why = optarg;
                        break;
                case ARG_DOT:
                        arg_dot = true;
                        break;
                case ARG_PROMETHEUS:
                        arg_prometheus = optarg;
                        break;
                case ARG_PROMETHEUS_CA_FILE:
                        arg_prometheus_ca_file = optarg;
                        break;
                case ARG_PROMETHEUS_USER:
                        arg_prometheus_user = optarg;
                        break;
                case ARG_PROMETHEUS_PASSWORD_FILE:
                        arg_prometheus_password_file = optarg;
                        break;
                case ARG_PROMETHEUS_TOKEN_FILE:
                        arg_prometheus_token_file = optarg;
                        break;
                case ARG_TOLERANCE: {
                        char *end = NULL;
                        errno = 0;
                        arg_tolerance = strtod(optarg, &end);
                        if (errno != 0 || end == optarg || (*end && !streq(end, "%")) || !(arg_tolerance >= 0) ||
                            arg_tolerance > 1000) {
                                fprintf(stderr, "--tolerance= takes a percentage from 0 to 1000, such as 25.\n");
                                return -CTL_EXIT_USAGE;
                        }
                        break;
                }
                case ARG_LIST:
                        arg_list = true;
                        break;
                case ARG_SNAPSHOTS:
                        arg_snapshots = true;
                        break;
                case ARG_NODES:
                        if (strspn(optarg, ", ") == strlen(optarg)) {
                                fprintf(stderr, "--nodes= needs hostnames or NodeIds, separated by commas.\n");
                                return -CTL_EXIT_USAGE;
                        }
                        arg_nodes = optarg;
                        break;
                case ARG_HOSTFILE:
                        if (!streq(optarg, "mlx")) {
                                fprintf(stderr, "--hostfile= takes mlx (the host file of MLX's launcher, mlx.launch).\n");
                                return -CTL_EXIT_USAGE;
                        }
                        arg_hostfile = optarg;
                        break;
                case ARG_BACKEND:
                        if (!streq(optarg, "ring") && !streq(optarg, "jaccl") && !streq(optarg, "jaccl-ring")) {
                                fprintf(stderr, "--backend= takes ring, jaccl or jaccl-ring.\n");
                                return -CTL_EXIT_USAGE;
                        }
                        arg_backend = optarg;
                        break;
                case ARG_FORMAT:
                        if (!streq(optarg, "slurm") && !streq(optarg, "slurm-block") && !streq(optarg, "k8s-labels") &&
                            !streq(optarg, "json")) {
                                fprintf(stderr, "--format= takes slurm, slurm-block, k8s-labels or json.\n");
                                return -CTL_EXIT_USAGE;
                        }
                        arg_topology_format = optarg;
                        break;
                case ARG_SLURM:
                        arg_slurm = optarg;
                        break;
                case ARG_SVG:
                case ARG_PNG:
                        if (arg_draw != DRAW_NONE && arg_draw != (c == ARG_SVG ? DRAW_SVG : DRAW_PNG)) {
                                fprintf(stderr, "--svg and --png are two formats of the picture: pick one.\n");
                                return -CTL_EXIT_USAGE;
                        }
                        arg_draw = c == ARG_SVG ? DRAW_SVG : DRAW_PNG;
                        break;
                case ARG_OUTPUT:
                        if (isempty(optarg)) {
                                fprintf(stderr, "--output= needs a file name.\n");
                                return -CTL_EXIT_USAGE;
                        }
                        arg_output = optarg;
                        break;
                case ':':
                        fprintf(stderr, "Option %s needs an argument. See --help.\n", argv[optind - 1]);
                        return -CTL_EXIT_USAGE;
                case '?': {
                        _cleanup_(freep) char *escaped = escape_for_terminal(argv[optind - 1]);
                        if (optopt > 0 && optopt < 0x100 && argv[optind - 1][1] != '-')
                                fprintf(stderr, "Unknown option -%c. See --help.\n", optopt);
                        else
                                fprintf(stderr, "Unknown option %s. See --help.\n", strna(escaped));
                        return -CTL_EXIT_USAGE;
                }
                }
        }
        return 1;
}

/* Options with their value in the next word: the value stays with them when hoisted. */
static bool takes_separate_value(const char *arg) {
        static const char *const with_value[] = { "--bus-address", "--transport", "--timeout", "--color",
                                                  "--what", "--who", "--why", "--prometheus", "--tolerance",
                                                  "--nodes", "--hostfile", "--backend", "--output", "--format", "--slurm",
                                                  "--prometheus-ca-file", "--prometheus-user",
                                                  "--prometheus-password-file", "--prometheus-token-file" };
        for (size_t i = 0; i < ELEMENTSOF(with_value); i++)
                if (streq(arg, with_value[i]))
                        return true;
        return false;
}

/* Options may also follow the verb ("linkprobectl list --json"): reorder argv into program, options,
 * verb, arguments. After "--" everything is an argument (a link may be named "-x"). Returns the new
 * argc. */
static int hoist_options(int argc, char *argv[]) {
        _cleanup_(freep) char **options = new0(char *, argc + 1), **rest = new0(char *, argc + 1);
        int n_options = 0, n_rest = 0;
        bool dashdash = false;

        if (!options || !rest)
                return argc;
        for (int i = 1; i < argc; i++) {
                if (!dashdash && streq(argv[i], "--")) {
                        dashdash = true;
                        continue;
                }
                if (dashdash || argv[i][0] != '-' || streq(argv[i], "-")) {
                        rest[n_rest++] = argv[i];
                        continue;
                }
                options[n_options++] = argv[i];
                if (takes_separate_value(argv[i]) && i + 1 < argc)
                        options[n_options++] = argv[++i];
        }
        int n = 1;
        for (int i = 0; i < n_options; i++)
                argv[n++] = options[i];
        if (n_rest > 0 && dashdash) {
                /* Keep getopt from reading an argument like "-x" as an option. */
                argv[n++] = (char *) "--";
        }
        for (int i = 0; i < n_rest; i++)
                argv[n++] = rest[i];
        argv[n] = NULL;
        return n;
}

static int find_verb(int n, char **args, const Verb **ret) {
        const Verb *verb = NULL;

        if (n == 0) {
                /* Like networkctl: no verb means "list". */
                *ret = &verbs[1];
                return 0;
        }
        for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
                if (streq(args[0], verbs[i].name))
                        verb = &verbs[i];
        if (!verb) {
                _cleanup_(freep) char *escaped = escape_for_terminal(args[0]);
                fprintf(stderr, "Unknown command \"%s\". See --help.\n", strna(escaped));
                return CTL_EXIT_USAGE;
        }
        if (arg_list) {
                /* "inhibit --list" is "inhibitors", as systemd-inhibit --list is. */
                if (!streq(verb->name, "inhibit")) {
                        fprintf(stderr, "--list belongs to \"inhibit\". See --help.\n");
                        return CTL_EXIT_USAGE;
                }
                if (n > 1) {
                        fprintf(stderr, "\"inhibit --list\" takes no command. See --help.\n");
                        return CTL_EXIT_USAGE;
                }
                for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
                        if (streq(verbs[i].name, "inhibitors"))
                                verb = &verbs[i];
                *ret = verb;
                return 0;
        }
        if (n < verb->min_args) {
                fprintf(stderr, "\"%s\" needs more arguments. See --help.\n", verb->name);
                return CTL_EXIT_USAGE;
        }
        if (verb->max_args >= 0 && n > verb->max_args) {
                fprintf(stderr, "\"%s\" takes no further arguments. See --help.\n", verb->name);
                return CTL_EXIT_USAGE;
        }
        *ret = verb;
        return 0;
}

int main(int argc, char *argv[]) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        static char *list_argv[] = { (char *) "list", NULL };
        const Verb *verb = NULL;
        char **args;
        int r, n;

        /* Local time (monitor, show) in the user's zone; text stays in the C locale's plain ASCII rules. */
        setlocale(LC_TIME, "");
        argc = hoist_options(argc, argv);
        r = parse_argv(argc, argv);
        if (r <= 0)
                return -r;

        n = argc - optind;
        args = n == 0 ? list_argv : argv + optind;
        r = find_verb(n, args, &verb);
        if (r != 0)
                return r;
        n = MAX(n, 1);
        /* Whatever can be judged without the daemon is judged first: a usage error never waits for it. */
        r = draw_check_args(verb->name, n, args);
        if (r != 0)
                return r;
        if (verb->check) {
                r = verb->check(n, args);
                if (r != 0)
                        return r;
        }

        if (!verb->no_bus || !verb->no_bus()) {
                r = connect_bus(verb, &bus);
                if (r < 0)
                        return CTL_EXIT_FAILURE;
        }

        /* A picture goes whole to a file or a program, never to a pager. */
        if (verb->pager && arg_draw == DRAW_NONE)
                (void) ctl_pager_open();
        r = verb->run(bus, n, args);
        ctl_pager_close();
        return r;
}
