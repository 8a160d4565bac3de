/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* config.h — linkprobed.conf: an INI file read with inih, one table of known keys */
#pragma once

#include "config-fabric.h"
#include "config-health.h"
#include "config-inhibit.h"
#include "config-peers.h"
#include "fabric-sweep.h"
#include "health.h"
#include "shared/macros.h"

typedef struct Config {
        /* [Daemon] */
        int log_level;                  /* LogLevel=, -1 = not set */
        char *privileged_group;         /* PrivilegedGroup=, NULL = "linkprobe" */
        /* [Netlink] */
        uint64_t netlink_rcvbuf;        /* ReceiveBufferBytes= */
        /* [Udev] */
        uint64_t udev_rcvbuf;           /* ReceiveBufferBytes= */
        /* [Metrics] */
        char *metrics_textfile_directory;        /* TextfileDirectory=, NULL = off */
        uint64_t metrics_textfile_interval_usec; /* TextfileIntervalSec= */
        char *metrics_listen;                    /* ListenAddress=, NULL = off */
        /* [Watch] */
        uint64_t watch_interval_usec;   /* IntervalSec=, 0 = off */
        /* [Health]: re-read on SIGHUP (manager.c) */
        HealthLimits health;
        /* [Memory] */
        uint64_t memory_poll_usec;      /* PollIntervalSec=, 0 = off */
        unsigned memory_change_percent; /* ChangeThresholdPercent= of TotalBytes */
        /* [Peers], [Reconciler], [Responder] */
        PeersConfig peers;
        /* [Inhibit] */
        InhibitConfig inhibit;
        /* [Gpu] */
        bool gpu_enabled;               /* Enabled= */
        uint64_t gpu_ttl_usec;          /* TTLSec=, 0 = measure only when nothing is known */
        uint64_t gpu_randomized_delay_usec; /* RandomizedDelaySec= */
        uint64_t gpu_deadline_usec;     /* DeadlineSec= */
        bool gpu_quick;                 /* Quick= (tests: rough figures, fast) */
        /* [Fabric] */
        bool fabric_sweep;              /* Sweep= */
        FabricSweepConfig fabric;       /* SweepIntervalSec=, SweepTimeoutSec=, MaxSwitches= */
} Config;

void config_init(Config *c);
void config_done(Config *c);

/*
 * Reads path into c. A missing file is fine when must_exist is false (the default path).
 * Errors are logged as "path:line: reason" and returned: -ENOENT/-EACCES (unreadable),
 * -EINVAL (bad value or syntax).
 */
int config_load(Config *c, const char *path, bool must_exist);
