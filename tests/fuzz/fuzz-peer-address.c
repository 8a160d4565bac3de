/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzzes the peer address parser (src/shared/peer-address.c), which takes what D-Bus callers
 * (ProbePeer, AddPeer, RemovePeer), the configuration ([Peers] Address=, [Responder] Listen=) and the
 * state file say. An accepted address must be usable (a family, a port, a zone only where one
 * belongs), its canonical spelling must parse back to the same address and spell the same, and a
 * refusal must say why. */
#include "shared/peer-address.h"
#include "shared/string-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool same(const PeerAddress *a, const PeerAddress *b) {
        return a->family == b->family && memcmp(a->bytes, b->bytes, a->family == AF_INET ? 4 : 16) == 0 &&
               a->port == b->port && streq(a->scope, b->scope);
}

static void check(const PeerAddress *a, PeerAddressFlags flags) {
        char buf[PEER_ADDRESS_STRING_MAX], again[PEER_ADDRESS_STRING_MAX];
        PeerAddress b;

        if (!IN_SET(a->family, AF_INET, AF_INET6) || a->port == 0)
                abort();
        if (a->scope[0] && (a->family != AF_INET6 || !peer_address_is_link_local(a) ||
                            strnlen(a->scope, sizeof(a->scope)) >= sizeof(a->scope)))
                abort();
        if (peer_address_is_any(a) && !(flags & PEER_ADDRESS_ALLOW_ANY))
                abort();

        if (!peer_address_format(a, buf) || !utf8_is_valid(buf))
                abort();
        if (peer_address_parse(buf, flags, &b, NULL) < 0 || !same(a, &b))
                abort();
        if (!streq(peer_address_format(&b, again), buf))
                abort();
        if (!peer_address_format_with_port(a, buf) || peer_address_parse(buf, flags, &b, NULL) < 0 || !same(a, &b))
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(freep) char *s = NULL;
        const char *why;
        PeerAddress a;

        if (size > 256)
                return 0;
        s = malloc(size + 1);
        if (!s)
                return 0;
        memcpy(s, data, size);
        s[size] = '\0';

        for (PeerAddressFlags flags = 0; flags <= PEER_ADDRESS_ALLOW_ANY; flags++) {
                why = NULL;
                if (peer_address_parse(s, flags, &a, &why) >= 0)
                        check(&a, flags);
                else if (!why || !utf8_is_valid(why))
                        abort();
        }

        if (peer_address_parse_host(s, &a) >= 0 &&
            (!IN_SET(a.family, AF_INET, AF_INET6) || (a.scope[0] && !peer_address_is_link_local(&a))))
                abort();

        /* The input as an interface name for a link-local address. */
        if (peer_address_parse("fe80::1", 0, &a, NULL) < 0)
                abort();
        why = NULL;
        if (peer_address_set_scope(&a, s, &why) >= 0)
                check(&a, 0);
        else if (!why)
                abort();
        return 0;
}
