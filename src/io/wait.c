/*
 * wait.c - how a load is stopped: the request's cancel, which any thread
 * or a signal handler sets and the workers look at before each read, and
 * its on_wait, which the caller's thread calls while it waits for them
 * (the pool's waits, a followed file's naps, a single worker's reads on
 * the caller's thread).  A binding whose stops come from the caller's own
 * thread (Python runs signal handlers only there) needs the second: it
 * stops the load from the thread the load holds, with no thread of its
 * own to hand the load to.
 */
#include "io/io.h"

#define DEFAULT_INTERVAL 0.02

void parload__waiter_init(parload__waiter *w, const parload_request *req)
{
	memset(w, 0, sizeof(*w));
	w->cancel = req->cancel;
	w->fn = req->on_wait;
	w->arg = req->wait_arg;
	w->interval = req->wait_interval > 0 ? req->wait_interval :
					      DEFAULT_INTERVAL;
}

bool parload__waiter_stopped(const parload__waiter *w)
{
	return (w->cancel && __atomic_load_n(w->cancel, __ATOMIC_RELAXED)) ||
	       __atomic_load_n(&w->stop, __ATOMIC_RELAXED);
}

bool parload__waiter_turn(parload__waiter *w)
{
	if (!w->fn || w->stop)
		return w->stop;
	if (w->fn(w->arg) != 0)
		__atomic_store_n(&w->stop, 1, __ATOMIC_RELAXED);
	w->next = parload__now() + w->interval;
	return w->stop;
}

bool parload__waiter_due(parload__waiter *w)
{
	if (!w->fn || w->stop)
		return w->stop;
	return w->next <= parload__now() ? parload__waiter_turn(w) : false;
}
