/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "shared/json-util.h"
#include "shared/node-identity.h"
#include "shared/parse-util.h"
#include "shared/string-util.h"

/* C0 controls, DEL, C1 controls (U+0080..U+009F), and the bidirectional formatting characters
 * (U+200E, U+200F, U+202A..U+202E, U+2066..U+2069), which make a terminal show text in another order
 * than it is: the length of the one at p, 0 for anything else. */
static size_t control_length(const unsigned char *p, size_t n) {
        if (p[0] < 0x20 || p[0] == 0x7f)
                return 1;
        if (n >= 2 && p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
                return 2;
        if (n >= 3 && p[0] == 0xe2 &&
            ((p[1] == 0x80 && (p[2] == 0x8e || p[2] == 0x8f || (p[2] >= 0xaa && p[2] <= 0xae))) ||
             (p[1] == 0x81 && p[2] >= 0xa6 && p[2] <= 0xa9)))
                return 3;
        return 0;
}

bool node_hostname_is_valid(const char *s, size_t n) {
        if (n == 0 || n > NODE_HOSTNAME_MAX || !utf8_is_valid_n(s, n) || memchr(s, '\0', n))
                return false;
        for (size_t i = 0; i < n; i++)
                if (control_length((const unsigned char *) s + i, n - i) > 0)
                        return false;
        return true;
}

/* The length of the UTF-8 character at p (n bytes available), 0 when it is not a valid one. */
static size_t utf8_char_length(const unsigned char *p, size_t n) {
        size_t len = p[0] < 0x80 ? 1 : p[0] >= 0xc2 && p[0] <= 0xdf ? 2 : p[0] >= 0xe0 && p[0] <= 0xef ? 3
                                                              : p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : 0;

        return len > 0 && len <= n && utf8_is_valid_n((const char *) p, len) ? len : 0;
}

void node_hostname_sanitize(const char *s, char ret[static NODE_HOSTNAME_MAX + 1]) {
        size_t n = 0, len = strlen(strempty(s));

        for (size_t i = 0; i < len && n < NODE_HOSTNAME_MAX;) {
                const unsigned char *p = (const unsigned char *) s + i;
                size_t k = control_length(p, len - i), seq = k > 0 ? 0 : utf8_char_length(p, len - i);

                if (seq == 0) {
                        /* A control character, or a byte that is not UTF-8. */
                        ret[n++] = '?';
                        i += MAX(k, (size_t) 1);
                        continue;
                }
                if (n + seq > NODE_HOSTNAME_MAX)
                        break;
                memcpy(ret + n, p, seq);
                n += seq;
                i += seq;
        }
        if (n == 0)
                ret[n++] = '?';
        ret[n] = '\0';
}

/* Hex digits into n bytes; separator (0 for none) may stand where dashes[] says, and must. */
static int parse_hex_bytes(const char *s, uint8_t *ret, size_t n, char separator, const size_t *breaks) {
        size_t b = 0;

        for (size_t i = 0; i < n; i++) {
                if (separator && breaks[b] == i) {
                        if (*s != separator)
                                return -EINVAL;
                        s++;
                        b++;
                }
                int hi = unhexchar(s[0]), lo = hi >= 0 ? unhexchar(s[1]) : -1;
                if (hi < 0 || lo < 0)
                        return -EINVAL;
                ret[i] = (uint8_t) (hi << 4 | lo);
                s += 2;
        }
        return *s == '\0' ? 0 : -EINVAL;
}

int node_id_from_string(const char *s, uint8_t ret[static NODE_ID_SIZE]) {
        static const size_t none[] = { SIZE_MAX };
        uint8_t id[NODE_ID_SIZE];

        if (!s || parse_hex_bytes(s, id, sizeof(id), 0, none) < 0)
                return -EINVAL;
        memcpy(ret, id, sizeof(id));
        return 0;
}

char *node_id_to_string(const uint8_t id[static NODE_ID_SIZE], char buf[static NODE_ID_STRING_MAX]) {
        for (size_t i = 0; i < NODE_ID_SIZE; i++)
                snprintf(buf + 2 * i, 3, "%02x", id[i]);
        return buf;
}

bool node_id_is_null(const uint8_t id[static NODE_ID_SIZE]) {
        for (size_t i = 0; i < NODE_ID_SIZE; i++)
                if (id[i] != 0)
                        return false;
        return true;
}

int node_uuid_from_string(const char *s, uint8_t ret[static 16]) {
        static const size_t dashes[] = { 4, 6, 8, 10, SIZE_MAX };
        uint8_t u[16];

        if (!s)
                return -EINVAL;
        if (strlen(s) == 32)
                return node_id_from_string(s, ret);
        if (parse_hex_bytes(s, u, sizeof(u), '-', dashes) < 0)
                return -EINVAL;
        memcpy(ret, u, sizeof(u));
        return 0;
}

char *node_uuid_to_string(const uint8_t u[static 16], char buf[static NODE_UUID_STRING_MAX]) {
        snprintf(buf, NODE_UUID_STRING_MAX,
                 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3],
                 u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
        return buf;
}

int node_guid_from_string(const char *s, uint64_t *ret) {
        static const size_t colons[] = { 2, 4, 6, SIZE_MAX };
        uint8_t b[8];
        uint64_t v = 0;

        if (!s || parse_hex_bytes(s, b, sizeof(b), ':', colons) < 0)
                return -EINVAL;
        for (size_t i = 0; i < sizeof(b); i++)
                v = v << 8 | b[i];
        *ret = v;
        return 0;
}

char *node_guid_to_string(uint64_t g, char buf[static NODE_GUID_STRING_MAX]) {
        snprintf(buf, NODE_GUID_STRING_MAX, "%04x:%04x:%04x:%04x", (unsigned) (g >> 48) & 0xffff,
                 (unsigned) (g >> 32) & 0xffff, (unsigned) (g >> 16) & 0xffff, (unsigned) g & 0xffff);
        return buf;
}

bool node_identity_equal(const NodeIdentity *a, const NodeIdentity *b) {
        return memcmp(a->node_id, b->node_id, NODE_ID_SIZE) == 0 && memcmp(a->boot_id, b->boot_id, NODE_ID_SIZE) == 0 &&
               a->booted_at == b->booted_at && streq(a->hostname, b->hostname) && a->n_thunderbolt == b->n_thunderbolt &&
               memcmp(a->thunderbolt, b->thunderbolt, a->n_thunderbolt * 16) == 0 && a->n_rdma == b->n_rdma &&
               memcmp(a->rdma, b->rdma, a->n_rdma * sizeof(a->rdma[0])) == 0;
}

bool node_identity_has_thunderbolt(const NodeIdentity *id, const uint8_t uuid[static 16]) {
        for (size_t i = 0; i < id->n_thunderbolt; i++)
                if (memcmp(id->thunderbolt[i], uuid, 16) == 0)
                        return true;
        return false;
}

json_object *node_identity_to_json(const NodeIdentity *id) {
        char text[MAX(NODE_UUID_STRING_MAX, NODE_ID_STRING_MAX)];
        json_object *o = json_object_new_object(), *tbt = json_object_new_array(), *rdma = json_object_new_array();

        if (!o || !tbt || !rdma) {
                json_object_put(o);
                json_object_put(tbt);
                json_object_put(rdma);
                return NULL;
        }
        json_object_object_add(o, "node_id", json_object_new_string(node_id_to_string(id->node_id, text)));
        json_object_object_add(o, "hostname", json_object_new_string(id->hostname));
        json_object_object_add(o, "boot_id", json_object_new_string(node_id_to_string(id->boot_id, text)));
        json_object_object_add(o, "booted_at", json_object_new_uint64(id->booted_at));
        for (size_t i = 0; i < id->n_thunderbolt; i++)
                json_object_array_add(tbt, json_object_new_string(node_uuid_to_string(id->thunderbolt[i], text)));
        json_object_object_add(o, "thunderbolt_host_uuids", tbt);
        for (size_t i = 0; i < id->n_rdma; i++)
                json_object_array_add(rdma, json_object_new_string(node_guid_to_string(id->rdma[i], text)));
        json_object_object_add(o, "rdma_node_guids", rdma);
        return o;
}

/* The strings of an optional array member, each parsed by parse into elements of size bytes at ret. */
static int read_array(json_object *o, const char *key, size_t max, void *ret, size_t size, size_t *ret_n,
                      int (*parse)(const char *s, void *ret)) {
        json_object *a;
        size_t n;

        *ret_n = 0;
        if (!json_object_object_get_ex(o, key, &a) || json_object_is_type(a, json_type_null))
                return 0;
        if (!json_object_is_type(a, json_type_array))
                return -EINVAL;
        n = json_object_array_length(a);
        if (n > max)
                return -EINVAL;
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(a, i);
                if (!json_object_is_type(e, json_type_string) || parse(json_object_get_string(e), (uint8_t *) ret + i * size) < 0)
                        return -EINVAL;
        }
        *ret_n = n;
        return 0;
}

static int parse_uuid(const char *s, void *ret) {
        return node_uuid_from_string(s, ret);
}

static int parse_guid(const char *s, void *ret) {
        return node_guid_from_string(s, ret);
}

int node_identity_from_json(json_object *o, NodeIdentity *ret) {
        NodeIdentity id = {};
        json_object *v;
        const char *hostname;

        if (!json_object_is_type(o, json_type_object))
                return -EINVAL;
        if (node_id_from_string(json_string_or(o, "node_id", NULL), id.node_id) < 0 || node_id_is_null(id.node_id))
                return -EINVAL;
        hostname = json_string_or(o, "hostname", NULL);
        if (!hostname || !node_hostname_is_valid(hostname, strlen(hostname)))
                return -EINVAL;
        memcpy(id.hostname, hostname, strlen(hostname) + 1);
        if (json_object_object_get_ex(o, "boot_id", &v) &&
            (!json_object_is_type(v, json_type_string) || node_id_from_string(json_object_get_string(v), id.boot_id) < 0))
                return -EINVAL;
        if (json_object_object_get_ex(o, "booted_at", &v)) {
                if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0)
                        return -EINVAL;
                id.booted_at = (uint64_t) json_object_get_int64(v);
        }
        if (read_array(o, "thunderbolt_host_uuids", NODE_IDENTITY_THUNDERBOLT_MAX, id.thunderbolt,
                       sizeof(id.thunderbolt[0]), &id.n_thunderbolt, parse_uuid) < 0 ||
            read_array(o, "rdma_node_guids", NODE_IDENTITY_RDMA_MAX, id.rdma, sizeof(id.rdma[0]), &id.n_rdma,
                       parse_guid) < 0)
                return -EINVAL;
        *ret = id;
        return 0;
}
