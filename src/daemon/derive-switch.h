/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* derive-switch.h — which switch each link is cabled to, from the switches' ports */
#pragma once

typedef struct Links Links;
typedef struct Rdma Rdma;
typedef struct Switches Switches;

/* Every Link's Switch and LldpPartnerSpeedsMbps: after links or switches' ports came, went or moved.
 * A link that hears several switches (a hub, a shared segment) names the first by key. */
void derive_links_switch(Links *links, Switches *switches);
/* Every RdmaPort's Switch: the switch one of whose ports faces it (an InfiniBand neighbour that is a
 * switch, rdma-remote.c). */
void derive_rdma_ports_switch(Rdma *rdma, Switches *switches);
