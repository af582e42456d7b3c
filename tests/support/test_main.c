/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CUnit runner of both test programs: tests/pp_unit (the internals,
 * linked with the core) and tests/pp_api (the public API, linked with the
 * shipped library), each with its own table of suites (suites.c beside
 * its tests). With no argument a program runs every suite; `SUITE` runs
 * one, `SUITE:PREFIX` its tests whose titles start with PREFIX.
 */
#include "config.h"
#include "testutil.h"
#include "watchdog.h"

#include <CUnit/Basic.h>
#include <apr_file_info.h>
#include <apr_general.h>
#include <apr_lib.h>
#include <apr_strings.h>

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    unsigned failed = 0;
    int i;

    /* A hang is a failure too: each test has its own limit (watchdog.h),
     * and this one catches what runs outside any test. */
    t_os_watchdog(1800);
    if (apr_initialize() != APR_SUCCESS || apr_pool_create(&t_root, NULL) != APR_SUCCESS) {
        fprintf(stderr, "%s: cannot initialise APR\n", argv[0]);
        return 1;
    }
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    /* libtool leaves the built plugins in tests/plugins/.libs, next to the
     * program wherever the build tree is; where libtool must wrap the
     * program (Windows), the real one runs from tests/.libs. */
    {
        /* apr_filepath_name_get knows the OS's separators. */
        const char *name = apr_filepath_name_get(argv[0]);
        const char *here = name > argv[0] ? apr_pstrmemdup(t_root, argv[0],
                                                           (apr_size_t)(name - argv[0]))
                                          : "./";
        const char *up = "";
        char *dir;

        if (strlen(here) > 1 && !strcmp(apr_filepath_name_get(apr_pstrmemdup(
                t_root, here, strlen(here) - 1)), ".libs"))
            up = "../";
        /* Absolute, since the tests link to the plugins from elsewhere. */
        apr_filepath_merge(&dir, NULL, apr_pstrcat(t_root, here, up, "plugins/.libs", NULL),
                           APR_FILEPATH_NATIVE, t_root);
        t_plugin_dir = dir;
        apr_filepath_merge(&dir, NULL, apr_pstrcat(t_root, here, up, "../plugins/.libs", NULL),
                           APR_FILEPATH_NATIVE, t_root);
        t_bundled_dir = dir;
    }
    for (i = 0; t_suites[i]; i++)
        t_suites[i]();
    if (t_watchdog_start() != APR_SUCCESS) {
        fprintf(stderr, "%s: cannot start the per-test watchdog\n", argv[0]);
        return 1;
    }

    CU_basic_set_mode(CU_BRM_VERBOSE);
    if (argc > 1) {
        for (i = 1; i < argc; i++) {
            /* SUITE, or SUITE:PREFIX for the suite's tests whose titles
             * start with PREFIX. */
            const char *colon = strchr(argv[i], ':');
            char *name = colon ? apr_pstrmemdup(t_root, argv[i], (apr_size_t)(colon - argv[i]))
                               : argv[i];
            CU_pSuite s = CU_get_suite(name);
            CU_pTest t;
            if (!s) {
                fprintf(stderr, "%s: no suite named '%s'\n", apr_filepath_name_get(argv[0]),
                        name);
                t_watchdog_stop();
                CU_cleanup_registry();
                return 2;
            }
            if (!colon) {
                CU_basic_run_suite(s);
            }
            else {
                for (t = s->pTest; t; t = t->pNext)
                    if (strncmp(t->pName, colon + 1, strlen(colon + 1)) == 0)
                        CU_basic_run_test(s, t);
            }
            t_watchdog_idle();
            /* Each run resets CUnit's counts: add them up as we go. */
            failed += CU_get_number_of_failures() + CU_get_number_of_tests_failed();
        }
    }
    else {
        CU_basic_run_tests();
        t_watchdog_idle();
        failed = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
    }
    t_watchdog_stop();
    CU_cleanup_registry();
    apr_pool_destroy(t_root);
    apr_terminate();
    return failed ? 1 : 0;
}
