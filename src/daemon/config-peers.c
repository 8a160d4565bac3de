/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "classify.h"
#include "config-peers.h"
#include "shared/peer-address.h"
#include "shared/parse-util.h"
#include "shared/string-util.h"

/* Bounds that keep a typo from turning into a probe storm or a probe that never ends. */
#define TICK_MIN_USEC (10 * USEC_PER_MSEC)
#define DURATION_MAX_USEC (60 * USEC_PER_SEC)
#define PEERS_CONFIG_LIST_MAX 1024

void peers_config_init(PeersConfig *c) {
        *c = (PeersConfig) {
                .tick_usec = 15 * USEC_PER_SEC,
                .tcp_ttl_usec = 5 * 60 * USEC_PER_SEC,
                .rdma_ttl_usec = 6 * 3600 * USEC_PER_SEC,
                .tcp_duration_usec = 1 * USEC_PER_SEC,
                .tcp_samples = 50,
                .rdma_duration_usec = 1 * USEC_PER_SEC,
                .remeasure_settle_usec = 2 * USEC_PER_SEC,
                .remeasure_interval_usec = 30 * USEC_PER_SEC,
                .rdma = -1,
        };
}

void peers_config_done(PeersConfig *c) {
        c->addresses = strv_free(c->addresses);
        c->discover_kinds = strv_free(c->discover_kinds);
        c->psk_file = mfree(c->psk_file);
        c->listen = strv_free(c->listen);
        c->responder_psk_file = mfree(c->responder_psk_file);
}

int config_parse_word_list(const char *value, char ***list,
                           int (*add)(char ***list, const char *word, char *why, size_t n), char *why, size_t n) {
        _cleanup_(freep) char *copy = NULL;
        char *save = NULL;
        int r;

        if (isempty(value)) {
                *list = strv_free(*list);
                return 0;
        }
        copy = strdup(value);
        if (!copy)
                return -ENOMEM;
        for (char *w = strtok_r(copy, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
                if (strv_length(*list) >= PEERS_CONFIG_LIST_MAX) {
                        snprintf(why, n, "more than %d entries", PEERS_CONFIG_LIST_MAX);
                        return -EINVAL;
                }
                r = add(list, w, why, n);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int add_address(char ***list, const char *word, PeerAddressFlags flags, char *why, size_t n) {
        char canonical[PEER_ADDRESS_STRING_MAX];
        const char *problem = NULL;
        PeerAddress a;

        if (peer_address_parse(word, flags, &a, &problem) < 0) {
                snprintf(why, n, "\"%.*s\": %s", PEER_ADDRESS_INPUT_MAX, word, problem);
                return -EINVAL;
        }
        return strv_extend_unique(list, peer_address_format(&a, canonical));
}

static int add_peer_address(char ***list, const char *word, char *why, size_t n) {
        return add_address(list, word, 0, why, n);
}

static int add_listen_address(char ***list, const char *word, char *why, size_t n) {
        return add_address(list, word, PEER_ADDRESS_ALLOW_ANY, why, n);
}

static int add_link_kind(char ***list, const char *word, char *why, size_t n) {
        if (link_kind_from_string(word) < 0) {
                snprintf(why, n, "\"%.32s\" is not a link kind (thunderbolt, ethernet, veth, ...)", word);
                return -EINVAL;
        }
        return strv_extend_unique(list, word);
}

int config_parse_peer_addresses(const char *value, void *field, char *why, size_t n) {
        return config_parse_word_list(value, field, add_peer_address, why, n);
}

int config_parse_listen_addresses(const char *value, void *field, char *why, size_t n) {
        return config_parse_word_list(value, field, add_listen_address, why, n);
}

int config_parse_link_kinds(const char *value, void *field, char *why, size_t n) {
        /* "no" reads better than an empty value for turning discovery off. */
        if (value && parse_boolean(value) == 0)
                value = "";
        return config_parse_word_list(value, field, add_link_kind, why, n);
}

int config_parse_key_file(const char *value, void *field, char *why, size_t n) {
        if (isempty(value)) {
                *(char **) field = mfree(*(char **) field);
                return 0;
        }
        if (value[0] != '/' || strlen(value) > 4096) {
                snprintf(why, n, "expected an absolute file name");
                return -EINVAL;
        }
        return free_and_strdup(field, value) < 0 ? -ENOMEM : 0;
}

int config_parse_positive_duration(const char *value, void *field, char *why, size_t n) {
        uint64_t v;
        if (parse_duration_usec(value, &v) < 0 || v < TICK_MIN_USEC) {
                snprintf(why, n, "expected a duration of at least 10ms, such as 15s or 5min");
                return -EINVAL;
        }
        *(uint64_t *) field = v;
        return 0;
}

int config_parse_probe_duration(const char *value, void *field, char *why, size_t n) {
        uint64_t v;
        if (parse_duration_usec(value, &v) < 0 || v < TICK_MIN_USEC || v > DURATION_MAX_USEC) {
                snprintf(why, n, "expected a duration from 10ms to 60s");
                return -EINVAL;
        }
        *(uint64_t *) field = v;
        return 0;
}

int config_parse_count(const char *value, void *field, char *why, size_t n) {
        uint32_t v;
        if (parse_u32(value, &v) < 0 || v == 0 || v > 1000000) {
                snprintf(why, n, "expected a whole number from 1 to 1000000");
                return -EINVAL;
        }
        *(unsigned *) field = v;
        return 0;
}

int config_parse_tcp_streams(const char *value, void *field, char *why, size_t n) {
        uint32_t v;

        if (streq(value, "auto")) {
                *(unsigned *) field = 0;
                return 0;
        }
        if (parse_u32(value, &v) < 0 || v > PEER_STREAMS_MAX) {
                snprintf(why, n, "expected auto or a number of streams from 1 to %d", PEER_STREAMS_MAX);
                return -EINVAL;
        }
        *(unsigned *) field = v;
        return 0;
}

int config_parse_max_streams(const char *value, void *field, char *why, size_t n) {
        uint32_t v;

        if (parse_u32(value, &v) < 0 || v == 0 || v > PEER_STREAMS_MAX) {
                snprintf(why, n, "expected a number of streams from 1 to %d", PEER_STREAMS_MAX);
                return -EINVAL;
        }
        *(unsigned *) field = v;
        return 0;
}

int config_parse_test_bytes(const char *value, void *field, char *why, size_t n) {
        uint64_t v;
        if (parse_size(value, &v) < 0 || v == 0 || v > (UINT64_C(1) << 40)) {
                snprintf(why, n, "expected a size between 1 and 1T, such as 16G");
                return -EINVAL;
        }
        *(uint64_t *) field = v;
        return 0;
}

int config_parse_tristate(const char *value, void *field, char *why, size_t n) {
        int b = parse_boolean(value);
        if (b < 0) {
                snprintf(why, n, "expected yes or no");
                return -EINVAL;
        }
        *(int *) field = b;
        return 0;
}
