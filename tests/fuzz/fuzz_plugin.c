/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: the parse functions of a bundled plugin, the code that
 * reads the ARG of every job line. Built once per plugin, with the
 * plugin's source compiled in (PLUGIN_SOURCE), so that the fuzzer sees
 * its branches; its types are registered in a real registry, as a load
 * would, and each input goes to every type's parse. A parse may refuse
 * (APR_EINVAL), never crash, leak or read past the text.
 */
#include PLUGIN_SOURCE

#include <apr_general.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static apr_pool_t *root;
static pp_registry_t *registry;

/* At exit: APR's pools may sit in mmap'd memory, which LeakSanitizer does
 * not scan, so what only they point to would be reported as leaked. */
static void tear_down(void)
{
    apr_pool_destroy(root);
    apr_terminate();
}

/* Once, before any input: what it allocates lives for the whole run. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    if (apr_initialize() != APR_SUCCESS || apr_pool_create(&root, NULL) != APR_SUCCESS
        || pp_registry_create(&registry, root) != APR_SUCCESS
        || pp_plugin_entry.init(registry) != APR_SUCCESS)
        abort();
    atexit(tear_down);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_size_t i, n;
    apr_pool_t *p;
    char *text;
    void *arg;

    n = pp_registry_count(registry);
    for (i = 0; i < n; i++) {
        const pp_task_type_t *type = pp_registry_type(registry, i);
        if (!type->parse)
            continue;
        if (apr_pool_create(&p, root) != APR_SUCCESS)
            abort();
        /* The text as a task gets it: its own copy, ending at a NUL. */
        text = apr_pstrmemdup(p, (const char *)data, size);
        arg = NULL;
        if (type->parse(&arg, text, p) == APR_SUCCESS && type->release)
            type->release(arg);
        apr_pool_destroy(p);
    }
    return 0;
}
