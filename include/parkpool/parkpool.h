/* SPDX-License-Identifier: Apache-2.0 */
/*
 * parkpool: a thread pool whose workers sleep with per-thread park/unpark.
 *
 * Call apr_initialize() before anything here. Every function that can fail
 * returns an apr_status_t; pp_strerror() turns any of them into text.
 */
#ifndef PARKPOOL_H
#define PARKPOOL_H

#include <apr_errno.h>
#include <apr_pools.h>
#include <apr_time.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PP_VERSION_MAJOR 0
#define PP_VERSION_MINOR 1
#define PP_VERSION_PATCH 0
#define PP_VERSION_STRING "0.1.0"

/*
 * PP_API marks the library's exports; it is built with hidden visibility
 * (and on Windows exports what is marked), so nothing else leaves it. A
 * Windows program that links the static library defines PP_STATIC.
 */
#if defined(_WIN32) || defined(__CYGWIN__)
#if defined(PP_BUILDING) && !defined(PP_STATIC)
#define PP_API __declspec(dllexport)
#elif defined(PP_STATIC)
#define PP_API
#else
#define PP_API __declspec(dllimport)
#endif
#elif defined(__GNUC__) && __GNUC__ >= 4
#define PP_API __attribute__((visibility("default")))
#else
#define PP_API
#endif

typedef struct pp_pool_t pp_pool_t;
typedef struct pp_group_t pp_group_t;
typedef struct pp_task_ctx_t pp_task_ctx_t;
typedef struct pp_strand_t pp_strand_t;
typedef struct pp_timer_t pp_timer_t;

/**
 * A task body. A non-success return counts the task as failed.
 * A task returns to its worker. It must not exit() the process from under
 * the pool, longjmp() or throw out of its function (the worker's state is
 * then undefined), or end its thread: one that calls pthread_exit(),
 * apr_thread_exit() or ExitThread() fails with PP_ETHREADEXIT (with any
 * task its worker was running around it, see pp_group_wait()), reported
 * through on_task_error and on_log, and a new thread takes the worker's
 * place; its hooks (release, on_task_error) must not end the thread either.
 */
typedef apr_status_t (*pp_task_fn)(void *arg, pp_task_ctx_t *ctx);

/*
 * Status codes. They sit in APR's user error space, away from the ranges
 * APR's own list gives to Subversion and httpd.
 */
#define PP_START_ERROR (APR_OS_START_USERERR + 7700)
#define PP_ESHUTDOWN   (PP_START_ERROR + 1) /**< pool no longer accepts tasks */
#define PP_EFULL       (PP_START_ERROR + 2) /**< bounded queue full (PP_NOWAIT) */
#define PP_ECANCELLED  (PP_START_ERROR + 3) /**< task dropped before it ran, or
                                                 stopped running when cancelled */
#define PP_ENOTYPE     (PP_START_ERROR + 4) /**< no such task type */
#define PP_EDUPTYPE    (PP_START_ERROR + 5) /**< task type already registered */
#define PP_EPLUGIN     (PP_START_ERROR + 6) /**< not a parkpool plugin */
#define PP_EABI        (PP_START_ERROR + 7) /**< plugin built for another ABI */
#define PP_EEXPIRED    (PP_START_ERROR + 8) /**< a task's deadline passed before it started */
#define PP_ETHREADEXIT (PP_START_ERROR + 9) /**< the task ended its worker thread */
#define PP_EMISMATCH   (PP_START_ERROR + 10) /**< data did not match its checksum */
#define PP_END_ERROR   (PP_START_ERROR + 11) /**< one past the last code above */

/** A child process of a task exited with status code (1..255); the exec
 *  plugin fails its tasks with it. pp_strerror() prints the number. */
#define PP_EEXIT(code)  (PP_START_ERROR + 256 + ((code) & 0xff))
#define PP_IS_EEXIT(s)  ((s) > PP_START_ERROR + 256 && (s) < PP_START_ERROR + 512)
#define PP_EEXIT_CODE(s) ((int)((s) - (PP_START_ERROR + 256)))

/** pp_submit_ex() flag: fail with PP_EFULL rather than wait for room. */
#define PP_NOWAIT 0x1u

/** pp_pool_shutdown() modes. */
#define PP_DRAIN  1 /**< run everything queued, then stop */
#define PP_CANCEL 2 /**< drop everything queued, let running tasks finish */

/*
 * Structs that grow. pp_config_t, pp_stats_t and pp_task_t are allocated
 * by the caller and only ever grow at the end: a field, once published,
 * keeps its place. The calls that take one (pp_config_init, pp_pool_create,
 * pp_pool_stats, pp_submit_task) are inline wrappers below that pass the
 * size the caller was compiled with to a *_sized entry point, as zlib's
 * deflateInit() passes sizeof(z_stream). The library reads or writes that
 * many bytes and no more; the fields a smaller (older) caller does not
 * have read as zero, which is "off, as before" for every field added
 * since 0.1.0. A caller built against a newer header than the library
 * works too as long as the fields this library does not know are zero;
 * otherwise the call fails with APR_ENOTIMPL (Linux's clone3() and
 * openat2() take their structs the same way). Programs built before this
 * policy (libparkpool.so.4, 4.x layouts) call pp_config_init and friends
 * by those names; the library still exports them, with those layouts.
 */

/** What on_task_end is told about a task that ran (or failed to). The
 *  times are apr_time_now() values, 0 unless the pool has cfg.timing. */
typedef struct pp_task_info_t {
    const char  *name;      /**< the task's name; "" when submitted without one */
    apr_status_t status;    /**< what fn returned */
    apr_uint32_t worker;    /**< the worker that ran it (pp_task_worker) */
    apr_time_t   queued, started, ended;
} pp_task_info_t;

typedef struct pp_config_t {
    apr_uint32_t threads;        /**< workers; 0 = online CPUs */
    const char  *name_prefix;    /**< threads are "<prefix>-<i>"; NULL = "pp-worker" */
    apr_size_t   stack_size;     /**< bytes per worker; 0 = 2 MiB */
    apr_uint32_t queue_capacity; /**< 0 = unbounded; else submit waits or PP_EFULL */
    /** Called on a worker (or the cancelling thread) for each failed or
     *  dropped task; task_name is "" for tasks submitted without a name. */
    void (*on_task_error)(apr_status_t status, const char *task_name, void *baton);
    /** Receives pp_task_emit() lines; called concurrently from workers. */
    void (*on_output)(const char *line, const char *task_name, void *baton);
    void        *baton;          /**< passed to every hook */
    /** The most polls of the queues a worker out of work makes before it
     *  sleeps (about 90 us by default on a 2-core VM; 0 = sleep at once): a
     *  task that comes meanwhile needs no wake-up. Adaptive below this bound
     *  (halved after a search that found nothing, down to 1/16 or one poll;
     *  doubled after one that paid off; after a sleep that a search within
     *  the bound would have spared, twice as long as that sleep), so an
     *  idle pool stops paying for it and burns no CPU.
     *  Fewer than half the workers that are awake poll at once (one always
     *  may); the others sleep at once. */
    apr_uint32_t spin;
    /** The pool's own messages (start, shutdown, timeouts, a worker that
     *  would not start), at a PP_LOG_* level; NULL = silent. The library
     *  itself never writes to stdout or stderr and installs no signal
     *  handlers: a service routes these to its own log. */
    void (*on_log)(int level, const char *message, void *baton);
    /** Receives pp_task_write() bytes exactly as written (NUL bytes,
     *  CRs, a last line without LF); called concurrently from workers,
     *  each call a piece of one task's output in order. NULL: the bytes go
     *  to on_output instead, a line per LF (see pp_task_write). */
    void (*on_write)(const char *data, apr_size_t len, const char *task_name, void *baton);

    /* Since 0.2 (a caller built before passes a smaller size: these are 0). */

    /** Called on each worker thread before its first task (to set up COM,
     *  a thread-local connection, a tracing context): worker is its index.
     *  A failure fails pp_pool_create() with that status, after the workers
     *  already started have stopped (each told on_thread_stop); for a
     *  thread started later (replacing one that a task ended) the worker
     *  is not replaced and on_log says why. Once a shutdown began no
     *  worker starts, except while every live one is in a block section
     *  (or none is left) during a drain: then one starts, so that the
     *  drain goes on. So in a fixed pool whose tasks neither block nor
     *  end their threads this runs once per worker, 0 .. threads-1,
     *  between create and destroy. */
    apr_status_t (*on_thread_start)(apr_uint32_t worker, void *baton);
    /** Called on each worker thread whose on_thread_start succeeded (or
     *  that had none) after its last task, as it exits: at shutdown, or
     *  when a task ends the thread (then with that task's stack gone). */
    void (*on_thread_stop)(apr_uint32_t worker, void *baton);
    /** Called on the worker after each task that ran, before its release
     *  hook (the name may belong to what release lets go), with its
     *  outcome; dropped tasks go to on_task_error only. */
    void (*on_task_end)(const pp_task_info_t *info, void *baton);
    /** Non-zero: read the clock when a task is queued, started and ended,
     *  for pp_task_info_t's times and the wait_us_* and run_us_* stats.
     *  Off, no clock is read per task. */
    int timing;
    /** An elastic pool: threads is then the most workers that run tasks
     *  at once, min_threads how many are started with the pool and never
     *  retire; more are started when a task is queued and no worker is
     *  idle or looking for work. 0 = threads: a fixed pool. */
    apr_uint32_t min_threads;
    /** Microseconds a worker above min_threads stays idle before its
     *  thread exits; 0 = 10 s. */
    apr_interval_time_t idle_timeout;
    /** How many workers may start beyond threads to stand in for tasks
     *  in block sections (pp_task_block_begin); 0 = threads;
     *  PP_BLOCKING_NONE: none, threads is then a hard bound on the tasks
     *  running at once (as parkpool run -j needs). */
    apr_uint32_t max_blocking;
} pp_config_t;

/** pp_config_t.max_blocking: no stand-ins for blocked tasks. */
#define PP_BLOCKING_NONE 0xffffffffu

/** pp_config_t.on_log levels, as syslog orders them. */
#define PP_LOG_ERROR 3
#define PP_LOG_WARN  4
#define PP_LOG_INFO  6

typedef struct pp_stats_t {
    apr_uint64_t submitted, completed, failed, cancelled; /* task outcomes */
    apr_uint64_t queued, running;  /* at the moment of reading */
    apr_uint64_t parks, unparks;   /* sleep/wake traffic */
    apr_uint64_t threads;          /* workers alive now (0 once shut down) */
    apr_uint64_t blocked;          /* submitters waiting for room right now */
    apr_uint64_t threads_idle;     /* workers parked for lack of work right now */
    /* Since 0.2. */
    apr_uint64_t threads_peak;     /* the most workers alive at once */
    apr_uint64_t queued_peak;      /* the longest the shared queue (the one
                                      queue_capacity bounds) has been */
    /* With cfg.timing, over every task that ran so far, in microseconds:
     * how long it waited from its submit to its start, and how long fn
     * ran. Percentiles come from histograms with 16 steps per power of
     * two, so they are high by at most 1/16 (6.25%); max is exact. */
    apr_uint64_t wait_us_p50, wait_us_p90, wait_us_p99, wait_us_max;
    apr_uint64_t run_us_p50,  run_us_p90,  run_us_p99,  run_us_max;
    /* Since 0.2, too. */
    apr_uint64_t expired;          /* tasks dropped as PP_EEXPIRED (not_after) */
    apr_uint64_t timers;           /* timers waiting for their time right now
                                      (pp_schedule); each tick of a timer counts
                                      as one task in the counts above */
} pp_stats_t;

/** pp_task_t.priority: the order in which the shared queue gives out
 *  tasks (see PP_PRIO_PASS). NORMAL is the zero value. */
#define PP_PRIO_LOW    (-1)
#define PP_PRIO_NORMAL 0
#define PP_PRIO_HIGH   1

/**
 * What a priority means. A worker taking from the shared queue takes a
 * waiting HIGH task before any NORMAL one and NORMAL before LOW, each
 * level first come, first served; a worker that is done with a task
 * looks for waiting HIGH tasks there before it runs what its own tasks
 * queued. A task's own NORMAL submits go to its worker's queue as any
 * untyped submit does (run depth-first, stolen by idle workers: neither
 * is ordered against the shared queue's NORMAL tasks); its HIGH and LOW
 * submits go to the shared queue at their level. Nothing preempts a
 * running task.
 * No level starves: while tasks wait at a lower level, every
 * PP_PRIO_PASS tasks taken above it are followed by one of its own. So
 * under a flood of HIGH tasks, NORMAL and LOW still get about one take
 * in PP_PRIO_PASS + 1 each; without such a flood the order is strict.
 */
#define PP_PRIO_PASS 64

/** A named task with an optional release hook, for callers that need them. */
typedef struct pp_task_t {
    pp_task_fn   fn;
    void        *arg;
    /** Called exactly once with arg: after fn returned, or when the task
     *  is dropped by a cancel. May be NULL. */
    void       (*release)(void *arg);
    const char  *name;           /**< shown to the hooks; may be NULL */
    /* Since 0.2: zero them (pp_task_t t = { 0 }, or designated
     * initializers) and they are off. */
    /** PP_PRIO_LOW, PP_PRIO_NORMAL (0) or PP_PRIO_HIGH; others are
     *  APR_EINVAL. */
    int          priority;
    /** 0, or an apr_time_now() time: if the task has not started by then
     *  it never does. It is dropped when a worker reaches it (or a cancel
     *  does), released, reported to on_task_error as PP_EEXPIRED, its
     *  group's status set to that, and counted in pp_stats_t.expired. */
    apr_time_t   not_after;
    /** NULL, or a strand of the pool (pp_strand_create): the task runs
     *  after every task submitted to the strand before it has ended. */
    pp_strand_t *strand;
} pp_task_t;

/** pp_config_init() for a struct of size bytes (see "Structs that grow"). */
PP_API void pp_config_init_sized(pp_config_t *cfg, apr_size_t size);

/** pp_pool_create() for a cfg of size bytes. */
PP_API apr_status_t pp_pool_create_sized(pp_pool_t **pool, const pp_config_t *cfg,
                                         apr_size_t size, apr_pool_t *parent);

/** pp_pool_stats() into a struct of size bytes. */
PP_API void pp_pool_stats_sized(pp_pool_t *pool, pp_stats_t *out, apr_size_t size);

/** pp_submit_task() of a task of size bytes. */
PP_API apr_status_t pp_submit_task_sized(pp_pool_t *pool, const pp_task_t *task,
                                         apr_size_t size, pp_group_t *group,
                                         apr_uint32_t flags);

#ifndef PP_BUILDING
/** Fill cfg with defaults: online CPUs, "pp-worker", 2 MiB stacks, unbounded. */
static APR_INLINE void pp_config_init(pp_config_t *cfg)
{
    pp_config_init_sized(cfg, sizeof(pp_config_t));
}
#endif

/*
 * fork(): a child gets a copy of the pools, groups and registries made
 * before the fork but none of their threads, so there they are dead:
 * submits fail with PP_ESHUTDOWN, as do pp_group_wait(), pp_group_cancel()
 * and pp_group_status(); pp_pool_shutdown() returns APR_SUCCESS at once
 * (no worker to wait for); destroying them, or their APR pools (as
 * apr_terminate() does at exit), frees their memory without waiting. Their
 * queued tasks are neither run nor released in the child: they are the
 * parent's. Objects made in the child work as usual. (POSIX only.)
 */

/**
 * Start a pool. Destroying parent shuts the pool down (drain, no time
 * limit), joins its workers and frees it; the pool's memory is its own,
 * not parent's, so that this may also happen from one of its own tasks.
 * @param cfg NULL for defaults. Nonsense values give APR_EINVAL.
 * If starting worker k fails, the workers already running are joined, all
 * memory is released and that failure is returned.
 */
#ifndef PP_BUILDING
static APR_INLINE apr_status_t pp_pool_create(pp_pool_t **pool, const pp_config_t *cfg,
                                              apr_pool_t *parent)
{
    return pp_pool_create_sized(pool, cfg, sizeof(pp_config_t), parent);
}
#endif

/**
 * Shut down (drain), join and free the pool now rather than with its
 * parent. It waits for other threads still inside the pool (a
 * pp_pool_shutdown() or pp_group_cancel() dropping tasks) before freeing.
 * Called from one of the pool's own tasks (or when such a task destroys
 * the parent), it starts the drain and returns at once; the last worker
 * out frees the pool. The caller must not use the pool afterwards.
 */
PP_API void pp_pool_destroy(pp_pool_t *pool);

/**
 * A strand of pool: tasks submitted with pp_task_t.strand set to it run
 * one at a time, each after every task submitted to it before has ended,
 * in submission order, on any worker (GCD's serial queue: per-connection
 * or per-tenant order on one shared pool). Strands are independent of
 * each other, and no worker ever waits for one: a strand with tasks waits
 * in the shared queue as one entry, whose worker runs up to 32 of them
 * and then queues it again behind what came meanwhile. That entry has
 * the priority of the task that found the strand idle; the strand's
 * later tasks follow in order whatever theirs.
 * Tasks waiting in a strand are not in the shared queue: queue_capacity
 * does not bound them, and a submit to a strand never waits for room.
 * A cancel (of the pool, or of a group) drops them as it drops others.
 * A strand's task must not wait for a later task of its own strand.
 * The strand lives until p is destroyed; tasks still waiting on it then
 * are dropped (PP_ECANCELLED). p may outlive the pool (the pool forgets
 * its strands as it goes), but not be destroyed while the pool is.
 * @return APR_SUCCESS, APR_EINVAL, PP_ESHUTDOWN if the pool is closing.
 *         A submit with a strand of another pool, or one whose p is gone,
 *         fails with APR_EINVAL.
 */
PP_API apr_status_t pp_strand_create(pp_strand_t **strand, pp_pool_t *pool, apr_pool_t *p);

/** Queue fn(arg). Same as pp_submit_ex(pool, fn, arg, NULL, 0). */
PP_API apr_status_t pp_submit(pp_pool_t *pool, pp_task_fn fn, void *arg);

/**
 * The fairness bounds. A worker runs the tasks that its own tasks submit
 * newest first (depth-first, on a warm cache), but while it is busy with a
 * chain of tasks that resubmit themselves:
 * - a task in the shared queue (an outside submit) waits for at most
 *   PP_FAIR_EVERY picks of every busy worker: one pick in that many is
 *   the shared queue's next (its oldest of the level PP_PRIO_PASS picks);
 * - the oldest task in a worker's own queue, once it has been the oldest
 *   for PP_FAIR_AGE microseconds (and nobody stole it), runs within the
 *   next PP_FAIR_EVERY picks of that worker. A count alone would make a
 *   fan-out tree leave half-finished levels behind at every such pick.
 * Each pick also waits for the task running before it, however long.
 */
#define PP_FAIR_EVERY 61
#define PP_FAIR_AGE 1000

/**
 * Queue fn(arg), optionally as a member of group.
 * On a full bounded queue this waits for room, or fails with PP_EFULL under
 * PP_NOWAIT; a pool's own workers are never made to wait (their submits go
 * past the capacity), so nested fan-out cannot deadlock. A submit from one
 * of the pool's own tasks goes, without a lock, to that worker's own queue
 * (run newest first by it, taken oldest first by idle workers); the capacity
 * bounds the shared queue only.
 * @return PP_ESHUTDOWN once shutdown began, PP_ECANCELLED if the group's
 *         round was cancelled, APR_EINVAL on bad arguments or when the group
 *         still has tasks pending on another pool.
 */
PP_API apr_status_t pp_submit_ex(pp_pool_t *pool, pp_task_fn fn, void *arg,
                                 pp_group_t *group, apr_uint32_t flags);

/**
 * Queue fns[i](args[i]) for i < n in one lock round, waking at most
 * min(n, idle) workers. All or nothing: on failure none was queued. On a
 * bounded queue the batch waits until all of it fits, and a batch larger
 * than the capacity is APR_EINVAL (the pool's own workers excepted).
 */
PP_API apr_status_t pp_submit_batch(pp_pool_t *pool, const pp_task_fn *fns, void *const *args,
                                    apr_uint32_t n, pp_group_t *group);

/** pp_submit_ex() for a pp_task_t (copied; the struct need not outlive the call). */
#ifndef PP_BUILDING
static APR_INLINE apr_status_t pp_submit_task(pp_pool_t *pool, const pp_task_t *task,
                                              pp_group_t *group, apr_uint32_t flags)
{
    return pp_submit_task_sized(pool, task, sizeof(pp_task_t), group, flags);
}
#endif

/**
 * pp_submit_task() on a bounded queue that waits at most timeout
 * microseconds (monotonic; negative: no limit) for room, then fails with
 * APR_TIMEUP: the middle way between waiting as long as it takes and
 * PP_NOWAIT's PP_EFULL at once. A timeout of 0 fails with APR_TIMEUP at
 * once when the queue is full. Unbounded queues and the pool's own tasks
 * never wait, as with pp_submit_task().
 */
PP_API apr_status_t pp_submit_timed_sized(pp_pool_t *pool, const pp_task_t *task,
                                          apr_size_t size, pp_group_t *group,
                                          apr_interval_time_t timeout);
#ifndef PP_BUILDING
static APR_INLINE apr_status_t pp_submit_timed(pp_pool_t *pool, const pp_task_t *task,
                                               pp_group_t *group, apr_interval_time_t timeout)
{
    return pp_submit_timed_sized(pool, task, sizeof(pp_task_t), group, timeout);
}
#endif

/**
 * Run task after delay microseconds, then every period microseconds if
 * period is non-zero, on the pool's workers like any submitted task (its
 * priority, its name for the hooks; each run, a "tick", counts as one
 * task in the stats, a failed run is reported and the timer goes on).
 * A timer never runs twice at once: the next period is counted from the
 * last one's due time once the run has ended, and a run that overran
 * skips the ticks it missed (fixed rate, no catching up).
 * One thread per pool, started with its first timer, sleeps to the
 * earliest due time (a heap: O(log n) a timer); an idle pool with only
 * future timers uses no CPU. A tick whose time came goes to the shared
 * queue past queue_capacity (the timer thread never waits for room).
 *
 * The timer ends after its one run (period 0), when cancelled, when its
 * group is cancelled, or at the pool's shutdown; task->release is called
 * once then (not after each run). A shutdown (drain or cancel alike) and
 * pp_group_cancel() drop the tick waiting for its time, and a periodic
 * timer's next one: reported once as PP_ECANCELLED and counted as
 * cancelled. A tick already queued when a drain begins still runs (a
 * cancel drops it as it drops other tasks).
 *
 * group, if given, counts the timer as one pending task from this call
 * until it ends, so pp_group_wait() returns once a one-shot timer ran or
 * a periodic one was cancelled; the group's status is that of its runs.
 *
 * @param timer NULL, or where the timer's handle goes (before the first
 *        run can start, so the task may read it). A handle taken must be
 *        given back once with pp_timer_cancel(), even after the timer
 *        ended (as POSIX's timer_delete()); without one, the timer's memory
 *        goes when it ends. Handles die with the pool.
 * @param task fn is required; not_after and strand must be 0 (a timer's
 *        task may itself submit to a strand).
 * @return APR_SUCCESS, APR_EINVAL (bad arguments, negative delay or
 *         period), PP_ESHUTDOWN once the pool's shutdown began,
 *         PP_ECANCELLED if the group's round was cancelled, APR_ENOMEM, or
 *         why the timer thread could not start.
 */
PP_API apr_status_t pp_schedule_sized(pp_timer_t **timer, pp_pool_t *pool,
                                      const pp_task_t *task, apr_size_t size,
                                      apr_interval_time_t delay, apr_interval_time_t period,
                                      pp_group_t *group);
#ifndef PP_BUILDING
static APR_INLINE apr_status_t pp_schedule(pp_timer_t **timer, pp_pool_t *pool,
                                           const pp_task_t *task, apr_interval_time_t delay,
                                           apr_interval_time_t period, pp_group_t *group)
{
    return pp_schedule_sized(timer, pool, task, sizeof(pp_task_t), delay, period, group);
}
#endif

/**
 * Stop a timer and give its handle back (it is invalid afterwards).
 * @return APR_SUCCESS: no run is in progress and none will start (its
 *         release has run, unless a shutdown or cancel already dropped
 *         its tick); APR_EBUSY: a run is in progress (its time came: it is
 *         queued or running, or the timer is ending): that run completes,
 *         no further one follows, release is called after it;
 *         APR_EINVAL for NULL.
 */
PP_API apr_status_t pp_timer_cancel(pp_timer_t *timer);

/**
 * Stop the workers from starting tasks: those running finish, submits
 * still queue (and wake nobody), and every worker that runs out of work
 * (all of them, once the running tasks end) sleeps: a paused pool costs
 * no CPU. A task that waits for its group (pp_group_wait) while paused
 * waits until the resume. Pausing a paused pool is no error.
 * @return PP_ESHUTDOWN once shutdown began: a shutdown of a paused pool
 *         drains or cancels as asked, whatever the pause said.
 */
PP_API apr_status_t pp_pool_pause(pp_pool_t *pool);

/** Let a paused pool's workers start tasks again: one idle worker is
 *  woken per queued task (not more than there are). No-op if not paused. */
PP_API apr_status_t pp_pool_resume(pp_pool_t *pool);

/**
 * Stop accepting tasks and wait for the workers to exit.
 * PP_DRAIN runs what is queued first; PP_CANCEL drops it (each dropped task
 * is released, counted as cancelled and reported to on_task_error as
 * PP_ECANCELLED) and running tasks see pp_task_cancelled(). The call drops
 * what it can before its deadline (release and report hooks included: it
 * never takes longer than timeout); what is left is dropped the same way
 * by the workers as they take it, or by the next call. A task that a
 * running task submits at that very moment is dropped by the worker that
 * takes it. A cancel may follow a drain that timed out.
 * @param timeout microseconds; -1 (or any negative, or one beyond the
 *        representable future) waits as long as it takes. Measured on the
 *        monotonic clock.
 * @return APR_TIMEUP if workers still run at the deadline (call again);
 *         APR_EINPROGRESS when called from one of the pool's own tasks,
 *         which cannot wait for itself: the shutdown is started, not awaited.
 */
PP_API apr_status_t pp_pool_shutdown(pp_pool_t *pool, int how,
                                     apr_interval_time_t timeout);

/** Counters, read without locks; queued, running and blocked are a
 *  momentary view, and running never exceeds the workers. A NULL out is
 *  ignored; a NULL pool gives zeros. */
#ifndef PP_BUILDING
static APR_INLINE void pp_pool_stats(pp_pool_t *pool, pp_stats_t *out)
{
    pp_pool_stats_sized(pool, out, sizeof(pp_stats_t));
}
#endif

/** A set of tasks to wait for together. Its memory lives in p, and p's
 *  destruction waits until none of its tasks are pending. */
PP_API apr_status_t pp_group_create(pp_group_t **group, apr_pool_t *p);

/**
 * Wait until every task of the group completed, failed or was cancelled.
 * Called from a task of the group's pool (fork-join), the worker runs
 * queued tasks (newest of its own first) while it waits, so a chain of
 * waits deeper than the workers still finishes; such nesting goes 256
 * tasks deep at most, then the wait only blocks.
 * @param timeout microseconds on the monotonic clock; -1 (or beyond the
 *        representable future) no limit; 0 polls.
 * @return APR_SUCCESS, APR_TIMEUP, or APR_EINVAL when called from one of the
 *         group's own tasks (it would wait for itself).
 */
PP_API apr_status_t pp_group_wait(pp_group_t *group, apr_interval_time_t timeout);

/**
 * Drop the group's queued tasks (each released and reported as
 * PP_ECANCELLED): those in the shared queue before this returns, those that
 * the pool's own tasks queued in a worker's queue when a worker takes them
 * (they never run); its running tasks see pp_task_cancelled(). Further
 * submits to it fail with PP_ECANCELLED until the round ends.
 *
 * A round of a group ends when pp_group_wait() returns APR_SUCCESS; the
 * next submit then starts a new one, clearing status and cancellation.
 */
PP_API apr_status_t pp_group_cancel(pp_group_t *group);

/** The first non-success outcome among the tasks of the current (or just
 *  ended) round, PP_ECANCELLED for a dropped one, or APR_SUCCESS. */
PP_API apr_status_t pp_group_status(const pp_group_t *group);

/** Non-zero when the running task should stop early (pool or group cancelled). */
PP_API int pp_task_cancelled(const pp_task_ctx_t *ctx);

/** Index (0 .. threads-1) of the worker running the task. */
PP_API apr_uint32_t pp_task_worker(const pp_task_ctx_t *ctx);

/**
 * Bracket a section in which the task blocks (a child process, a socket, a
 * lock held elsewhere): while inside, its worker does not count against
 * cfg.threads, so another worker may start (or wake) for the queued tasks,
 * up to cfg.max_blocking more than threads. Sections nest (the outermost
 * counts); an end without a begin is ignored, as is a ctx that is not the
 * calling thread's task. pp_group_wait() in a task does this by itself
 * around its sleeps.
 */
PP_API void pp_task_block_begin(pp_task_ctx_t *ctx);
PP_API void pp_task_block_end(pp_task_ctx_t *ctx);

/** Hand a result line to the pool's on_output hook (dropped if none). */
PP_API void pp_task_emit(pp_task_ctx_t *ctx, const char *line);

/**
 * Hand len bytes of the task's output (binary or text, any piece of it) to
 * the pool's on_write hook. A pool without one gives them to on_output a
 * line at a time: each LF ends a line (the LF, and a CR before it, not
 * part of it), as does the end of data, and a line stops at its first
 * NUL; so write whole lines when the host may be such a pool. Dropped if
 * there is neither hook.
 */
PP_API void pp_task_write(pp_task_ctx_t *ctx, const char *data, apr_size_t len);

/** Text for a parkpool or APR status, written into buf; returns buf. */
PP_API const char *pp_strerror(apr_status_t status, char *buf, apr_size_t bufsize);

/** The park/unpark backend compiled in: "futex", "cond" or "win32". */
PP_API const char *pp_park_backend(void);

/** The library's version string, e.g. "0.1.0". */
PP_API const char *pp_version(void);

#ifdef __cplusplus
}
#endif

#endif /* PARKPOOL_H */
