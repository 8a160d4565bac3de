/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <math.h>

#include "bus-json.h"
#include "macros.h"

static int read_basic(sd_bus_message *m, char type, json_object **ret) {
        union {
                uint8_t u8;
                int16_t s16;
                uint16_t u16;
                int32_t s32;
                uint32_t u32;
                int64_t s64;
                uint64_t u64;
                double d;
                int b;
                const char *s;
        } v;
        json_object *o = NULL;
        int r;

        r = sd_bus_message_read_basic(m, type, &v);
        if (r < 0)
                return r;

        switch (type) {
        case SD_BUS_TYPE_BYTE:
                o = json_object_new_int(v.u8);
                break;
        case SD_BUS_TYPE_INT16:
                o = json_object_new_int(v.s16);
                break;
        case SD_BUS_TYPE_UINT16:
                o = json_object_new_int(v.u16);
                break;
        case SD_BUS_TYPE_INT32:
        case SD_BUS_TYPE_UNIX_FD:
                o = json_object_new_int(v.s32);
                break;
        case SD_BUS_TYPE_UINT32:
                o = json_object_new_int64(v.u32);
                break;
        case SD_BUS_TYPE_INT64:
                o = json_object_new_int64(v.s64);
                break;
        case SD_BUS_TYPE_UINT64:
                o = json_object_new_uint64(v.u64);
                break;
        case SD_BUS_TYPE_DOUBLE:
                /* JSON has no NaN or infinity (a GPU without FP16 reports NaN): they become null. */
                if (!isfinite(v.d)) {
                        *ret = NULL;
                        return 0;
                }
                o = json_object_new_double(v.d);
                break;
        case SD_BUS_TYPE_BOOLEAN:
                o = json_object_new_boolean(v.b);
                break;
        case SD_BUS_TYPE_OBJECT_PATH:
                /* "/" is how D-Bus says "no object" (a path property must hold some path): null. */
                if (streq(v.s, "/")) {
                        *ret = NULL;
                        return 0;
                }
                o = json_object_new_string(v.s);
                break;
        case SD_BUS_TYPE_STRING:
        case SD_BUS_TYPE_SIGNATURE:
                o = json_object_new_string(v.s);
                break;
        default:
                return -EINVAL;
        }
        if (!o)
                return -ENOMEM;
        *ret = o;
        return 0;
}

/* A dict key as a JSON member name: strings as they are, numbers in decimal. */
static int json_key_string(json_object *key, char **ret) {
        const char *s = json_object_get_string(key);
        *ret = strdup(s ?: "");
        return *ret ? 0 : -ENOMEM;
}

int bus_message_read_json(sd_bus_message *m, json_object **ret) {
        _cleanup_(json_object_putp) json_object *o = NULL;
        const char *contents;
        char type;
        int r;

        r = sd_bus_message_peek_type(m, &type, &contents);
        if (r < 0)
                return r;
        if (r == 0)
                return -ENXIO;

        if (type == SD_BUS_TYPE_VARIANT) {
                r = sd_bus_message_enter_container(m, type, contents);
                if (r < 0)
                        return r;
                r = bus_message_read_json(m, ret);
                if (r < 0)
                        return r;
                return sd_bus_message_exit_container(m);
        }

        if (type == SD_BUS_TYPE_ARRAY && contents[0] == SD_BUS_TYPE_DICT_ENTRY_BEGIN) {
                o = json_object_new_object();
                if (!o)
                        return -ENOMEM;
                r = sd_bus_message_enter_container(m, type, contents);
                if (r < 0)
                        return r;
                for (;;) {
                        _cleanup_(json_object_putp) json_object *key = NULL, *value = NULL;
                        _cleanup_(freep) char *name = NULL;
                        const char *entry;

                        r = sd_bus_message_peek_type(m, NULL, &entry);
                        if (r < 0)
                                return r;
                        if (r == 0)
                                break;
                        r = sd_bus_message_enter_container(m, SD_BUS_TYPE_DICT_ENTRY, entry);
                        if (r < 0)
                                return r;
                        r = bus_message_read_json(m, &key);
                        if (r >= 0)
                                r = bus_message_read_json(m, &value);
                        if (r >= 0)
                                r = json_key_string(key, &name);
                        if (r < 0)
                                return r;
                        json_object_object_add(o, name, TAKE_PTR(value));
                        r = sd_bus_message_exit_container(m);
                        if (r < 0)
                                return r;
                }
                r = sd_bus_message_exit_container(m);
                if (r < 0)
                        return r;
                *ret = TAKE_PTR(o);
                return 0;
        }

        if (type == SD_BUS_TYPE_ARRAY || type == SD_BUS_TYPE_STRUCT) {
                o = json_object_new_array();
                if (!o)
                        return -ENOMEM;
                r = sd_bus_message_enter_container(m, type, contents);
                if (r < 0)
                        return r;
                for (;;) {
                        json_object *element = NULL;
                        r = sd_bus_message_at_end(m, false);
                        if (r < 0)
                                return r;
                        if (r > 0)
                                break;
                        r = bus_message_read_json(m, &element);
                        if (r < 0)
                                return r;
                        json_object_array_add(o, element);
                }
                r = sd_bus_message_exit_container(m);
                if (r < 0)
                        return r;
                *ret = TAKE_PTR(o);
                return 0;
        }

        return read_basic(m, type, ret);
}

int bus_get_managed_objects_json(sd_bus *bus, const char *destination, const char *root, json_object **ret,
                                 sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = sd_bus_call_method(bus, destination, root, "org.freedesktop.DBus.ObjectManager", "GetManagedObjects",
                               error, &reply, NULL);
        if (r < 0)
                return r;
        return bus_message_read_json(reply, ret);
}

int bus_get_all_json(sd_bus *bus, const char *destination, const char *path, const char *interface,
                     json_object **ret, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = sd_bus_call_method(bus, destination, path, "org.freedesktop.DBus.Properties", "GetAll", error, &reply,
                               "s", interface);
        if (r < 0)
                return r;
        return bus_message_read_json(reply, ret);
}
