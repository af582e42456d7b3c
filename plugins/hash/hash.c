/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hash: "hash.md5 FILE" and "hash.sha1 FILE" print exactly the line that
 * md5sum / sha1sum print for FILE. The file is streamed in 64 KiB reads
 * through APR-util's digests; nothing holds the whole file.
 */
#include "config.h"
#include "parkpool/plugin.h"

#include <apr_file_io.h>
#include <apr_md5.h>
#include <apr_sha1.h>
#include <apr_strings.h>

#include <string.h>

#define CHUNK (64 * 1024)

typedef struct hash_arg {
    const char *path;
    apr_pool_t *p;    /* the task's own pool (see pp_task_type_t.parse) */
} hash_arg;

static apr_status_t parse_path(void **arg, const char *text, apr_pool_t *p)
{
    hash_arg *h;

    if (!text[0])
        return APR_EINVAL;
    h = apr_palloc(p, sizeof(*h));
    h->path = apr_pstrdup(p, text);
    h->p = p;
    *arg = h;
    return APR_SUCCESS;
}

/* Feeds the file to update(ctx, data, len) in CHUNK-sized reads. */
static apr_status_t stream(const hash_arg *h, void *ctx,
                           void (*update)(void *ctx, const char *data, apr_size_t len))
{
    apr_file_t *f;
    apr_status_t rv;
    char *buf = apr_palloc(h->p, CHUNK);

    rv = apr_file_open(&f, h->path, APR_FOPEN_READ | APR_FOPEN_BINARY, 0, h->p);
    if (rv != APR_SUCCESS)
        return rv;
    for (;;) {
        apr_size_t n = CHUNK;
        rv = apr_file_read(f, buf, &n);
        if (n > 0)
            update(ctx, buf, n);
        if (rv == APR_EOF) {
            rv = APR_SUCCESS;
            break;
        }
        if (rv != APR_SUCCESS)
            break;
    }
    apr_file_close(f);
    return rv;
}

/* md5sum's line: "<hex>  <name>", and for a name with a backslash or a
 * newline, a leading backslash and those characters escaped. */
static void emit_digest(pp_task_ctx_t *ctx, const hash_arg *h,
                        const unsigned char *digest, apr_size_t len)
{
    static const char hex[] = "0123456789abcdef";
    apr_size_t i, n = 0, nlen = strlen(h->path);
    int escape = strpbrk(h->path, "\\\n") != NULL;
    char *line = apr_palloc(h->p, 2 + 2 * len + 2 + 2 * nlen + 1);
    const char *c;

    if (escape)
        line[n++] = '\\';
    for (i = 0; i < len; i++) {
        line[n++] = hex[digest[i] >> 4];
        line[n++] = hex[digest[i] & 15];
    }
    line[n++] = ' ';
    line[n++] = ' ';
    for (c = h->path; *c; c++) {
        if (escape && (*c == '\\' || *c == '\n')) {
            line[n++] = '\\';
            line[n++] = *c == '\n' ? 'n' : '\\';
        }
        else {
            line[n++] = *c;
        }
    }
    line[n] = '\0';
    pp_task_emit(ctx, line);
}

/* One digest algorithm behind APR-util's calls, so both types share run. */
typedef struct algo {
    apr_size_t size;
    void (*init)(void *ctx);
    void (*update)(void *ctx, const char *data, apr_size_t len);
    void (*final)(unsigned char *digest, void *ctx);
} algo;

static void md5_init(void *ctx) { apr_md5_init(ctx); }
static void md5_update(void *ctx, const char *data, apr_size_t len) { apr_md5_update(ctx, data, len); }
static void md5_final(unsigned char *digest, void *ctx) { apr_md5_final(digest, ctx); }
static void sha1_init(void *ctx) { apr_sha1_init(ctx); }
/* apr_sha1_update takes an unsigned int length; CHUNK fits. */
static void sha1_update(void *ctx, const char *data, apr_size_t len) { apr_sha1_update(ctx, data, (unsigned int)len); }
static void sha1_final(unsigned char *digest, void *ctx) { apr_sha1_final(digest, ctx); }

static const algo md5 = { APR_MD5_DIGESTSIZE, md5_init, md5_update, md5_final };
static const algo sha1 = { APR_SHA1_DIGESTSIZE, sha1_init, sha1_update, sha1_final };

static apr_status_t run_digest(const algo *a, const hash_arg *h, pp_task_ctx_t *ctx)
{
    union { apr_md5_ctx_t md5; apr_sha1_ctx_t sha1; } state;
    unsigned char digest[APR_SHA1_DIGESTSIZE > APR_MD5_DIGESTSIZE
                         ? APR_SHA1_DIGESTSIZE : APR_MD5_DIGESTSIZE];
    apr_status_t rv;

    a->init(&state);
    rv = stream(h, &state, a->update);
    if (rv != APR_SUCCESS)
        return rv;
    a->final(digest, &state);
    emit_digest(ctx, h, digest, a->size);
    return APR_SUCCESS;
}

static apr_status_t run_md5(void *arg, pp_task_ctx_t *ctx)
{
    return run_digest(&md5, arg, ctx);
}

static apr_status_t run_sha1(void *arg, pp_task_ctx_t *ctx)
{
    return run_digest(&sha1, arg, ctx);
}

static const pp_task_type_t types[] = {
    { "hash.md5", "MD5 of FILE, as md5sum prints it", parse_path, run_md5, NULL, NULL },
    { "hash.sha1", "SHA-1 of FILE, as sha1sum prints it", parse_path, run_sha1, NULL, NULL },
};

static apr_status_t hash_init(pp_registry_t *reg)
{
    apr_status_t rv = pp_registry_add(reg, &types[0]);

    return rv == APR_SUCCESS ? pp_registry_add(reg, &types[1]) : rv;
}

PP_PLUGIN_DEFINE("hash", "1.0.0", hash_init);
