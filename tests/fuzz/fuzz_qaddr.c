/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: pp__queue_addr, the parser of the queue addresses that
 * parkpoold --queue and parkpool submit / queue-stats take from their
 * command lines. Besides the sanitizers' checks, it asserts what the
 * callers rely on: on success a non-empty host without ':' or '/', a port
 * from 1 to 65535, a non-empty stream without '/'; on failure a reason.
 */
#include "config.h"
#include "redis/qaddr.h"

#include <apr_general.h>

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static apr_pool_t *root;
    apr_pool_t *p;
    char *url = malloc(size + 1), why[512];
    const char *host = NULL, *stream = NULL;
    int port = 0;
    apr_status_t rv;

    if (!url)
        return 0;
    if (!root) {
        apr_initialize();
        apr_pool_create(&root, NULL);
    }
    memcpy(url, data, size);
    url[size] = '\0';    /* an argument ends at its first NUL */
    apr_pool_create(&p, root);
    why[0] = '\0';
    rv = pp__queue_addr(url, &host, &port, &stream, why, sizeof(why), p);
    if (rv == APR_SUCCESS) {
        assert(host && *host && !strchr(host, ':') && !strchr(host, '/'));
        assert(port >= 1 && port <= 65535);
        assert(stream && *stream && !strchr(stream, '/'));
    }
    else {
        assert(rv == APR_EINVAL && why[0]);
    }
    apr_pool_destroy(p);
    free(url);
    return 0;
}
