/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzzes ethtool's netlink reply parser (src/shared/ethtool-linkmodes.c) with what a socket or the test
 * build's replay file could hold: a stream of netlink messages, each parsed as the daemon parses replies
 * and the monitor group's notifications. Whatever parses must make sense: sets within their bits, speeds
 * from the table, and a judgement (derive-link.c, link-capability.c) whose reasons are strings. */
#include <linux/netlink.h>

#include "daemon/link-capability.h"
#include "shared/ethtool-linkmodes.h"
#include "shared/socket-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_modes(const EthtoolMessage *m) {
        uint32_t speeds[LINK_SPEEDS_MAX];
        size_t n = link_mode_set_speeds(&m->modes.supported, speeds, ELEMENTSOF(speeds));

        for (size_t i = 0; i < n; i++)
                if (speeds[i] == 0 || (i > 0 && speeds[i] <= speeds[i - 1]))
                        abort();
        if (m->modes.speed_mbps > INT32_MAX || m->modes.duplex < -1 || m->modes.duplex > 1)
                abort();

        for (int carrier = 0; carrier <= 1; carrier++) {
                LinkCapability c;
                LinkCapabilityFacts f = {
                        .asked = true, .answered = true, .modes = &m->modes, .state = &m->state,
                        .carrier = carrier, .active_speed_mbps = m->modes.speed_mbps,
                };
                if (link_capability_judge(&f, &c) < 0)
                        continue; /* out of memory is the only failure */
                if ((c.trained_low && (!c.trained_low_reason || c.best_common_mbps <= m->modes.speed_mbps)) ||
                    (!c.trained_low && c.trained_low_reason) || !link_capability_reason(&c))
                        abort();
                if (c.best_common_mbps > 0 && (c.n_supported == 0 || c.n_partner == 0))
                        abort();
                link_capability_done(&c);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(freep) uint8_t *buf = NULL;
        char text[128];

        /* Netlink buffers are aligned, as the kernel's and libnl's are; so is this copy. */
        buf = malloc(size + 1);
        if (!buf)
                return 0;
        memcpy(buf, data, size);

        ssize_t left = (ssize_t) MIN(size, (size_t) INT32_MAX);
        for (struct nlmsghdr *h = (struct nlmsghdr *) (void *) buf; NLMSG_OK_LEFT(h, left); h = NLMSG_NEXT_LEFT(h, left)) {
                EthtoolMessage m;

                if (ethtool_message_parse(h, h->nlmsg_len, &m) < 0)
                        continue;
                if (m.kind >= _ETHTOOL_MESSAGE_KIND_MAX || m.ifindex < 0 || strlen(m.name) >= sizeof(m.name))
                        abort();
                if (m.kind == ETHTOOL_MESSAGE_LINKMODES)
                        check_modes(&m);
                ethtool_link_ext_state_format(m.state.ext_state, m.state.ext_substate, text, sizeof(text));
                if (strlen(text) >= sizeof(text))
                        abort();
        }
        /* The same bytes as the attributes of each message kind we read. */
        for (uint8_t cmd = 1; cmd <= 8; cmd++) {
                EthtoolMessage m;
                if (ethtool_message_parse_attrs(cmd, buf, size, &m) >= 0 && m.kind == ETHTOOL_MESSAGE_LINKMODES)
                        check_modes(&m);
        }
        return 0;
}
