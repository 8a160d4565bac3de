/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rdma-mad.h — InfiniBand subnet management queries (libibumad, libibmad) on a worker thread: the CAs libibumad knows, and each port's neighbour */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "ib-smp.h"
#include "shared/macros.h"

/*
 * A query waits for the neighbour's subnet management agent: up to RDMA_MAD_TIMEOUT_MS per try,
 * RDMA_MAD_RETRIES more tries, per attribute. One worker thread sends them, one port after another;
 * the loop sends it requests and gets the raw answers back (ib-smp.c decodes them there), so a dead
 * neighbour holds up nothing but the queries behind it.
 */
#define RDMA_MAD_TIMEOUT_MS 250
#define RDMA_MAD_RETRIES 2
#define RDMA_MAD_NAME_MAX 64
#define RDMA_MAD_PORTS_MAX 16

typedef struct RdmaMad RdmaMad;

/* One port of a CA as libibumad reads it (its sysfs, or ibsim's umad2sim in its place). */
typedef struct RdmaMadCaPort {
        unsigned number;
        int state, phys_state; /* the specification's numbers */
        unsigned lid, sm_lid;
        uint32_t cap_mask;
        char link_layer[RDMA_MAD_NAME_MAX];
} RdmaMadCaPort;

typedef struct RdmaMadCa {
        char name[RDMA_MAD_NAME_MAX];
        int node_type; /* 1 CA, 2 switch, 3 router */
        uint64_t node_guid, sys_image_guid;
        char fw_ver[RDMA_MAD_NAME_MAX], ca_type[RDMA_MAD_NAME_MAX], hw_ver[RDMA_MAD_NAME_MAX];
        size_t n_ports;
        RdmaMadCaPort ports[RDMA_MAD_PORTS_MAX];
} RdmaMadCa;

/* What one port query found, raw. */
typedef struct RdmaMadAnswer {
        char ca[RDMA_MAD_NAME_MAX];
        unsigned port;
        uint64_t seq;
        /* 0; -ENODEV: the port cannot be opened for MADs; -ETIMEDOUT: no answer to `failed`; -EREMOTEIO:
         * an answer with an error status (`status`). */
        int error;
        char failed[32]; /* the attribute that got no answer: "NodeInfo" */
        unsigned status;
        bool has_local;  /* local_port_info holds our port's PortInfo */
        bool has_remote; /* the neighbour's NodeInfo, NodeDescription and PortInfo (all three) */
        bool has_remote_port0; /* a switch neighbour's port 0 PortInfo (its capability masks) */
        bool changed;    /* our port's PortInfo was different after the neighbour's answers: it flapped */
        uint8_t local_port_info[IB_SMP_DATA_SIZE];
        uint8_t node_info[IB_SMP_DATA_SIZE];
        uint8_t node_description[IB_SMP_DATA_SIZE];
        uint8_t remote_port_info[IB_SMP_DATA_SIZE];
        uint8_t remote_port0_info[IB_SMP_DATA_SIZE];
} RdmaMadAnswer;

/* The CAs libibumad lists (error: a negative errno when it cannot list them; then n is 0). */
typedef void (*rdma_mad_cas_t)(void *userdata, const RdmaMadCa *cas, size_t n, int error);
typedef void (*rdma_mad_port_t)(void *userdata, const RdmaMadAnswer *a);

int rdma_mad_new(sd_event *event, rdma_mad_cas_t cas, rdma_mad_port_t port, void *userdata, RdmaMad **ret);
RdmaMad *rdma_mad_free(RdmaMad *m);
DEFINE_TRIVIAL_CLEANUP_FUNC(RdmaMad *, rdma_mad_free);

/* Queues a listing of libibumad's CAs; the answer comes through cas(). */
int rdma_mad_list_cas(RdmaMad *m);
/* Queues the queries of one port and its neighbour; the answer, carrying seq, comes through port().
 * -EAGAIN when the queue is full. */
int rdma_mad_query_port(RdmaMad *m, const char *ca, unsigned port, uint64_t seq);
