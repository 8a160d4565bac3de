/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* linkprobed — publishes this machine's interconnects on D-Bus. */
#include <getopt.h>
#include <sys/stat.h>

#include "build-paths.h"
#include "config.h"
#include "heap.h"
#include "manager-bus.h"
#include "manager.h"
#include "shared/log.h"
#include "shared/parse-util.h"

/* Exit codes: 1 runtime failure, 2 bad usage (as getopt tools do), 78 bad configuration (EXIT_CONFIG). */
#define EXIT_USAGE 2
#define EXIT_CONFIG 78

/* From the build's directories (build-paths.h): only this file and those that embed a path are
 * recompiled when PREFIX changes. */
#define CONFIG_DEFAULT_PATH SYSCONFDIR "/linkprobe/linkprobed.conf"

static void help(void) {
        printf("Usage: linkprobed [OPTIONS]\n\n"
               "Publishes this machine's network links, Thunderbolt/USB4 topology, RDMA ports, GPUs and\n"
               "measured peer links on D-Bus as org.linkprobe.LinkProbe1.\n\n"
               "  -h --help              Show this help\n"
               "     --version           Show the version\n"
               "     --system            Connect to the system bus (default)\n"
               "     --user              Connect to the user's session bus\n"
               "     --bus-address=ADDR  Connect to the bus at ADDR (D-Bus address syntax)\n"
               "     --config=FILE       Read FILE instead of %s\n"
               "     --sysfs-root=DIR    Read sysfs below DIR instead of /sys (tests)\n"
               "     --state-directory=DIR  Keep results in DIR (default: $STATE_DIRECTORY or\n"
               "                         " LOCALSTATEDIR "/lib/linkprobe)\n"
               "     --log-level=LEVEL   err, warning, notice, info (default) or debug\n"
               "     --private-socket=PATH  Serve root's direct connections on PATH (default: the\n"
               "                         socket systemd passes, if any)\n"
               "\nSee linkprobed(8) and linkprobed.conf(5).\n",
               CONFIG_DEFAULT_PATH);
}

enum {
        ARG_VERSION = 0x100,
        ARG_SYSTEM,
        ARG_USER,
        ARG_BUS_ADDRESS,
        ARG_CONFIG,
        ARG_SYSFS_ROOT,
        ARG_LOG_LEVEL,
        ARG_STATE_DIRECTORY,
        ARG_NETLINK_RCVBUF,
        ARG_PRIVATE_SOCKET,
};

typedef struct Arguments {
        ManagerOptions options;
        const char *config_path;
        int log_level;
} Arguments;

/* Returns 1 to run, 0 to exit successfully (help, version), EXIT_USAGE on bad arguments. */
static int parse_argv(int argc, char *argv[], Arguments *args) {
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },
                { "system", no_argument, NULL, ARG_SYSTEM },
                { "user", no_argument, NULL, ARG_USER },
                { "bus-address", required_argument, NULL, ARG_BUS_ADDRESS },
                { "config", required_argument, NULL, ARG_CONFIG },
                { "sysfs-root", required_argument, NULL, ARG_SYSFS_ROOT },
                { "log-level", required_argument, NULL, ARG_LOG_LEVEL },
                { "state-directory", required_argument, NULL, ARG_STATE_DIRECTORY },
                /* Not documented: lets tests provoke netlink overruns with a tiny buffer. */
                { "netlink-rcvbuf", required_argument, NULL, ARG_NETLINK_RCVBUF },
                { "private-socket", required_argument, NULL, ARG_PRIVATE_SOCKET },
                {},
        };
        int c;

        opterr = 0;
        while ((c = getopt_long(argc, argv, ":h", options, NULL)) >= 0) {
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case ARG_VERSION:
                        printf("linkprobed %s\n", VERSION);
                        return 0;
                case ARG_SYSTEM:
                        args->options.bus = BUS_CONNECTION_SYSTEM;
                        break;
                case ARG_USER:
                        args->options.bus = BUS_CONNECTION_USER;
                        break;
                case ARG_BUS_ADDRESS:
                        if (isempty(optarg)) {
                                log_error("--bus-address= needs an address, such as unix:path=/run/dbus/system_bus_socket.");
                                return EXIT_USAGE;
                        }
                        args->options.bus = BUS_CONNECTION_ADDRESS;
                        args->options.bus_address = optarg;
                        break;
                case ARG_CONFIG:
                        if (isempty(optarg)) {
                                log_error("--config= needs a file name.");
                                return EXIT_USAGE;
                        }
                        args->config_path = optarg;
                        break;
                case ARG_SYSFS_ROOT:
                        if (isempty(optarg)) {
                                log_error("--sysfs-root= needs a directory.");
                                return EXIT_USAGE;
                        }
                        args->options.sysfs_root = optarg;
                        break;
                case ARG_STATE_DIRECTORY:
                        if (isempty(optarg)) {
                                log_error("--state-directory= needs a directory.");
                                return EXIT_USAGE;
                        }
                        args->options.state_directory = optarg;
                        break;
                case ARG_PRIVATE_SOCKET:
                        if (optarg[0] != '/') {
                                log_error("--private-socket= needs an absolute path.");
                                return EXIT_USAGE;
                        }
                        args->options.private_socket = optarg;
                        break;
                case ARG_LOG_LEVEL:
                        args->log_level = log_level_from_string(optarg);
                        if (args->log_level < 0) {
                                log_error("Unknown log level \"%s\": use err, warning, notice, info or debug.", optarg);
                                return EXIT_USAGE;
                        }
                        break;
                case ARG_NETLINK_RCVBUF: {
                        uint64_t v;
                        if (parse_size(optarg, &v) < 0 || v == 0) {
                                log_error("Invalid --netlink-rcvbuf=%s: expected a size in bytes.", optarg);
                                return EXIT_USAGE;
                        }
                        args->options.netlink_rcvbuf = v;
                        break;
                }
                case ':':
                        log_error("Option %s needs an argument. See --help.", argv[optind - 1]);
                        return EXIT_USAGE;
                case '?':
                        if (optopt)
                                log_error("Unknown option -%c. See --help.", optopt);
                        else
                                log_error("Unknown option %s. See --help.", argv[optind - 1]);
                        return EXIT_USAGE;
                }
        }
        if (optind < argc) {
                log_error("Unexpected argument \"%s\": linkprobed takes only options. See --help.", argv[optind]);
                return EXIT_USAGE;
        }
        return 1;
}

int main(int argc, char *argv[]) {
        _cleanup_(manager_freep) Manager *m = NULL;
        Arguments args = { .log_level = -1 };
        Config config;
        int r;

        heap_configure();

        r = parse_argv(argc, argv, &args);
        if (r != 1)
                return r;

        config_init(&config);
        r = config_load(&config, args.config_path ?: CONFIG_DEFAULT_PATH, args.config_path != NULL);
        if (r < 0)
                return EXIT_CONFIG;
        if (args.log_level >= 0)
                log_set_max_level(args.log_level);
        else if (config.log_level >= 0)
                log_set_max_level(config.log_level);

        args.options.config_path = args.config_path ?: CONFIG_DEFAULT_PATH;
        args.options.config_must_exist = args.config_path != NULL;
        r = manager_new(&config, &args.options, &m);
        if (r < 0)
                return EXIT_FAILURE;
        r = manager_connect(m);
        if (r < 0)
                return EXIT_FAILURE;
        r = manager_bus_register(m);
        if (r < 0) {
                log_error_errno(r, "Failed to register the bus objects: %m");
                return EXIT_FAILURE;
        }
        r = manager_start(m);
        if (r < 0)
                return EXIT_FAILURE;
        /* Clients that connect earlier wait in the socket's backlog (systemd's) or find no socket yet
         * and use the bus (ours). */
        r = manager_bus_start_private(m);
        if (r < 0)
                return EXIT_FAILURE;
        r = manager_run(m);
        return r == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
