/* SPDX-License-Identifier: Apache-2.0 */
/* The registry and the loader, against real plugins built in tests/plugins. */
#include "config.h"
#include "testutil.h"
#include "parkpool/plugin.h"

#include <apr_file_info.h>
#include <apr_file_io.h>
#include <apr_lib.h>
#include <apr_strings.h>
#include <apr_time.h>

#include <stdio.h>
#include <string.h>

static char *plugin(apr_pool_t *p, const char *name)
{
    return apr_psprintf(p, "%s/%s%s", t_plugin_dir, name, t_os_dso_suffix());
}

static pp_registry_t *registry_with_good(apr_pool_t *p)
{
    pp_registry_t *reg;
    char err[512];

    T_OK_FATAL(pp_registry_create(&reg, p));
    T_OK_FATAL(pp_registry_load(reg, plugin(p, "tp_good"), err, sizeof(err)));
    return reg;
}

static void test_load_good(void)
{
    apr_pool_t *p;
    pp_registry_t *reg;
    const pp_task_type_t *t;
    const pp_plugin_info_t *info;

    apr_pool_create(&p, t_root);
    reg = registry_with_good(p);
    T_EQ(pp_registry_count(reg), 3);
    CU_ASSERT_STRING_EQUAL(pp_registry_type(reg, 0)->name, "good.block");
    CU_ASSERT_STRING_EQUAL(pp_registry_type(reg, 2)->name, "good.num");
    CU_ASSERT_PTR_NULL(pp_registry_type(reg, 3));
    t = pp_registry_find(reg, "good.echo");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_STRING_EQUAL(t->summary, "emit the argument as a result line");
    info = pp_registry_owner(reg, t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(info);
    CU_ASSERT_STRING_EQUAL(info->name, "good");
    CU_ASSERT_STRING_EQUAL(info->version, "1.2.3");
    CU_ASSERT_PTR_NOT_NULL(strstr(info->path, apr_pstrcat(p, "tp_good", t_os_dso_suffix(), NULL)));
    CU_ASSERT_PTR_NULL(pp_registry_find(reg, "good.nope"));
    CU_ASSERT_PTR_EQUAL(pp_registry_suggest(reg, "good.ecko"), t);
    CU_ASSERT_PTR_EQUAL(pp_registry_suggest(reg, "echo"), t);
    CU_ASSERT_PTR_NULL(pp_registry_suggest(reg, "completely.different"));
    /* An ABI 1.0 plugin (PP_PLUGIN_DEFINE) says nothing of running twice. */
    CU_ASSERT_PTR_NULL(info->idempotent);
    T_EQ(pp_registry_idempotent(reg, t), 0);
    apr_pool_destroy(p);
}

/* Load path into a registry that has "good"; expect status and a message
 * naming the path and containing what; the registry must be unchanged. */
static void expect_load_failure(const char *path, apr_status_t status, const char *what)
{
    apr_pool_t *p;
    pp_registry_t *reg;
    char err[1024];
    apr_size_t before;

    apr_pool_create(&p, t_root);
    reg = registry_with_good(p);
    before = pp_registry_count(reg);
    T_EQ(pp_registry_load(reg, path, err, sizeof(err)), status);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, path));
    if (!strstr(err, what))
        fprintf(stderr, "\n    message '%s' lacks '%s'\n", err, what);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, what));
    T_EQ(pp_registry_count(reg), before);
    CU_ASSERT_PTR_NULL(pp_registry_find(reg, "dup.fresh"));
    CU_ASSERT_PTR_NULL(pp_registry_find(reg, "initfail.x"));
    CU_ASSERT_PTR_NOT_NULL(pp_registry_find(reg, "good.echo"));
    apr_pool_destroy(p);
}

static const char *random_so(apr_pool_t *p)
{
    const char *path = apr_psprintf(p, "%s/pp_test_random_%ld%s", t_os_tmpdir(), t_os_pid(),
                                    t_os_dso_suffix());
    apr_file_t *f;
    unsigned char buf[4096];
    apr_size_t i, n = sizeof(buf);

    for (i = 0; i < sizeof(buf); i++)
        buf[i] = (unsigned char)(i * 2654435761u >> 13);
    T_OK_FATAL(apr_file_open(&f, path, APR_FOPEN_WRITE | APR_FOPEN_CREATE
                             | APR_FOPEN_TRUNCATE, APR_FPROT_OS_DEFAULT, p));
    apr_file_write_full(f, buf, n, NULL);
    apr_file_close(f);
    return path;
}

static void test_load_failures(void)
{
    apr_pool_t *p;
    const char *junk;

    apr_pool_create(&p, t_root);
    expect_load_failure(plugin(p, "tp_missing"), APR_ENOENT, "no such file");
    junk = random_so(p);
    expect_load_failure(junk, PP_EPLUGIN, "not a loadable object");
    apr_file_remove(junk, p);
    expect_load_failure(plugin(p, "tp_nosym"), PP_EPLUGIN, "no pp_plugin_entry");
    expect_load_failure(plugin(p, "tp_badmagic"), PP_EPLUGIN, "wrong magic 0xdeadbeef");
    expect_load_failure(plugin(p, "tp_future"), PP_EABI,
                        apr_psprintf(p, "plugin needs %d.%d, this parkpool has %d.%d",
                                     PP_PLUGIN_ABI_MAJOR, PP_PLUGIN_ABI_MINOR + 1,
                                     PP_PLUGIN_ABI_MAJOR, PP_PLUGIN_ABI_MINOR));
    expect_load_failure(plugin(p, "tp_initfail"), APR_ENOSPC, "init of plugin 'initfail' failed");
    expect_load_failure(plugin(p, "tp_xdup"), PP_EDUPTYPE,
                        "task type 'good.echo' is registered already by plugin 'good'");
    expect_load_failure(plugin(p, "tp_good"), PP_EPLUGIN, "loaded already");
    expect_load_failure(t_plugin_dir, PP_EPLUGIN, "not a regular file");
    apr_pool_destroy(p);
}

static void test_load_dir(void)
{
    static const char *const names[] = {
        "tp_good", "tp_nosym", "tp_badmagic", "tp_future", "tp_initfail", "tp_xdup"
    };
    apr_pool_t *p, *rp;
    pp_registry_t *reg;
    char err[4096], *line;
    const char *dir, *junk, *suffix = t_os_dso_suffix();
    char *upper;
    apr_size_t i, lines = 0, want_lines = 6;
    apr_status_t rv;

    apr_pool_create(&p, t_root);
    dir = apr_psprintf(p, "%s/pp_test_plugins_%ld", t_os_tmpdir(), t_os_pid());
    rv = apr_dir_make(dir, APR_FPROT_OS_DEFAULT, p);    /* may be left by a crashed run */
    CU_ASSERT_FATAL(rv == APR_SUCCESS || APR_STATUS_IS_EEXIST(rv));
    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        T_OK(apr_file_copy(plugin(p, names[i]), apr_psprintf(p, "%s/%s%s", dir, names[i], suffix),
                           APR_FPROT_FILE_SOURCE_PERMS, p));
    junk = random_so(p);
    T_OK(apr_file_rename(junk, apr_psprintf(p, "%s/zz_junk%s", dir, suffix), p));
    /* Not plugins by their names: skipped without a word. */
    T_OK(apr_file_copy(plugin(p, "tp_badmagic"), apr_psprintf(p, "%s/x.la", dir),
                       APR_FPROT_FILE_SOURCE_PERMS, p));
    T_OK(apr_file_copy(plugin(p, "tp_badmagic"), apr_psprintf(p, "%s/README", dir),
                       APR_FPROT_FILE_SOURCE_PERMS, p));
    /* The suffix in capitals: a plugin where the OS ignores case (its
     * init fails, one more line), skipped elsewhere. */
    upper = apr_psprintf(p, "%s/tp_upper%s", dir, suffix);
    for (i = strlen(upper) - strlen(suffix); upper[i]; i++)
        upper[i] = (char)apr_toupper(upper[i]);
    T_OK(apr_file_copy(plugin(p, "tp_initfail"), upper, APR_FPROT_FILE_SOURCE_PERMS, p));
    if (t_os_module_suffix_ignores_case())
        want_lines++;

    /* In a pool of its own: Windows deletes no DLL that is still loaded. */
    apr_pool_create(&rp, p);
    T_OK_FATAL(pp_registry_create(&reg, rp));
    rv = pp_registry_load_dir(reg, dir, err, sizeof(err));
    CU_ASSERT_NOT_EQUAL(rv, APR_SUCCESS);
    /* tp_badmagic comes first in name order. */
    T_STATUS(rv, PP_EPLUGIN);
    CU_ASSERT_PTR_NOT_NULL_FATAL(pp_registry_find(reg, "good.echo"));
    T_EQ(pp_registry_count(reg), 3);
    for (line = err; line; line = strchr(line + 1, '\n'))
        lines++;
    /* badmagic, future, initfail, nosym, (upper,) xdup, junk */
    T_EQ(lines, want_lines);
    T_EQ(strstr(err, "tp_upper") != NULL, t_os_module_suffix_ignores_case());
    CU_ASSERT_PTR_NOT_NULL(strstr(err, apr_pstrcat(p, "zz_junk", suffix, ": not a loadable object", NULL)));
    CU_ASSERT_PTR_NULL(strstr(err, "x.la"));
    /* tp_xdup loads after tp_good, so good keeps its type. */
    CU_ASSERT_STRING_EQUAL(pp_registry_owner(reg, pp_registry_find(reg, "good.echo"))->name,
                           "good");
    CU_ASSERT_TRUE(APR_STATUS_IS_ENOENT(pp_registry_load_dir(reg, "/nonexistent/dir", err,
                                                             sizeof(err))));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "cannot open plugin folder"));
    apr_pool_destroy(rp);
    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        apr_file_remove(apr_psprintf(p, "%s/%s%s", dir, names[i], suffix), p);
    apr_file_remove(apr_psprintf(p, "%s/zz_junk%s", dir, suffix), p);
    apr_file_remove(apr_psprintf(p, "%s/x.la", dir), p);
    apr_file_remove(apr_psprintf(p, "%s/README", dir), p);
    apr_file_remove(upper, p);
    T_OK(apr_dir_remove(dir, p));
    apr_pool_destroy(p);
}

typedef struct outputs {
    volatile apr_uint32_t n, bad;
} outputs;

static void on_output(const char *line, const char *name, void *baton)
{
    outputs *o = baton;

    apr_atomic_inc32(&o->n);
    if (strcmp(line, "hello world") != 0 || strcmp(name, "good.echo") != 0)
        apr_atomic_inc32(&o->bad);
}

static void on_error(apr_status_t status, const char *name, void *baton)
{
    outputs *o = baton;

    if (strcmp(name, "good.num") != 0 || status != APR_OS_START_USERERR + 7)
        apr_atomic_inc32(&o->bad);
}

static void test_submit_named(void)
{
    apr_pool_t *p;
    pp_registry_t *reg;
    pp_pool_t *pool;
    pp_group_t *g;
    pp_config_t cfg;
    outputs o = { 0, 0 };
    long even = 4;
    pp_stats_t st;
    int i;

    apr_pool_create(&p, t_root);
    reg = registry_with_good(p);
    pp_config_init(&cfg);
    cfg.threads = 2;
    cfg.on_output = on_output;
    cfg.on_task_error = on_error;
    cfg.baton = &o;
    T_OK_FATAL(pp_pool_create(&pool, &cfg, p));
    T_OK_FATAL(pp_group_create(&g, p));
    for (i = 0; i < 1000; i++)
        T_OK(pp_submit_named(pool, reg, "good.echo", "hello world", g));
    T_OK(pp_submit_named(pool, reg, "good.num", "7", g));
    T_STATUS(pp_submit_named(pool, reg, "good.num", "seven", g), APR_EINVAL);
    T_STATUS(pp_submit_named(pool, reg, "good.nope", "x", g), PP_ENOTYPE);
    T_STATUS(pp_submit_named(pool, NULL, "good.echo", "x", g), APR_EINVAL);
    T_OK(pp_submit_typed(pool, pp_registry_find(reg, "good.num"), &even, g));
    T_OK(pp_group_wait(g, apr_time_from_sec(30)));
    T_EQ(pp_group_status(g), APR_OS_START_USERERR + 7);
    T_EQ(o.n, 1000);
    T_EQ(o.bad, 0);
    pp_pool_stats(pool, &st);
    T_EQ(st.completed, 1001);
    T_EQ(st.failed, 1);
    T_OK(pp_pool_shutdown(pool, PP_DRAIN, -1));
    apr_pool_destroy(p);
}

static apr_status_t host_run(void *arg, pp_task_ctx_t *ctx)
{
    (void)ctx;
    apr_atomic_inc32(arg);
    return APR_SUCCESS;
}

static void test_host_types(void)
{
    apr_pool_t *p;
    pp_registry_t *reg;
    pp_task_type_t t = { "host.count", "count", NULL, host_run, NULL, NULL };
    pp_task_type_t bad = t;
    static const char *const bad_names[] = { "nodot", ".verb", "family.", "a.b.c", "sp ace.x", "" };
    apr_size_t i;

    apr_pool_create(&p, t_root);
    T_OK_FATAL(pp_registry_create(&reg, p));
    T_OK(pp_registry_add(reg, &t));
    T_STATUS(pp_registry_add(reg, &t), PP_EDUPTYPE);
    for (i = 0; i < sizeof(bad_names) / sizeof(bad_names[0]); i++) {
        bad.name = bad_names[i];
        T_STATUS(pp_registry_add(reg, &bad), APR_EINVAL);
    }
    bad.name = "host.norun";
    bad.run = NULL;
    T_STATUS(pp_registry_add(reg, &bad), APR_EINVAL);
    T_STATUS(pp_registry_add(NULL, &t), APR_EINVAL);
    T_STATUS(pp_registry_add(reg, NULL), APR_EINVAL);
    T_STATUS(pp_registry_create(NULL, p), APR_EINVAL);
    T_STATUS(pp_registry_load(reg, NULL, NULL, 0), APR_EINVAL);
    T_EQ(pp_registry_count(reg), 1);
    CU_ASSERT_STRING_EQUAL(pp_registry_owner(reg, pp_registry_find(reg, "host.count"))->name,
                           "(host)");
    CU_ASSERT_PTR_NULL(pp_registry_owner(reg, &t));    /* the caller's, not the registry's */
    apr_pool_destroy(p);
}

typedef struct unloader {
    apr_pool_t *p;
    volatile apr_uint32_t done;
} unloader;

static void destroy_registry_pool(void *arg)
{
    unloader *u = arg;

    apr_pool_destroy(u->p);
    apr_atomic_set32(&u->done, 1);
}

/* Destroying a registry while one of its plugin's tasks runs waits for the
 * task: the plugin's code stays mapped until the worker is out of it. */
static void test_unload_waits_for_running_task(void)
{
    apr_pool_t *p, *rp;
    pp_registry_t *reg;
    pp_pool_t *pool;
    volatile apr_uint32_t flags[3] = { 0, 0, 0 };
    char addr[64];
    unloader u;
    t_thread *t;
    apr_time_t deadline;

    apr_pool_create(&p, t_root);
    pool = t_pool(p, 2, 0);
    apr_pool_create(&rp, p);
    reg = registry_with_good(rp);
    snprintf(addr, sizeof(addr), "%p", (void *)flags);    /* APR's %p is not C's */
    T_OK(pp_submit_named(pool, reg, "good.block", addr, NULL));
    deadline = apr_time_now() + apr_time_from_sec(10);
    while (!apr_atomic_read32(&flags[1]) && apr_time_now() < deadline)
        apr_sleep(500);
    CU_ASSERT_FATAL(apr_atomic_read32(&flags[1]));
    u.p = rp;
    u.done = 0;
    t = t_spawn(destroy_registry_pool, &u);
    apr_sleep(apr_time_from_msec(50));
    T_EQ(apr_atomic_read32(&u.done), 0);    /* waiting, not unloading */
    apr_atomic_set32(&flags[0], 1);
    t_join(t);
    T_EQ(flags[2], 1);    /* the task finished before the unload */
    T_OK(pp_pool_shutdown(pool, PP_DRAIN, -1));
    apr_pool_destroy(p);
}

/* pp_registry_unload: the types go at once, the code when the last task
 * that runs it has ended (good.block stays in plugin code 20 ms after its
 * flag: unmapped early, it would crash, ASan or not), and never blocking
 * the caller; then the same plugin loads again. */
static void test_unload_while_running(void)
{
    apr_pool_t *p;
    pp_registry_t *reg;
    pp_pool_t *pool;
    pp_group_t *g;
    const pp_task_type_t *echo;
    volatile apr_uint32_t flags[3] = { 0, 0, 0 };
    char addr[64], err[512];
    const char *path;
    apr_time_t deadline;

    apr_pool_create(&p, t_root);
    pool = t_pool(p, 2, 0);
    T_OK(pp_group_create(&g, p));
    reg = registry_with_good(p);
    path = plugin(p, "tp_good");
    CU_ASSERT_FATAL(t_os_module_loaded(path));
    echo = pp_registry_find(reg, "good.echo");
    CU_ASSERT_PTR_NOT_NULL_FATAL(echo);
    snprintf(addr, sizeof(addr), "%p", (void *)flags);
    T_OK(pp_submit_named(pool, reg, "good.block", addr, g));
    deadline = apr_time_now() + apr_time_from_sec(10);
    while (!apr_atomic_read32(&flags[1]) && apr_time_now() < deadline)
        apr_sleep(500);
    CU_ASSERT_FATAL(apr_atomic_read32(&flags[1]));

    T_OK(pp_registry_unload(reg, "good"));    /* returns at once */
    T_EQ(apr_atomic_read32(&flags[2]), 0);
    CU_ASSERT_PTR_NULL(pp_registry_find(reg, "good.echo"));
    T_EQ(pp_registry_count(reg), 0);
    T_STATUS(pp_submit_named(pool, reg, "good.echo", "x", NULL), PP_ENOTYPE);
    T_STATUS(pp_submit_typed(pool, echo, (void *)"x", NULL), PP_ENOTYPE);
    T_STATUS(pp_registry_unload(reg, "good"), APR_ENOENT);
    CU_ASSERT(t_os_module_loaded(path));      /* its task still runs it */
    apr_atomic_set32(&flags[0], 1);
    T_OK(pp_group_wait(g, apr_time_from_sec(30)));
    T_OK(pp_group_status(g));
    T_EQ(flags[2], 1);
    CU_ASSERT(!t_os_module_loaded(path));     /* gone with its last task */

    /* A new version of the file may come in under the same name. */
    T_OK(pp_registry_load(reg, path, err, sizeof(err)));
    T_EQ(pp_registry_count(reg), 3);
    T_OK(pp_submit_named(pool, reg, "good.num", "2", g));
    T_OK(pp_group_wait(g, apr_time_from_sec(30)));
    T_OK(pp_group_status(g));
    /* With nothing in flight, unloading unmaps at once. */
    T_OK(pp_registry_unload(reg, "good"));
    CU_ASSERT(!t_os_module_loaded(path));
    T_STATUS(pp_registry_unload(reg, NULL), APR_EINVAL);
    T_STATUS(pp_registry_unload(NULL, "good"), APR_EINVAL);
    T_OK(pp_pool_shutdown(pool, PP_DRAIN, -1));
    apr_pool_destroy(p);
}

/* Reload cycles with tasks in flight: each version is unmapped when its
 * last task ends, so versions do not pile up; every task ran. */
static void test_unload_cycles(void)
{
    apr_pool_t *p;
    pp_registry_t *reg;
    pp_pool_t *pool;
    pp_group_t *g;
    const char *path;
    char err[512];
    int round, i;

    apr_pool_create(&p, t_root);
    pool = t_pool(p, 4, 0);
    T_OK(pp_group_create(&g, p));
    T_OK_FATAL(pp_registry_create(&reg, p));
    path = plugin(p, "tp_good");
    for (round = 0; round < 50; round++) {
        T_OK_FATAL(pp_registry_load(reg, path, err, sizeof(err)));
        for (i = 0; i < 200; i++)
            T_OK(pp_submit_named(pool, reg, "good.num", "4", g));
        T_OK(pp_registry_unload(reg, "good"));
    }
    T_OK(pp_group_wait(g, apr_time_from_sec(60)));
    T_OK(pp_group_status(g));
    CU_ASSERT(!t_os_module_loaded(path));
    T_OK(pp_pool_shutdown(pool, PP_DRAIN, -1));
    apr_pool_destroy(p);
}

/* A queued task holds its plugin too: cancel releases it, then unload. */
static void test_cancelled_plugin_tasks_release(void)
{
    apr_pool_t *p, *rp;
    pp_registry_t *reg;
    pp_pool_t *pool;
    t_gate gate = { 0, 0, 0 };
    pp_stats_t st;
    int i;

    apr_pool_create(&p, t_root);
    pool = t_pool(p, 1, 0);
    apr_pool_create(&rp, p);
    reg = registry_with_good(rp);
    T_OK(pp_submit(pool, t_gate_task, &gate));
    t_gate_wait_arrived(&gate, 1);
    for (i = 0; i < 10000; i++)
        T_OK(pp_submit_named(pool, reg, "good.echo", "x", NULL));
    T_OK(pp_pool_shutdown(pool, PP_CANCEL, apr_time_from_sec(30)));
    pp_pool_stats(pool, &st);
    T_EQ(st.cancelled, 10000);
    apr_pool_destroy(rp);    /* returns at once: nothing holds the plugin */
    apr_pool_destroy(p);
}

/* pp_job_line_split: the job line parser of the tool and the service. */
static void expect_split(const char *text, apr_status_t want, const char *type, const char *arg)
{
    char buf[128], *t = (char *)"x", *a = (char *)"x";

    apr_cpystrn(buf, text, sizeof(buf));
    T_EQ(pp_job_line_split(buf, &t, &a), want);
    if (type) {
        CU_ASSERT_STRING_EQUAL(t, type);
    }
    else {
        CU_ASSERT_PTR_NULL(t);
    }
    if (arg) {
        CU_ASSERT_STRING_EQUAL(a, arg);
    }
    else {
        CU_ASSERT_PTR_NULL(a);
    }
}

static const char *version_at(pp_registry_t **reg, const char *path, apr_pool_t *p)
{
    char err[512];
    const pp_plugin_info_t *info;

    T_OK_FATAL(pp_registry_create(reg, p));
    T_OK_FATAL(pp_registry_load(*reg, path, err, sizeof(err)));
    info = pp_registry_owner(*reg, pp_registry_find(*reg, "good.echo"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(info);
    CU_ASSERT_STRING_EQUAL(info->path, path);    /* as given, whatever name loaded it */
    return info->version;
}

/* A plugin file renamed over one that a registry still holds: the next
 * load gets the new file, not the module the dynamic loader has under
 * that name (a daemon's reload under load); the same file again shares
 * its module; once the old module is gone its name is free again. */
static void test_load_replaced_file(void)
{
    apr_pool_t *p, *p1, *p2, *p3, *p4;
    pp_registry_t *r1, *r2, *r3, *r4;
    const char *dir, *path, *staged;

    if (!t_os_module_replaceable()) {
        CU_PASS("this OS answers a loaded module's name with that module");
        return;
    }
    apr_pool_create(&p, t_root);
    T_OK_FATAL(apr_temp_dir_get(&dir, p));
    path = apr_psprintf(p, "%s/pp-fresh-%" APR_TIME_T_FMT "%s", dir, apr_time_now(),
                        t_os_dso_suffix());
    staged = apr_pstrcat(p, path, ".new", NULL);
    T_OK_FATAL(apr_file_copy(plugin(p, "tp_good"), path, APR_FPROT_FILE_SOURCE_PERMS, p));
    apr_pool_create(&p1, p);
    CU_ASSERT_STRING_EQUAL(version_at(&r1, path, p1), "1.2.3");

    T_OK_FATAL(apr_file_copy(plugin(p, "tp_good2"), staged, APR_FPROT_FILE_SOURCE_PERMS, p));
    T_OK_FATAL(apr_file_rename(staged, path, p));
    apr_pool_create(&p2, p);
    CU_ASSERT_STRING_EQUAL(version_at(&r2, path, p2), "2.0.0");
    apr_pool_create(&p3, p);
    CU_ASSERT_STRING_EQUAL(version_at(&r3, path, p3), "2.0.0");
    /* Both versions run side by side, each its own code. */
    CU_ASSERT_STRING_EQUAL(version_at(&r4, path, p3), "2.0.0");
    CU_ASSERT_STRING_EQUAL(pp_registry_owner(r1, pp_registry_find(r1, "good.echo"))->version,
                           "1.2.3");
    apr_pool_destroy(p1);
    apr_pool_destroy(p2);
    apr_pool_destroy(p3);
    /* Back to the first version, by rename, with nothing loaded. */
    T_OK_FATAL(apr_file_copy(plugin(p, "tp_good"), staged, APR_FPROT_FILE_SOURCE_PERMS, p));
    T_OK_FATAL(apr_file_rename(staged, path, p));
    apr_pool_create(&p4, p);
    CU_ASSERT_STRING_EQUAL(version_at(&r4, path, p4), "1.2.3");
    apr_pool_destroy(p4);
    apr_file_remove(path, p);
    apr_pool_destroy(p);
}

static void test_job_line_split(void)
{
    char *t, *a;

    expect_split("hash.sha1 /etc/passwd", APR_SUCCESS, "hash.sha1", "/etc/passwd");
    /* One separator: the argument keeps its own leading and trailing blanks. */
    expect_split("  \texec.sh \t echo a  b \r\n", APR_SUCCESS, "exec.sh", "\t echo a  b ");
    expect_split("hash.sha1  lead", APR_SUCCESS, "hash.sha1", " lead");
    expect_split("hash.sha1\ttab", APR_SUCCESS, "hash.sha1", "tab");
    expect_split("demo.echo ", APR_SUCCESS, "demo.echo", "");
    expect_split("demo.echo", APR_EINVAL, "demo.echo", NULL);
    expect_split("demo.echo\r\n", APR_EINVAL, "demo.echo", NULL);
    /* Only the line's own ending goes: one LF, one CR before it. */
    expect_split("demo.echo a\r\r\n", APR_SUCCESS, "demo.echo", "a\r");
    expect_split("demo.echo a\n\n", APR_SUCCESS, "demo.echo", "a\n");
    expect_split("demo.echo a\r", APR_SUCCESS, "demo.echo", "a\r");
    expect_split("", APR_EOF, NULL, NULL);
    expect_split(" \t\r\n", APR_EOF, NULL, NULL);
    expect_split("  # demo.echo x", APR_EOF, NULL, NULL);
    expect_split("demo.echo #x", APR_SUCCESS, "demo.echo", "#x");
    T_STATUS(pp_job_line_split(NULL, &t, &a), APR_EINVAL);
}

/* pp_job_record_split: a NUL-separated record keeps its newlines. */
static void test_job_record_split(void)
{
    char rec[] = "hash.sha1 name\nwith newline\n", *t, *a;

    T_OK(pp_job_record_split(rec, &t, &a));
    CU_ASSERT_STRING_EQUAL(t, "hash.sha1");
    CU_ASSERT_STRING_EQUAL(a, "name\nwith newline\n");
    T_STATUS(pp_job_record_split(NULL, &t, &a), APR_EINVAL);
}

void t_register_plugin(void)
{
    CU_pSuite s = CU_add_suite("plugin", NULL, NULL);

    CU_add_test(s, "a valid plugin loads and registers", test_load_good);
    CU_add_test(s, "each loader failure, registry unchanged", test_load_failures);
    CU_add_test(s, "load a folder, past bad plugins", test_load_dir);
    CU_add_test(s, "named and typed submits", test_submit_named);
    CU_add_test(s, "types added by the host", test_host_types);
    CU_add_test(s, "unload waits for a running plugin task", test_unload_waits_for_running_task);
    CU_add_test(s, "unload while a task runs: types at once, code after it", test_unload_while_running);
    CU_add_test(s, "load and unload 50 times with tasks in flight", test_unload_cycles);
    CU_add_test(s, "cancelled plugin tasks are released", test_cancelled_plugin_tasks_release);
    CU_add_test(s, "a file renamed over a loaded one: the next load gets the new file",
                test_load_replaced_file);
    CU_add_test(s, "job lines: TYPE ARG, blanks, comments", test_job_line_split);
    CU_add_test(s, "job records keep their newlines", test_job_record_split);
}
