/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A program built against the 4.x layouts (v4.h, not parkpool.h), run
 * with the current library by tests/sh/abi.sh. Each struct is followed by
 * bytes that are not the program's to lose: a library that read past the
 * old struct would take them for fields added since (hooks to call), one
 * that wrote past it would change them. Exit 0 when all held.
 */
#include "v4.h"

#include <apr_general.h>
#include <stdio.h>
#include <string.h>

#define JUNK 0xA5
#define TASKS 1000

static int failures;

#define CHECK(cond)                                                          \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf(stderr, "old_layout.c:%d: %s\n", __LINE__, #cond);       \
            failures++;                                                      \
        }                                                                    \
    } while (0)

static int junk_intact(const unsigned char *p, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (p[i] != JUNK)
            return 0;
    return 1;
}

static apr_status_t task(void *arg, pp_task_ctx_t *ctx)
{
    (void)ctx;
    (void)arg;
    return APR_SUCCESS;
}

static unsigned released;

static void release(void *arg)
{
    (void)arg;
    released++;    /* one worker: no race */
}

int main(void)
{
    struct { pp_config_t cfg; unsigned char after[256]; } c;
    struct { pp_stats_t st; unsigned char after[256]; } s;
    struct { pp_task_t t; unsigned char after[256]; } t;
    apr_pool_t *p;
    pp_pool_t *pool;
    int i;

    apr_initialize();
    apr_pool_create(&p, NULL);

    memset(&c, JUNK, sizeof(c));
    pp_config_init(&c.cfg);
    CHECK(junk_intact(c.after, sizeof(c.after)));
    CHECK(c.cfg.threads == 0 && c.cfg.stack_size == 2u * 1024 * 1024);
    CHECK(c.cfg.name_prefix && strcmp(c.cfg.name_prefix, "pp-worker") == 0);
    CHECK(c.cfg.on_write == NULL && c.cfg.on_log == NULL);
    c.cfg.threads = 1;

    CHECK(pp_pool_create(&pool, &c.cfg, p) == APR_SUCCESS);
    if (failures)
        return 1;
    memset(&s, JUNK, sizeof(s));
    pp_pool_stats(pool, &s.st);
    CHECK(junk_intact(s.after, sizeof(s.after)));
    CHECK(s.st.threads == 1 && s.st.submitted == 0);
    memset(&t, JUNK, sizeof(t));
    t.t.fn = task;
    t.t.arg = NULL;
    t.t.release = release;
    t.t.name = "old";
    for (i = 0; i < TASKS; i++)
        CHECK(pp_submit_task(pool, &t.t, NULL, 0) == APR_SUCCESS);
    CHECK(pp_pool_shutdown(pool, PP_DRAIN, -1) == APR_SUCCESS);

    memset(&s, JUNK, sizeof(s));
    pp_pool_stats(pool, &s.st);
    CHECK(junk_intact(s.after, sizeof(s.after)));
    CHECK(s.st.completed == TASKS && s.st.submitted == TASKS);
    CHECK(released == TASKS);
    pp_pool_destroy(pool);
    apr_terminate();
    printf("old layout: %d failure(s)\n", failures);
    return failures != 0;
}
