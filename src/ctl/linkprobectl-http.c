/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The HTTP under fabric --prometheus=: libcurl, so that a Prometheus behind HTTPS, basic or bearer
 * authentication and a proxy (libcurl reads http_proxy, https_proxy and no_proxy from the environment)
 * is reached like one on plain HTTP. One handle for every query, so they share a connection; a deadline
 * over all of them and a bound on each answer's size. What we add is the error said plainly: the URL
 * (its password left out), what went wrong in words a user acts on, then curl's own.
 */
#include <curl/curl.h>
#include <fcntl.h>

#include "linkprobectl-http.h"
#include "linkprobectl.h"
#include "shared/fileio.h"
#include "shared/time-util.h"

#define ANSWER_MAX (32U * 1024U * 1024U)
#define SECRET_MAX 4096U

struct HttpClient {
        CURL *curl;
        CURLU *base;       /* the URL as given, its path without a trailing slash */
        char *base_path;
        char *shown;       /* the URL to print: no password, escaped for the terminal */
        char *password;    /* from --prometheus-password-file= */
        char *token;       /* from --prometheus-token-file= */
        struct curl_slist *headers;
        uint64_t deadline;
        char *answer;
        size_t answer_size;
        bool too_big;
        char error[CURL_ERROR_SIZE];
};

HttpClient *http_client_free(HttpClient *c) {
        if (!c)
                return NULL;
        if (c->curl)
                curl_easy_cleanup(c->curl);
        curl_url_cleanup(c->base);
        curl_slist_free_all(c->headers);
        free(c->base_path);
        free(c->shown);
        if (c->password)
                explicit_bzero(c->password, strlen(c->password));
        free(c->password);
        if (c->token)
                explicit_bzero(c->token, strlen(c->token));
        free(c->token);
        free(c->answer);
        return mfree(c);
}

/* A password or token file: its first line, without the newline an editor leaves. */
static int read_secret(const char *option, const char *path, char **ret) {
        _cleanup_(freep) char *buf = NULL;
        size_t size = 0;
        int r = read_file_at(AT_FDCWD, path, SECRET_MAX, &buf, &size);

        if (r < 0) {
                _cleanup_(freep) char *shown = escape_for_terminal(path);
                fprintf(stderr, "Cannot read %s%s: %s\n", option, strna(shown), strerror(-r));
                return CTL_EXIT_FAILURE;
        }
        buf[strcspn(buf, "\r\n")] = '\0';
        if (isempty(buf)) {
                _cleanup_(freep) char *shown = escape_for_terminal(path);
                fprintf(stderr, "%s%s holds nothing on its first line.\n", option, strna(shown));
                return CTL_EXIT_FAILURE;
        }
        *ret = TAKE_PTR(buf);
        return 0;
}

static bool has_part(CURLU *u, CURLUPart part) {
        char *v = NULL;
        bool has = curl_url_get(u, part, &v, 0) == CURLUE_OK && !isempty(v);
        curl_free(v);
        return has;
}

/* The URL checked and taken apart: CTL_EXIT_USAGE after saying why it cannot be used. */
static int parse_base(HttpClient *c, const char *url) {
        _cleanup_(freep) char *shown = escape_for_terminal(url);
        char *scheme = NULL, *path = NULL, *safe = NULL;
        CURLU *copy;
        bool ok;

        c->base = curl_url();
        if (!c->base)
                return log_oom_ctl();
        ok = curl_url_set(c->base, CURLUPART_URL, url, 0) == CURLUE_OK &&
             curl_url_get(c->base, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
             (streq(scheme, "http") || streq(scheme, "https")) && has_part(c->base, CURLUPART_HOST) &&
             !has_part(c->base, CURLUPART_QUERY) && !has_part(c->base, CURLUPART_FRAGMENT) &&
             curl_url_get(c->base, CURLUPART_PATH, &path, 0) == CURLUE_OK;
        curl_free(scheme);
        if (!ok) {
                curl_free(path);
                fprintf(stderr, "Cannot use \"%s\": expected http[s]://[USER:PASSWORD@]HOST[:PORT][/PATH].\n",
                        strna(shown));
                return CTL_EXIT_USAGE;
        }
        c->base_path = strdup(path);
        curl_free(path);
        if (!c->base_path)
                return log_oom_ctl();
        while (*c->base_path && c->base_path[strlen(c->base_path) - 1] == '/')
                c->base_path[strlen(c->base_path) - 1] = '\0';

        /* What is printed leaves the password out: error messages end up in logs and tickets. */
        if (!has_part(c->base, CURLUPART_PASSWORD)) {
                c->shown = TAKE_PTR(shown);
                return 0;
        }
        copy = curl_url_dup(c->base);
        if (copy && curl_url_set(copy, CURLUPART_PASSWORD, "xxxxx", 0) == CURLUE_OK &&
            curl_url_get(copy, CURLUPART_URL, &safe, 0) == CURLUE_OK)
                c->shown = escape_for_terminal(safe);
        curl_free(safe);
        curl_url_cleanup(copy);
        return c->shown ? 0 : log_oom_ctl();
}

static size_t on_data(char *data, size_t size, size_t n, void *userdata) {
        HttpClient *c = userdata;
        size_t len = size * n;
        char *p;

        if (c->answer_size + len > ANSWER_MAX) {
                c->too_big = true;
                return 0; /* curl ends the transfer with CURLE_WRITE_ERROR */
        }
        p = realloc(c->answer, c->answer_size + len + 1);
        if (!p)
                return 0;
        memcpy(p + c->answer_size, data, len);
        c->answer = p;
        c->answer_size += len;
        c->answer[c->answer_size] = '\0';
        return len;
}

int http_client_new(const char *url, const HttpAuth *auth, uint64_t deadline, HttpClient **ret) {
        _cleanup_(http_client_freep) HttpClient *c = new0(HttpClient, 1);
        char user_agent[64];
        int r;

        if (!c)
                return log_oom_ctl();
        c->deadline = deadline;
        r = parse_base(c, url);
        if (r != 0)
                return r;
        if (auth->user && has_part(c->base, CURLUPART_USER)) {
                fprintf(stderr, "--prometheus-user= and a user in the URL %s: give one.\n", c->shown);
                return CTL_EXIT_USAGE;
        }
        if (auth->password_file && (r = read_secret("--prometheus-password-file=", auth->password_file, &c->password)) != 0)
                return r;
        if (auth->token_file && (r = read_secret("--prometheus-token-file=", auth->token_file, &c->token)) != 0)
                return r;

        if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK || !(c->curl = curl_easy_init()))
                return log_oom_ctl();
        snprintf(user_agent, sizeof(user_agent), "linkprobectl/%s", VERSION);
        c->headers = curl_slist_append(NULL, "Accept: application/json");
        if (!c->headers)
                return log_oom_ctl();
        curl_easy_setopt(c->curl, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(c->curl, CURLOPT_PROTOCOLS_STR, "http,https");
        curl_easy_setopt(c->curl, CURLOPT_FOLLOWLOCATION, 0L); /* the API answers where it is asked */
        curl_easy_setopt(c->curl, CURLOPT_USERAGENT, user_agent);
        curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, c->headers);
        curl_easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, on_data);
        curl_easy_setopt(c->curl, CURLOPT_WRITEDATA, c);
        curl_easy_setopt(c->curl, CURLOPT_ERRORBUFFER, c->error);
        if (auth->ca_file)
                curl_easy_setopt(c->curl, CURLOPT_CAINFO, auth->ca_file);
        if (auth->user) {
                curl_easy_setopt(c->curl, CURLOPT_HTTPAUTH, (long) CURLAUTH_BASIC);
                curl_easy_setopt(c->curl, CURLOPT_USERNAME, auth->user);
                curl_easy_setopt(c->curl, CURLOPT_PASSWORD, strempty(c->password));
        } else if (c->token) {
                curl_easy_setopt(c->curl, CURLOPT_HTTPAUTH, (long) CURLAUTH_BEARER);
                curl_easy_setopt(c->curl, CURLOPT_XOAUTH2_BEARER, c->token);
        }
        *ret = TAKE_PTR(c);
        return 0;
}

static int say_failed(HttpClient *c, const char *what) {
        _cleanup_(freep) char *detail = escape_for_terminal(c->error);

        if (isempty(detail))
                fprintf(stderr, "Cannot query Prometheus at %s: %s.\n", c->shown, what);
        else
                fprintf(stderr, "Cannot query Prometheus at %s: %s (curl: %s).\n", c->shown, what, detail);
        return CTL_EXIT_FAILURE;
}

/* What went wrong in the words that say what to do, for the codes a user can act on; curl's own
 * words follow them (its codes are many, a table not a switch over someone else's enum). */
static const struct {
        CURLcode code;
        const char *words;
} curl_words[] = {
        { CURLE_OPERATION_TIMEDOUT, "timed out" },
        { CURLE_COULDNT_RESOLVE_HOST, "no such host" },
        { CURLE_COULDNT_RESOLVE_PROXY, "no such proxy host (see https_proxy and http_proxy)" },
        { CURLE_PEER_FAILED_VERIFICATION, "its certificate is not trusted (its CA: --prometheus-ca-file=)" },
        { CURLE_SSL_CACERT_BADFILE, "the CA file cannot be read" },
        { CURLE_SSL_CONNECT_ERROR, "the TLS handshake failed" },
};

static int say_curl_failed(HttpClient *c, CURLcode code) {
        long os_errno = 0;

        if (isempty(c->error))
                snprintf(c->error, sizeof(c->error), "%s", curl_easy_strerror(code));
        if (code == CURLE_COULDNT_CONNECT) {
                curl_easy_getinfo(c->curl, CURLINFO_OS_ERRNO, &os_errno);
                return say_failed(c, os_errno > 0 ? strerror((int) os_errno) : "cannot connect");
        }
        if (code == CURLE_WRITE_ERROR)
                return say_failed(c, c->too_big ? "the answer is larger than 32 MiB" : "out of memory");
        for (size_t i = 0; i < ELEMENTSOF(curl_words); i++)
                if (curl_words[i].code == code)
                        return say_failed(c, curl_words[i].words);
        return say_failed(c, "the request failed");
}

int http_client_get(HttpClient *c, const char *path, const char *name, const char *value, char **ret) {
        _cleanup_(freep) char *full_path = NULL, *query = NULL;
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        char *escaped = NULL;
        CURLU *u = NULL;
        CURLcode code;
        long status = 0;

        c->error[0] = '\0';
        c->too_big = false;
        c->answer = mfree(c->answer);
        c->answer_size = 0;
        if (now >= c->deadline) {
                snprintf(c->error, sizeof(c->error), "no time left for %s", path);
                return say_failed(c, "timed out");
        }
        escaped = curl_easy_escape(c->curl, value, 0);
        if (!escaped || asprintf(&full_path, "%s%s", c->base_path, path) < 0 ||
            asprintf(&query, "%s=%s", name, escaped) < 0) {
                curl_free(escaped);
                return log_oom_ctl();
        }
        curl_free(escaped);
        u = curl_url_dup(c->base);
        if (!u || curl_url_set(u, CURLUPART_PATH, full_path, 0) != CURLUE_OK ||
            curl_url_set(u, CURLUPART_QUERY, query, 0) != CURLUE_OK) {
                curl_url_cleanup(u);
                return log_oom_ctl();
        }
        curl_easy_setopt(c->curl, CURLOPT_CURLU, u);
        curl_easy_setopt(c->curl, CURLOPT_TIMEOUT_MS, (long) MAX((c->deadline - now) / 1000, (uint64_t) 1));
        code = curl_easy_perform(c->curl);
        curl_easy_setopt(c->curl, CURLOPT_CURLU, NULL);
        curl_url_cleanup(u);
        if (code != CURLE_OK)
                return say_curl_failed(c, code);

        curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &status);
        if (status == 401) {
                snprintf(c->error, sizeof(c->error), "HTTP 401");
                return say_failed(c, "authentication failed (see --prometheus-user= and --prometheus-token-file=)");
        }
        if (status != 200) {
                snprintf(c->error, sizeof(c->error), "HTTP %ld", status);
                return say_failed(c, status == 403 ? "access denied" : "not a successful HTTP answer");
        }
        *ret = c->answer ? TAKE_PTR(c->answer) : strdup("");
        return *ret ? 0 : log_oom_ctl();
}
