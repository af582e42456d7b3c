/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hash: digests of files with OpenSSL's libcrypto (its assembly: SHA-NI,
 * AVX2), each printed exactly as the coreutils tool prints it:
 *
 *   hash.md5 FILE      md5sum        hash.sha512 FILE   sha512sum
 *   hash.sha1 FILE     sha1sum       hash.b2 FILE       b2sum (BLAKE2b-512)
 *   hash.sha256 FILE   sha256sum     hash.check LINE    one line of sha256sum -c
 *
 * FILE "-" is standard input. A file is streamed in CHUNK-sized reads into
 * one buffer from the task's pool; a cancel is heard between reads.
 */
#include "config.h"
#include "parkpool/plugin.h"

#include <apr_file_io.h>
#include <apr_strings.h>

#include <openssl/evp.h>

#include <string.h>

#define CHUNK ((apr_size_t)256 << 10)

/* The digests through libcrypto's static getters rather than
 * EVP_MD_fetch: a fetched digest must be freed, and a plugin has no hook
 * that runs before libcrypto's own exit cleanup (an unload would leak it).
 * The getters' implicit fetch in EVP_DigestInit_ex is cached by libcrypto:
 * measured at about 0.5 us a file, against ~10 us of open and read. */
enum { MD5, SHA1, SHA256, SHA512, B2, NALGOS };

static const struct {
    const EVP_MD *(*md)(void);
    const char   *tag;    /* the --tag name of coreutils */
} algo_names[NALGOS] = {
    { EVP_md5, "MD5" }, { EVP_sha1, "SHA1" }, { EVP_sha256, "SHA256" },
    { EVP_sha512, "SHA512" }, { EVP_blake2b512, "BLAKE2b" },
};

#define ALGO(a) (algo_names[a].md())

typedef struct hash_arg {
    const char *path;
    apr_pool_t *p;           /* the task's own pool (see pp_task_type_t.parse) */
    int         algo;        /* hash.check: the line's algorithm, or -1 */
    int         alt;         /* hash.check: a second one to try, or -1 */
    int         check;
    apr_size_t  want_len;
    unsigned char want[EVP_MAX_MD_SIZE];
} hash_arg;

static apr_status_t parse_path(void **arg, const char *text, apr_pool_t *p)
{
    hash_arg *h;

    if (!text[0])
        return APR_EINVAL;
    h = apr_pcalloc(p, sizeof(*h));
    h->path = apr_pstrdup(p, text);
    h->p = p;
    h->algo = h->alt = -1;
    *arg = h;
    return APR_SUCCESS;
}

/* ------------------------------------------------------------ digests */

/* The digest of h->path (or standard input) with algorithm a. */
static apr_status_t digest_file(unsigned char *out, unsigned *out_len, const hash_arg *h, int a,
                                pp_task_ctx_t *ctx)
{
    apr_pool_t *scratch;
    apr_file_t *f;
    apr_status_t rv;
    EVP_MD_CTX *md;
    char *buf;
    int ok;

    /* The buffer and the file live in a pool of their own, gone before the
     * task ends: the next task gets the same memory back from the
     * allocator, even while this task's pool waits (-k) to be printed. */
    rv = apr_pool_create(&scratch, h->p);
    if (rv != APR_SUCCESS)
        return rv;
    if (strcmp(h->path, "-") == 0)
        rv = apr_file_open_stdin(&f, scratch);
    else
        rv = apr_file_open(&f, h->path, APR_FOPEN_READ | APR_FOPEN_BINARY, 0, scratch);
    if (rv != APR_SUCCESS) {
        apr_pool_destroy(scratch);
        return rv;
    }
    md = EVP_MD_CTX_new();
    if (!md) {
        apr_pool_destroy(scratch);
        return APR_ENOMEM;
    }
    buf = apr_palloc(scratch, CHUNK);
    ok = EVP_DigestInit_ex(md, ALGO(a), NULL);
    while (ok) {
        apr_size_t n = CHUNK;
        if (pp_task_cancelled(ctx)) {
            rv = PP_ECANCELLED;
            break;
        }
        rv = apr_file_read(f, buf, &n);
        if (n > 0)
            ok = EVP_DigestUpdate(md, buf, n);
        if (rv == APR_EOF) {
            rv = APR_SUCCESS;
            ok = ok && EVP_DigestFinal_ex(md, out, out_len);
            break;
        }
        if (rv != APR_SUCCESS)
            break;
    }
    if (!ok && rv == APR_SUCCESS)
        rv = APR_EGENERAL;    /* libcrypto refused: not seen with these digests */
    EVP_MD_CTX_free(md);
    if (strcmp(h->path, "-") != 0)
        apr_file_close(f);
    apr_pool_destroy(scratch);
    return rv;
}

/* Append name to line at *n as coreutils print it; escaped (a backslash,
 * a newline and a CR as C escapes), when escape says so. */
static void put_name(char *line, apr_size_t *n, const char *name, int escape)
{
    const char *c;

    for (c = name; *c; c++) {
        if (escape && (*c == '\\' || *c == '\n' || *c == '\r')) {
            line[(*n)++] = '\\';
            line[(*n)++] = *c == '\n' ? 'n' : *c == '\r' ? 'r' : '\\';
        }
        else {
            line[(*n)++] = *c;
        }
    }
}

/* sha256sum's line: "<hex>  <name>", and for a name with a backslash, a
 * newline or a CR, a leading backslash and those characters escaped. */
static void emit_digest(pp_task_ctx_t *ctx, const hash_arg *h, const unsigned char *digest,
                        unsigned len)
{
    static const char hex[] = "0123456789abcdef";
    apr_size_t n = 0;
    int escape = strpbrk(h->path, "\\\n\r") != NULL;
    char *line = apr_palloc(h->p, 2 + 2 * len + 2 + 2 * strlen(h->path) + 1);
    unsigned i;

    if (escape)
        line[n++] = '\\';
    for (i = 0; i < len; i++) {
        line[n++] = hex[digest[i] >> 4];
        line[n++] = hex[digest[i] & 15];
    }
    line[n++] = ' ';
    line[n++] = ' ';
    put_name(line, &n, h->path, escape);
    line[n] = '\0';
    pp_task_emit(ctx, line);
}

static apr_status_t run_digest(int a, hash_arg *h, pp_task_ctx_t *ctx)
{
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned len = 0;
    apr_status_t rv = digest_file(digest, &len, h, a, ctx);

    if (rv == APR_SUCCESS)
        emit_digest(ctx, h, digest, len);
    return rv;
}

static apr_status_t run_md5(void *arg, pp_task_ctx_t *ctx) { return run_digest(MD5, arg, ctx); }
static apr_status_t run_sha1(void *arg, pp_task_ctx_t *ctx) { return run_digest(SHA1, arg, ctx); }
static apr_status_t run_sha256(void *arg, pp_task_ctx_t *ctx) { return run_digest(SHA256, arg, ctx); }
static apr_status_t run_sha512(void *arg, pp_task_ctx_t *ctx) { return run_digest(SHA512, arg, ctx); }
static apr_status_t run_b2(void *arg, pp_task_ctx_t *ctx) { return run_digest(B2, arg, ctx); }

/* ------------------------------------------------------------ hash.check */

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* len hex digits at text into h->want: 0 when they are not all hex. */
static int read_hex(hash_arg *h, const char *text, apr_size_t len)
{
    apr_size_t i;

    if (len % 2 || len / 2 > sizeof(h->want))
        return 0;
    for (i = 0; i < len; i += 2) {
        int hi = hexval(text[i]), lo = hexval(text[i + 1]);
        if (hi < 0 || lo < 0)
            return 0;
        h->want[i / 2] = (unsigned char)(hi << 4 | lo);
    }
    h->want_len = len / 2;
    return 1;
}

/* A name as a *sum file holds it: escaped lines undo \\, \n and \r. */
static const char *unescape(const char *text, apr_size_t len, int escaped, apr_pool_t *p)
{
    char *out = apr_palloc(p, len + 1), *o = out;
    apr_size_t i;

    for (i = 0; i < len; i++) {
        if (escaped && text[i] == '\\' && i + 1 < len
            && (text[i + 1] == '\\' || text[i + 1] == 'n' || text[i + 1] == 'r')) {
            i++;
            *o++ = text[i] == 'n' ? '\n' : text[i] == 'r' ? '\r' : '\\';
        }
        else if (escaped && text[i] == '\\') {
            return NULL;    /* as coreutils: an unknown escape is a bad line */
        }
        else {
            *o++ = text[i];
        }
    }
    *o = '\0';
    return out;
}

/* "TAG (NAME) = HEX", as the tools print with --tag. */
static apr_status_t parse_tagged(hash_arg *h, const char *text, int escaped)
{
    const char *open = strstr(text, " ("), *close;
    int a;

    if (!open)
        return APR_EINVAL;
    for (a = 0; a < NALGOS; a++)
        if (strlen(algo_names[a].tag) == (apr_size_t)(open - text)
            && strncmp(text, algo_names[a].tag, (apr_size_t)(open - text)) == 0)
            break;
    close = strstr(open, ") = ");
    /* The last ") = ": a name may hold the separator itself. */
    while (close && strstr(close + 1, ") = "))
        close = strstr(close + 1, ") = ");
    if (a == NALGOS || !close || !read_hex(h, close + 4, strlen(close + 4))
        || h->want_len != (apr_size_t)EVP_MD_get_size(ALGO(a)))
        return APR_EINVAL;
    h->algo = a;
    h->path = unescape(open + 2, (apr_size_t)(close - open - 2), escaped, h->p);
    return h->path && *h->path ? APR_SUCCESS : APR_EINVAL;
}

/* One line of a *sum file: "HEX  NAME" or "HEX *NAME" (the algorithm
 * follows from the length; 128 digits are SHA-512, else BLAKE2b-512, as
 * sha512sum and b2sum print them alike), or the --tag form; a leading
 * backslash says the name is escaped. */
static apr_status_t parse_check(void **arg, const char *text, apr_pool_t *p)
{
    hash_arg *h = apr_pcalloc(p, sizeof(*h));
    int escaped = text[0] == '\\';
    apr_size_t hexlen;
    const char *name;

    h->p = p;
    h->check = 1;
    h->algo = h->alt = -1;
    *arg = h;
    text += escaped;
    hexlen = strspn(text, "0123456789abcdefABCDEF");
    if (text[hexlen] != ' ')
        return parse_tagged(h, text, escaped);
    if ((text[hexlen + 1] != ' ' && text[hexlen + 1] != '*') || !read_hex(h, text, hexlen))
        return APR_EINVAL;
    switch (hexlen) {
    case 32: h->algo = MD5; break;
    case 40: h->algo = SHA1; break;
    case 64: h->algo = SHA256; break;
    case 128: h->algo = SHA512; h->alt = B2; break;
    default: return APR_EINVAL;
    }
    name = text + hexlen + 2;
    h->path = unescape(name, strlen(name), escaped, p);
    return h->path && *h->path ? APR_SUCCESS : APR_EINVAL;
}

/* "NAME: OK" as sha256sum -c prints it: escaped only for a newline. */
static void emit_verdict(pp_task_ctx_t *ctx, const hash_arg *h, const char *verdict)
{
    int escape = strchr(h->path, '\n') != NULL;
    char *line = apr_palloc(h->p, 1 + 2 * strlen(h->path) + 2 + strlen(verdict) + 1);
    apr_size_t n = 0;

    if (escape)
        line[n++] = '\\';
    put_name(line, &n, h->path, escape);
    line[n++] = ':';
    line[n++] = ' ';
    strcpy(line + n, verdict);
    pp_task_emit(ctx, line);
}

static apr_status_t run_check(void *arg, pp_task_ctx_t *ctx)
{
    hash_arg *h = arg;
    unsigned char got[EVP_MAX_MD_SIZE];
    unsigned len = 0;
    apr_status_t rv = digest_file(got, &len, h, h->algo, ctx);
    int match = rv == APR_SUCCESS && len == h->want_len && !memcmp(got, h->want, len);

    if (rv == APR_SUCCESS && !match && h->alt >= 0) {
        rv = digest_file(got, &len, h, h->alt, ctx);
        match = rv == APR_SUCCESS && len == h->want_len && !memcmp(got, h->want, len);
    }
    if (rv == PP_ECANCELLED)
        return rv;
    emit_verdict(ctx, h, match ? "OK" : rv == APR_SUCCESS ? "FAILED" : "FAILED open or read");
    return rv != APR_SUCCESS ? rv : match ? APR_SUCCESS : PP_EMISMATCH;
}

static const pp_task_type_t types[] = {
    { "hash.md5", "MD5 of FILE (- for stdin), as md5sum prints it", parse_path, run_md5, NULL, NULL },
    { "hash.sha1", "SHA-1 of FILE, as sha1sum prints it", parse_path, run_sha1, NULL, NULL },
    { "hash.sha256", "SHA-256 of FILE, as sha256sum prints it", parse_path, run_sha256, NULL, NULL },
    { "hash.sha512", "SHA-512 of FILE, as sha512sum prints it", parse_path, run_sha512, NULL, NULL },
    { "hash.b2", "BLAKE2b-512 of FILE, as b2sum prints it", parse_path, run_b2, NULL, NULL },
    { "hash.check", "check one line of a *sum file, as sha256sum -c", parse_check, run_check,
      NULL, NULL },
};

static apr_status_t hash_init(pp_registry_t *reg)
{
    apr_status_t rv = APR_SUCCESS;
    apr_size_t i;
    int a;

    for (a = 0; a < NALGOS; a++)
        if (!ALGO(a))
            return APR_ENOTIMPL;    /* a libcrypto built without it */
    for (i = 0; i < sizeof(types) / sizeof(types[0]) && rv == APR_SUCCESS; i++)
        rv = pp_registry_add(reg, &types[i]);
    return rv;
}

/* Reading a file twice gives the same line twice: safe to run again. */
static const char *const idempotent[] = { "hash.*", NULL };

PP_PLUGIN_DEFINE_IDEMPOTENT("hash", "2.0.0", hash_init, idempotent);
