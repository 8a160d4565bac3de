/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* derive-link.h — what a network link is once Thunderbolt peers and RDMA ports are known */
#pragma once

#include "shared/macros.h"

typedef struct Link Link;
typedef struct Links Links;
typedef struct Rdma Rdma;
typedef struct Summary Summary;
typedef struct Thunderbolt Thunderbolt;

/* The cross-links of every link with Thunderbolt peers and RDMA ports, and every link's SpeedMbps and
 * ConnectionType: after links, the tree or the ports moved. thunderbolt_changed: the tree was rebuilt,
 * so links its services name are checked against sysfs again. */
void derive_links_relink(Links *links, Thunderbolt *tbt, Rdma *rdma, Summary *summary, bool thunderbolt_changed);
/* One link the sources marked: its SpeedMbps, the RoCE port that follows it, and FastestLink. */
void derive_link_changed(Links *links, Rdma *rdma, Summary *summary, Link *l);
/* Both ends' link modes for one link (derive-link.c): its facts judged (link-capability.c) and the
 * properties that moved announced. After its SpeedMbps, before its Health. */
void derive_link_capability(Link *l);
