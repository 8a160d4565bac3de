/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* linkprobectl-http.h — GETs of a Prometheus server's HTTP API over libcurl (fabric --prometheus=) */
#pragma once

#include <stdint.h>

/* How to reach the server beside its URL: each may be NULL. */
typedef struct HttpAuth {
        const char *ca_file;       /* the CA certificates an https:// server's certificate must chain to */
        const char *user;          /* basic authentication, the password read from password_file */
        const char *password_file;
        const char *token_file;    /* bearer authentication, the token read from this file */
} HttpAuth;

typedef struct HttpClient HttpClient;

/* A client for the server at url (http:// or https://, [user:password@]host[:port][/path]), every
 * request before deadline (CLOCK_MONOTONIC): 0, or an exit code after saying why (CTL_EXIT_USAGE for
 * a URL or options that cannot be used, CTL_EXIT_FAILURE for a file that cannot be read). */
int http_client_new(const char *url, const HttpAuth *auth, uint64_t deadline, HttpClient **ret);
HttpClient *http_client_free(HttpClient *c);
static inline void http_client_freep(HttpClient **c) {
        http_client_free(*c);
}

/* GET path (under the URL's own path) with the query string "name=<value URL-encoded>"; the body of a
 * 200 answer (NUL-terminated) in ret: 0, or CTL_EXIT_FAILURE after a message that names the URL and
 * what went wrong (curl's own words with it). */
int http_client_get(HttpClient *c, const char *path, const char *name, const char *value, char **ret);
