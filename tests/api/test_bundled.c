/* SPDX-License-Identifier: Apache-2.0 */
/* The bundled plugins (plugins/): hash, exec and demo, loaded as shipped. */
#include "config.h"
#include "testutil.h"
#include "parkpool/plugin.h"

#include <apr_file_info.h>
#include <apr_file_io.h>
#include <apr_strings.h>
#include <apr_thread_mutex.h>
#include <apr_time.h>

#include <stdio.h>
#include <string.h>

/* Collects result lines (in arrival order) and failures of one run. */
typedef struct collect {
    apr_thread_mutex_t *lock;
    apr_pool_t *p;
    apr_array_header_t *lines;
    apr_status_t first_error;
} collect;

static void collect_line(const char *line, const char *name, void *baton)
{
    collect *c = baton;

    (void)name;
    apr_thread_mutex_lock(c->lock);
    APR_ARRAY_PUSH(c->lines, char *) = apr_pstrdup(c->p, line);
    apr_thread_mutex_unlock(c->lock);
}

static void collect_error(apr_status_t status, const char *name, void *baton)
{
    collect *c = baton;

    (void)name;
    apr_thread_mutex_lock(c->lock);
    if (c->first_error == APR_SUCCESS)
        c->first_error = status;
    apr_thread_mutex_unlock(c->lock);
}

/* A pool of two workers whose output and failures go to c, and a registry
 * with the bundled plugins. */
static void open_pool(pp_pool_t **pool, pp_registry_t **reg, apr_pool_t *p, collect *c)
{
    pp_config_t cfg;
    char err[2048];
    apr_status_t rv;

    c->p = p;
    c->lines = apr_array_make(p, 4, sizeof(char *));
    c->first_error = APR_SUCCESS;
    T_OK_FATAL(apr_thread_mutex_create(&c->lock, APR_THREAD_MUTEX_DEFAULT, p));
    T_OK_FATAL(pp_registry_create(reg, p));
    rv = pp_registry_load_dir(*reg, t_bundled_dir, err, sizeof(err));
    if (rv != APR_SUCCESS)
        fprintf(stderr, "\n    %s\n", err);
    T_OK_FATAL(rv);
    pp_config_init(&cfg);
    cfg.threads = 2;
    cfg.on_output = collect_line;
    cfg.on_task_error = collect_error;
    cfg.baton = c;
    T_OK_FATAL(pp_pool_create(pool, &cfg, p));
}

/* Run one task of type on text; its lines end up in c->lines. */
static apr_status_t run_one(apr_pool_t *p, const char *type, const char *text, collect *c)
{
    pp_registry_t *reg;
    pp_pool_t *pool;
    pp_group_t *g;
    apr_status_t rv;

    open_pool(&pool, &reg, p, c);
    T_OK_FATAL(pp_group_create(&g, p));
    rv = pp_submit_named(pool, reg, type, text, g);
    if (rv != APR_SUCCESS)
        return rv;
    T_OK(pp_group_wait(g, apr_time_from_sec(60)));
    T_OK(pp_pool_shutdown(pool, PP_DRAIN, -1));
    return pp_group_status(g);
}

static const char *write_file(apr_pool_t *p, const char *name, const char *data, apr_size_t len)
{
    char *path;
    FILE *f;

    /* Native separators: a Windows shell command takes this path too. */
    T_OK_FATAL(apr_filepath_merge(&path, t_os_tmpdir(),
                                  apr_psprintf(p, "%s.%ld", name, t_os_pid()),
                                  APR_FILEPATH_NATIVE, p));
    f = fopen(path, "wb");

    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fwrite(data, 1, len, f);
    fclose(f);
    return path;
}

/* The line sha1sum or md5sum prints: a name with a backslash gets a
 * leading backslash and each of its backslashes doubled. */
static const char *coreutils_line(apr_pool_t *p, const char *digest, const char *path)
{
    char *escaped = apr_palloc(p, 2 * strlen(path) + 1), *e = escaped;
    const char *s;

    if (!strchr(path, '\\'))
        return apr_pstrcat(p, digest, "  ", path, NULL);
    for (s = path; *s; s++) {
        if (*s == '\\')
            *e++ = '\\';
        *e++ = *s;
    }
    *e = '\0';
    return apr_pstrcat(p, "\\", digest, "  ", escaped, NULL);
}

/* type on path succeeds with exactly the one line want. */
static void expect_line(apr_pool_t *p, const char *type, const char *path, const char *want)
{
    collect c;

    T_OK(run_one(p, type, path, &c));
    T_EQ_FATAL(c.lines->nelts, 1);
    CU_ASSERT_STRING_EQUAL(APR_ARRAY_IDX(c.lines, 0, char *), want);
}

static void test_hash_known_vectors(void)
{
    apr_pool_t *p;
    const char *path;

    apr_pool_create(&p, t_root);
    path = write_file(p, "pp_abc", "abc", 3);
    expect_line(p, "hash.sha1", path,
                coreutils_line(p, "a9993e364706816aba3e25717850c26c9cd0d89d", path));
    expect_line(p, "hash.md5", path, coreutils_line(p, "900150983cd24fb0d6963f7d28e17f72", path));
    apr_file_remove(path, p);
    apr_pool_destroy(p);
}

/* Past several 64 KiB chunks, with an odd tail, and an empty file. The
 * digests are what sha1sum and md5sum print for the same bytes (checked
 * against coreutils once; fixed here so that every platform runs it). */
static void test_hash_matches_coreutils(void)
{
    static const char *const want[2][2] = {
        { "38ea93e53d829639861d2f0ed59b2787c3e9cb96", "7edbfe3bb476e3212b1c1aabb0c9ccd0" },
        { "da39a3ee5e6b4b0d3255bfef95601890afd80709", "d41d8cd98f00b204e9800998ecf8427e" },
    };
    apr_pool_t *p;
    apr_size_t n = 3 * 65536 + 12345, i;
    char *data;
    const char *paths[2];
    int k;

    apr_pool_create(&p, t_root);
    data = apr_palloc(p, n);
    for (i = 0; i < n; i++)
        data[i] = (char)(i * 2654435761u >> 11);
    paths[0] = write_file(p, "pp_big", data, n);
    paths[1] = write_file(p, "pp_empty", "", 0);
    for (k = 0; k < 2; k++) {
        expect_line(p, "hash.sha1", paths[k], coreutils_line(p, want[k][0], paths[k]));
        expect_line(p, "hash.md5", paths[k], coreutils_line(p, want[k][1], paths[k]));
        apr_file_remove(paths[k], p);
    }
    apr_pool_destroy(p);
}

/* A backslash in the name (in the file name on POSIX, the separator on
 * Windows) goes through the escaping path too. */
static void test_hash_escapes_like_coreutils(void)
{
    apr_pool_t *p;
    const char *path;
    FILE *f;

    apr_pool_create(&p, t_root);
    path = t_os_backslash_path(p);
    f = fopen(path, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputc('x', f);
    fclose(f);
    CU_ASSERT_PTR_NOT_NULL(strchr(coreutils_line(p, "", path), '\\'));
    expect_line(p, "hash.sha1", path,
                coreutils_line(p, "11f6ad8ec52a2984abaafd7c3b516503785c2072", path));
    apr_file_remove(path, p);
    apr_pool_destroy(p);
}

static void test_hash_unreadable(void)
{
    apr_pool_t *p;
    collect c;
    apr_status_t rv;

    apr_pool_create(&p, t_root);
    rv = run_one(p, "hash.sha1", "/nonexistent/file", &c);
    CU_ASSERT_TRUE(APR_STATUS_IS_ENOENT(rv));
    CU_ASSERT_TRUE(APR_STATUS_IS_ENOENT(c.first_error));
    T_EQ(c.lines->nelts, 0);
    T_STATUS(run_one(p, "hash.sha1", "", &c), APR_EINVAL);
    apr_pool_destroy(p);
}

static void test_exec(void)
{
    apr_pool_t *p;
    collect c;
    char *long_line;
    const char *path;
    const t_os_shell *sh = t_os_shell_commands();

    apr_pool_create(&p, t_root);
    T_OK(run_one(p, "exec.sh", sh->three_lines, &c));
    T_EQ_FATAL(c.lines->nelts, 3);
    CU_ASSERT_STRING_EQUAL(APR_ARRAY_IDX(c.lines, 0, char *), "one");
    CU_ASSERT_STRING_EQUAL(APR_ARRAY_IDX(c.lines, 1, char *), "two");
    CU_ASSERT_STRING_EQUAL(APR_ARRAY_IDX(c.lines, 2, char *), "three");
    T_STATUS(run_one(p, "exec.sh", sh->partial_exit3, &c), PP_EEXIT(3));
    T_STATUS(c.first_error, PP_EEXIT(3));
    T_EQ(c.lines->nelts, 1);
    if (sh->kill9)
        T_STATUS(run_one(p, "exec.sh", sh->kill9, &c), PP_EEXIT(128 + 9));
    T_OK(run_one(p, "exec.sh", sh->silent, &c));
    T_EQ(c.lines->nelts, 0);
    /* A 100,000-character line comes in pieces of at most 64 KiB (the
     * plugin's memory is bounded), none lost. */
    long_line = apr_palloc(p, 100001);
    memset(long_line, 'x', 100000);
    long_line[100000] = '\n';
    path = write_file(p, "pp_long", long_line, 100001);
    T_OK(run_one(p, "exec.sh", apr_psprintf(p, "%s %s", sh->print_file, path), &c));
    apr_file_remove(path, p);
    T_EQ_FATAL(c.lines->nelts, 2);
    T_EQ(strlen(APR_ARRAY_IDX(c.lines, 0, char *)), 65536);
    T_EQ(strlen(APR_ARRAY_IDX(c.lines, 1, char *)), 100000 - 65536);
    T_STATUS(run_one(p, "exec.sh", "", &c), APR_EINVAL);
    apr_pool_destroy(p);
}

/* Item 7 of issue 10: a command's standard input is the null device (cat
 * of a closed descriptor fails), and the pipe a task reads its child's
 * output from is not inherited by the children of other tasks, which would
 * hold it open until they exit: with waiting and quick commands started
 * side by side, every quick one must finish while the waiting ones wait.
 * (The leak is a race between one task's pipe and another's fork, so one
 * round may miss it; several rounds of eight have not.) */
static void test_exec_descriptors(void)
{
    const t_os_shell *sh = t_os_shell_commands();
    apr_pool_t *p;
    pp_registry_t *reg;
    pp_pool_t *pool;
    pp_group_t *waiting, *quick;
    pp_config_t cfg;
    collect c;
    const char *path;
    char err[2048];
    int round, i;

    apr_pool_create(&p, t_root);
    if (sh->copy_stdin) {
        T_OK(run_one(p, "exec.sh", sh->copy_stdin, &c));
        T_EQ(c.lines->nelts, 0);
    }
    if (!sh->wait_for_file) {
        apr_pool_destroy(p);
        return;
    }
    T_OK_FATAL(pp_registry_create(&reg, p));
    T_OK_FATAL(pp_registry_load_dir(reg, t_bundled_dir, err, sizeof(err)));
    pp_config_init(&cfg);
    cfg.threads = 8;
    T_OK_FATAL(pp_pool_create(&pool, &cfg, p));
    path = apr_psprintf(p, "%s/pp_exec_go.%ld", t_os_tmpdir(), t_os_pid());
    for (round = 0; round < 4; round++) {
        apr_file_remove(path, p);
        T_OK_FATAL(pp_group_create(&waiting, p));
        T_OK_FATAL(pp_group_create(&quick, p));
        for (i = 0; i < 4; i++) {
            T_OK(pp_submit_named(pool, reg, "exec.sh",
                                 apr_psprintf(p, "%s %s", sh->wait_for_file, path), waiting));
            T_OK(pp_submit_named(pool, reg, "exec.sh", sh->silent, quick));
        }
        T_OK(pp_group_wait(quick, apr_time_from_sec(20)));
        T_STATUS(pp_group_wait(waiting, 0), APR_TIMEUP);
        write_file(p, "pp_exec_go", "", 0);
        T_OK(pp_group_wait(waiting, apr_time_from_sec(60)));
        T_OK(pp_group_status(waiting));
    }
    T_OK(pp_pool_shutdown(pool, PP_DRAIN, -1));
    apr_file_remove(path, p);
    apr_pool_destroy(p);
}

/* exec waits for its child in a block section: on a pool of one worker,
 * a quick command runs while a waiting one waits (a stand-in worker);
 * with PP_BLOCKING_NONE the one worker is all there is, and it waits. */
static void exec_stands_aside(apr_uint32_t max_blocking, int quick_first)
{
    const t_os_shell *sh = t_os_shell_commands();
    apr_pool_t *p;
    pp_registry_t *reg;
    pp_pool_t *pool;
    pp_group_t *waiting, *quick;
    pp_config_t cfg;
    const char *path;
    char err[2048];

    apr_pool_create(&p, t_root);
    T_OK_FATAL(pp_registry_create(&reg, p));
    T_OK_FATAL(pp_registry_load_dir(reg, t_bundled_dir, err, sizeof(err)));
    pp_config_init(&cfg);
    cfg.threads = 1;
    cfg.max_blocking = max_blocking;
    T_OK_FATAL(pp_pool_create(&pool, &cfg, p));
    T_OK_FATAL(pp_group_create(&waiting, p));
    T_OK_FATAL(pp_group_create(&quick, p));
    path = apr_psprintf(p, "%s/pp_exec_aside.%ld", t_os_tmpdir(), t_os_pid());
    apr_file_remove(path, p);
    T_OK(pp_submit_named(pool, reg, "exec.sh",
                         apr_psprintf(p, "%s %s", sh->wait_for_file, path), waiting));
    T_OK(pp_submit_named(pool, reg, "exec.sh", sh->silent, quick));
    if (quick_first) {
        T_OK(pp_group_wait(quick, apr_time_from_sec(20)));
        T_STATUS(pp_group_wait(waiting, 0), APR_TIMEUP);
    }
    else {
        T_STATUS(pp_group_wait(quick, apr_time_from_msec(500)), APR_TIMEUP);
    }
    write_file(p, "pp_exec_aside", "", 0);
    T_OK(pp_group_wait(waiting, apr_time_from_sec(60)));
    T_OK(pp_group_wait(quick, apr_time_from_sec(60)));
    T_OK(pp_group_status(waiting));
    T_OK(pp_pool_shutdown(pool, PP_DRAIN, -1));
    apr_file_remove(path, p);
    apr_pool_destroy(p);
}

static void test_exec_blocks(void)
{
    if (!t_os_shell_commands()->wait_for_file)
        return;
    exec_stands_aside(0, 1);
    exec_stands_aside(PP_BLOCKING_NONE, 0);
}

static void test_demo(void)
{
    apr_pool_t *p;
    collect c;
    apr_time_t t0;

    apr_pool_create(&p, t_root);
    T_OK(run_one(p, "demo.echo", "hi there", &c));
    T_EQ_FATAL(c.lines->nelts, 1);
    CU_ASSERT_STRING_EQUAL(APR_ARRAY_IDX(c.lines, 0, char *), "hi there");
    T_STATUS(run_one(p, "demo.fail", "boom", &c), APR_EGENERAL);
    T_EQ_FATAL(c.lines->nelts, 1);
    CU_ASSERT_STRING_EQUAL(APR_ARRAY_IDX(c.lines, 0, char *), "boom");
    t0 = apr_time_now();
    T_OK(run_one(p, "demo.sleep", "30", &c));
    CU_ASSERT(apr_time_now() - t0 >= apr_time_from_msec(29));
    T_OK(run_one(p, "demo.spin", "1000", &c));
    T_STATUS(run_one(p, "demo.sleep", "-1", &c), APR_EINVAL);
    T_STATUS(run_one(p, "demo.spin", "12x", &c), APR_EINVAL);
    apr_pool_destroy(p);
}

static apr_status_t nop_run(void *arg, pp_task_ctx_t *ctx)
{
    (void)arg;
    (void)ctx;
    return APR_SUCCESS;
}

/* What a queue may run twice: the plugins say (ABI 1.1); hash and demo
 * do for all their types, exec says nothing, nor does the host. */
static void test_idempotent(void)
{
    static const pp_task_type_t host = { "host.thing", "a type the host adds", NULL,
                                         nop_run, NULL, NULL };
    apr_pool_t *p;
    pp_registry_t *reg, *other;
    char err[2048];

    apr_pool_create(&p, t_root);
    T_OK_FATAL(pp_registry_create(&reg, p));
    T_OK_FATAL(pp_registry_load_dir(reg, t_bundled_dir, err, sizeof(err)));
    T_OK_FATAL(pp_registry_add(reg, &host));
    T_EQ(pp_registry_idempotent(reg, pp_registry_find(reg, "hash.sha256")), 1);
    T_EQ(pp_registry_idempotent(reg, pp_registry_find(reg, "hash.check")), 1);
    T_EQ(pp_registry_idempotent(reg, pp_registry_find(reg, "demo.echo")), 1);
    T_EQ(pp_registry_idempotent(reg, pp_registry_find(reg, "exec.sh")), 0);
    T_EQ(pp_registry_idempotent(reg, pp_registry_find(reg, "host.thing")), 0);
    T_EQ(pp_registry_idempotent(reg, NULL), 0);
    T_EQ(pp_registry_idempotent(NULL, pp_registry_find(reg, "hash.sha1")), 0);
    CU_ASSERT_STRING_EQUAL(
        pp_registry_owner(reg, pp_registry_find(reg, "hash.md5"))->idempotent[0], "hash.*");
    CU_ASSERT_PTR_NULL(pp_registry_owner(reg, pp_registry_find(reg, "exec.sh"))->idempotent);
    /* A type of another registry is not this one's to answer for. */
    T_OK_FATAL(pp_registry_create(&other, p));
    T_EQ(pp_registry_idempotent(other, pp_registry_find(reg, "hash.sha1")), 0);
    apr_pool_destroy(p);
}

void t_register_bundled(void)
{
    CU_pSuite s = CU_add_suite("bundled", NULL, NULL);

    CU_add_test(s, "hash: known vectors", test_hash_known_vectors);
    CU_add_test(s, "exec: a waiting child lets another task run", test_exec_blocks);
    CU_add_test(s, "hash: lines match sha1sum and md5sum", test_hash_matches_coreutils);
    CU_add_test(s, "hash: names escaped as coreutils does", test_hash_escapes_like_coreutils);
    CU_add_test(s, "hash: an unreadable file fails the task", test_hash_unreadable);
    CU_add_test(s, "exec: output lines and exit statuses", test_exec);
    CU_add_test(s, "exec: null stdin, output pipes not inherited", test_exec_descriptors);
    CU_add_test(s, "demo: echo, fail, sleep, spin", test_demo);
    CU_add_test(s, "idempotent types: hash and demo say so, exec and the host do not",
                test_idempotent);
}
