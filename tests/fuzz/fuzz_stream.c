/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: Redis's replies as parkpoold --queue and parkpool
 * submit --wait read them. The bytes are RESP, parsed by hiredis's own
 * reader into replies as a connection would; each reply is walked as
 * XREADGROUP's, XREAD's and XAUTOCLAIM's (pp__stream_read / _list), and
 * each entry's fields looked up and judged as the queue judges them
 * (svc_qentry_refusal). Besides the sanitizers' checks, it asserts that
 * every entry reported is counted, and that an entry the queue would run
 * has a type that is a type's name (no space, no control) and an argument of one line with no NUL: what the
 * job line to the worker process needs.
 */
#include "config.h"
#include "redis/stream.h"
#include "daemon/qentry.h"

#include <hiredis/hiredis.h>

#include <assert.h>
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A reply is bounded by the COUNT its command asks; a declared size past
 * this would only measure the allocator. */
#define MAX_DECLARED 65536

static apr_size_t seen;

static void check_entry(void *baton, const char *key, const char *id, const redisReply *fields)
{
    apr_size_t tlen = 0, alen = 0, i;
    const char *type = pp__stream_field(fields, "type", &tlen);
    const char *arg = pp__stream_field(fields, "arg", &alen);
    const char *why = svc_qentry_refusal(type, tlen, arg, alen);

    (void)baton;
    (void)key;
    assert(id);
    seen++;
    if (why)
        return;
    assert(type && tlen > 0 && strlen(type) == tlen);
    for (i = 0; i < tlen; i++)
        assert(isalnum((unsigned char)type[i]) || strchr("_-.", type[i]));
    if (arg) {
        assert(strlen(arg) == alen);
        assert(!memchr(arg, '\n', alen));
    }
}

/* Whether the input declares an array or a string longer than the
 * commands' replies can be (looked for anywhere: cheap and enough). */
static int too_big(const uint8_t *data, size_t size)
{
    size_t i;

    for (i = 0; i + 1 < size; i++)
        if (data[i] == '*' || data[i] == '$') {
            unsigned long n = 0;
            size_t k = i + 1;
            while (k < size && data[k] >= '0' && data[k] <= '9' && n <= MAX_DECLARED)
                n = n * 10 + (unsigned long)(data[k++] - '0');
            if (n > MAX_DECLARED)
                return 1;
        }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    redisReader *rd;
    void *reply;

    if (too_big(data, size) || !(rd = redisReaderCreate()))
        return 0;
    if (redisReaderFeed(rd, (const char *)data, size) == REDIS_OK) {
        while (redisReaderGetReply(rd, &reply) == REDIS_OK && reply) {
            const redisReply *r = reply;
            apr_size_t n;
            seen = 0;
            n = pp__stream_read(r, check_entry, NULL);
            assert(n == seen);
            seen = 0;
            n = pp__stream_list(r, NULL, check_entry, NULL);
            assert(n == seen);
            check_entry(NULL, NULL, "-", r);
            freeReplyObject(reply);
        }
    }
    redisReaderFree(rd);
    return 0;
}
