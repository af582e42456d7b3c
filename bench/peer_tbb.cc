/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pp_bench's oneTBB peer, written as oneTBB's users write it: a
 * task_arena of N workers and a slot for the submitting thread, which
 * runs the workload's body inside the arena (task_arena::execute), makes
 * tasks with task_group::run and waits with task_group::wait, running
 * tasks of its own meanwhile. Threads outside the arena (W2's producers)
 * hand their tasks to it with task_arena::enqueue. A global_control lets
 * the arena have N workers on a machine with fewer cores, as every other
 * pool in the table does.
 */
#include "config.h"
#include "adapter.h"

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

#include <cstdlib>
#include <new>

namespace {

struct tbb_pool {
    tbb::global_control control;
    tbb::task_arena arena;
    tbb::task_group group;

    explicit tbb_pool(unsigned workers)
        : control(tbb::global_control::max_allowed_parallelism, workers + 1),
          arena(static_cast<int>(workers) + 1, 1)
    {
    }
};

/* Whether this thread runs inside an arena: a worker, or the submitter in
 * execute(). Set by every task, since any arena thread may run one. */
thread_local bool inside;

struct task {
    void *arg;

    void operator()() const
    {
        inside = true;
        pp_bench_task(arg);
    }
};

void *tbb_create(unsigned workers)
{
    return new (std::nothrow) tbb_pool(workers);
}

/* Exceptions cannot pass through the harness's C frames: a task that
 * cannot be made ends the run, which the table shows as no figure. */
void tbb_submit(void *pool, void *arg)
{
    tbb_pool *p = static_cast<tbb_pool *>(pool);

    try {
        if (inside)
            p->group.run(task{ arg });
        else
            p->arena.enqueue(task{ arg });
    }
    catch (...) {
        std::abort();
    }
}

void tbb_enter(void *pool, void (*body)(void *), void *arg)
{
    tbb_pool *p = static_cast<tbb_pool *>(pool);

    p->arena.execute([&] {
        bool was = inside;
        inside = true;
        body(arg);
        inside = was;
    });
}

/* Called from a body, inside the arena. */
void tbb_help(void *pool)
{
    static_cast<tbb_pool *>(pool)->group.wait();
}

void tbb_destroy(void *pool)
{
    tbb_pool *p = static_cast<tbb_pool *>(pool);

    p->arena.execute([p] { p->group.wait(); });
    delete p;
}

} // namespace

extern "C" const pp_bench_adapter pp_bench_tbb = {
    "onetbb", 1, tbb_create, tbb_submit, tbb_destroy, tbb_enter, tbb_help, 1
};
