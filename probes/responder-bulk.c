/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The responder's bulk tests: upload and download over one connection or a group of parallel streams
 * (STREAMS_REQUEST, JOIN), one test at a time, within the limits for all of its streams together. */
#include <inttypes.h>
#include <netinet/in.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "proto-bulk.h"
#include "responder-conn.h"
#include "responder-pump.h"
#include "shared/log.h"
#include "shared/time-util.h"

/* Costs of the token bucket: a connection takes one token, a bulk test two, however many streams
 * carry it (each stream's connection has paid its own). */
#define TEST_TOKENS 2
/* A test gets this much (or as long again as granted) past its granted time to drain buffers. */
#define TEST_GRACE_USEC (3 * USEC_PER_SEC)

/* The token is all a joining connection shows: compared without an early exit. */
static bool token_equal(const uint8_t *a, const uint8_t *b) {
        uint8_t d = 0;
        for (size_t i = 0; i < PROTO_STREAMS_TOKEN_SIZE; i++)
                d |= a[i] ^ b[i];
        return d == 0;
}

void bulk_streams_request(Conn *c) {
        Responder *r = c->responder;
        const ResponderLimits *l = &r->limits;
        uint32_t wanted;

        if (proto_decode_streams_request(c->payload, c->frame.length, &wanted) < 0)
                return conn_fail(c, PROTO_ERROR_PROTOCOL, "malformed streams request");
        if (c->group)
                return conn_reply_error(c, PROTO_ERROR_PROTOCOL, "this connection has its streams already");

        /* Every stream is a connection of its own, so the per-source cap bounds them too. */
        unsigned room = l->max_connections_per_source > c->source->connections
                                ? l->max_connections_per_source - c->source->connections
                                : 0;
        StreamGroup *g = calloc(1, sizeof(StreamGroup));
        if (!g)
                return conn_reply_error(c, PROTO_ERROR_INTERNAL, "out of memory");
        if (proto_random_bytes(g->token, sizeof(g->token)) < 0) {
                free(g);
                return conn_reply_error(c, PROTO_ERROR_INTERNAL, "no random bytes");
        }
        g->granted = MIN(MIN(wanted, l->max_streams), 1 + room);
        g->members[0] = c;
        g->n_members = 1;
        c->group = g;
        if (g->granted < wanted)
                log_info("%s: %u of %" PRIu32 " streams granted", c->name, g->granted, wanted);

        ProtoStreams reply = { .granted = g->granted };
        memcpy(reply.token, g->token, sizeof(reply.token));
        (void) conn_queue(c, proto_encode_streams_reply(c->out, sizeof(c->out), &reply));
}

void bulk_join(Conn *c) {
        Responder *r = c->responder;
        uint8_t token[PROTO_STREAMS_TOKEN_SIZE];
        Conn *owner = NULL;

        if (proto_decode_join(c->payload, c->frame.length, token) < 0)
                return conn_fail(c, PROTO_ERROR_PROTOCOL, "malformed join");
        if (c->group)
                return conn_fail(c, PROTO_ERROR_PROTOCOL, "a connection with streams of its own cannot join");
        /* Only the address that asked for the streams may join them. */
        for (Conn *o = r->conns; o; o = o->next)
                if (o->group && o->source == c->source && token_equal(o->group->token, token))
                        owner = o;
        if (!owner)
                return conn_fail(c, PROTO_ERROR_PROTOCOL, "no streams to join with this token");
        StreamGroup *g = owner->group;
        if (g->n_members >= g->granted)
                return conn_fail(c, PROTO_ERROR_LIMIT, "every granted stream has joined");

        c->owner = owner;
        c->stream_index = g->n_members;
        g->members[g->n_members++] = c;
        c->state = CONN_JOINED;
        c->last_frame_usec = now_mono();
        (void) timer_arm(c, r->limits.idle_timeout_usec);
        r->stats.joined++;
        snprintf(c->name + strlen(c->name), sizeof(c->name) - strlen(c->name), "#%u", c->stream_index);
        (void) conn_queue(c, proto_encode_u32(c->out, sizeof(c->out), PROTO_JOIN_OK, c->stream_index));
}

/* What the TCP of test o's streams sent again so far; UINT64_MAX when a socket does not say. */
static uint64_t test_retrans(Conn *o, unsigned streams) {
        uint64_t sum = 0;

        for (unsigned i = 0; i < streams; i++) {
                uint64_t b = net_host_retrans_bytes(test_stream(o, i)->fd);
                if (b == UINT64_MAX)
                        return UINT64_MAX;
                sum += b;
        }
        return sum;
}

/* Our end of the test: the interface towards the client, its counters and the CPU time so far. The
 * loop's thread moves onto the CPUs near that interface's device for the test (and stays there until
 * the next test says otherwise: it serves one bulk test at a time). */
static void test_host_start(Conn *c) {
        Responder *r = c->responder;
        BulkTest *t = &c->test;
        struct sockaddr_storage ss = {};

        if (IN6_IS_ADDR_V4MAPPED(&c->address)) {
                struct sockaddr_in *in = (struct sockaddr_in *) &ss;
                in->sin_family = AF_INET;
                memcpy(&in->sin_addr, &c->address.s6_addr[12], 4);
        } else {
                struct sockaddr_in6 *in6 = (struct sockaddr_in6 *) &ss;
                in6->sin6_family = AF_INET6;
                in6->sin6_addr = c->address;
        }
        net_host_setup((const struct sockaddr *) &ss, NULL, r->sysfs_fd, &r->allowed_cpus, &t->host);
        (void) net_host_pin_thread(&t->host);
        t->counters = (NetCounters) {};
        if (c->want_stats && t->host.ifindex > 0)
                (void) net_host_read_counters(t->host.ifindex, &t->counters);
        t->retrans_start = c->want_stats ? test_retrans(c, t->streams) : UINT64_MAX;
        t->cpu_start_usec = net_host_cpu_usec();
}

/* The responder's side of test o holds, into a result for a client that asked for it. */
static void test_host_result(Conn *o, ProtoTestResult *res) {
        const BulkTest *t = &o->test;
        NetCounters now = {};

        if (!o->want_stats)
                return;
        res->have_stats = true;
        res->cpu_usec = net_host_cpu_usec() - t->cpu_start_usec;
        res->threads = MAX(t->threads, 1U);
        res->cpus = t->host.n_cpus;
        res->if_rx_bytes = res->if_tx_bytes = res->if_rx_packets = res->if_tx_packets = PROTO_COUNTER_UNKNOWN;
        /* A joined stream that left takes its count with it: then unknown. */
        uint64_t retrans = o->group && o->group->n_members < t->streams ? UINT64_MAX : test_retrans(o, t->streams);
        res->retrans_bytes = retrans == UINT64_MAX || t->retrans_start == UINT64_MAX ? PROTO_COUNTER_UNKNOWN
                                                                                      : retrans - t->retrans_start;
        if (t->counters.valid && net_host_read_counters(t->host.ifindex, &now) >= 0 && now.valid) {
                res->if_rx_bytes = now.rx_bytes - t->counters.rx_bytes;
                res->if_tx_bytes = now.tx_bytes - t->counters.tx_bytes;
                res->if_rx_packets = now.rx_packets - t->counters.rx_packets;
                res->if_tx_packets = now.tx_packets - t->counters.tx_packets;
        }
}

bool bulk_may_start(Conn *c) {
        Responder *r = c->responder;

        if (r->bulk_owner) {
                r->stats.busy++;
                conn_reply_error(c, PROTO_ERROR_BUSY, "another test is running");
                return false;
        }
        if (!token_bucket_take(&c->source->bucket, TEST_TOKENS, now_mono())) {
                r->stats.rejected_rate++;
                conn_reply_error(c, PROTO_ERROR_RATE_LIMITED, "too many requests from this address");
                return false;
        }
        /* The node's own probe is measuring: a test now would share the link (and the CPUs) with it. */
        if (!responder_lock_take(c)) {
                r->stats.busy++;
                conn_reply_error(c, PROTO_ERROR_BUSY, "this node is measuring another node");
                return false;
        }
        /* The caller makes c the bulk owner at once; conn_release_bulk() lets the lock linger. */
        return true;
}

void bulk_start(Conn *c) {
        Responder *r = c->responder;
        bool upload = c->frame.type == PROTO_UPLOAD_START;
        unsigned joined = c->group ? c->group->n_members : 1;
        ProtoTestRequest req;
        uint64_t now = now_mono();

        if (proto_decode_test_request(c->payload, c->frame.length, &req) < 0)
                return conn_fail(c, PROTO_ERROR_PROTOCOL, "malformed test request");
        if (req.streams > joined) {
                char message[64];
                snprintf(message, sizeof(message), "%" PRIu32 " streams asked for, %u joined", req.streams, joined);
                return conn_reply_error(c, PROTO_ERROR_PROTOCOL, message);
        }
        for (unsigned i = 1; i < req.streams; i++)
                if (test_stream(c, i)->state != CONN_JOINED)
                        return conn_reply_error(c, PROTO_ERROR_PROTOCOL, "a stream is not idle");
        if (!bulk_may_start(c))
                return;

        c->test = (BulkTest) {
                .upload = upload,
                .streams = req.streams,
                .granted_bytes = MIN(req.max_bytes, r->limits.max_test_bytes),
                .granted_usec = MIN(req.max_usec, r->limits.max_test_usec),
                .frame_size = MIN(MIN(req.frame_size, r->limits.max_frame), (uint32_t) SCRATCH_SIZE),
                .start_usec = now,
                .last_usec = now,
        };
        r->bulk_owner = c;
        r->stats.tests++;
        test_host_start(c);

        for (unsigned i = 0; i < req.streams; i++) {
                Conn *s = test_stream(c, i);
                s->state = upload ? CONN_UPLOAD : CONN_DOWNLOAD;
                s->stream_bytes = 0;
                s->stream_start_usec = s->stream_last_usec = now;
                s->data_frame_len = s->data_frame_sent = 0;
                (void) timer_arm(s, c->test.granted_usec + MAX(TEST_GRACE_USEC, c->test.granted_usec));
                if (s != c)
                        conn_update_events(s);
        }

        ProtoTestResult granted = { .bytes = c->test.granted_bytes, .usec = c->test.granted_usec };
        (void) conn_queue(c, proto_encode_test_result(c->out, sizeof(c->out),
                                                      upload ? PROTO_UPLOAD_READY : PROTO_DOWNLOAD_READY, &granted));
}

bool bulk_received(Conn *c, size_t k) {
        Conn *o = owner_of(c);
        uint64_t now = now_mono();

        c->stream_bytes += k;
        c->stream_last_usec = now;
        o->test.bytes += k;
        o->test.last_usec = now;
        if (o->test.bytes > o->test.granted_bytes) {
                bulk_fail(c, PROTO_ERROR_LIMIT, "more data than granted");
                return false;
        }
        return true;
}

/* A stream of a test is done; the test ends with the last one. */
static void stream_done(Conn *c) {
        Conn *o = owner_of(c);
        BulkTest *t = &o->test;

        if (c != o) {
                c->state = CONN_JOINED;
                c->last_frame_usec = now_mono();
                (void) timer_arm(c, c->responder->limits.idle_timeout_usec);
        }
        if (++t->finished < t->streams)
                return;

        uint64_t usec = t->upload ? (t->bytes > 0 ? t->last_usec - t->start_usec : 0) : now_mono() - t->start_usec;
        log_info("%s: %s: %" PRIu64 " bytes in %" PRIu64 " us over %u stream%s", o->name,
                 t->upload ? "upload" : "download", t->bytes, usec, t->streams, t->streams == 1 ? "" : "s");
        conn_release_bulk(o);
        if (t->upload) {
                /* The asking connection answers for all streams once the last has ended. */
                ProtoTestResult result = { .bytes = t->bytes, .usec = usec };
                test_host_result(o, &result);
                conn_enter_ready(o);
                (void) conn_queue(o, proto_encode_test_result(o->out, sizeof(o->out), PROTO_UPLOAD_RESULT, &result));
                if (o != c)
                        conn_update_events(o);
        }
}

void bulk_upload_end(Conn *c) {
        Conn *o = owner_of(c);

        if (c != o) {
                /* Each joined stream hears what it carried. */
                ProtoTestResult mine = pump_stream_result(c->stream_bytes, c->stream_start_usec, c->stream_last_usec);
                (void) conn_queue(c, proto_encode_test_result(c->out, sizeof(c->out), PROTO_UPLOAD_RESULT, &mine));
        } else
                c->state = CONN_UPLOAD_WAIT;
        stream_done(c);
}

/* Every stream says what it sent; the asking one is free for requests once its own share is out. */
static void stream_finish_download(Conn *c) {
        ProtoTestResult mine = { .bytes = c->stream_bytes, .usec = now_mono() - c->stream_start_usec };

        if (c == owner_of(c)) {
                test_host_result(c, &mine);
                conn_enter_ready(c);
        }
        (void) conn_queue(c, proto_encode_test_result(c->out, sizeof(c->out), PROTO_DOWNLOAD_END, &mine));
        stream_done(c);
}

/* A test over several streams, with CPUs for them, goes to the pump's threads (responder-pump.h);
 * the streams' event sources rest until the pump is done. False: the loop moves the data, as for one
 * stream. */
static bool pump_begin(Conn *o) {
        Responder *r = o->responder;
        BulkTest *t = &o->test;
        int k;

        if (t->streams < 2 || t->host.n_cpus < 2 || r->pump || r->pump_done_fd < 0)
                return false;
        PumpConfig cfg = {
                .receive = t->upload,
                .frame_size = t->frame_size,
                .max_frame = r->limits.max_frame,
                .granted_bytes = t->granted_bytes,
                .granted_usec = t->granted_usec,
                .start_usec = t->start_usec,
                .deadline_usec = t->start_usec + t->granted_usec + MAX(TEST_GRACE_USEC, t->granted_usec),
                .host = &t->host,
                .payload_fd = r->payload_fd,
                .buffer = r->scratch,
                .done_fd = r->pump_done_fd,
        };
        for (unsigned i = 0; i < t->streams; i++) {
                Conn *c = test_stream(o, i);
                /* Receiving, each thread reads from a frame's first byte: nothing may have been read yet. */
                if (t->upload && (c->have_header || c->header_len > 0 || c->ahead_len > 0 || c->stream_bytes > 0))
                        return false;
                r->pump_streams[i] = (PumpStream) { .fd = c->fd, .lowat = c->lowat, .answer = i > 0 };
        }
        k = pump_start(&cfg, r->pump_streams, t->streams, &r->pump);
        if (k < 0) {
                log_debug_errno(k, "%s: cannot start the test's threads, moving its data on the loop: %m", o->name);
                return false;
        }
        r->pump_owner = o;
        t->threads = MIN(t->streams, t->host.n_cpus);
        for (unsigned i = 0; i < t->streams; i++)
                (void) sd_event_source_set_enabled(test_stream(o, i)->io, SD_EVENT_OFF);
        return true;
}

void bulk_upload_begin(Conn *c) {
        BulkTest *t = &c->test;

        /* The asking connection, once its READY has left (the client sends nothing before). */
        if (c->state != CONN_UPLOAD || c->owner || c->responder->bulk_owner != c || c->out_len > 0 || t->sending)
                return;
        t->sending = true;
        (void) pump_begin(c);
}

/* What the pump's threads saw the client do wrong on an upload's stream, as the loop would have
 * answered it (conn_read(), conn_dispatch(), bulk_received()); false for a socket that broke. */
static bool upload_refuse(Conn *c, int error) {
        Responder *r = c->responder;

        switch (error) {
        case -EBADMSG:
        case -EMSGSIZE:
                r->stats.closed_protocol++;
                conn_fail(c, PROTO_ERROR_PROTOCOL, error == -EMSGSIZE ? "frame size out of bounds" : "malformed frame header");
                return true;
        case -EPROTO:
                bulk_fail(c, PROTO_ERROR_PROTOCOL, "unexpected frame during upload");
                return true;
        case -ENOSPC:
                bulk_fail(c, PROTO_ERROR_LIMIT, "more data than granted");
                return true;
        }
        return false;
}

void bulk_pump_done(Responder *r) {
        Conn *o = r->pump_owner, *streams[PROTO_STREAMS_MAX];
        BulkTest *t = &o->test;
        unsigned n = t->streams;
        int failed = -1;

        r->pump = pump_join(r->pump);
        r->pump_owner = NULL;
        t->bytes = 0;
        for (unsigned i = 0; i < n; i++) {
                PumpStream *ps = &r->pump_streams[i];
                streams[i] = test_stream(o, i);
                streams[i]->stream_bytes = ps->bytes;
                t->bytes += ps->bytes;
                if (t->upload) {
                        streams[i]->lowat = ps->lowat;
                        if (ps->bytes > 0)
                                streams[i]->stream_last_usec = ps->last_usec;
                        t->last_usec = MAX(t->last_usec, streams[i]->stream_last_usec);
                }
                (void) sd_event_source_set_enabled(streams[i]->io, SD_EVENT_ON);
                if (ps->error < 0) {
                        /* Perhaps cut inside a frame: an error frame there would be read as data. */
                        streams[i]->data_frame_sent = 1;
                        /* The stream that broke, rather than those it stopped. */
                        if (failed < 0 || (r->pump_streams[failed].error == -ETIME && ps->error != -ETIME))
                                failed = (int) i;
                }
        }
        if (failed >= 0) {
                Conn *c = streams[failed];
                int error = r->pump_streams[failed].error;
                if (error == -ETIME) {
                        r->stats.closed_timeout++;
                        bulk_fail(c, PROTO_ERROR_LIMIT, "test ran past its granted time");
                } else if (!t->upload || !upload_refuse(c, error)) {
                        /* The stream's socket broke: it goes, and the test with it (bulk_conn_gone()). */
                        log_debug_errno(error, "%s: %s failed: %m", c->name, t->upload ? "receive" : "send");
                        conn_free(c);
                        return;
                }
                for (unsigned i = 0; i < n; i++)
                        conn_update_events(streams[i]);
                return;
        }
        for (unsigned i = 0; i < n; i++) {
                if (!t->upload) {
                        stream_finish_download(streams[i]);
                        continue;
                }
                bulk_upload_end(streams[i]);
                /* The same frame, as much of it as the thread sent already (pump_stream_result()). */
                if (i > 0)
                        streams[i]->out_sent = MIN(r->pump_streams[i].answered, streams[i]->out_len);
        }
        /* The owner last: freeing it (its END could not leave) frees the streams it owns. */
        for (unsigned i = n; i-- > 0;)
                (void) conn_kick(streams[i]);
}

static int on_pump_done(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Responder *r = userdata;
        uint64_t v;

        (void) read(fd, &v, sizeof(v));
        if (r->pump && pump_finished(r->pump))
                bulk_pump_done(r);
        return 0;
}

int responder_pump_init(Responder *r) {
        r->pump_done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (r->pump_done_fd < 0)
                return -errno;
        return sd_event_add_io(r->event, &r->pump_done, r->pump_done_fd, EPOLLIN, on_pump_done, r);
}

void responder_pump_done(Responder *r) {
        r->pump_done = sd_event_source_disable_unref(r->pump_done);
        r->pump_done_fd = safe_close(r->pump_done_fd);
}

bool bulk_pump_download(Conn *c) {
        Responder *r = c->responder;
        Conn *o = owner_of(c);
        BulkTest *t = &o->test;
        size_t moved = 0;

        /* The client starts its clock at READY: no stream sends before READY has left. */
        if (!t->sending) {
                if (c != o || c->out_len > 0)
                        return true;
                t->sending = true;
                if (pump_begin(o))
                        return true;
                for (unsigned i = 1; i < t->streams; i++)
                        conn_update_events(test_stream(o, i));
        }

        while (moved < PUMP_BUDGET && c->out_len == 0 && c->state == CONN_DOWNLOAD) {
                if (c->data_frame_len == 0) {
                        if (t->bytes >= t->granted_bytes || now_mono() - t->start_usec >= t->granted_usec) {
                                stream_finish_download(c);
                                return true;
                        }
                        /* Frames are handed out from the grant of all streams together. */
                        c->data_frame_len = (uint32_t) MIN((uint64_t) t->frame_size, t->granted_bytes - t->bytes);
                        c->data_frame_sent = 0;
                        t->bytes += c->data_frame_len;
                        proto_header_encode(c->data_header, PROTO_DATA, c->data_frame_len);
                }

                size_t sent = 0;
                if (r->payload_fd >= 0) {
                        int k = net_payload_send(c->fd, r->payload_fd, c->data_header, PROTO_HEADER_SIZE + c->data_frame_len,
                                                 c->data_frame_sent, &sent);
                        if (k == 0)
                                return true;
                        if (k < 0) {
                                log_debug_errno(k, "%s: send failed: %m", c->name);
                                conn_free(c);
                                return false;
                        }
                        moved += sent;
                        c->data_frame_sent += (uint32_t) sent;
                        if (c->data_frame_sent == PROTO_HEADER_SIZE + c->data_frame_len) {
                                c->stream_bytes += c->data_frame_len;
                                c->data_frame_len = c->data_frame_sent = 0;
                        }
                        continue;
                }
                struct iovec iov[2];
                int n = 0;
                if (c->data_frame_sent < PROTO_HEADER_SIZE)
                        iov[n++] = (struct iovec) { .iov_base = c->data_header + c->data_frame_sent,
                                                    .iov_len = PROTO_HEADER_SIZE - c->data_frame_sent };
                uint32_t body_sent = c->data_frame_sent > PROTO_HEADER_SIZE ? c->data_frame_sent - PROTO_HEADER_SIZE : 0;
                iov[n++] = (struct iovec) { .iov_base = r->scratch, .iov_len = c->data_frame_len - body_sent };

                struct msghdr mh = { .msg_iov = iov, .msg_iovlen = (size_t) n };
                ssize_t k = sendmsg(c->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN)
                                return true;
                        log_debug("%s: send failed: %m", c->name);
                        conn_free(c);
                        return false;
                }
                moved += (size_t) k;
                c->data_frame_sent += (uint32_t) k;
                if (c->data_frame_sent == PROTO_HEADER_SIZE + c->data_frame_len) {
                        c->stream_bytes += c->data_frame_len;
                        c->data_frame_len = c->data_frame_sent = 0;
                }
        }
        return true;
}
