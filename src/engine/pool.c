/*
 * pool.c - persistent worker threads.
 *
 * A loader reads many files, often small ones, so its workers are created
 * once and reused: starting threads for every load would cost more than
 * reading a small file.  Each call to parload__pool_run() is one
 * "generation": the caller publishes the job and bumps the generation
 * counter under the pool's mutex, every worker runs the job once when it
 * sees a generation it has not run yet, and the last to finish wakes the
 * caller.  The caller waits for all of them before it starts another
 * (parload__pool_run does both; a batched load starts the next batch, works
 * on the last one, then waits), so at most one generation is ever in
 * flight and a worker cannot miss or repeat one.
 * All shared state is touched under the one mutex.
 */
#include "engine/engine.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>

struct parload__worker {
	struct parload__pool *pool;
	unsigned index;
	pthread_t thread;
};

struct parload__pool {
	pthread_mutex_t lock;
	pthread_cond_t wake;   /* workers: a new generation, or stop */
	pthread_cond_t done;   /* the caller: the generation is finished */
	unsigned long generation;
	unsigned remaining;    /* workers yet to finish this generation */
	bool stop;
	parload__job_fn fn;
	void *arg;

	parload__start_fn start;
	void *start_arg;
	unsigned n;
	struct parload__worker *workers;
};

static void *worker_main(void *p)
{
	struct parload__worker *self = p;
	struct parload__pool *pool = self->pool;
	unsigned long seen = 0;

	if (pool->start)
		pool->start(pool->start_arg, self->index);

	pthread_mutex_lock(&pool->lock);
	for (;;) {
		parload__job_fn fn;
		void *arg;

		while (!pool->stop && pool->generation == seen)
			pthread_cond_wait(&pool->wake, &pool->lock);
		if (pool->stop)
			break;
		seen = pool->generation;
		fn = pool->fn;
		arg = pool->arg;
		pthread_mutex_unlock(&pool->lock);

		fn(arg, self->index);

		pthread_mutex_lock(&pool->lock);
		if (--pool->remaining == 0)
			pthread_cond_signal(&pool->done);
	}
	pthread_mutex_unlock(&pool->lock);
	return NULL;
}

/* Tell the started workers to leave and wait for them. */
static void stop_workers(struct parload__pool *p, unsigned started)
{
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_broadcast(&p->wake);
	pthread_mutex_unlock(&p->lock);
	for (unsigned i = 0; i < started; i++)
		parload__sys_pthread_join(p->workers[i].thread, NULL);
}

static void destroy(struct parload__pool *p)
{
	parload__sys_pthread_cond_destroy(&p->done);
	parload__sys_pthread_cond_destroy(&p->wake);
	parload__sys_pthread_mutex_destroy(&p->lock);
	parload__sys_free(p->workers);
	parload__sys_free(p);
}

/* The caller's condition, on the monotonic clock of its timed waits
 * (parload__pool_wait); 0 or an errno value. */
static int done_init(pthread_cond_t *done)
{
	pthread_condattr_t a;
	int e = pthread_condattr_init(&a);

	if (e)
		return e;
	e = pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	if (e == 0)
		e = parload__sys_pthread_cond_init(done, &a);
	pthread_condattr_destroy(&a);
	return e;
}

/* The pool's lock and conditions, all or none; 0 or an errno value. */
static int sync_init(struct parload__pool *p)
{
	int e = parload__sys_pthread_mutex_init(&p->lock, NULL);

	if (e)
		return e;
	e = parload__sys_pthread_cond_init(&p->wake, NULL);
	if (e) {
		parload__sys_pthread_mutex_destroy(&p->lock);
		return e;
	}
	e = done_init(&p->done);
	if (e) {
		parload__sys_pthread_cond_destroy(&p->wake);
		parload__sys_pthread_mutex_destroy(&p->lock);
	}
	return e;
}

/*
 * Start the workers; returns how many started (all n, or the failure's
 * errno in *e).  They start with asynchronous signals blocked (a new
 * thread inherits its creator's mask, so there is no moment when one is
 * open), leaving the application's handlers to run on its own threads.
 * Signals raised by a fault in the thread itself stay open: the kernel
 * would otherwise kill the process outright instead of running a handler.
 */
static unsigned start_workers(struct parload__pool *p, int *e)
{
	static const int faults[] = { SIGSEGV, SIGBUS, SIGFPE,
				      SIGILL,  SIGTRAP, SIGSYS };
	sigset_t all, saved;
	unsigned started = 0;

	sigfillset(&all);
	for (size_t i = 0; i < sizeof(faults) / sizeof(faults[0]); i++)
		sigdelset(&all, faults[i]);
	pthread_sigmask(SIG_SETMASK, &all, &saved);
	for (*e = 0; started < p->n; started++) {
		struct parload__worker *w = &p->workers[started];

		w->pool = p;
		w->index = started;
		*e = parload__sys_pthread_create(&w->thread, NULL, worker_main,
						 w);
		if (*e)
			break;
	}
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
	return started;
}

int parload__pool_new(parload__pool **out, unsigned n,
		      parload__start_fn start, void *start_arg,
		      parload_error *err)
{
	struct parload__pool *p;
	unsigned started;
	int e;

	*out = NULL;
	if (n == 0)
		return parload__fail_path(err, PARLOAD_EINVAL, 0, NULL,
					  "a pool needs at least one worker");
	p = parload__sys_calloc(1, sizeof(*p));
	if (p)
		p->workers = parload__sys_calloc(n, sizeof(*p->workers));
	if (!p || !p->workers) {
		parload__sys_free(p);
		return parload__fail_nomem(err, NULL);
	}
	e = sync_init(p);
	if (e) {
		parload__sys_free(p->workers);
		parload__sys_free(p);
		return parload__fail_path(err, PARLOAD_ETHREAD, e, NULL, NULL);
	}
	p->n = n;
	p->start = start;
	p->start_arg = start_arg;
	started = start_workers(p, &e);
	if (started < n) {
		stop_workers(p, started);
		destroy(p);
		return parload__fail_path(err, PARLOAD_ETHREAD, e, NULL,
					  "cannot start worker thread %u of %u",
					  started + 1, n);
	}
	*out = p;
	return 0;
}

void parload__pool_start(parload__pool *p, parload__job_fn fn, void *arg)
{
	pthread_mutex_lock(&p->lock);
	p->fn = fn;
	p->arg = arg;
	p->remaining = p->n;
	p->generation++;
	pthread_cond_broadcast(&p->wake);
	pthread_mutex_unlock(&p->lock);
}

/* until = now + seconds, on the monotonic clock. */
static void deadline(struct timespec *until, double seconds)
{
	const double whole = (double)(time_t)seconds;

	clock_gettime(CLOCK_MONOTONIC, until);
	until->tv_sec += (time_t)whole;
	until->tv_nsec += (long)((seconds - whole) * 1e9);
	if (until->tv_nsec >= 1000000000L) {
		until->tv_sec++;
		until->tv_nsec -= 1000000000L;
	}
}

/* The caller's turns: one at once, even if the workers are done already
 * (so that every pass gives one), then one each time an interval passes
 * before the last worker is done, until one says stop (the workers then
 * stop at their next read, and the caller waits for them as usual). */
void parload__pool_wait(parload__pool *p, parload__waiter *w)
{
	bool turns = w && w->fn;

	pthread_mutex_lock(&p->lock);
	while (p->remaining > 0 || turns) {
		struct timespec until;

		if (!turns || w->stop) {
			turns = false;
			if (p->remaining > 0)
				pthread_cond_wait(&p->done, &p->lock);
			continue;
		}
		pthread_mutex_unlock(&p->lock);
		parload__waiter_turn(w);
		deadline(&until, w->interval);
		pthread_mutex_lock(&p->lock);
		while (p->remaining > 0 &&
		       pthread_cond_timedwait(&p->done, &p->lock, &until) !=
			       ETIMEDOUT)
			;
		turns = p->remaining > 0;
	}
	pthread_mutex_unlock(&p->lock);
}

void parload__pool_run(parload__pool *p, parload__job_fn fn, void *arg,
		       parload__waiter *w)
{
	parload__pool_start(p, fn, arg);
	parload__pool_wait(p, w);
}

void parload__pool_free(parload__pool *p)
{
	if (!p)
		return;
	stop_workers(p, p->n);
	destroy(p);
}
