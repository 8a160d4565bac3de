/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The test build's replayed ethtool source: linked only into linkprobed-ethtool-replay (tests/tools/tools.mk),
 * never into linkprobed, so no environment can steer the daemon a system runs. With
 * LINKPROBE_ETHTOOL_REPLAY=FILE, every time the daemon asks ethtool about a link the file is read again:
 * a sequence of netlink messages exactly as the kernel sends them (nlmsghdr, genlmsghdr, attributes;
 * LINKMODES_GET_REPLY and LINKSTATE_GET_REPLY, each naming its device in the header by index or name).
 * The last message of each kind that names the link is the answer, parsed by the daemon's own parser;
 * a link the file does not name is asked of the kernel as usual. A test rewrites the file (rename over
 * it) and makes a link event to have the daemon ask again: the replies move as a real NIC's would.
 */
#include <fcntl.h>
#include <linux/netlink.h>

#include "daemon/link-ethtool.h"
#include "shared/fileio.h"
#include "shared/socket-util.h"
#include "shared/log.h"

#define REPLAY_FILE_MAX (1024 * 1024)

static const char *replay_path;

static int replay_read(uint8_t **ret, size_t *ret_size) {
        _cleanup_(freep) uint8_t *buf = NULL;
        size_t size = 0;
        int fd;

        fd = open(replay_path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? 0 : -errno;
        buf = malloc(REPLAY_FILE_MAX);
        if (!buf) {
                close(fd);
                return -ENOMEM;
        }
        for (;;) {
                ssize_t n = read(fd, buf + size, REPLAY_FILE_MAX - size);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        break;
                size += (size_t) n;
                if (size == REPLAY_FILE_MAX)
                        break;
        }
        close(fd);
        *ret = TAKE_PTR(buf);
        *ret_size = size;
        return 1;
}

static int replay_answer(int ifindex, const char *name, LinkEthtoolAnswer *a) {
        _cleanup_(freep) uint8_t *buf = NULL;
        bool modes = false, state = false;
        size_t size = 0;
        int r;

        r = replay_read(&buf, &size);
        if (r <= 0)
                return r;
        ssize_t left = (ssize_t) size;
        for (struct nlmsghdr *h = (struct nlmsghdr *) (void *) buf; NLMSG_OK_LEFT(h, left); h = NLMSG_NEXT_LEFT(h, left)) {
                EthtoolMessage m;

                r = ethtool_message_parse(h, h->nlmsg_len, &m);
                if (r < 0) {
                        log_warning_errno(r, "ethtool replay: skipping a message that does not parse: %m");
                        continue;
                }
                if (!((m.ifindex > 0 && m.ifindex == ifindex) || (m.name[0] && streq(m.name, name))))
                        continue;
                if (m.kind == ETHTOOL_MESSAGE_LINKMODES) {
                        a->modes = m.modes;
                        modes = true;
                } else if (m.kind == ETHTOOL_MESSAGE_LINKSTATE) {
                        a->state = m.state;
                        state = true;
                }
        }
        if (!modes && !state)
                return 0;
        /* What the file leaves out, the driver "does not support". */
        a->modes_error = modes ? 0 : -EOPNOTSUPP;
        a->state_error = state ? 0 : -EOPNOTSUPP;
        return 1;
}

__attribute__((constructor)) static void replay_install(void) {
        replay_path = getenv("LINKPROBE_ETHTOOL_REPLAY");
        if (!replay_path || replay_path[0] != '/')
                return;
        link_ethtool_replay = replay_answer;
        fprintf(stderr, "ethtool replay: answering from %s\n", replay_path);
}
