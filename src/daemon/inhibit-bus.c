/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "bus-access.h"
#include "inhibit-bus.h"
#include "inhibit.h"
#include "manager.h"
#include "shared/bus-error.h"
#include "shared/log.h"

/* The uid and pid the bus recorded for the sender, for ListInhibitors() and the log; not used to
 * decide anything (bus_verify_privileged() does that). */
static void sender_uid_pid(sd_bus_message *message, uint32_t *ret_uid, uint32_t *ret_pid) {
        _cleanup_(sd_bus_creds_unrefp) sd_bus_creds *creds = NULL;
        uid_t uid = UINT32_MAX;
        pid_t pid = 0;

        if (sd_bus_query_sender_creds(message, SD_BUS_CREDS_EUID | SD_BUS_CREDS_UID | SD_BUS_CREDS_PID, &creds) >= 0) {
                if (sd_bus_creds_get_euid(creds, &uid) < 0 && sd_bus_creds_get_uid(creds, &uid) < 0)
                        uid = UINT32_MAX;
                if (sd_bus_creds_get_pid(creds, &pid) < 0)
                        pid = 0;
        }
        *ret_uid = (uint32_t) uid;
        *ret_pid = (uint32_t) MAX(pid, 0);
}

int bus_method_inhibit(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        _cleanup_(closep) int fd = -EBADF;
        Manager *m = userdata;
        const char *what_text, *who, *why;
        RateLimit *rl = inhibitors_ratelimit(m->inhibitors);
        uint32_t uid, pid;
        int what, r;

        r = bus_verify_caller(m->config.privileged_group, rl, message, "inhibit GPU and RDMA probes", error);
        if (r < 0)
                return r;

        r = sd_bus_message_read(message, "sss", &what_text, &who, &why);
        if (r < 0)
                return r;
        what = inhibit_what_from_string(what_text);
        if (what < 0)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "Cannot inhibit \"%.32s\": expected \"gpu\", \"rdma\" or \"gpu:rdma\".",
                                         what_text);
        if (!inhibit_text_is_valid(who, INHIBIT_WHO_MAX, false))
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "who must be 1 to %d bytes of text without control characters.",
                                         INHIBIT_WHO_MAX);
        if (!inhibit_text_is_valid(why, INHIBIT_WHY_MAX, true))
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "why must be at most %d bytes of text without control characters.",
                                         INHIBIT_WHY_MAX);

        sender_uid_pid(message, &uid, &pid);
        r = inhibitor_add(m->inhibitors, message, (unsigned) what, who, why, uid, pid, &fd);
        if (r == -EUSERS)
                return sd_bus_error_setf(error, SD_BUS_ERROR_LIMITS_EXCEEDED,
                                         "This client already holds %d inhibitors.", INHIBITORS_PER_SENDER_MAX);
        if (r == -ENFILE)
                return sd_bus_error_setf(error, SD_BUS_ERROR_LIMITS_EXCEEDED,
                                         "%d inhibitors are held already.", INHIBITORS_MAX);
        if (r < 0)
                return sd_bus_error_setf(error, BUS_ERROR_FAILED, "Cannot create the inhibitor: %s", strerror(-r));

        /* The message gets its own copy of the descriptor; ours closes on return, so the client's
         * copies are the only write ends left. */
        return sd_bus_reply_method_return(message, "h", fd);
}

int bus_method_list_inhibitors(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        Manager *m = userdata;
        InhibitorInfo info;
        int r;

        r = sd_bus_message_new_method_return(message, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', "(sssuu)");
        if (r < 0)
                return r;
        for (size_t i = 0; inhibitors_get(m->inhibitors, i, &info); i++) {
                char what[INHIBIT_WHAT_STRING_MAX];
                r = sd_bus_message_append(reply, "(sssuu)", inhibit_what_to_string(info.what, what), info.who,
                                          info.why, info.uid, info.pid);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

int bus_property_get_inhibited(sd_bus *bus, const char *path, const char *interface, const char *property,
                               sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        unsigned mask = inhibitors_mask(m->inhibitors);
        const char *kinds[3] = {};
        size_t n = 0;

        if (mask & INHIBIT_GPU)
                kinds[n++] = "gpu";
        if (mask & INHIBIT_RDMA)
                kinds[n++] = "rdma";
        return sd_bus_message_append_strv(reply, (char **) kinds);
}
