/* parallel.c - a minimal deterministic parallel-for for the CPU reference: task t
 * runs on worker t % n, tasks never share outputs, so results do not depend on
 * the thread count. FLAMIA_REF_THREADS=n overrides the CPU count. */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "ref_internal.h"

int flamia_ref_threads(int ntasks) {
    long n = 0;
    const char *env = getenv("FLAMIA_REF_THREADS");
    if (env) n = strtol(env, NULL, 10);
    if (n <= 0) n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n > 64) n = 64;
    if (n > ntasks) n = ntasks;
    return n < 1 ? 1 : (int)n;
}

typedef struct {
    flamia_task_fn fn;
    void *ctx;
    int ntasks, nworkers, worker;
} worker_arg;

static void *worker_main(void *p) {
    worker_arg *a = p;
    for (int t = a->worker; t < a->ntasks; t += a->nworkers) a->fn(a->ctx, t, a->worker);
    return NULL;
}

void flamia_ref_parallel_for(int ntasks, int nworkers, flamia_task_fn fn, void *ctx) {
    worker_arg args[64] = {{0}};
    pthread_t tid[64];
    int started[64] = {0};
    if (nworkers < 1) nworkers = 1;
    if (nworkers > 64) nworkers = 64;
    for (int w = 0; w < nworkers; w++) {
        args[w] = (worker_arg){fn, ctx, ntasks, nworkers, w};
        if (w > 0) started[w] = pthread_create(&tid[w], NULL, worker_main, &args[w]) == 0;
    }
    worker_main(&args[0]);
    for (int w = 1; w < nworkers; w++) {
        if (started[w]) pthread_join(tid[w], NULL);
        else worker_main(&args[w]); /* no thread: run its share here */
    }
}
