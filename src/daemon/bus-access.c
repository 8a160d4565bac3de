/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <grp.h>

#include "bus-access.h"
#include "shared/bus-error.h"
#include "shared/log.h"
#include "shared/time-util.h"

typedef struct SenderIds {
        uint32_t uid;
        bool have_uid;
        uint32_t *gids;
        size_t n_gids;
        bool have_gids;
} SenderIds;

static void sender_ids_done(SenderIds *ids) {
        free(ids->gids);
}

static int read_u32_array(sd_bus_message *reply, uint32_t **ret, size_t *ret_n) {
        const void *data;
        size_t size;
        int r;

        r = sd_bus_message_read_array(reply, 'u', &data, &size);
        if (r < 0)
                return r;
        *ret = malloc(MAX(size, (size_t) 1));
        if (!*ret)
                return -ENOMEM;
        memcpy(*ret, data, size);
        *ret_n = size / sizeof(uint32_t);
        return 0;
}

static int get_sender_ids(sd_bus *bus, const char *sender, SenderIds *ret) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        sd_bus_error error = SD_BUS_ERROR_NULL;
        int r;

        r = sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                               "GetConnectionCredentials", &error, &reply, "s", sender);
        sd_bus_error_free(&error);
        if (r < 0)
                return r;

        r = sd_bus_message_enter_container(reply, 'a', "{sv}");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
                const char *key;

                r = sd_bus_message_read(reply, "s", &key);
                if (r < 0)
                        return r;
                if (streq(key, "UnixUserID")) {
                        r = sd_bus_message_read(reply, "v", "u", &ret->uid);
                        ret->have_uid = r >= 0;
                } else if (streq(key, "UnixGroupIDs")) {
                        r = sd_bus_message_enter_container(reply, 'v', "au");
                        if (r >= 0)
                                r = read_u32_array(reply, &ret->gids, &ret->n_gids);
                        if (r >= 0)
                                r = sd_bus_message_exit_container(reply);
                        ret->have_gids = r >= 0;
                } else
                        r = sd_bus_message_skip(reply, "v");
                if (r < 0)
                        return r;
                r = sd_bus_message_exit_container(reply);
                if (r < 0)
                        return r;
        }
        return r < 0 ? r : 0;
}

static bool direct_caller_is_root(sd_bus_message *message) {
        _cleanup_(sd_bus_creds_unrefp) sd_bus_creds *creds = NULL;
        uid_t euid;

        /* sd-bus gives a direct peer's SO_PEERCRED (the effective UID it connected with) as EUID. */
        return sd_bus_get_owner_creds(sd_bus_message_get_bus(message), SD_BUS_CREDS_EUID, &creds) >= 0 &&
               sd_bus_creds_get_euid(creds, &euid) >= 0 && euid == 0;
}

int bus_verify_privileged(const char *group, sd_bus_message *message, const char *action, sd_bus_error *error) {
        _cleanup_(sender_ids_done) SenderIds ids = {};
        const char *group_name = group ?: PRIVILEGED_GROUP_DEFAULT;
        const char *sender = sd_bus_message_get_sender(message);
        struct group *g;
        int r;

        if (!sender)
                /* A direct connection (the private socket) has no sender to ask the bus about: the
                 * kernel told us who connected (SO_PEERCRED), and only root is let in. */
                return direct_caller_is_root(message) ? 0 :
                        sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED, "Cannot verify the caller to %s.", action);

        r = get_sender_ids(sd_bus_message_get_bus(message), sender, &ids);
        if (r < 0 || !ids.have_uid) {
                log_warning_errno(r, "Cannot get the credentials of %s: %m", sender);
                return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED, "Cannot verify the caller to %s.", action);
        }
        if (ids.uid == 0)
                return 0;

        errno = 0;
        g = getgrnam(group_name);
        if (g && ids.have_gids)
                for (size_t i = 0; i < ids.n_gids; i++)
                        if (ids.gids[i] == g->gr_gid)
                                return 0;

        log_info("Denied %s to uid %" PRIu32 " (%s).", action, ids.uid, sender);
        sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED, "Only root or members of the group \"%s\" may %s.",
                          group_name, action);
        return -EACCES;
}

int bus_verify_rate(RateLimit *rl, sd_bus_message *message, sd_bus_error *error) {
        const char *sender = sd_bus_message_get_sender(message) ?: "direct";
        uint64_t now = now_usec(CLOCK_MONOTONIC);

        if (ratelimit_take(rl, sender, now))
                return 0;
        sd_bus_error_setf(error, BUS_ERROR_RATE_LIMITED,
                          "Too many requests from %s; try again in %" PRIu64 " ms.", sender,
                          (ratelimit_wait_usec(rl, sender, now) + 999) / 1000);
        return -EBUSY;
}

int bus_verify_caller(const char *group, RateLimit *rl, sd_bus_message *message, const char *action,
                      sd_bus_error *error) {
        int r;

        if (rl) {
                r = bus_verify_rate(rl, message, error);
                if (r < 0)
                        return r;
        }
        return bus_verify_privileged(group, message, action, error);
}
